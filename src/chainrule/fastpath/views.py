"""A view op's output (reshape, permute, expand, a slice, each piece of split and unbind) made
directly, where its Function.apply would record nothing; with the switch off, the op's apply
(fastpath/table.py; ops/movement.py's ``viewed`` asks the switch)."""

from __future__ import annotations

from typing import Any

from ..autograd.mode import state as modes
from ..autograd.primitive import Function, batching, dual, tensor_type
from ..autograd.versions import make_view, shares_memory
from .switch import state

_APPLIES = Function.__dict__  # the exporter's trace replaces its apply, and sees every op
_APPLY = _APPLIES["apply"]


def view_made(op: Any, t: Any, options: dict[str, Any], arrays: tuple = ()) -> Any:
    """``op.apply(t, *arrays, **options)`` for ``op`` a view op of one Tensor input (and
    ``arrays``, arrays it reads, as_strided's memory), made as apply makes it where no node
    is recorded: op's forward on t's array, wrapped, and a view of t where it shares t's
    memory. None where apply must run: a node would be recorded, a vmap
    or dual level is open, an exporter traces the ops, or forward fails (apply words the
    error). A view of finite values is finite, so anomaly mode has nothing to check. (Its
    caller asks the switch.)"""
    if not unwatched(t):
        return None
    data = t._array
    try:
        out = op().forward(data, *arrays, **options)
    except Exception:
        return None
    made = tensor_type()._make(out)
    if shares_memory(out, data):
        make_view(made, t)
    return made


def unwatched(t: Any) -> bool:
    """Whether an op on t would record no node and nothing watches the ops: no vmap or dual
    level open, no exporter tracing them. Only then may a caller make what apply makes
    without it. (Its caller asks the switch.)"""
    if t.requires_grad and modes.grad_enabled:
        return False
    return batching[0] is None and dual[0] is None and _APPLIES["apply"] is _APPLY


def off_graph(t: Any) -> bool:
    """Whether an op on t may be made without its apply (its forward on t's array, wrapped;
    what only a graph needs left out): the switch on, t unwatched, and no anomaly mode to
    check the op's output."""
    return state.on and unwatched(t) and not modes.anomaly


def slices_made(t: Any, indexes: list[tuple]) -> list[Any] | None:
    """``[GetItem.apply(t, index=i) for i in indexes]`` for basic indexes (ints in range and
    slices: the pieces of split, chunk and unbind), each view made as apply makes it where no
    node is recorded, the checks made once for all. None where apply must run (view_made's
    cases)."""
    if not unwatched(t):
        return None
    data, make = t._array, tensor_type()._make
    out = []
    for index in indexes:
        made = make(data[index + (Ellipsis,)])  # a view, 0-d for an element (NumPy's a copy)
        make_view(made, t)
        out.append(made)
    return out
