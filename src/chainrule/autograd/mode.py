"""Grad mode and anomaly mode: per thread, so two threads training two models don't meet.

What each mode means for recording lives in primitive.py (apply) and for the backward pass in
engine.py; this module only keeps the flags and the context managers that set them.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable
from contextlib import ContextDecorator
from typing import Any, TypeVar


class _State(threading.local):
    def __init__(self) -> None:
        # grad_enabled is what ops read: whether to record, which is the grad mode the user
        # set (grad_mode, what is_grad_enabled says) unless inference mode is on, as PyTorch
        self.grad_enabled = True
        self.grad_mode = True
        self.inference = False
        self.anomaly = False
        # What each open block restores on exit: kept per thread, not on the context
        # object, so one no_grad() instance (or decorator) can be open in two threads.
        self.saved_grad: list[tuple[bool, bool]] = []  # (grad_mode, inference)
        self.saved_anomaly: list[bool] = []
        # Inside a backward pass in anomaly mode: the ops of the backward formulas that made
        # NaN or inf from finite inputs (see engine.AnomalyCheck); None elsewhere.
        self.backward_ops: list[str] | None = None


state = _State()  # this thread's flags; read on every op, so a plain attribute each


def is_grad_enabled() -> bool:
    """The grad mode the user set (True inside ``enable_grad()`` even in inference mode,
    where nothing records, as PyTorch says)."""
    return state.grad_mode


def is_inference_mode_enabled() -> bool:
    return state.inference


def is_anomaly_enabled() -> bool:
    return state.anomaly


def _set_grad(grad_mode: bool, inference: bool) -> None:
    state.grad_mode, state.inference = grad_mode, inference
    state.grad_enabled = grad_mode and not inference


_F = TypeVar("_F", bound=Callable[..., Any])


class _Decorator(ContextDecorator):
    """A context manager that also decorates: a function runs inside a fresh one per call;
    a generator function runs inside one at each resume (its caller's modes hold between
    them, while it is suspended), as PyTorch's decorators do."""

    def __enter__(self) -> None:
        raise NotImplementedError

    def __exit__(self, *exc: object) -> None:
        raise NotImplementedError

    def _recreate_cm(self) -> _Decorator:
        return self

    def __call__(self, func: _F) -> _F:
        if not inspect.isgeneratorfunction(func):
            return super().__call__(func)
        fresh = self._recreate_cm

        @functools.wraps(func)
        def generator(*args: Any, **kwargs: Any) -> Any:
            gen = func(*args, **kwargs)
            with fresh():
                try:
                    out = gen.send(None)
                except StopIteration as stop:
                    return stop.value
            while True:
                try:
                    try:
                        given = yield out
                    except GeneratorExit:
                        with fresh():
                            gen.close()
                        raise
                    except BaseException as err:
                        with fresh():
                            out = gen.throw(err)
                    else:
                        with fresh():
                            out = gen.send(given)
                except StopIteration as stop:
                    return stop.value

        return generator  # type: ignore[return-value]


class _ThreadFlag(_Decorator):
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


class _GradMode(_Decorator):
    """Sets this thread's grad mode inside (recording follows it unless inference mode is
    on), and restores both on exit."""

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)

    def __enter__(self) -> None:
        state.saved_grad.append((state.grad_mode, state.inference))
        _set_grad(self.mode, state.inference)

    def __exit__(self, *exc: object) -> None:
        _set_grad(*state.saved_grad.pop())


class _SetNow(_Decorator):
    """PyTorch's ``set_grad_enabled`` / ``set_detect_anomaly`` behaviour: the call itself
    sets this thread's mode, so ``cr.set_grad_enabled(False)`` on its own line switches it
    until it is set again; a ``with`` block restores on exit what the mode was before the
    call, and as a decorator each call of the function sets and restores it anew."""

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self.prev = self._get()
        self._set(self.mode)

    def _get(self) -> Any:
        raise NotImplementedError

    def _set(self, value: Any) -> None:
        raise NotImplementedError

    def __enter__(self) -> None:
        pass  # already set by the call

    def __exit__(self, *exc: object) -> None:
        self._set(self.prev)

    def __call__(self, func: _F) -> _F:
        self._set(self.prev)  # decorating a function changes no mode
        return super().__call__(func)

    def _recreate_cm(self) -> _SetNow:  # a fresh instance per call of a decorated function
        return type(self)(self.mode)


class set_grad_enabled(_SetNow):
    """Turn recording on or off in this thread: as a call, a context manager or a decorator."""

    def _get(self) -> Any:
        return state.grad_mode

    def _set(self, value: Any) -> None:
        _set_grad(bool(value), state.inference)


class no_grad(_GradMode):
    """Record nothing inside: results do not require grad and keep no graph."""

    def __init__(self) -> None:
        super().__init__(False)


class enable_grad(_GradMode):
    """Record again inside a `no_grad` block (not inside inference mode, as PyTorch)."""

    def __init__(self) -> None:
        super().__init__(True)


class inference_mode(_Decorator):
    """PyTorch's inference_mode, as a context manager or a decorator: nothing is recorded
    inside, even within ``enable_grad()`` (the difference PyTorch makes besides, tensors that
    can never join a graph later, has no speed to win here); ``inference_mode(False)`` leaves
    inference mode and turns grad mode on, as PyTorch's does."""

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)

    def __enter__(self) -> None:
        state.saved_grad.append((state.grad_mode, state.inference))
        _set_grad(not self.mode, self.mode)

    def __exit__(self, *exc: object) -> None:
        _set_grad(*state.saved_grad.pop())

    def clone(self) -> inference_mode:
        return type(self)(self.mode)


class set_detect_anomaly(_SetNow):
    """Turn anomaly detection on or off in this thread: as a call, a context manager or a
    decorator."""

    def _get(self) -> Any:
        return state.anomaly

    def _set(self, value: Any) -> None:
        state.anomaly = bool(value)


class detect_anomaly(_ThreadFlag):
    """Raise a RuntimeError naming the op when a forward or backward step makes NaN or inf.

    Off by default; when off it costs one attribute test per op.
    """

    flag, saved = "anomaly", "saved_anomaly"

    def __init__(self) -> None:
        super().__init__(True)
