"""Learning-rate schedules: each ``step()`` writes the next lr into the optimizer's groups.

The sequences are PyTorch's: the same values, epoch for epoch, and the same state_dict.
"""

from __future__ import annotations

import math
import types
import warnings
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from ..arguments import positive_int
from .optimizer import Optimizer

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where "
    "possible. Please use `scheduler.step()` to step the scheduler. During the deprecation, if "
    "epoch is different from None, the closed form is used instead of the new chainable form, "
    "where available."
)


class LRScheduler:
    """The base of every schedule.

    ``last_epoch`` counts the ``step()`` calls (-1 before the first, which the constructor
    makes). With ``last_epoch=-1`` each group's current lr is remembered as its
    ``"initial_lr"`` (the base lr); to resume, pass the epoch reached and an optimizer whose
    groups already hold ``"initial_lr"`` (a loaded optimizer state does).
    Subclasses write ``get_lr()``: the lrs for epoch ``last_epoch``, from the current ones
    (PyTorch's chainable form), and, where that differs, ``_get_closed_form_lr()``: the
    same lrs from the base lrs alone, which ``step(epoch)`` and SequentialLR's switch use.
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
        self._is_initial = False
        self._initial_step()

    def _initial_step(self) -> None:
        """The constructor's step: it only settles the starting lrs, so some rules must not
        decay on it (``_is_initial`` tells them)."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list[float]:
        raise NotImplementedError

    def _get_closed_form_lr(self) -> list[float]:
        return self.get_lr()  # a rule written from the base lrs is its own closed form

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch and set each group's lr. ``epoch`` (deprecated, as in PyTorch)
        jumps to that epoch and takes the lrs from the closed form."""
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        if epoch is None:
            self.last_epoch += 1
            lrs = self.get_lr()
        else:
            self.last_epoch = epoch
            lrs = self._get_closed_form_lr()
        for group, lr in zip(self.optimizer.param_groups, lrs, strict=True):
            group["lr"] = lr
        self._last_lr = self._current()

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

    def _get_closed_form_lr(self) -> list[float]:
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """lr = base_lr · gamma^(number of milestones reached): decay by gamma at each milestone
    epoch (a milestone listed twice decays twice)."""

    def __init__(
        self,
        optimizer: Optimizer,
        milestones: Sequence[int],
        gamma: float = 0.1,
        last_epoch: int = -1,
    ) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        # Multiply the current lr (not base_lr): a change made to the groups carries on.
        if self.last_epoch not in self.milestones:
            return self._current()
        return [lr * self.gamma ** self.milestones[self.last_epoch] for lr in self._current()]

    def _get_closed_form_lr(self) -> list[float]:
        reached = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base * self.gamma**reached for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """lr = base_lr · gamma^epoch: decay by gamma every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return self._current()
        return [lr * self.gamma for lr in self._current()]

    def _get_closed_form_lr(self) -> list[float]:
        return [base * self.gamma**self.last_epoch for base in self.base_lrs]


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
            return [
                lr + (base - lo) * (1 - math.cos(math.pi / T)) / 2
                for lr, base in zip(self._current(), self.base_lrs, strict=True)
            ]
        ratio = (1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T))
        return [ratio * (lr - lo) + lo for lr in self._current()]

    def _get_closed_form_lr(self) -> list[float]:
        t, T, lo = self.last_epoch, self.T_max, self.eta_min
        return [lo + (base - lo) * (1 + math.cos(math.pi * t / T)) / 2 for base in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    r"""Cosine annealing from base_lr to eta_min over T_i epochs, then a restart at base_lr,
    each period T_mult times the one before (T_0 the first)::

        lr = eta_min + (base_lr - eta_min) · (1 + cos(π T_cur / T_i)) / 2

    with T_cur the epochs since the last restart. ``step(epoch)`` may be given a fractional
    epoch (``epoch + i / iters`` within an epoch, without a warning), as PyTorch's.
    """

    def __init__(
        self,
        optimizer: Optimizer,
        T_0: int,
        T_mult: int = 1,
        eta_min: float = 0.0,
        last_epoch: int = -1,
    ) -> None:
        self.T_0 = positive_int(T_0, "T_0", "CosineAnnealingWarmRestarts")
        if not isinstance(T_mult, int) or T_mult < 1:
            raise ValueError(
                f"CosineAnnealingWarmRestarts: T_mult must be an int >= 1; got {T_mult}"
            )
        self.T_i, self.T_mult, self.eta_min = T_0, T_mult, eta_min
        self.T_cur: float = last_epoch  # epochs since the last restart (fractional if given so)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        lo, t = self.eta_min, self.T_cur / self.T_i
        return [lo + (base - lo) * (1 + math.cos(math.pi * t)) / 2 for base in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:  # type: ignore[override]
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:  # one more epoch; a restart when the period is over
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur %= self.T_i
                self.T_i *= self.T_mult
        elif epoch < 0:
            raise ValueError(f"CosineAnnealingWarmRestarts: epoch must be >= 0; got {epoch}")
        elif epoch < self.T_0:
            self.T_i, self.T_cur = self.T_0, epoch
        elif self.T_mult == 1:
            self.T_cur = epoch % self.T_0
        else:  # n restarts have passed: T_0 (T_mult^n - 1) / (T_mult - 1) epochs
            n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
            self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
            self.T_i = self.T_0 * self.T_mult**n
        self.last_epoch = math.floor(epoch)
        for group, lr in zip(self.optimizer.param_groups, self.get_lr(), strict=True):
            group["lr"] = lr
        self._last_lr = self._current()


class LinearLR(LRScheduler):
    """lr = base_lr · factor(epoch), the factor going in a straight line from start_factor
    at epoch 0 to end_factor at total_iters, then staying there (a warmup, or a linear
    decay). As PyTorch, each step multiplies the current lr by the ratio of consecutive
    factors: 1 + (end - start) / (total_iters · start + (epoch - 1)(end - start)).
    """

    def __init__(
        self,
        optimizer: Optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if not 0 < start_factor <= 1:
            raise ValueError(f"LinearLR: start_factor must be in (0, 1]; got {start_factor}")
        if not 0 <= end_factor <= 1:
            raise ValueError(f"LinearLR: end_factor must be in [0, 1]; got {end_factor}")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = positive_int(total_iters, "total_iters", "LinearLR")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        start, end, n, t = self.start_factor, self.end_factor, self.total_iters, self.last_epoch
        if t == 0:
            return [lr * start for lr in self._current()]
        if self._is_initial or t > n:
            return self._current()
        ratio = 1.0 + (end - start) / (n * start + (t - 1) * (end - start))
        return [lr * ratio for lr in self._current()]

    def _get_closed_form_lr(self) -> list[float]:
        start, end, n = self.start_factor, self.end_factor, self.total_iters
        factor = start + (end - start) * min(n, self.last_epoch) / n
        return [base * factor for base in self.base_lrs]


class SequentialLR(LRScheduler):
    """One schedule after another: ``schedulers[i]`` runs from ``milestones[i - 1]`` (from
    epoch 0 for the first) and starts there from its closed form at its own epoch 0.

    The schedules must have been made on ``optimizer``; their constructors' steps are
    undone (the lrs go back to ``initial_lr``) and the first one starts afresh.
    """

    def __init__(
        self,
        optimizer: Optimizer,
        schedulers: Sequence[LRScheduler],
        milestones: Sequence[int],
        last_epoch: int = -1,
    ) -> None:
        if len(schedulers) < 1:
            raise ValueError("SequentialLR: expected at least one scheduler; got none")
        for i, s in enumerate(schedulers):
            if not isinstance(s, LRScheduler):
                raise TypeError(
                    f"SequentialLR: schedulers[{i}] must be an LRScheduler; got {type(s).__name__}"
                )
            if isinstance(s, ReduceLROnPlateau):
                raise ValueError(
                    f"SequentialLR: ReduceLROnPlateau (schedulers[{i}]) needs a metric in its "
                    "step, which SequentialLR cannot give"
                )
            if s.optimizer is not optimizer:
                raise ValueError(
                    f"SequentialLR: every scheduler must belong to the given optimizer; got "
                    f"schedulers[{i}] ({type(s).__name__}) on another"
                )
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                f"SequentialLR: expected one milestone fewer than schedulers; got "
                f"{len(schedulers)} schedulers and {len(milestones)} milestones"
            )
        self._schedulers = list(schedulers)
        self._milestones = list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        _undo_initial_steps(self)
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def step(self) -> None:  # type: ignore[override]
        self.last_epoch += 1
        i = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[i]
        if i > 0 and self._milestones[i - 1] == self.last_epoch:
            scheduler._update_lr(0)  # the next schedule starts at its epoch 0
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self) -> dict[str, Any]:
        """Its own state, with each schedule's state_dict under ``"_schedulers"``."""
        out = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        out["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        saved = state.pop("_schedulers")
        self.__dict__.update(state)
        for s, sd in zip(self._schedulers, saved, strict=True):
            s.load_state_dict(sd)


def _undo_initial_steps(scheduler: LRScheduler) -> None:
    """Take back the constructor's step of every schedule inside ``scheduler``."""
    inner = scheduler.__dict__.get("_schedulers")
    if inner is None:
        scheduler.last_epoch -= 1
        return
    for s in inner:
        _undo_initial_steps(s)


def _per_group(name: str, optimizer: Optimizer, value: Any) -> list[Any]:
    """One value per param group: a list or tuple as long as the groups, or one for all."""
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(
                f"OneCycleLR: {name} must have one value per param group; got {len(value)} "
                f"values for {n} groups"
            )
        return list(value)
    return [value] * n


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin), stepped once per batch for ``total_steps``
    (or ``epochs · steps_per_epoch``) steps:

        initial_lr = max_lr / div_factor,   min_lr = initial_lr / final_div_factor
        lr: initial_lr -> max_lr over the first pct_start of the steps, then -> min_lr
        momentum (or Adam's beta1): max_momentum -> base_momentum, then -> max_momentum

    each leg a half cosine (``anneal_strategy='cos'``) or a line (``'linear'``). With
    ``three_phase`` the lr climbs, comes back down to initial_lr symmetrically, then
    falls to min_lr while momentum stays at max_momentum. Phase i of the step numbers ends
    at step pct_start · total_steps - 1 (and twice that - 2 for the second of three). The
    groups keep ``initial_lr``, ``max_lr``, ``min_lr`` (and ``max_momentum``,
    ``base_momentum``) as PyTorch's do; stepping past total_steps is an error.
    """

    def __init__(
        self,
        optimizer: Optimizer,
        max_lr: float | Sequence[float],
        total_steps: int | None = None,
        epochs: int | None = None,
        steps_per_epoch: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        cycle_momentum: bool = True,
        base_momentum: float | Sequence[float] = 0.85,
        max_momentum: float | Sequence[float] = 0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"OneCycleLR: expected an Optimizer; got {type(optimizer).__name__}")
        if total_steps is not None:
            self.total_steps = positive_int(total_steps, "total_steps", "OneCycleLR")
        elif epochs is not None and steps_per_epoch is not None:
            self.total_steps = positive_int(epochs, "epochs", "OneCycleLR") * positive_int(
                steps_per_epoch, "steps_per_epoch", "OneCycleLR"
            )
        else:
            raise ValueError(
                "OneCycleLR: give total_steps, or epochs and steps_per_epoch; got "
                f"total_steps={total_steps}, epochs={epochs}, steps_per_epoch={steps_per_epoch}"
            )
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise ValueError(f"OneCycleLR: pct_start must be a float in [0, 1]; got {pct_start!r}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"OneCycleLR: anneal_strategy must be 'cos' or 'linear'; got {anneal_strategy!r}"
            )
        self.anneal_strategy = anneal_strategy
        up, last = float(pct_start * self.total_steps) - 1, self.total_steps - 1
        # (end step, start lr, end lr, start momentum, end momentum), by group keys
        if three_phase:
            down = float(2 * pct_start * self.total_steps) - 2
            self._schedule_phases = [
                (up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (down, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                (last, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        else:
            self._schedule_phases = [
                (up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (last, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]
        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for group, top in zip(optimizer.param_groups, max_lrs, strict=True):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(
                    "OneCycleLR: cycle_momentum needs an optimizer with momentum or betas; got "
                    f"{type(optimizer).__name__}"
                )
            self.use_beta1 = "betas" in optimizer.defaults
            tops = _per_group("max_momentum", optimizer, max_momentum)
            bases = _per_group("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for group, top, base in zip(optimizer.param_groups, tops, bases, strict=True):
                    self._set_momentum(group, top)
                    group["max_momentum"] = top
                    group["base_momentum"] = base
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group: dict[str, Any], value: float) -> None:
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[float]:
        """The lrs of step ``last_epoch``; sets the groups' momentum (or beta1) as well."""
        t = self.last_epoch
        if t > self.total_steps:
            raise ValueError(f"OneCycleLR: stepped {t} times; total_steps is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            begin = 0.0
            for i, (end, lr0, lr1, m0, m1) in enumerate(self._schedule_phases):
                if t <= end or i == len(self._schedule_phases) - 1:
                    pct = (t - begin) / (end - begin)
                    lrs.append(self._anneal(group[lr0], group[lr1], pct))
                    if self.cycle_momentum:
                        self._set_momentum(group, self._anneal(group[m0], group[m1], pct))
                    break
                begin = end
        return lrs


class ReduceLROnPlateau(LRScheduler):
    """Multiply each lr by ``factor`` (not below its ``min_lr``) once the metric given to
    ``step(metric)`` has not improved for more than ``patience`` steps, then wait
    ``cooldown`` steps before counting again.

    Improving means, for mode 'min' (a loss), metric < best · (1 - threshold) with
    threshold_mode 'rel' or metric < best - threshold with 'abs'; for mode 'max' (an
    accuracy), metric > best · (1 + threshold) or > best + threshold. A reduction smaller
    than ``eps`` is skipped.
    """

    def __init__(
        self,
        optimizer: Optimizer,
        mode: str = "min",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_mode: str = "rel",
        cooldown: int = 0,
        min_lr: float | Sequence[float] = 0,
        eps: float = 1e-8,
    ) -> None:
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau: factor must be < 1.0; got {factor}")
        if not isinstance(optimizer, Optimizer):
            raise TypeError(
                f"ReduceLROnPlateau: expected an Optimizer; got {type(optimizer).__name__}"
            )
        self.factor = factor
        self.optimizer = optimizer
        n = len(optimizer.param_groups)
        if isinstance(min_lr, Sequence):
            if len(min_lr) != n:
                raise ValueError(
                    f"ReduceLROnPlateau: expected {n} min_lrs, one per param group; got "
                    f"{len(min_lr)}"
                )
            self.default_min_lr: float | None = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * n
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceLROnPlateau: mode must be 'min' or 'max'; got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(
                f"ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs'; got {threshold_mode!r}"
            )
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = self._current()
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def _is_better(self, a: float, best: float) -> bool:
        if self.mode == "min":
            return a < (
                best * (1.0 - self.threshold)
                if self.threshold_mode == "rel"
                else best - self.threshold
            )
        return a > (
            best * (self.threshold + 1.0) if self.threshold_mode == "rel" else best + self.threshold
        )

    def step(self, metrics: Any, epoch: int | None = None) -> None:  # type: ignore[override]
        """Count one epoch with this metric (a number or a one-element tensor)."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = self._current()

    def _reduce_lr(self) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"ReduceLROnPlateau: the optimizer has {len(groups)} param groups and "
                    f"min_lrs {len(self.min_lrs)} values; a group was added since; set min_lrs "
                    "to one value per group"
                )
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, low in zip(groups, self.min_lrs, strict=True):
            old = float(group["lr"])
            new = max(old * self.factor, low)
            if old - new > self.eps:
                group["lr"] = new
