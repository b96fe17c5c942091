"""Adam and AdamW: adaptive moment estimation, with L2 or decoupled weight decay."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from .. import array, fastpath
from ..tensor import Tensor
from .optimizer import Optimizer, check_betas, check_nonnegative, check_number, require

xp = array.xp


class Adam(Optimizer):
    r"""Adam, PyTorch's rule step for step.

    For each parameter p with gradient g, learning rate γ, betas (β₁, β₂), eps ε and weight
    decay λ, at step t (counted per parameter, from 1)::

        g ← -g                                    if maximize
        g ← g + λ p                               if λ ≠ 0   (L2 penalty, unless decoupled)
        m ← β₁ m + (1 - β₁) g
        v ← β₂ v + (1 - β₂) g²
        v̂ ← max(v̂, v)  if amsgrad,  else  v̂ ← v
        p ← p - γ / (1 - β₁ᵗ) · m / (√v̂ / √(1 - β₂ᵗ) + ε)

    With ``decoupled_weight_decay`` the decay shrinks the weights instead (see AdamW).
    State per parameter: ``step``, ``exp_avg`` (m), ``exp_avg_sq`` (v) and, with amsgrad,
    ``max_exp_avg_sq`` (v̂); the buffers start at zero in the parameter's dtype.
    ``foreach`` and ``fused`` are accepted and change nothing; ``capturable=True`` and
    ``differentiable=True`` are refused.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=decoupled_weight_decay,
        )
        super().__init__(params, defaults)

    def _check(self, group: dict[str, Any]) -> None:
        super()._check(group)
        name = type(self).__name__
        check_betas(name, group)
        group["eps"] = check_number(name, "eps", group["eps"])
        require(group["eps"] >= 0, name, "invalid epsilon value", group["eps"])
        check_nonnegative(name, group, "weight_decay")

    def _update(self, param: Tensor, p: Any, grad: Any, group: dict[str, Any]) -> None:
        lr, decay, eps = group["lr"], group["weight_decay"], group["eps"]
        beta1, beta2 = group["betas"]
        state = self.state.get(param)
        if state is None:
            state = self.state[param] = {
                "step": 0,
                "exp_avg": Tensor._make(xp.zeros_like(p)),
                "exp_avg_sq": Tensor._make(xp.zeros_like(p)),
            }
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = Tensor._make(xp.zeros_like(p))
        state["step"] += 1
        if group["maximize"]:
            grad = -grad
        if decay and group["decoupled_weight_decay"]:
            p *= 1 - lr * decay
        elif decay:
            grad = p * decay + grad
        if fastpath.enabled():
            self._update_in_one_scratch(p, grad, state, group)
            return
        # the docstring's rule, term by term
        t = state["step"]
        m, v = state["exp_avg"]._array, state["exp_avg_sq"]._array
        m[...] = beta1 * m + (1 - beta1) * grad
        v[...] = beta2 * v + (1 - beta2) * grad * grad
        if group["amsgrad"]:
            v_max = state["max_exp_avg_sq"]._array
            v_max[...] = xp.maximum(v_max, v)
            v = v_max
        p -= lr / (1 - beta1**t) * m / (xp.sqrt(v) / math.sqrt(1 - beta2**t) + eps)

    @staticmethod
    def _update_in_one_scratch(p: Any, grad: Any, state: dict[str, Any], group: dict) -> None:
        """The same rule with one scratch array for every term (fastpath/table.py)."""
        lr, eps = group["lr"], group["eps"]
        beta1, beta2 = group["betas"]
        t = state["step"]
        m, v = state["exp_avg"]._array, state["exp_avg_sq"]._array
        tmp = xp.multiply(grad, 1 - beta1, out=xp.empty_like(m))  # an array, also for 0-d
        m *= beta1
        m += tmp
        xp.multiply(grad, grad, out=tmp)
        tmp *= 1 - beta2
        v *= beta2
        v += tmp
        if group["amsgrad"]:
            v = xp.maximum(state["max_exp_avg_sq"]._array, v, out=state["max_exp_avg_sq"]._array)
        denom = xp.sqrt(v, out=tmp)
        denom /= math.sqrt(1 - beta2**t)
        denom += eps
        step = xp.divide(m, denom, out=tmp)
        step *= lr / (1 - beta1**t)
        p -= step


class AdamW(Adam):
    r"""Adam with decoupled weight decay (Loshchilov and Hutter), PyTorch's rule.

    As :class:`Adam`, except that the decay shrinks the weights before the moment update
    instead of entering the gradient::

        p ← p (1 - γ λ)
        m, v, v̂ and the step as in Adam, with the raw gradient g

    The default ``weight_decay`` is 1e-2.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(
            params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize, foreach=foreach,
            capturable=capturable, differentiable=differentiable, fused=fused,
            decoupled_weight_decay=True,
        )  # fmt: skip
