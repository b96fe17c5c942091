"""Writes through views, as PyTorch records them. Basic indexing, reshape, permute and
expand return views: tensors sharing their base's memory and version counter
(autograd/versions.py's make_view). An in-place op on a view writes into the base's
memory; when the write joins the graph, three things follow:

- the base takes a CopySlices node: its old value with the view's elements replaced by the
  op's result (so ``y[0].mul_(3)`` scales the gradient that reaches y's first element);
- every other live view of the base is re-pointed at that new node (an AsStrided node),
  so a view taken before the write differentiates what it now holds;
- nodes recorded before the write still reach the old values (each tensor keeps its
  stand-in under ``_previous``, which reference.as_seen reads).

The refusals are PyTorch's: a view of a leaf that requires grad cannot be written while
grad mode is on, nor a view made while its base recorded no gradients.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import array
from ..autograd.versions import counter, version
from ..ops.movement import AsStrided, CopySlices
from .core import make

if TYPE_CHECKING:  # Tensor in annotations alone (core.py says why)
    from . import Tensor


def live_base(t: Tensor) -> Tensor | None:
    """The tensor ``t`` is a view of, or None: also where it is no view any more (unpickled,
    or its base's array replaced), a tensor of its own."""
    base = t._base
    if base is None or array.module_of(t._array).may_share_memory(t._array, base._array):
        return base
    return None


def refuse_write(t: Tensor, op: str, grad: bool) -> None:
    """PyTorch's refusals of an in-place write into ``t`` while grad mode (``grad``) is on:
    a view whose write its graph cannot take (refuse_view_write), a leaf that requires
    grad."""
    base = t._base
    if not grad or not (t.requires_grad or base is not None and base.requires_grad):
        return
    base = live_base(t)
    if base is not None:
        refuse_view_write(t, base, op)
    if t.requires_grad and t.grad_fn is None:
        raise RuntimeError(
            f"{op}: a leaf tensor that requires grad (shape {t.shape}) is used in "
            "an in-place operation; do it under cr.no_grad(), or on a clone"
        )


def refuse_view_write(view: Tensor, base: Tensor, op: str) -> None:
    """PyTorch's errors for an in-place op, with grad mode on, on a view that requires grad
    and is an output of split, chunk or unbind (or a view of one), or is a view of a leaf
    (whether or not the leaf requires grad); or on a view made without recording of a base
    that requires grad."""
    if view.requires_grad:
        refuse_multi_output(view, base, op)
    if view.requires_grad and base.grad_fn is None:
        raise RuntimeError(
            f"{op}: a view of a leaf Variable that requires grad is being used in an in-place "
            f"operation (the view has shape {view.shape}, the leaf {base.shape}); write into "
            "it under cr.no_grad(), or into a clone"
        )
    if not view.requires_grad:
        _made_without_recording(view, base, op)


def _made_without_recording(view: Tensor, base: Tensor, op: str) -> None:
    raise RuntimeError(
        f"{op}: A view was created in no_grad mode and is being modified inplace with "
        f"grad mode enabled (the view has shape {view.shape}, its base {base.shape}); "
        "make the view and the write both inside no_grad, or both outside"
    )


def refuse_multi_output(view: Tensor, base: Tensor, op: str) -> None:
    """PyTorch's errors for a write that joins the graph into an output of split, chunk or
    unbind, or a view of one (there is no telling which of the outputs' nodes it belongs
    to), or into a view a custom Function returned (its reason third in _multi_output);
    PyTorch counts such an output that did not require grad as made without recording."""
    made = view._multi_output
    if made is not None and not view.requires_grad:
        _made_without_recording(view, base, op)
    if made is not None:
        why = made[2] if len(made) > 2 else (
            "This view is the output of a function that returns multiple views. Such "
            "functions do not allow the output views to be modified inplace. You should "
            "replace the inplace operation by an out-of-place one"
        )  # fmt: skip
        raise RuntimeError(
            f"{op}: Output {made[1]} of {made[0]} is a view and is being modified inplace. "
            f"{why} (the view has shape {view.shape}, its base {base.shape})"
        )


def stand_in(t: Tensor) -> Tensor:
    """A tensor for ``t``'s value as it is now, with its node: what nodes recorded before a
    write keep reaching (reference.as_seen)."""
    old = make(t._array, t.requires_grad)
    old.grad_fn, old._vc = t.grad_fn, counter(t)
    return old


def copy_slices(base: Tensor, view: Tensor) -> None:
    """After a write through ``view`` that joined the graph (and its bump): the base takes
    the CopySlices node of its old value and the view's new one."""
    old = stand_in(base)
    rebase(base, old, CopySlices.apply(old, view, view._array).grad_fn)


def rebase(t: Tensor, old: Tensor, fn: Any) -> None:
    """After the write's bump: ``t`` takes node ``fn``, and ``old`` stands for it before."""
    t.__dict__.setdefault("_previous", {})[version(t) - 1] = old
    t.grad_fn, t.requires_grad = fn, True


def repoint_views(base: Tensor, skip: Tensor | None, written: Any = None) -> None:
    """After a write into base's memory gave base a new node: every live view of base but
    ``skip`` differentiates through that node (an AsStrided of base), and keeps its old node
    for what was recorded before. A view that requires grad and lies apart from ``written``
    (the array written, where known) keeps its node: its values are unchanged, and its old
    node's gradient reaches them all the same (a loop writing row t of a buffer and reading
    row t - 1 re-points nothing). A tensor whose array was replaced since, or that views the
    memory as another dtype, is left as it is."""
    box = base._vc
    overlaps = array.xp.may_share_memory
    memory = base._array
    for ref in box[1:] if box is not None else ():
        v = ref()
        if v is None or v is skip or v._base is not base:
            continue
        held = v._array
        if v.requires_grad and written is not None and not overlaps(held, written):
            continue
        if held.dtype != memory.dtype or not overlaps(held, memory):
            continue
        node = AsStrided.apply(base, v._array).grad_fn
        if v.requires_grad:  # what nodes recorded before the write reach
            rebase(v, stand_in(v), node)
        else:
            v.grad_fn, v.requires_grad = node, True
