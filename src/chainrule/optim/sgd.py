"""Stochastic gradient descent, with momentum, Nesterov momentum and weight decay."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..tensor import Tensor
from .optimizer import Optimizer, add_scaled_, check_number, require


class SGD(Optimizer):
    r"""Stochastic gradient descent, PyTorch's rule step for step.

    For each parameter p with gradient g, learning rate γ, momentum μ, dampening τ and
    weight decay λ, at step t::

        g ← -g                        if maximize
        g ← g + λ p                   if λ ≠ 0
        b ← g                         at t = 1        (momentum buffer, if μ ≠ 0)
        b ← μ b + (1 - τ) g           at t > 1
        g ← g + μ b                   if nesterov
        g ← b                         otherwise (if μ ≠ 0)
        p ← p - γ g

    State per parameter: ``momentum_buffer`` (only when μ ≠ 0). ``foreach`` and ``fused``
    are accepted and change nothing (one NumPy loop serves); ``differentiable=True`` is
    refused.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        maximize: bool = False,
        *,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
            maximize=maximize,
            foreach=foreach,
            differentiable=differentiable,
            fused=fused,
        )
        super().__init__(params, defaults)

    def _check(self, group: dict[str, Any]) -> None:
        super()._check(group)
        for key in ("momentum", "dampening", "weight_decay"):
            group[key] = check_number("SGD", key, group[key])
        require(group["momentum"] >= 0, "SGD", "invalid momentum value", group["momentum"])
        require(
            group["weight_decay"] >= 0, "SGD", "invalid weight_decay value", group["weight_decay"]
        )
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError(
                "SGD: nesterov momentum requires a momentum and zero dampening; got momentum="
                f"{group['momentum']} and dampening={group['dampening']}"
            )

    def _update(self, param: Tensor, p: Any, grad: Any, group: dict[str, Any]) -> None:
        lr, momentum, decay = group["lr"], group["momentum"], group["weight_decay"]
        # d is the step direction; it is a fresh array ("owned") once we had to compute it.
        if decay:
            d = p * decay
            if group["maximize"]:
                d -= grad
            else:
                d += grad
        else:
            d = -grad if group["maximize"] else grad
        owned = d is not grad
        if momentum:
            state = self.state.setdefault(param, {})
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = Tensor._make(d.copy())
            else:
                buf._array *= momentum
                buf._array += d if not group["dampening"] else (1 - group["dampening"]) * d
            if group["nesterov"]:
                d = d + momentum * buf._array
                owned = True
            else:
                d, owned = buf._array, False
        if owned:
            d *= lr
            p -= d
        else:
            add_scaled_(p, d, -lr)
