"""Rprop: each coordinate moves by its own step size, grown while its gradient keeps its sign
and shrunk when the sign flips; the gradient's size is not used."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .. import array
from ..tensor import Tensor
from .optimizer import Optimizer, check_number, penalized

xp = array.xp


class Rprop(Optimizer):
    r"""Resilient backpropagation (Riedmiller and Braun, 1993), PyTorch's rule step for step.

    For each parameter p with gradient g, learning rate γ, etas (η₋, η₊) and step sizes
    (Δmin, Δmax), with g' the gradient kept from the step before (zero at first)::

        g ← -g                                  if maximize
        f ← η₊ where g g' > 0,  η₋ where g g' < 0,  1 elsewhere
        Δ ← clamp(Δ f, Δmin, Δmax)              (Δ starts at γ)
        g ← 0 where f = η₋                      (a sign flip skips this step there)
        p ← p - sign(g) Δ
        g' ← g

    State per parameter: ``step``, ``prev`` (g') and ``step_size`` (Δ). ``foreach`` is
    accepted and changes nothing; ``capturable=True`` and ``differentiable=True`` are refused.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr,
            etas=etas,
            step_sizes=step_sizes,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
        )
        super().__init__(params, defaults)

    def _check(self, group: dict[str, Any]) -> None:
        super()._check(group)
        for key in ("etas", "step_sizes"):
            pair = group[key]
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise ValueError(f"Rprop: {key} must be a pair of numbers; got {pair!r}")
            group[key] = tuple(check_number("Rprop", key, v) for v in pair)
        minus, plus = group["etas"]
        if not 0.0 < minus < 1.0 < plus:
            raise ValueError(
                f"Rprop: invalid eta values (needs 0 < etaminus < 1 < etaplus); got {minus}, {plus}"
            )

    def _update(self, param: Tensor, p: Any, grad: Any, group: dict[str, Any]) -> None:
        minus, plus = group["etas"]
        smallest, largest = group["step_sizes"]
        state = self.state.get(param)
        if state is None:
            state = self.state[param] = {
                "step": 0,
                "prev": Tensor._make(xp.zeros_like(p)),
                "step_size": Tensor._make(xp.full_like(grad, group["lr"])),
            }
        state["step"] += 1
        grad = penalized(p, grad, group)
        prev, size = state["prev"]._array, state["step_size"]._array
        agreement = xp.sign(grad * prev)
        factor = xp.where(agreement > 0, plus, xp.where(agreement < 0, minus, 1.0))
        size[...] = xp.clip(size * factor, smallest, largest)
        grad = xp.where(factor == minus, 0, grad)
        p -= xp.sign(grad) * size
        prev[...] = grad
