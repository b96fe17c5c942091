"""Adamax: Adam with the infinity norm of past gradients in place of their root mean square."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .. import array
from ..tensor import Tensor
from .optimizer import Optimizer, check_betas, check_nonnegative, penalized

xp = array.xp


class Adamax(Optimizer):
    r"""Adamax (Kingma and Ba, 2015, section 7), PyTorch's rule step for step.

    For each parameter p with gradient g, learning rate γ, betas (β₁, β₂), eps ε and weight
    decay λ, at step t (counted per parameter, from 1)::

        g ← -g                                  if maximize
        g ← g + λ p                             if λ ≠ 0
        m ← β₁ m + (1 - β₁) g
        u ← max(β₂ u, |g| + ε)
        p ← p - γ / (1 - β₁ᵗ) · m / u

    State per parameter: ``step``, ``exp_avg`` (m) and ``exp_inf`` (u), both starting at
    zero. ``foreach`` is accepted and changes nothing; ``capturable=True`` and
    ``differentiable=True`` are refused.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
        )
        super().__init__(params, defaults)

    def _check(self, group: dict[str, Any]) -> None:
        super()._check(group)
        check_betas("Adamax", group)
        check_nonnegative("Adamax", group, "eps", "weight_decay")

    def _update(self, param: Tensor, p: Any, grad: Any, group: dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        state = self.state.get(param)
        if state is None:
            state = self.state[param] = {
                "step": 0,
                "exp_avg": Tensor._make(xp.zeros_like(p)),
                "exp_inf": Tensor._make(xp.zeros_like(p)),
            }
        state["step"] += 1
        grad = penalized(p, grad, group)
        m, u = state["exp_avg"]._array, state["exp_inf"]._array
        m[...] = beta1 * m + (1 - beta1) * grad
        u[...] = xp.maximum(beta2 * u, xp.abs(grad) + group["eps"])
        p -= group["lr"] / (1 - beta1 ** state["step"]) * m / u
