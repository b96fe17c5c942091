"""ASGD: stochastic gradient descent with a decaying step, and a running average of the
iterates kept beside the parameter."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .. import array
from ..tensor import Tensor
from .optimizer import Optimizer, check_nonnegative, penalized, scalar_state

xp = array.xp


class ASGD(Optimizer):
    r"""Averaged SGD (Polyak and Juditsky, 1992), PyTorch's rule step for step.

    For each parameter p with gradient g, learning rate γ, decay term λ (``lambd``), power α,
    averaging start t₀ and weight decay w, at step t (counted per parameter, from 1), with
    η and μ from the step before (η starts at γ, μ at 1)::

        g ← -g                                  if maximize
        g ← g + w p                             if w ≠ 0
        p ← p (1 - λ η) - η g
        a ← a + μ (p - a)                       (a ← p while μ = 1)
        η ← γ / (1 + λ γ t)^α
        μ ← 1 / max(1, t - t₀)

    State per parameter: ``step``, ``eta`` (η) and ``mu`` (μ), numbers kept in the default
    dtype (PyTorch keeps them in 0-d tensors), and ``ax`` (a, the average, starting at zero).
    ``foreach`` is accepted and changes nothing; ``capturable=True`` and
    ``differentiable=True`` are refused.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr,
            lambd=lambd,
            alpha=alpha,
            t0=t0,
            weight_decay=weight_decay,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
        )
        super().__init__(params, defaults)

    def _check(self, group: dict[str, Any]) -> None:
        super()._check(group)
        check_nonnegative("ASGD", group, "weight_decay")

    def _update(self, param: Tensor, p: Any, grad: Any, group: dict[str, Any]) -> None:
        lr, lambd = group["lr"], group["lambd"]
        state = self.state.get(param)
        if state is None:
            state = self.state[param] = {
                "step": 0,
                "eta": scalar_state(lr),
                "mu": 1.0,
                "ax": Tensor._make(xp.zeros_like(p)),
            }
        state["step"] += 1
        t, eta, mu = state["step"], state["eta"], state["mu"]
        grad = penalized(p, grad, group)
        p *= 1 - lambd * eta
        p -= eta * grad
        a = state["ax"]._array
        if mu != 1:
            a += (p - a) * mu
        else:
            a[...] = p
        state["eta"] = scalar_state(lr / (1 + lambd * lr * t) ** group["alpha"])
        state["mu"] = scalar_state(1 / max(1, t - group["t0"]))
