"""The function forms of tensor/indexing.py's methods: ``cr.f(x, ...)`` is ``x.f(...)``,
``input`` made a Tensor first."""

from __future__ import annotations

from typing import Any

from ..linalg._checks import with_out
from ..tensor import Tensor, as_tensor

__all__ = [
    "adjoint",
    "movedim",
    "moveaxis",
    "diagonal",
    "diag_embed",
    "diagonal_scatter",
    "select",
    "ravel",
    "as_strided",
    "tensor_split",
    "hsplit",
    "vsplit",
    "dsplit",
    "fliplr",
    "flipud",
    "rot90",
    "take",
    "put",
    "masked_scatter",
    "index_copy",
    "argwhere",
    "unique_consecutive",
    "trace",
    "kron",
    "cross",
    "addmv",
    "addr",
    "addbmm",
    "vdot",
    "ger",
    "diagflat",
    "select_scatter",
    "slice_scatter",
    "narrow_copy",
    "split_with_sizes",
    "unsafe_split",
    "unsafe_chunk",
    "index_reduce",
]


def adjoint(input: Tensor) -> Tensor:
    """The function form of Tensor.adjoint."""
    return as_tensor(input).adjoint()


def movedim(input: Tensor, source: Any, destination: Any) -> Tensor:
    """The function form of Tensor.movedim."""
    return as_tensor(input).movedim(source, destination)


def moveaxis(input: Tensor, source: Any, destination: Any) -> Tensor:
    """The function form of Tensor.moveaxis."""
    return as_tensor(input).moveaxis(source, destination)


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The function form of Tensor.diagonal."""
    return as_tensor(input).diagonal(offset, dim1, dim2)


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The function form of Tensor.diag_embed."""
    return as_tensor(input).diag_embed(offset, dim1, dim2)


def diagonal_scatter(
    input: Tensor, src: Any, offset: int = 0, dim1: int = 0, dim2: int = 1
) -> Tensor:
    """The function form of Tensor.diagonal_scatter."""
    return as_tensor(input).diagonal_scatter(src, offset, dim1, dim2)


def select(input: Tensor, dim: int, index: int) -> Tensor:
    """The function form of Tensor.select."""
    return as_tensor(input).select(dim, index)


def ravel(input: Tensor) -> Tensor:
    """The function form of Tensor.ravel."""
    return as_tensor(input).ravel()


def as_strided(input: Tensor, size: Any, stride: Any, storage_offset: int | None = None) -> Tensor:
    """The function form of Tensor.as_strided."""
    return as_tensor(input).as_strided(size, stride, storage_offset)


def tensor_split(input: Tensor, indices_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """The function form of Tensor.tensor_split."""
    return as_tensor(input).tensor_split(indices_or_sections, dim)


def hsplit(input: Tensor, sections: Any) -> tuple[Tensor, ...]:
    """The function form of Tensor.hsplit."""
    return as_tensor(input).hsplit(sections)


def vsplit(input: Tensor, sections: Any) -> tuple[Tensor, ...]:
    """The function form of Tensor.vsplit."""
    return as_tensor(input).vsplit(sections)


def dsplit(input: Tensor, sections: Any) -> tuple[Tensor, ...]:
    """The function form of Tensor.dsplit."""
    return as_tensor(input).dsplit(sections)


def fliplr(input: Tensor) -> Tensor:
    """The function form of Tensor.fliplr."""
    return as_tensor(input).fliplr()


def flipud(input: Tensor) -> Tensor:
    """The function form of Tensor.flipud."""
    return as_tensor(input).flipud()


def rot90(input: Tensor, k: int = 1, dims: Any = (0, 1)) -> Tensor:
    """The function form of Tensor.rot90."""
    return as_tensor(input).rot90(k, dims)


@with_out("", exact=True)
def take(input: Tensor, index: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.take (``out=`` as PyTorch's)."""
    return as_tensor(input).take(index)


def put(input: Tensor, index: Any, source: Any, accumulate: bool = False) -> Tensor:
    """The function form of Tensor.put."""
    return as_tensor(input).put(index, source, accumulate)


def masked_scatter(input: Tensor, mask: Any, source: Any) -> Tensor:
    """The function form of Tensor.masked_scatter."""
    return as_tensor(input).masked_scatter(mask, source)


@with_out("", exact=True)
def index_copy(input: Tensor, dim: int, index: Any, source: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.index_copy (``out=`` as PyTorch's)."""
    return as_tensor(input).index_copy(dim, index, source)


def argwhere(input: Tensor) -> Tensor:
    """The function form of Tensor.argwhere."""
    return as_tensor(input).argwhere()


def unique_consecutive(
    input: Tensor, return_inverse: bool = False, return_counts: bool = False, dim: int | None = None
) -> Any:
    """The function form of Tensor.unique_consecutive."""
    return as_tensor(input).unique_consecutive(return_inverse, return_counts, dim)


def trace(input: Tensor) -> Tensor:
    """The function form of Tensor.trace."""
    return as_tensor(input).trace()


@with_out("")
def kron(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.kron (``out=`` as PyTorch's)."""
    return as_tensor(input).kron(other)


@with_out("", exact=True)
def cross(input: Tensor, other: Any, dim: int | None = None, *, out: Any = None) -> Tensor:
    """The function form of Tensor.cross (``out=`` as PyTorch's)."""
    return as_tensor(input).cross(other, dim)


@with_out("", exact=True)
def addmv(
    input: Tensor, mat: Any, vec: Any, *, beta: Any = 1, alpha: Any = 1, out: Any = None
) -> Tensor:
    """The function form of Tensor.addmv (``out=`` as PyTorch's)."""
    return as_tensor(input).addmv(mat, vec, beta=beta, alpha=alpha)


@with_out("")
def addr(
    input: Tensor, vec1: Any, vec2: Any, *, beta: Any = 1, alpha: Any = 1, out: Any = None
) -> Tensor:
    """The function form of Tensor.addr (``out=`` as PyTorch's)."""
    return as_tensor(input).addr(vec1, vec2, beta=beta, alpha=alpha)


@with_out("", exact=True)
def addbmm(
    input: Tensor, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1, out: Any = None
) -> Tensor:
    """The function form of Tensor.addbmm (``out=`` as PyTorch's)."""
    return as_tensor(input).addbmm(batch1, batch2, beta=beta, alpha=alpha)


@with_out("", exact=True)
def vdot(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.vdot (``out=`` as PyTorch's)."""
    return as_tensor(input).vdot(other)


@with_out("")
def ger(input: Tensor, vec2: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.ger (``out=`` as PyTorch's)."""
    return as_tensor(input).ger(vec2)


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """The function form of Tensor.diagflat."""
    return as_tensor(input).diagflat(offset)


def select_scatter(input: Tensor, src: Any, dim: int, index: int) -> Tensor:
    """The function form of Tensor.select_scatter."""
    return as_tensor(input).select_scatter(src, dim, index)


@with_out("", exact=True)
def slice_scatter(
    input: Tensor,
    src: Any,
    dim: int = 0,
    start: int | None = None,
    end: int | None = None,
    step: int = 1,
    *,
    out: Any = None,
) -> Tensor:
    """The function form of Tensor.slice_scatter (``out=`` as PyTorch's)."""
    return as_tensor(input).slice_scatter(src, dim, start, end, step)


@with_out("", exact=True)
def narrow_copy(input: Tensor, dim: int, start: Any, length: int, *, out: Any = None) -> Tensor:
    """The function form of Tensor.narrow_copy (``out=`` as PyTorch's)."""
    return as_tensor(input).narrow_copy(dim, start, length)


def split_with_sizes(input: Tensor, split_sizes: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """The function form of Tensor.split_with_sizes."""
    return as_tensor(input).split_with_sizes(split_sizes, dim)


def unsafe_split(input: Tensor, split_size: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """The function form of Tensor.unsafe_split."""
    return as_tensor(input).unsafe_split(split_size, dim)


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """The function form of Tensor.unsafe_chunk."""
    return as_tensor(input).unsafe_chunk(chunks, dim)


@with_out("", exact=True)
def index_reduce(
    input: Tensor,
    dim: int,
    index: Any,
    source: Any,
    reduce: str,
    *,
    include_self: bool = True,
    out: Any = None,
) -> Tensor:
    """The function form of Tensor.index_reduce (``out=`` as PyTorch's)."""
    return as_tensor(input).index_reduce(dim, index, source, reduce, include_self=include_self)
