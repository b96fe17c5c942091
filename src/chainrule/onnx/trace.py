"""Recording a forward pass as the list of primitives it applied, with every argument, for
export. The graph the engine records serves backward and keeps no forward options, so the
exporter watches ``Function.apply`` instead, for the one call it makes."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..autograd.function import Function


@dataclass
class Step:
    """One primitive as it ran: its class name, its inputs (Tensors, arrays, numbers or
    None, in order), its keyword options and the Tensor it made."""

    op: str
    inputs: tuple[Any, ...]
    options: dict[str, Any]
    out: Any


_lock = threading.Lock()  # one trace at a time: the watch is on the class


@contextmanager
def recording() -> Iterator[list[Step]]:
    """While open, every ``Function.apply`` this thread makes appends its Step to the list
    it yields (other threads' run as usual)."""
    steps: list[Step] = []
    original = Function.__dict__["apply"]
    run: Callable[..., Any] = original.__func__
    owner = threading.get_ident()

    def apply(cls: type, *inputs: Any, **options: Any) -> Any:
        out = run(cls, *inputs, **options)
        if threading.get_ident() == owner:
            steps.append(Step(cls.__name__, inputs, options, out))
        return out

    with _lock:
        Function.apply = classmethod(apply)  # type: ignore[assignment,method-assign]
        try:
            yield steps
        finally:
            Function.apply = original  # type: ignore[method-assign]
