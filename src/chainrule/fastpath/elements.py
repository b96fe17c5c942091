"""The read of an element or a row by Python ints (``P[i, j]``, ``P[ix]``) as a view made
directly, where GetItem would record nothing; with the switch off, GetItem.apply
(fastpath/table.py; Tensor.__getitem__ asks the switch)."""

from __future__ import annotations

from typing import Any

from ..autograd.mode import state as modes
from ..autograd.primitive import Function, batching, dual, tensor_type
from ..autograd.versions import make_view

_APPLIES = Function.__dict__  # the exporter's trace replaces its apply, and sees every op
_APPLY = _APPLIES["apply"]


def view_at(t: Any, index: tuple) -> Any:
    """``t[index]`` for an index of Python ints, a view of t (0-d for an element, as
    PyTorch's), made as GetItem.apply makes it where no node is recorded; None where that
    path must run: a node would be recorded, a vmap or dual level is open, an exporter
    traces the ops, or the index is out of range (whose error it words). An element of
    finite values is finite, so anomaly mode has nothing to check. (Its caller asks the
    switch.)"""
    if t.requires_grad and modes.grad_enabled:
        return None
    if batching[0] is not None or dual[0] is not None or _APPLIES["apply"] is not _APPLY:
        return None
    try:
        out = t._array[index + (Ellipsis,)]  # a view, 0-d for an element (NumPy's a[i, j] a copy)
    except IndexError:
        return None
    view = tensor_type()._make(out)
    make_view(view, t)
    return view
