"""Grad mode and anomaly mode: per thread, so two threads training two models don't meet.

What each mode means for recording lives in function.py (apply) and for the backward pass in
engine.py; this module only keeps the flags and the context managers that set them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import ContextDecorator
from typing import Any, TypeVar


class _State(threading.local):
    def __init__(self) -> None:
        self.grad_enabled = True
        self.anomaly = False
        # What each open block restores on exit: kept per thread, not on the context
        # object, so one no_grad() instance (or decorator) can be open in two threads.
        self.saved_grad: list[bool] = []
        self.saved_anomaly: list[bool] = []
        # Inside a backward pass in anomaly mode: the ops of the backward formulas that made
        # NaN or inf from finite inputs (see engine.AnomalyCheck); None elsewhere.
        self.backward_ops: list[str] | None = None


state = _State()  # this thread's flags; read on every op, so a plain attribute each


def is_grad_enabled() -> bool:
    return state.grad_enabled


def is_anomaly_enabled() -> bool:
    return state.anomaly


class _ThreadFlag(ContextDecorator):
    """Context manager and decorator that sets one of this thread's flags (``flag``, an
    attribute of state) inside, and restores it on exit from the stack ``saved``."""

    flag = ""
    saved = ""

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)

    def __enter__(self) -> None:
        getattr(state, self.saved).append(getattr(state, self.flag))
        setattr(state, self.flag, self.mode)

    def __exit__(self, *exc: object) -> None:
        setattr(state, self.flag, getattr(state, self.saved).pop())


_F = TypeVar("_F", bound=Callable[..., Any])


class _SetNow(_ThreadFlag):
    """PyTorch's ``set_grad_enabled`` / ``set_detect_anomaly`` behaviour: the call itself
    sets this thread's flag, so ``cr.set_grad_enabled(False)`` on its own line switches the
    mode until it is set again; a ``with`` block restores on exit what the flag was before
    the call, and as a decorator each call of the function sets and restores it anew."""

    def __init__(self, mode: bool) -> None:
        super().__init__(mode)
        self.prev = getattr(state, self.flag)
        setattr(state, self.flag, self.mode)

    def __enter__(self) -> None:
        pass  # already set by the call

    def __exit__(self, *exc: object) -> None:
        setattr(state, self.flag, self.prev)

    def __call__(self, func: _F) -> _F:
        setattr(state, self.flag, self.prev)  # decorating a function changes no mode
        return super().__call__(func)

    def _recreate_cm(self) -> _SetNow:  # a fresh instance per call of a decorated function
        return type(self)(self.mode)


class set_grad_enabled(_SetNow):
    """Turn recording on or off in this thread: as a call, a context manager or a decorator."""

    flag, saved = "grad_enabled", "saved_grad"


class _GradMode(_ThreadFlag):
    flag, saved = "grad_enabled", "saved_grad"


class no_grad(_GradMode):
    """Record nothing inside: results do not require grad and keep no graph."""

    def __init__(self) -> None:
        super().__init__(False)


class enable_grad(_GradMode):
    """Record again inside a `no_grad` block."""

    def __init__(self) -> None:
        super().__init__(True)


class inference_mode(_ThreadFlag):
    """PyTorch's inference_mode, as a context manager or a decorator: nothing is recorded
    inside, as under no_grad (the only difference PyTorch makes, tensors that can never
    join a graph later, has no speed to win here); ``inference_mode(False)`` changes
    nothing."""

    flag, saved = "grad_enabled", "saved_grad"

    def __init__(self, mode: bool = True) -> None:
        super().__init__(False)
        self.inside = bool(mode)

    def __enter__(self) -> None:
        state.saved_grad.append(state.grad_enabled)
        if self.inside:
            state.grad_enabled = False


class set_detect_anomaly(_SetNow):
    """Turn anomaly detection on or off in this thread: as a call, a context manager or a
    decorator."""

    flag, saved = "anomaly", "saved_anomaly"


class detect_anomaly(_ThreadFlag):
    """Raise a RuntimeError naming the op when a forward or backward step makes NaN or inf.

    Off by default; when off it costs one attribute test per op.
    """

    flag, saved = "anomaly", "saved_anomaly"

    def __init__(self) -> None:
        super().__init__(True)
