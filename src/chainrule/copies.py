"""PyTorch's ``*_copy`` functions (torch.permute_copy, torch.view_copy, ...): each view op's
values in memory of their own, contiguous, with the view op's gradient under PyTorch's node
name (``PermuteBackward0_copy``). The views themselves are the Tensor methods'."""

from __future__ import annotations

import builtins
from typing import Any

from .arguments import normalize_dim
from .autograd.saved import record
from .linalg._checks import with_out
from .ops import movement
from .tensor import Tensor, as_tensor, write_out
from .tensor.indexing import copy_of_view

__all__ = [
    "alias_copy",
    "as_strided_copy",
    "detach_copy",
    "diagonal_copy",
    "expand_copy",
    "permute_copy",
    "select_copy",
    "slice_copy",
    "split_copy",
    "split_with_sizes_copy",
    "squeeze_copy",
    "t_copy",
    "transpose_copy",
    "unbind_copy",
    "unfold_copy",
    "unsqueeze_copy",
    "view_copy",
]


def _written_each(pieces: tuple[Tensor, ...], out: Any, op: str, resize: bool = True) -> Any:
    """PyTorch's out= of a split: a list of as many tensors, each written, and None
    returned; without out, the pieces. PyTorch's two rules: resized to its piece and of its
    dtype (unbind_copy, split_with_sizes_copy), or, where not ``resize``, of its piece's
    shape and cast into (split_copy)."""
    if out is None:
        return pieces
    if not isinstance(out, (list, tuple)) or len(out) != len(pieces):
        got = len(out) if isinstance(out, (list, tuple)) else type(out).__name__
        raise RuntimeError(f"{op}: expected an out= argument of {len(pieces)} tensors; got {got}")
    for piece, o in zip(pieces, out, strict=True):
        if not isinstance(o, Tensor) or not resize and tuple(o.shape) != tuple(piece.shape):
            raise RuntimeError(
                f"{op}: each out tensor must have its piece's shape; got "
                f"{getattr(o, 'shape', type(o).__name__)} for a piece of {tuple(piece.shape)}"
            )
    for piece, o in zip(pieces, out, strict=True):
        write_out(piece, o, op, exact=resize)
    return None


@with_out("", exact=True)
def alias_copy(input: Tensor, *, out: Any = None) -> Tensor:
    """input's values, copied (PyTorch's alias, a view of the whole tensor, copied)."""
    x = as_tensor(input)
    return copy_of_view(x, x[...], "AliasBackward0_copy")


@with_out("", exact=True)
def as_strided_copy(
    input: Tensor, size: Any, stride: Any, storage_offset: int | None = None, *, out: Any = None
) -> Tensor:
    """input.as_strided(size, stride, storage_offset), copied."""
    x = as_tensor(input)
    return copy_of_view(x, x.as_strided(size, stride, storage_offset), "AsStridedBackward0_copy")


@with_out("", exact=True)
def detach_copy(input: Tensor, *, out: Any = None) -> Tensor:
    """input's values, copied, outside the graph. (PyTorch's result requires grad but
    refuses a backward through it, its derivative not implemented; this one needs none.)"""
    return as_tensor(input).detach().clone()


@with_out("", exact=True)
def diagonal_copy(
    input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1, *, out: Any = None
) -> Tensor:
    """input.diagonal(offset, dim1, dim2), copied."""
    x = as_tensor(input)
    return copy_of_view(x, x.diagonal(offset, dim1, dim2), "DiagonalBackward0_copy")


@with_out("", exact=True)
def expand_copy(input: Tensor, size: Any, *, implicit: bool = False, out: Any = None) -> Tensor:
    """input.expand(size), copied (``implicit`` is PyTorch's tracing flag: no effect)."""
    x = as_tensor(input)
    return copy_of_view(x, x.expand(size), "ExpandBackward0_copy")


@with_out("", exact=True)
def permute_copy(input: Tensor, dims: Any, *, out: Any = None) -> Tensor:
    """input.permute(dims), copied."""
    x = as_tensor(input)
    return copy_of_view(x, x.permute(dims), "PermuteBackward0_copy")


@with_out("", exact=True)
def select_copy(input: Tensor, dim: int, index: int, *, out: Any = None) -> Tensor:
    """input.select(dim, index), copied."""
    x = as_tensor(input)
    return copy_of_view(x, x.select(dim, index), "SelectBackward0_copy")


@with_out("", exact=True)
def slice_copy(
    input: Tensor,
    dim: int = 0,
    start: int | None = None,
    end: int | None = None,
    step: int = 1,
    *,
    out: Any = None,
) -> Tensor:
    """input[..., start:end:step, ...] along dim, copied."""
    x = as_tensor(input)
    if step <= 0:
        raise ValueError(f"slice_copy: step must be positive; got {step}")
    d = normalize_dim(dim, x.ndim, "slice_copy", x.shape)
    lead = (slice(None),) * d
    # a step even where it takes the whole dim (x[0:n, ...] would read as x[:, ...])
    view = movement.viewed(movement.GetItem, x, index=lead + (slice(start, end, step),))
    out = copy_of_view(x, view, "SliceBackward0_copy")
    return record(out, dim=dim, start=start, end=end, step=step)  # as given, for _saved_*


def split_copy(
    input: Tensor, split_size: int, dim: int = 0, *, out: Any = None
) -> tuple[Tensor, ...] | None:
    """input.split(split_size, dim), each piece copied; ``out=`` a list of tensors of the
    pieces' shapes, written (and None returned), as PyTorch's."""
    x = as_tensor(input)
    pieces = _pieces(x, split_size, dim, "split_copy")
    copies = tuple(copy_of_view(x, p, "SplitBackward0_copy") for p in pieces)
    return _written_each(copies, out, "split_copy", resize=False)


def split_with_sizes_copy(
    input: Tensor, split_sizes: Any, dim: int = 0, *, out: Any = None
) -> tuple[Tensor, ...] | None:
    """input.split(split_sizes, dim), each piece copied; ``out=`` as split_copy's."""
    x = as_tensor(input)
    pieces = _pieces(x, list(split_sizes), dim, "split_with_sizes_copy")
    copies = tuple(copy_of_view(x, p, "SplitWithSizesBackward0_copy") for p in pieces)
    return _written_each(copies, out, "split_with_sizes_copy")


def unbind_copy(input: Tensor, dim: int = 0, *, out: Any = None) -> tuple[Tensor, ...] | None:
    """input.unbind(dim), each slice copied; ``out=`` as split_copy's."""
    x = as_tensor(input)
    d = _dim_of_pieces(x, dim, "unbind_copy")
    lead = (slice(None),) * d
    slices = movement.sliced(
        movement.GetItem, x, [lead + (k,) for k in range(x._array.shape[d])]
    )  # select's views, each its own node
    return _written_each(
        tuple(copy_of_view(x, s, "UnbindBackward0_copy") for s in slices), out, "unbind_copy"
    )


def _dim_of_pieces(x: Tensor, dim: int, op: str) -> int:
    shape = x._array.shape
    if not shape:
        raise ValueError(f"{op}: expects a tensor of at least 1 dim; got a 0-d one")
    return normalize_dim(dim, len(shape), op, shape)


def _pieces(x: Tensor, sizes: Any, dim: int, op: str) -> list[Tensor]:
    """The pieces of x.split(sizes, dim), each its own narrow (each copy gets its own node;
    PyTorch's pieces share one)."""
    d = _dim_of_pieces(x, dim, op)
    n = x._array.shape[d]
    if isinstance(sizes, int):
        if sizes <= 0 and n:
            raise ValueError(f"{op}: split_size must be positive; got {sizes}")
        sizes = [min(sizes, n - i) for i in range(0, n, sizes)] or [0]
    elif builtins.sum(sizes) != n or builtins.any(s < 0 for s in sizes):
        raise ValueError(
            f"{op}: split_sizes {sizes} must be non-negative and sum to dim {dim}'s size {n}; "
            f"got shape {tuple(x.shape)}"
        )
    lead, indexes, start = (slice(None),) * d, [], 0
    for length in sizes:  # narrow's views
        indexes.append(lead + (slice(start, start + length),))
        start += length
    return movement.sliced(movement.GetItem, x, indexes)


@with_out("", exact=True)
def squeeze_copy(input: Tensor, dim: Any = None, *, out: Any = None) -> Tensor:
    """input.squeeze(dim), copied."""
    x = as_tensor(input)
    if dim is None:
        return copy_of_view(x, x.squeeze(), "SqueezeBackward0_copy")
    overload = 2 if isinstance(dim, (tuple, list)) else 1
    return copy_of_view(x, x.squeeze(dim), f"SqueezeBackward{overload}_copy")


@with_out("", exact=True)
def t_copy(input: Tensor, *, out: Any = None) -> Tensor:
    """input.t(), copied."""
    x = as_tensor(input)
    return copy_of_view(x, x.t(), "TBackward0_copy")


@with_out("", exact=True)
def transpose_copy(input: Tensor, dim0: int, dim1: int, *, out: Any = None) -> Tensor:
    """input.transpose(dim0, dim1), copied."""
    x = as_tensor(input)
    return copy_of_view(x, x.transpose(dim0, dim1), "TransposeBackward0_copy")


@with_out("", exact=True)
def unfold_copy(input: Tensor, dimension: int, size: int, step: int, *, out: Any = None) -> Tensor:
    """input.unfold(dimension, size, step), copied."""
    x = as_tensor(input)
    return copy_of_view(x, x.unfold(dimension, size, step), "UnfoldBackward0_copy")


@with_out("", exact=True)
def unsqueeze_copy(input: Tensor, dim: int, *, out: Any = None) -> Tensor:
    """input.unsqueeze(dim), copied."""
    x = as_tensor(input)
    return copy_of_view(x, x.unsqueeze(dim), "UnsqueezeBackward0_copy")


@with_out("", exact=True)
def view_copy(input: Tensor, size: Any, *, out: Any = None) -> Tensor:
    """input.view(size), copied (a dtype for size is view's refusal)."""
    x = as_tensor(input)
    return copy_of_view(x, x.view(size), "ViewBackward0_copy")
