"""RAdam: Adam whose adaptive step is switched on, and rectified, once its variance is
estimated well enough."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .. import array
from ..tensor import Tensor
from .optimizer import Optimizer, check_betas, check_nonnegative, penalized

xp = array.xp


class RAdam(Optimizer):
    r"""RAdam (Liu et al., 2019), PyTorch's rule step for step.

    For each parameter p with gradient g, learning rate γ, betas (β₁, β₂), eps ε and weight
    decay λ, at step t (counted per parameter, from 1)::

        g ← -g                                  if maximize
        p ← p (1 - γ λ)                         if decoupled_weight_decay
        g ← g + λ p                             otherwise, if λ ≠ 0
        m ← β₁ m + (1 - β₁) g
        v ← β₂ v + (1 - β₂) g²
        m̂ ← m / (1 - β₁ᵗ)
        ρ∞ ← 2 / (1 - β₂) - 1,   ρₜ ← ρ∞ - 2 t β₂ᵗ / (1 - β₂ᵗ)
        p ← p - γ m̂ · r √(1 - β₂ᵗ) / (√v + ε)   if ρₜ > 5,
              with r = √((ρₜ - 4)(ρₜ - 2) ρ∞ / ((ρ∞ - 4)(ρ∞ - 2) ρₜ))
        p ← p - γ m̂                              otherwise

    State per parameter: ``step``, ``exp_avg`` (m) and ``exp_avg_sq`` (v), both starting at
    zero. ``foreach`` is accepted and changes nothing; ``capturable=True`` and
    ``differentiable=True`` are refused.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            decoupled_weight_decay=decoupled_weight_decay,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _check(self, group: dict[str, Any]) -> None:
        super()._check(group)
        check_betas("RAdam", group)
        check_nonnegative("RAdam", group, "eps", "weight_decay")

    def _update(self, param: Tensor, p: Any, grad: Any, group: dict[str, Any]) -> None:
        lr = group["lr"]
        beta1, beta2 = group["betas"]
        state = self.state.get(param)
        if state is None:
            state = self.state[param] = {
                "step": 0,
                "exp_avg": Tensor._make(xp.zeros_like(p)),
                "exp_avg_sq": Tensor._make(xp.zeros_like(p)),
            }
        state["step"] += 1
        t = state["step"]
        grad = penalized(p, grad, group)
        m, v = state["exp_avg"]._array, state["exp_avg_sq"]._array
        m[...] = beta1 * m + (1 - beta1) * grad
        v[...] = beta2 * v + (1 - beta2) * grad * grad
        m_hat = m / (1 - beta1**t)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * t * beta2**t / (1 - beta2**t)
        if rho_t > 5.0:
            r = (
                (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
            ) ** 0.5
            p -= m_hat * lr * ((1 - beta2**t) ** 0.5 / (xp.sqrt(v) + group["eps"])) * r
        else:
            p -= m_hat * lr
