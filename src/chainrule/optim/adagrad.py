"""Adagrad: each coordinate's step divided by the root of its summed squared gradients."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .. import array
from ..tensor import Tensor
from .optimizer import Optimizer, check_nonnegative, penalized

xp = array.xp


class Adagrad(Optimizer):
    r"""Adagrad (Duchi et al., 2011), PyTorch's rule step for step.

    For each parameter p with gradient g, learning rate γ, decay η, eps ε and weight decay λ,
    at step t (counted per parameter, from 1)::

        g ← -g                                  if maximize
        g ← g + λ p                             if λ ≠ 0
        γₜ ← γ / (1 + (t - 1) η)
        s ← s + g²
        p ← p - γₜ g / (√s + ε)

    State per parameter: ``step`` and ``sum`` (s), made for every parameter when the optimizer
    is (as PyTorch's), s starting at ``initial_accumulator_value``. ``foreach`` and ``fused``
    are accepted and change nothing; ``differentiable=True`` is refused.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        defaults = dict(
            lr=lr,
            lr_decay=lr_decay,
            eps=eps,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            fused=fused,
        )
        super().__init__(params, defaults)
        for group in self.param_groups:
            for param in group["params"]:
                self._state_of(param, group)

    def _check(self, group: dict[str, Any]) -> None:
        super()._check(group)
        check_nonnegative(
            "Adagrad", group, "lr_decay", "weight_decay", "initial_accumulator_value", "eps"
        )

    def _state_of(self, param: Tensor, group: dict[str, Any]) -> dict[str, Any]:
        state = self.state.get(param)
        if state is None:
            start = xp.full_like(param._array, group["initial_accumulator_value"])
            state = self.state[param] = {"step": 0, "sum": Tensor._make(start)}
        return state

    def _update(self, param: Tensor, p: Any, grad: Any, group: dict[str, Any]) -> None:
        state = self._state_of(param, group)
        state["step"] += 1
        grad = penalized(p, grad, group)
        lr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        s = state["sum"]._array
        s += grad * grad
        p -= lr * grad / (xp.sqrt(s) + group["eps"])
