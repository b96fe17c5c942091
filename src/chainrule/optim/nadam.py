"""NAdam: Adam with Nesterov momentum, its momentum warmed up over the first steps."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .. import array
from ..tensor import Tensor
from .optimizer import Optimizer, check_betas, check_nonnegative, penalized, scalar_state

xp = array.xp


class NAdam(Optimizer):
    r"""NAdam (Dozat, 2016), PyTorch's rule step for step.

    For each parameter p with gradient g, learning rate γ, betas (β₁, β₂), eps ε, weight decay
    λ and momentum decay ψ, at step t (counted per parameter, from 1)::

        g ← -g                                  if maximize
        p ← p (1 - γ λ)                         if decoupled_weight_decay
        g ← g + λ p                             otherwise, if λ ≠ 0
        μₜ ← β₁ (1 - ½ · 0.96^(t ψ)),  μₜ₊₁ likewise
        Π ← Π μₜ                                (the product of every μ so far)
        m ← β₁ m + (1 - β₁) g
        v ← β₂ v + (1 - β₂) g²
        d ← √(v / (1 - β₂ᵗ)) + ε
        p ← p - γ (1 - μₜ) / (1 - Π) · g / d - γ μₜ₊₁ / (1 - Π μₜ₊₁) · m / d

    State per parameter: ``step``, ``mu_product`` (Π, a number that starts at 1 and is kept in
    the default dtype, as PyTorch keeps it in a 0-d tensor), ``exp_avg`` (m) and
    ``exp_avg_sq`` (v), both starting at zero. ``foreach`` is accepted and changes nothing;
    ``capturable=True`` and ``differentiable=True`` are refused.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
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
            momentum_decay=momentum_decay,
            decoupled_weight_decay=decoupled_weight_decay,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _check(self, group: dict[str, Any]) -> None:
        super()._check(group)
        check_betas("NAdam", group)
        check_nonnegative("NAdam", group, "eps", "weight_decay", "momentum_decay")

    def _update(self, param: Tensor, p: Any, grad: Any, group: dict[str, Any]) -> None:
        lr, psi = group["lr"], group["momentum_decay"]
        beta1, beta2 = group["betas"]
        state = self.state.get(param)
        if state is None:
            state = self.state[param] = {
                "step": 0,
                "mu_product": 1.0,
                "exp_avg": Tensor._make(xp.zeros_like(p)),
                "exp_avg_sq": Tensor._make(xp.zeros_like(p)),
            }
        state["step"] += 1
        t = state["step"]
        grad = penalized(p, grad, group)
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (t * psi))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * psi))
        product = state["mu_product"] = scalar_state(state["mu_product"], times=mu)
        m, v = state["exp_avg"]._array, state["exp_avg_sq"]._array
        m[...] = beta1 * m + (1 - beta1) * grad
        v[...] = beta2 * v + (1 - beta2) * grad * grad
        d = xp.sqrt(v / (1 - beta2**t)) + group["eps"]
        p -= lr * (1 - mu) / (1 - product) * grad / d
        p -= lr * mu_next / (1 - product * mu_next) * m / d
