"""Learning-rate schedules: each ``step()`` writes the next lr into the optimizer's groups.

The sequences are PyTorch's: the same values, epoch for epoch, and the same state_dict.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable, Sequence
from typing import Any

from ..arguments import positive_int
from .optimizer import Optimizer


class LRScheduler:
    """The base of every schedule.

    ``last_epoch`` counts the ``step()`` calls (-1 before the first, which the constructor
    makes). With ``last_epoch=-1`` each group's current lr is remembered as its
    ``"initial_lr"`` (the base lr); to resume, pass the epoch reached and an optimizer whose
    groups already hold ``"initial_lr"`` (a loaded optimizer state does).
    Subclasses write ``get_lr()``: the lrs for epoch ``last_epoch``.
    """

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        name = type(self).__name__
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{name}: expected an Optimizer; got {type(optimizer).__name__}")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"{name}: param_groups[{i}] has no 'initial_lr' to resume from "
                        f"last_epoch={last_epoch}; load the optimizer's state first"
                    )
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        # The first step only settles the starting lrs; some rules must not decay on it.
        self._is_initial = True
        self.step()
        self._is_initial = False

    def get_lr(self) -> list[float]:
        raise NotImplementedError

    def step(self) -> None:
        """Advance one epoch and set each group's lr."""
        self._step_count += 1
        self.last_epoch += 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr(), strict=True):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self) -> list[float]:
        """The lrs the last ``step()`` set, one per group."""
        return list(self._last_lr)

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimizer (save that on its own)."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)

    def _current(self) -> list[float]:
        return [group["lr"] for group in self.optimizer.param_groups]


class LambdaLR(LRScheduler):
    """lr = base_lr · lr_lambda(epoch), with one function, or a list of one per group.

    ``state_dict`` keeps only the attributes of lambdas that are callable objects; plain
    functions are code and are not saved.
    """

    def __init__(
        self,
        optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]],
        last_epoch: int = -1,
    ) -> None:
        n = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n:
                raise ValueError(
                    f"LambdaLR: expected {n} lr_lambdas, one per param group; got {len(lr_lambda)}"
                )
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * n
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"LambdaLR: lr_lambda must be callable; got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [
            base * fn(self.last_epoch)
            for fn, base in zip(self.lr_lambdas, self.base_lrs, strict=True)
        ]

    def state_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        out["lr_lambdas"] = [
            None if isinstance(fn, types.FunctionType) else dict(fn.__dict__)
            for fn in self.lr_lambdas
        ]
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        lambdas = state.pop("lr_lambdas")
        self.__dict__.update(state)
        for fn, saved in zip(self.lr_lambdas, lambdas, strict=True):
            if saved is not None:
                fn.__dict__.update(saved)


class StepLR(LRScheduler):
    """lr = base_lr · gamma^(epoch // step_size): decay by gamma every step_size epochs."""

    def __init__(
        self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        self.step_size = positive_int(step_size, "step_size", "StepLR")
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        # Multiply the current lr (not base_lr): a change made to the groups carries on.
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current()
        return [lr * self.gamma for lr in self._current()]


class ExponentialLR(LRScheduler):
    """lr = base_lr · gamma^epoch: decay by gamma every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return self._current()
        return [lr * self.gamma for lr in self._current()]


class CosineAnnealingLR(LRScheduler):
    r"""Cosine annealing from base_lr down to eta_min over T_max epochs::

        lr(t) = eta_min + (base_lr - eta_min) · (1 + cos(π t / T_max)) / 2

    and back up over the next T_max epochs (the cosine goes on; no restart). As PyTorch,
    each step derives the lr from the previous one (so changes made to the groups carry on):

        lr(t) = eta_min + (lr(t-1) - eta_min) · (1 + cos(π t / T_max)) / (1 + cos(π (t-1) / T_max))

    except just after the minimum (t - 1 = T_max mod 2 T_max), where that ratio would divide
    by zero and the step adds (base_lr - eta_min)(1 - cos(π / T_max)) / 2 instead. Both
    forms give the same values, up to rounding.
    """

    def __init__(
        self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1
    ) -> None:
        self.T_max = positive_int(T_max, "T_max", "CosineAnnealingLR")
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        t, T, lo = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return self._current()
        if (t - 1 - T) % (2 * T) == 0:  # leaving the minimum
            return [lr + (base - lo) * (1 - math.cos(math.pi / T)) / 2
                    for lr, base in zip(self._current(), self.base_lrs, strict=True)]
        ratio = (1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T))
        return [ratio * (lr - lo) + lo for lr in self._current()]
