"""Recording a forward pass as the list of primitives it applied, with every argument, for
export. The graph the engine records serves backward and keeps no forward options, so the
exporter watches ``Function.apply`` instead, for the one call it makes; it also records sort,
topk, argmax, comparisons and in-place writes as steps of their own (they run on arrays,
outside the ops) and a projected LSTM's loop over time as one step, and watches the
Tensor's conversion methods, which tell it when a value leaves the graph for Python."""

from __future__ import annotations

import os
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..autograd.primitive import Function
from ..nn import activation, rnn
from ..ops.elementwise import Piecewise
from ..tensor import Tensor, arithmetic, reductions

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # src/chainrule


class TracerWarning(UserWarning):
    """A forward read a tensor's value as a Python value while it was exported: the graph
    holds what it read as a constant, right for this input only (PyTorch's TracerWarning)."""


@dataclass
class Step:
    """One primitive as it ran: its class name, its inputs (Tensors, arrays, numbers or
    None, in order), its keyword options and the Tensor it made (``more``: the others it
    made, sort's indices)."""

    op: str
    inputs: tuple[Any, ...]
    options: dict[str, Any]
    out: Any
    more: tuple[Any, ...] = ()


_lock = threading.Lock()  # one trace at a time: the watch is on the class


def user_frame() -> str:
    """file:line of the innermost caller outside chainrule's own source."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(PACKAGE):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return "<unknown>"
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


# The Tensor's methods that hand a value to Python, with the words a report gives each
_CONVERSIONS = {
    "numpy": "numpy()",
    "__array__": "__array__() (np.asarray)",
    "item": "item()",
    "tolist": "tolist()",
    "__float__": "float()",
    "__int__": "int()",
    "__index__": "__index__()",
    "__bool__": "bool() (a tensor in an if, and, or, not)",
}


def _watched(report: Callable[[str], None], owner: int) -> dict[str, Any]:
    """The conversion methods, each calling ``report`` first when the tracing thread calls
    it (other threads' run as usual)."""

    def watch(name: str, words: str) -> Any:
        method = getattr(Tensor, name)

        def watched(self: Any, *args: Any, **kwargs: Any) -> Any:
            if threading.get_ident() == owner:
                report(words)
            return method(self, *args, **kwargs)

        return watched

    return {name: watch(name, words) for name, words in _CONVERSIONS.items()}


def _watch(constants: str, warned: set[str] | None) -> Callable[[str], None]:
    """What the Tensor's conversion methods call while the trace runs: refuse, or warn once
    per place (``warned`` None: the second forward, which only checks, stays quiet)."""

    def report(op: str) -> None:
        where = user_frame()
        text = (
            f"onnx.export: {op} turns a tensor's value into a Python value at {where}; the "
            f"graph would hold it as a constant, right for this input only"
        )
        if constants != "allow":
            raise RuntimeError(f"{text}; compute it with tensor ops, or pass constants='allow'")
        if warned is not None and where not in warned:
            warned.add(where)
            warnings.warn(text, TracerWarning, stacklevel=3)

    return report


@contextmanager
def recording(constants: str = "refuse", quiet: bool = False) -> Iterator[list[Step]]:
    """While open, every ``Function.apply`` this thread makes appends its Step to the list
    it yields (other threads' run as usual), and so does each sort, topk and argmax; a
    Tensor's value read as a Python value (``item()``, ``bool()``, ...) raises, or with
    ``constants="allow"`` warns (once per place; not at all when ``quiet``)."""
    steps: list[Step] = []
    run: Callable[..., Any] = Function.__dict__["apply"].__func__
    owner = threading.get_ident()
    inside = [0]  # > 0 within a recorded sort or argmax: its own ops are not steps

    def apply(cls: Any, *inputs: Any, **options: Any) -> Any:
        out = run(cls, *inputs, **options)
        if threading.get_ident() == owner and not inside[0]:
            if cls is Piecewise:
                options = {**options, **_bounds_of(sys._getframe(1))}
            # the primitive's name: a node named as PyTorch's (Function.named) is its op's
            steps.append(Step(cls.primitive.__name__, inputs, options, out))
        return out

    def top(t: Any, k: Any, dim: int, largest: bool, op: str, node: str) -> Any:
        options = dict(k=k, dim=dim, largest=largest)
        return whole("TopK", top_, (t,), options, k, dim, largest, op, node)

    def arg(t: Any, dim: Any, keepdim: bool, fn: Any, op: str) -> Any:
        name = "ArgMax" if op == "argmax" else "ArgMin"
        return whole(name, arg_, (t,), dict(dim=dim, keepdim=keepdim), dim, keepdim, fn, op)

    def select(t: Any, dim: int, keepdim: bool, fn: Any, op: str) -> Any:
        name = "MaxDim" if op == "max" else "MinDim"
        return whole(name, select_, (t,), dict(dim=dim, keepdim=keepdim), dim, keepdim, fn, op)

    def whole(name: str, fn: Any, inputs: tuple, options: dict, *args: Any) -> Any:
        """fn(inputs[0], *args) as one step: values (and indices where it makes them)."""
        if threading.get_ident() != owner or inside[0]:
            return fn(inputs[0], *args)
        inside[0] += 1
        try:
            made = fn(inputs[0], *args)
        finally:
            inside[0] -= 1
        outs = tuple(made) if isinstance(made, tuple) else (made,)
        steps.append(Step(name, inputs, options, outs[0], outs[1:]))
        return made

    def write(self: Any, op: str, compute: Any, written: Any = None) -> Any:
        """An in-place op: its value becomes the tensor's, as a step ("InPlace")."""
        if threading.get_ident() != owner or inside[0]:
            return write_(self, op, compute, written)
        made: list[Any] = []

        def keep(t: Any) -> Any:
            made.append(compute(t))
            return made[-1]

        out = write_(self, op, keep, written)
        steps.append(Step("InPlace", (made[0],), {"op": op}, self))
        return out

    def fill(self: Any, op: str, values: Any) -> Any:
        """copy_, fill_, zero_: values broadcast into the tensor, as a step ("InPlace")
        unless _write made it one."""
        if threading.get_ident() != owner or inside[0]:
            return fill_(self, op, values)
        before = len(steps)
        out = fill_(self, op, values)
        if not any(step.op == "InPlace" and step.out is self for step in steps[before:]):
            steps.append(Step("InPlace", (values,), {"op": op}, self))
        return out

    def compare(fn: Any, a: Any, b: Any) -> Any:
        """A comparison or logical and, or (arrays, outside the ops) as a step ("Compare")."""
        out = compare_(fn, a, b)
        if threading.get_ident() == owner and not inside[0]:
            steps.append(Step("Compare", (a, b), {"fn": fn.__name__}, out))
        return out

    def invert(self: Any) -> Any:
        out = invert_(self)
        if threading.get_ident() == owner and not inside[0]:
            steps.append(Step("Invert", (self,), {}, out))
        return out

    def to(self: Any, *args: Any, **kwargs: Any) -> Any:
        """A cast to or from integers and bools (off the ops) as a step ("Cast")."""
        before = len(steps)
        out = to_(self, *args, **kwargs)
        mine = threading.get_ident() == owner and not inside[0]
        if mine and out is not self and out.dtype != self.dtype and len(steps) == before:
            steps.append(Step("Cast", (self,), {"dtype": out.dtype}, out))
        return out

    def direction(mode: str, x: Any, state: tuple, weights: list, reverse: bool, relu: bool) -> Any:
        """A projected LSTM's layer in one direction (a loop over time, one step per time
        step, so as many as the sequence is long) as one step ("ProjectedLSTMLayer"):
        inputs x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr; its output and then h_n, c_n."""
        projected = mode == "LSTM" and len(weights) > 4 and weights[4] is not None
        if not projected or threading.get_ident() != owner or inside[0]:
            return direction_(mode, x, state, weights, reverse, relu)
        inside[0] += 1
        try:
            out, final = direction_(mode, x, state, weights, reverse, relu)
        finally:
            inside[0] -= 1
        inputs = (x, *state, *weights)
        steps.append(Step("ProjectedLSTMLayer", inputs, {"reverse": reverse}, out, final))
        return out, final

    direction_ = rnn.run_direction
    compare_, invert_, to_ = arithmetic._compare, Tensor.__invert__, Tensor.to
    top_, arg_, select_ = reductions._top, reductions._arg, reductions._select
    write_, fill_ = Tensor._write, Tensor._fill
    with (
        _lock,
        _patched(Function, apply=classmethod(apply)),
        _patched(reductions, _top=top, _arg=arg, _select=select),
        _patched(arithmetic, _compare=compare),
        _patched(rnn, run_direction=direction),
        _patched(Tensor, _write=write, _fill=fill, __invert__=invert, to=to),
        _patched(Tensor, **_watched(_watch(constants, None if quiet else set()), owner)),
    ):
        yield steps


# The activations whose Piecewise step holds its bounds only as arrays (a mask and a clipped
# copy, read from the input): their arguments, read by name from the function of
# activation.py that applies the step (hardtanh's, relu6's, threshold's, whichever helper
# they share), as the step's options
_BOUNDS = {"clip": ("min_val", "max_val"), "threshold": ("threshold", "value")}


def _bounds_of(frame: Any) -> dict[str, Any]:
    """{"clip": (min_val, max_val)} where frame is hardtanh's (relu6's too), {"threshold":
    (threshold, value)} where it is threshold's, else nothing (the mapping checks them against
    the step's mask and values, so a wrong reading is refused, not written)."""
    if frame.f_globals is not vars(activation):
        return {}
    for key, names in _BOUNDS.items():
        if all(n in frame.f_locals for n in names):
            return {key: tuple(frame.f_locals[n] for n in names)}
    return {}


@contextmanager
def _patched(owner: Any, **attrs: Any) -> Iterator[None]:
    """attrs set on owner (a class or a module) meanwhile, then put back as they were (an
    attribute a class inherited is removed from it again)."""
    before = {name: owner.__dict__[name] for name in attrs if name in owner.__dict__}
    for name, value in attrs.items():
        setattr(owner, name, value)
    try:
        yield
    finally:
        for name in attrs:
            if name in before:
                setattr(owner, name, before[name])
            else:
                delattr(owner, name)
