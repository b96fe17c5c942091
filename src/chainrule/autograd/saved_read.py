"""How a node's ``_saved_*`` is read (node.py asks): a value from saved.py's tables, or a
tensor, PyTorch's refusals included: of a value freed by backward, and of an input written in
place after the node saved it."""

from __future__ import annotations

from typing import Any

from .. import array
from ..array.tensor_type import tensor_type
from . import saved_made as made
from .saved import NUMBER, PREFIX, TENSORS, VALUES, TensorSpec, called, key_of, reflected


def saved(fn: Any, attr: str) -> Any:
    """``fn._saved_<key>``: a value, a tensor, or PyTorch's refusal, in chainrule's words."""
    key, name = attr[len(PREFIX) :], type(fn).__name__
    if reflected(fn):  # PyTorch's self is chainrule's other
        key = {"self": "other", "other": "self"}.get(key, key)
    values, tensors = VALUES.get(key_of(fn), {}), TENSORS.get(key_of(fn))
    tensors = tensors or {}
    if key not in values and key not in tensors:
        raise AttributeError(f"{name!r} node has no attribute {attr!r}")
    spec = tensors.get(key)
    wanting = spec is not None and spec[0] in ("input", "input.mT", "called") and len(spec) == 3
    if spec is not None and wanting and not _wanted(fn, spec):
        return None  # never saved: None after backward too
    if spec is not None and spec[0] == "optional" and _absent(fn, spec[1]):
        return None  # an optional input not given: None after backward too
    kept = fn.inputs is not None or "_kept" in fn.__dict__  # what release kept of the call
    if spec is not None and spec[0] == "called" and kept and called(spec[1])(fn) is None:
        return None  # an optional argument not given: None after backward too
    if fn.inputs is None and key not in values:
        raise RuntimeError(
            f"{name}: {attr}: its saved values were freed by backward (the graph is freed as "
            "backward runs; call backward(retain_graph=True) to read them after it)"
        )
    if key in values:
        return values[key](fn)
    return _tensor(fn, attr, tensors[key])


def _absent(fn: Any, i: int) -> bool:
    if fn.inputs is None:  # freed: its edge tells a tensor from the rest (None among them)
        return fn.__dict__["_edges"][i] is NUMBER
    return fn.inputs[i] is None


def _wanted(fn: Any, spec: TensorSpec) -> bool:
    """Whether the node saved this input: the gradient that reads it is wanted."""
    wanted_by = spec[2]
    return wanted_by is None or fn.needs_input_grad[wanted_by]


def _tensor(fn: Any, attr: str, spec: TensorSpec) -> Any:
    T = tensor_type()
    if spec[0] == "result":
        _unwritten(fn, attr, fn.saved_result)
        out = T._make(fn.saved_result, True)
        out.grad_fn = fn
        return out
    if spec[0] == "option":  # an array the node keeps (or one of a tuple it keeps)
        kept = fn.__dict__[spec[1]] if len(spec) == 2 else fn.__dict__[spec[1]][spec[2]]
        return None if kept is None else T._make(kept)
    if spec[0] == "lu":  # a factor of A = P L U, from LAPACK's (LU, pivots) the node keeps
        return T._make(made.lu_factors(fn.__dict__["result"], spec[1]))
    if spec[0] == "stat":  # layer norm's (N, 1) statistic, shaped as PyTorch's (..., 1, ...)
        x, k = fn.inputs[0], fn.__dict__["k"]
        return T._make(fn.__dict__[spec[1]].reshape(x.shape[:-k] + (1,) * k))
    if spec[0] == "called":  # an array the call gave (node.named, record)
        if spec[1] == "result":  # an in-place op's node's (nn/activation.py)
            _unwritten(fn, attr, fn.call["result"])
        return T._make(array.xp.asarray(fn.call[spec[1]]))
    if spec[0] == "made":  # made from what the node keeps (and input i, checked first)
        if spec[1] is not None:
            _checked(fn, attr, spec[1])
        value = spec[2](fn)
        if value is None:  # an optional argument not given
            return None
        if isinstance(value, tuple):  # index's indices: a tensor a dim indexed, None a dim sliced
            return tuple(None if a is None else T._make(a) for a in value)
        return T._make(array.xp.asarray(value))
    kind, i = spec[:2]
    x = _checked(fn, attr, i)
    return x.mT.detach() if kind == "input.mT" else x


def _checked(fn: Any, attr: str, i: int) -> Any:
    """Input i, refused where it was written in place after the node saved it."""
    T = tensor_type()
    x = fn.inputs[i]
    if not isinstance(x, T):  # a number: PyTorch's 0-d tensor of it
        return T._make(array.xp.asarray(x))
    now = 0 if x._vc is None else x._vc[0]
    if now != fn.versions[i]:
        raise RuntimeError(
            f"{type(fn).__name__}: {attr}: input {i}, of shape {tuple(x.shape)}, was modified "
            f"by an in-place operation after the node saved it: it is at version {now}, the "
            f"node saved version {fn.versions[i]}; write into a clone instead"
        )
    return x


def _unwritten(fn: Any, attr: str, result: Any) -> None:
    """Refuse the result a node saved where it was written in place since: known of a node
    that took a tensor in place (Tensor._rebased keeps the tensor's counter), as PyTorch's."""
    vc = fn.__dict__.get("out_counter")
    if vc is not None and vc[0] != fn.out_version:
        raise RuntimeError(
            f"{type(fn).__name__}: {attr}: one of the variables needed for gradient computation "
            f"has been modified by an inplace operation: the result, of shape {result.shape}, is "
            f"at version {vc[0]}; expected version {fn.out_version} instead; write into a clone"
        )
