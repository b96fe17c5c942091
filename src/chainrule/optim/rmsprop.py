"""RMSprop: steps scaled by a running root mean square of the gradient."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .. import array, fastpath
from ..tensor import Tensor
from .optimizer import Optimizer, check_number, require

xp = array.xp


class RMSprop(Optimizer):
    r"""RMSprop, PyTorch's rule step for step.

    For each parameter p with gradient g, learning rate γ, smoothing α, eps ε, momentum μ
    and weight decay λ::

        g ← -g                            if maximize
        g ← g + λ p                       if λ ≠ 0
        s ← α s + (1 - α) g²
        a ← α a + (1 - α) g               if centered
        r ← √(s - a²) + ε  if centered,  else  r ← √s + ε
        b ← μ b + g / r,   p ← p - γ b     if μ > 0
        p ← p - γ g / r                    otherwise

    State per parameter: ``step``, ``square_avg`` (s), ``momentum_buffer`` (b, if μ > 0)
    and ``grad_avg`` (a, if centered); all start at zero. ``foreach`` is accepted and
    changes nothing; ``capturable=True`` and ``differentiable=True`` are refused.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr,
            alpha=alpha,
            eps=eps,
            weight_decay=weight_decay,
            momentum=momentum,
            centered=centered,
            capturable=capturable,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _check(self, group: dict[str, Any]) -> None:
        super()._check(group)
        for key, what in [
            ("alpha", "alpha"),
            ("eps", "epsilon"),
            ("weight_decay", "weight_decay"),
            ("momentum", "momentum"),
        ]:
            group[key] = check_number("RMSprop", key, group[key])
            require(group[key] >= 0, "RMSprop", f"invalid {what} value", group[key])

    def _update(self, param: Tensor, p: Any, grad: Any, group: dict[str, Any]) -> None:
        lr, alpha, momentum = group["lr"], group["alpha"], group["momentum"]
        state = self.state.get(param)
        if state is None:
            state = self.state[param] = {"step": 0, "square_avg": Tensor._make(xp.zeros_like(p))}
            if momentum > 0:
                state["momentum_buffer"] = Tensor._make(xp.zeros_like(p))
            if group["centered"]:
                state["grad_avg"] = Tensor._make(xp.zeros_like(p))
        state["step"] += 1

        if group["maximize"]:
            grad = -grad
        if group["weight_decay"]:
            grad = p * group["weight_decay"] + grad
        if fastpath.enabled():
            self._update_in_one_scratch(p, grad, state, group)
            return
        # the docstring's rule, term by term
        s = state["square_avg"]._array
        s[...] = alpha * s + (1 - alpha) * grad * grad
        if group["centered"]:
            a = state["grad_avg"]._array
            a[...] = alpha * a + (1 - alpha) * grad
            r = xp.sqrt(s - a * a) + group["eps"]
        else:
            r = xp.sqrt(s) + group["eps"]
        if momentum > 0:
            b = state["momentum_buffer"]._array
            b[...] = momentum * b + grad / r
            p -= lr * b
        else:
            p -= lr * grad / r

    @staticmethod
    def _update_in_one_scratch(p: Any, grad: Any, state: dict[str, Any], group: dict) -> None:
        """The same rule with one scratch array for every term (fastpath/table.py)."""
        lr, alpha, momentum = group["lr"], group["alpha"], group["momentum"]
        square_avg = state["square_avg"]._array
        tmp = xp.multiply(grad, grad, out=xp.empty_like(square_avg))  # an array, also for 0-d
        tmp *= 1 - alpha
        square_avg *= alpha
        square_avg += tmp
        if group["centered"]:
            grad_avg = state["grad_avg"]._array
            xp.subtract(grad, grad_avg, out=tmp)
            tmp *= 1 - alpha
            grad_avg += tmp  # a ← a + (1 - α)(g - a), the same as α a + (1 - α) g
            xp.multiply(grad_avg, grad_avg, out=tmp)
            xp.subtract(square_avg, tmp, out=tmp)
            rms = xp.sqrt(tmp, out=tmp)
        else:
            rms = xp.sqrt(square_avg, out=tmp)
        rms += group["eps"]
        step = xp.divide(grad, rms, out=tmp)
        if momentum > 0:
            buf = state["momentum_buffer"]._array
            buf *= momentum
            buf += step
            step = xp.multiply(buf, lr, out=tmp)
        else:
            step *= lr
        p -= step
