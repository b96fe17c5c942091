"""Adadelta: steps whose size is a running ratio of past updates to past gradients."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .. import array
from ..tensor import Tensor
from .optimizer import Optimizer, check_nonnegative, penalized, require

xp = array.xp


class Adadelta(Optimizer):
    r"""Adadelta (Zeiler, 2012), PyTorch's rule step for step.

    For each parameter p with gradient g, learning rate γ, decay ρ, eps ε and weight decay λ::

        g ← -g                                  if maximize
        g ← g + λ p                             if λ ≠ 0
        s ← ρ s + (1 - ρ) g²
        Δ ← √(u + ε) / √(s + ε) · g
        u ← ρ u + (1 - ρ) Δ²
        p ← p - γ Δ

    State per parameter: ``step``, ``square_avg`` (s) and ``acc_delta`` (u), both starting at
    zero. ``foreach`` is accepted and changes nothing; ``capturable=True`` and
    ``differentiable=True`` are refused.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr,
            rho=rho,
            eps=eps,
            weight_decay=weight_decay,
            maximize=maximize,
            capturable=capturable,
            foreach=foreach,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _check(self, group: dict[str, Any]) -> None:
        super()._check(group)
        check_nonnegative("Adadelta", group, "rho", "eps", "weight_decay")
        require(group["rho"] <= 1, "Adadelta", "invalid rho value", group["rho"])

    def _update(self, param: Tensor, p: Any, grad: Any, group: dict[str, Any]) -> None:
        rho, eps = group["rho"], group["eps"]
        state = self.state.get(param)
        if state is None:
            state = self.state[param] = {
                "step": 0,
                "square_avg": Tensor._make(xp.zeros_like(p)),
                "acc_delta": Tensor._make(xp.zeros_like(p)),
            }
        state["step"] += 1
        grad = penalized(p, grad, group)
        s, u = state["square_avg"]._array, state["acc_delta"]._array
        s[...] = rho * s + (1 - rho) * grad * grad
        delta = xp.sqrt(u + eps) / xp.sqrt(s + eps) * grad
        u[...] = rho * u + (1 - rho) * delta * delta
        p -= group["lr"] * delta
