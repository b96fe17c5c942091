"""Forward-mode AD, as PyTorch's ``torch.autograd.forward_ad``: a dual tensor is a primal
carrying a tangent at a dual level, and every op on duals gives its output the directional
derivative along the inputs' tangents.

    with forward_ad.dual_level():
        x = forward_ad.make_dual(primal, tangent)
        y = f(x)
        jvp = forward_ad.unpack_dual(y).tangent

Function.apply calls ``push`` when an input carries a tangent. The common ops have a jvp
rule of their own, one line of Tensor ops each (``JVP_RULES``: ``d(a * b) = da * b + a *
db``). Every other op's tangent ``J t`` is found from its backward, which is linear in its
cotangent ``u``: the gradient of ``<J^T u, t>`` with respect to ``u`` (two local reverse
passes, exact wherever the backward is differentiable). A view op is linear in its input, so
its tangent is the same view of the input's tangent, sharing its memory as PyTorch's.

Tangents live on the tensors (``_tangent``) and are dropped when the level exits. As
PyTorch's, one level at a time; ops on duals do not require grad unless their primals do.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING, Any, NamedTuple

from ..array.tensor_type import tensor_type
from .engine import grad
from .mode import enable_grad, set_grad_enabled, state
from .primitive import dual as _hook

if TYPE_CHECKING:
    from ..tensor import Tensor

# active[0]: whether a dual level is open and tangents flow (the one check Function.apply
# makes on every op); paused while an op's own tangent is being found, or a custom Function's
# forward runs (its jvp gives the tangent).
active = [False]
_level: list[int | None] = [None]
_carriers: dict[int, Any] = {}  # id -> weak reference of every tensor given a tangent


def _set(on: bool) -> None:
    """Let tangents flow through every op (Function.apply's hook), or not."""
    active[0] = on
    _hook[0] = push if on else None


class UnpackedDualTensor(NamedTuple):
    """What ``unpack_dual`` returns: the primal (a view of the dual, sharing its memory) and
    its tangent at the level (None where it has none)."""

    primal: Any
    tangent: Any


def enter_dual_level() -> int:
    """Open a dual level and return its index; one at a time, as PyTorch's."""
    if _level[0] is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _level[0] = 0
    _set(True)
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the level: every tangent made at it is dropped."""
    if _level[0] is None or (level is not None and level != _level[0]):
        raise RuntimeError(
            f"exit_dual_level: no dual level {level if level is not None else ''} is open; "
            "enter one first (dual_level())"
        )
    for ref in list(_carriers.values()):  # a dropped tangent may free a carrier
        t = ref()
        if t is not None:
            t.__dict__.pop("_tangent", None)
    _carriers.clear()
    _level[0] = None
    _set(False)


@contextmanager
def dual_level() -> Iterator[int]:
    """The dual level as a context manager: ``with dual_level(): ...``."""
    level = enter_dual_level()
    try:
        yield level
    finally:
        exit_dual_level(level=level)


def _current(op: str, level: int | None) -> int:
    if _level[0] is None:
        if op == "make_dual":
            raise RuntimeError(
                "Trying to create a dual Tensor for forward AD but no level exists, make sure "
                "to enter_dual_level() first."
            )
        return -1
    if level is not None and level != _level[0]:
        raise RuntimeError(f"{op}: no dual level {level} is open; the open one is {_level[0]}")
    return _level[0]


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of ``tensor`` (sharing its memory and its graph) carrying ``tangent``."""
    _current("make_dual", level)
    T = tensor_type()
    if not isinstance(tensor, T) or not isinstance(tangent, T):
        raise TypeError(
            f"make_dual: expected tensor and tangent to be Tensors; got "
            f"{type(tensor).__name__} and {type(tangent).__name__}"
        )
    if tensor._array.dtype.kind not in "fc":
        raise ValueError(
            f"Expected primal to be floating point or complex, but got: {tensor.dtype}"
        )
    if tangent._array.dtype.kind not in "fc":
        raise ValueError(
            f"Expected tangent to be floating point or complex, but got: {tangent.dtype}"
        )
    if tuple(tensor.shape) != tuple(tangent.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}."
        )
    _set(False)
    try:
        dual = tensor[...]
    finally:
        _set(True)
    _attach(dual, tangent)
    return dual


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)``: a view of ``tensor`` without its tangent, and the tangent at the
    level (None where it has none, or no level is open)."""
    if _current("unpack_dual", level) < 0:
        return UnpackedDualTensor(tensor, None)
    tangent = tangent_of(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    was = active[0]
    _set(False)
    try:
        primal = tensor[...]
    finally:
        _set(was)
    return UnpackedDualTensor(primal, tangent)


def tangent_of(x: Any) -> Any:
    """The tangent ``x`` carries at the open level, or None."""
    d = getattr(x, "__dict__", None)
    return None if d is None else d.get("_tangent")


def _attach(t: Tensor, tangent: Any) -> None:
    t.__dict__["_tangent"] = tangent
    key = id(t)
    _carriers[key] = weakref.ref(t, _forget(key))


def _forget(key: int) -> Any:
    """The weak reference's callback: a collected tensor's entry goes."""
    return lambda _: _carriers.pop(key, None)


def set_tangent(t: Tensor, tangent: Any) -> None:
    """Give ``t`` a tangent (an in-place op's result, written back into ``t``); None drops it."""
    if tangent is None:
        t.__dict__.pop("_tangent", None)
    else:
        _attach(t, tangent)


def push(cls: Any, inputs: tuple[Any, ...], options: dict[str, Any], out: Tensor) -> None:
    """Give ``out``, made by ``cls`` from ``inputs``, its tangent where an input carries one."""
    tangents = [tangent_of(x) for x in inputs]
    if all(t is None for t in tangents):
        return
    if out._array.dtype.kind not in "fc":
        return
    _set(False)
    try:
        if (
            cls.view
            and tangents[0] is not None
            and all(t is None for t in tangents[1:])
            and not cls.__name__.startswith("AsStrided")  # strides of the input's storage
        ):
            tangent = cls.apply(tangents[0], *inputs[1:], **options)  # linear in its input
        else:
            rule = JVP_RULES.get(cls.__name__)
            if rule is None:
                tangent = _pushed(cls, inputs, tangents, options)
            else:
                tangent = _ruled(rule, cls, inputs, tangents, options, out)
    finally:
        _set(True)
    if tangent is not None:
        _attach(out, tangent)


def _ruled(rule: Any, cls: Any, inputs: tuple, tangents: list, options: dict, out: Any) -> Any:
    """``J t`` of one op by its jvp rule, in the output's shape and dtype; recorded on the
    graph only where a primal or tangent requires grad (a derivative of it is wanted)."""
    differentiable = state.grad_enabled and any(
        getattr(x, "requires_grad", False) for x in [*inputs, *tangents]
    )
    primal = out if differentiable else out.detach()
    with set_grad_enabled(differentiable):
        tangent = rule(*inputs, *tangents, out=primal, **options)
        if tuple(tangent.shape) != tuple(out.shape):  # an input broadcast against the others
            tangent = tangent.expand(out.shape).contiguous()
        if tangent._array.dtype != out._array.dtype:
            tangent = tangent.to(out.dtype)
    return tangent


def _plus(*parts: Any) -> Any:
    """The sum of the parts that are not None (an input without a tangent adds nothing)."""
    total = None
    for p in parts:
        if p is not None:
            total = p if total is None else total + p
    return total


def _times(t: Any, factor: Any) -> Any:
    return None if t is None else t * factor


def _linear(*args: Any) -> Any:
    """d(x @ W^T + b) = dx @ W^T + x @ dW^T + db (the bias may be left out)."""
    half = len(args) // 2
    x, w, b = (*args[:half], None)[:3]
    tx, tw, tb = (*args[half:], None)[:3]
    return _plus(None if tx is None else tx @ w.mT, None if tw is None else x @ tw.mT, tb)


# The jvp rule of each common op: d(out) from the inputs, their tangents (None where an input
# has none) and the output, in Tensor ops; the output's tangent, before broadcasting.
JVP_RULES: dict[str, Any] = {
    "Add": lambda a, b, ta, tb, out: _plus(ta, tb),
    "Sub": lambda a, b, ta, tb, out: _plus(ta, None if tb is None else -tb),
    "Mul": lambda a, b, ta, tb, out: _plus(_times(ta, b), _times(tb, a)),
    "Div": lambda a, b, ta, tb, out: _plus(
        None if ta is None else ta / b, None if tb is None else -tb * out / b
    ),
    "Neg": lambda a, ta, out: -ta,
    "Exp": lambda a, ta, out: ta * out,
    "Log": lambda a, ta, out: ta / a,
    "Sqrt": lambda a, ta, out: ta / (2 * out),
    "Sin": lambda a, ta, out: ta * a.cos(),
    "Cos": lambda a, ta, out: -ta * a.sin(),
    "Tanh": lambda a, ta, out: ta * ((1.0 - out) * (1.0 + out)),
    "Sigmoid": lambda a, ta, out: ta * out * (1.0 - out),
    "Relu": lambda a, ta, out: ta * (out != 0),
    "Sum": lambda a, ta, out, dims=None, keepdim=False: ta.sum(dim=dims, keepdim=keepdim),
    "Mean": lambda a, ta, out, dims=None, keepdim=False: ta.mean(dim=dims, keepdim=keepdim),
    "MatMul": lambda a, b, ta, tb, out: _plus(
        None if ta is None else ta @ b, None if tb is None else a @ tb
    ),
    "Linear": lambda *args, out: _linear(*args),
    "Softmax": lambda a, ta, out, dim: out * (ta - (ta * out).sum(dim=dim, keepdim=True)),
    "LogSoftmax": lambda a, ta, out, dim: ta - (ta * out.exp()).sum(dim=dim, keepdim=True),
}


def _pushed(cls: Any, inputs: tuple, tangents: list, options: dict) -> Any:
    """``J t`` of one op, from its backward: d<J^T u, t>/du."""
    differentiable = state.grad_enabled and any(
        getattr(x, "requires_grad", False) for x in [*inputs, *tangents]
    )
    with enable_grad():
        leaves = []
        for x, t in zip(inputs, tangents, strict=True):
            if t is not None:  # an alias: the gradient counts no path around this op
                x = x[...] if x.requires_grad else x.detach().requires_grad_(True)
            elif isinstance(x, tensor_type()):
                x = x.detach()
            leaves.append(x)
        y = cls.apply(*leaves, **options)
        if not y.requires_grad:
            return None
        u = y.new_ones(y.shape).requires_grad_(True)
        wrt = [x for x, t in zip(leaves, tangents, strict=True) if t is not None]
        ts = [t for t in tangents if t is not None]
        gs = grad(y, wrt, grad_outputs=u, create_graph=True, allow_unused=True)
        total = None
        for g, t in zip(gs, ts, strict=True):
            if g is None:
                continue
            part = (g * t.to(g.dtype)).sum()
            total = part if total is None else total + part
        if total is None or not total.requires_grad:
            return y.detach().mul(0)
        (tangent,) = grad(total, [u], create_graph=differentiable, allow_unused=True)
    if tangent is None:
        return y.detach().mul(0)
    return tangent if differentiable else tangent.detach()


def carries(args: tuple[Any, ...]) -> bool:
    """Whether an argument carries a tangent at the open level."""
    for a in args:
        d = getattr(a, "__dict__", None)
        if d is not None and "_tangent" in d:
            return True
    return False


def paused(on: bool = True) -> AbstractContextManager[None]:
    """Tangents do not flow inside (a custom Function's forward: its jvp gives them); with
    ``on`` False, nothing changes (and nothing is made: custom Functions' ordinary path)."""
    return _pausing() if on else _NOTHING


@contextmanager
def _pausing() -> Iterator[None]:
    _set(False)
    try:
        yield
    finally:
        _set(_level[0] is not None)


_NOTHING = nullcontext()


def custom(cls: Any, ctx: Any, args: tuple[Any, ...], output: Any) -> Any:
    """A custom Function's outputs given the tangents its ``jvp`` returns (one per output),
    from the inputs' tangents (zeros for a tensor without one, None for a non-tensor); what
    ``ctx.save_for_forward`` saved is ``ctx.saved_tensors`` inside jvp, as PyTorch's."""
    T = tensor_type()
    tangents = []
    for a in args:
        if isinstance(a, T):
            t = tangent_of(a)
            tangents.append(a.detach().new_zeros(a.shape) if t is None else t)
        else:
            tangents.append(None)
    keep = ctx._saved, ctx._saved_versions, ctx._links
    forward = ctx.__dict__.get("_saved_forward")
    if forward is not None:
        versions = tuple(None if t is None else _version(t) for t in forward)
        ctx._saved, ctx._saved_versions, ctx._links = forward, versions, {}
    try:
        with paused():
            result = cls.jvp(ctx, *tangents)
    finally:
        ctx._saved, ctx._saved_versions, ctx._links = keep
    outs = output if isinstance(output, tuple) else (output,)
    results = result if isinstance(result, tuple) else (result,)
    if len(results) != len(outs):
        raise RuntimeError(
            f"{cls.__name__}: jvp is expected to return one tangent per output of forward; "
            f"got {len(results)} for {len(outs)} output(s)"
        )
    for o, t in zip(outs, results, strict=True):
        if isinstance(o, T) and t is not None and o._array.dtype.kind in "fc":
            if tuple(t.shape) != tuple(o.shape):
                raise RuntimeError(
                    f"{cls.__name__}: jvp returned a tangent of shape {tuple(t.shape)} for an "
                    f"output of shape {tuple(o.shape)}"
                )
            _attach(o, t)
    return output


def _version(t: Any) -> int:
    from .versions import version

    return version(t)
