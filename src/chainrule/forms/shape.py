"""The function forms of the shape, view, indexing and scatter methods, and of the few that
read the tensor itself: ``cr.reshape(x, (2, 3))`` is ``x.reshape(2, 3)``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..factories import arange
from ..linalg._checks import with_out
from ..tensor import Tensor, as_tensor

__all__ = [
    "unbind",
    "tile",
    "nonzero",
    "diag",
    "index_fill",
    "unflatten",
    "t",
    "narrow",
    "reshape",
    "flatten",
    "squeeze",
    "unsqueeze",
    "transpose",
    "permute",
    "broadcast_to",
    "split",
    "chunk",
    "gather",
    "take_along_dim",
    "tril",
    "triu",
    "flip",
    "roll",
    "index_select",
    "masked_select",
    "repeat_interleave",
    "scatter",
    "scatter_add",
    "scatter_reduce",
    "index_add",
    "numel",
    "index_put",
    "clone",
    "detach",
    "masked_fill",
    "swapaxes",
    "swapdims",
    "multinomial",
    "bernoulli",
    "get_device",
    "is_floating_point",
]


def unbind(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """The function form of Tensor.unbind."""
    return as_tensor(input).unbind(dim)


def tile(input: Tensor, dims: Any) -> Tensor:
    """The function form of Tensor.tile."""
    return as_tensor(input).tile(dims)


@with_out("", exact=True)
def nonzero(input: Tensor, *, as_tuple: bool = False, out: Any = None) -> Any:
    """The function form of Tensor.nonzero (``out=`` as PyTorch's)."""
    return as_tensor(input).nonzero(as_tuple=as_tuple)


@with_out("", exact=True)
def diag(input: Tensor, diagonal: int = 0, *, out: Any = None) -> Tensor:
    """The function form of Tensor.diag (``out=`` as PyTorch's)."""
    return as_tensor(input).diag(diagonal)


def index_fill(input: Tensor, dim: int, index: Any, value: Any) -> Tensor:
    """The function form of Tensor.index_fill."""
    return as_tensor(input).index_fill(dim, index, value)


def unflatten(input: Tensor, dim: int, sizes: Any) -> Tensor:
    """The function form of Tensor.unflatten."""
    return as_tensor(input).unflatten(dim, sizes)


def t(input: Tensor) -> Tensor:
    """The function form of Tensor.t."""
    return as_tensor(input).t()


def narrow(input: Tensor, dim: int, start: Any, length: int) -> Tensor:
    """The function form of Tensor.narrow."""
    return as_tensor(input).narrow(dim, start, length)


def reshape(input: Tensor, *shape_list: Any, shape: Any = None) -> Tensor:
    """The function form of Tensor.reshape."""
    return as_tensor(input).reshape(*shape_list, shape=shape)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """The function form of Tensor.flatten."""
    return as_tensor(input).flatten(start_dim, end_dim)


def squeeze(input: Tensor, dim: Any = None) -> Tensor:
    """The function form of Tensor.squeeze."""
    return as_tensor(input).squeeze(dim)


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """The function form of Tensor.unsqueeze."""
    return as_tensor(input).unsqueeze(dim)


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """The function form of Tensor.transpose."""
    return as_tensor(input).transpose(dim0, dim1)


def permute(input: Tensor, *dim_list: Any, dims: Any = None) -> Tensor:
    """The function form of Tensor.permute."""
    return as_tensor(input).permute(*dim_list, dims=dims)


def broadcast_to(input: Tensor, shape: Sequence[int]) -> Tensor:
    """The function form of Tensor.broadcast_to."""
    return as_tensor(input).broadcast_to(shape)


def split(input: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """The function form of Tensor.split."""
    return as_tensor(input).split(split_size_or_sections, dim)


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """The function form of Tensor.chunk."""
    return as_tensor(input).chunk(chunks, dim)


@with_out("", exact=True)
def gather(input: Tensor, dim: int, index: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.gather (``out=`` as PyTorch's)."""
    return as_tensor(input).gather(dim, index)


@with_out("", exact=True)
def take_along_dim(
    input: Tensor, indices: Any, dim: int | None = None, *, out: Any = None
) -> Tensor:
    """The function form of Tensor.take_along_dim (``out=`` as PyTorch's)."""
    return as_tensor(input).take_along_dim(indices, dim)


@with_out("", exact=True)
def tril(input: Tensor, diagonal: int = 0, *, out: Any = None) -> Tensor:
    """The function form of Tensor.tril (``out=`` as PyTorch's)."""
    return as_tensor(input).tril(diagonal)


@with_out("", exact=True)
def triu(input: Tensor, diagonal: int = 0, *, out: Any = None) -> Tensor:
    """The function form of Tensor.triu (``out=`` as PyTorch's)."""
    return as_tensor(input).triu(diagonal)


def flip(input: Tensor, *dim_list: Any, dims: Any = None) -> Tensor:
    """The function form of Tensor.flip."""
    return as_tensor(input).flip(*dim_list, dims=dims)


def roll(input: Tensor, shifts: Any, dims: Any = None) -> Tensor:
    """The function form of Tensor.roll."""
    return as_tensor(input).roll(shifts, dims)


@with_out("", exact=True)
def index_select(input: Tensor, dim: int, index: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.index_select (``out=`` as PyTorch's)."""
    return as_tensor(input).index_select(dim, index)


@with_out("", exact=True)
def masked_select(input: Tensor, mask: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.masked_select (``out=`` as PyTorch's)."""
    return as_tensor(input).masked_select(mask)


def repeat_interleave(
    input: Any, repeats: Any = None, dim: int | None = None, *, output_size: int | None = None
) -> Tensor:
    """The function form of Tensor.repeat_interleave. Given only a 1-D integer tensor of
    counts, the positions each repeated that many times: [1, 0, 3] -> [0, 2, 2, 2]."""
    if repeats is not None:
        return as_tensor(input).repeat_interleave(repeats, dim, output_size=output_size)
    counts = as_tensor(input)
    if counts.ndim != 1 or dim is not None:
        raise ValueError(
            "repeat_interleave: without repeats, input must be a 1-D tensor of counts (and no "
            f"dim); got shape {counts.shape} and dim {dim}"
        )
    index = arange(counts.shape[0], device=counts.device)
    return index.repeat_interleave(counts, 0, output_size=output_size)


@with_out("", exact=True)
def scatter(
    input: Tensor,
    dim: int,
    index: Any,
    src: Any = None,
    *,
    value: Any = None,
    reduce: Any = None,
    out: Any = None,
) -> Tensor:
    """The function form of Tensor.scatter (``out=`` as PyTorch's)."""
    return as_tensor(input).scatter(dim, index, src, value=value, reduce=reduce)


@with_out("", exact=True)
def scatter_add(input: Tensor, dim: int, index: Any, src: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.scatter_add (``out=`` as PyTorch's)."""
    return as_tensor(input).scatter_add(dim, index, src)


@with_out("", exact=True)
def scatter_reduce(
    input: Tensor,
    dim: int,
    index: Any,
    src: Any,
    reduce: str,
    *,
    include_self: bool = True,
    out: Any = None,
) -> Tensor:
    """The function form of Tensor.scatter_reduce (``out=`` as PyTorch's)."""
    return as_tensor(input).scatter_reduce(dim, index, src, reduce, include_self=include_self)


@with_out("", exact=True)
def index_add(
    input: Tensor, dim: int, index: Any, source: Any, *, alpha: float = 1, out: Any = None
) -> Tensor:
    """The function form of Tensor.index_add (``out=`` as PyTorch's)."""
    return as_tensor(input).index_add(dim, index, source, alpha=alpha)


def numel(input: Tensor) -> int:
    """The function form of Tensor.numel."""
    return as_tensor(input).numel()


def index_put(input: Tensor, indices: Any, values: Any, accumulate: bool = False) -> Tensor:
    """The function form of Tensor.index_put."""
    return as_tensor(input).index_put(indices, values, accumulate)


def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:
    """The function form of Tensor.clone."""
    return as_tensor(input).clone(memory_format=memory_format)


def detach(input: Tensor) -> Tensor:
    """The function form of Tensor.detach."""
    return as_tensor(input).detach()


def masked_fill(input: Tensor, mask: Any, value: float) -> Tensor:
    """The function form of Tensor.masked_fill."""
    return as_tensor(input).masked_fill(mask, value)


def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    """The function form of Tensor.swapaxes."""
    return as_tensor(input).swapaxes(axis0, axis1)


def swapdims(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """The function form of Tensor.swapdims."""
    return as_tensor(input).swapdims(dim0, dim1)


@with_out("", exact=True)
def multinomial(
    input: Tensor,
    num_samples: int,
    replacement: bool = False,
    *,
    generator: Any = None,
    out: Any = None,
) -> Tensor:
    """The function form of Tensor.multinomial (``out=`` as PyTorch's)."""
    return as_tensor(input).multinomial(num_samples, replacement, generator=generator)


@with_out("")
def bernoulli(input: Tensor, p: Any = None, *, generator: Any = None, out: Any = None) -> Tensor:
    """The function form of Tensor.bernoulli (``out=`` as PyTorch's, without p)."""
    if p is not None and out is not None:
        raise TypeError("bernoulli: out= is not taken with p, as PyTorch's; got both")
    if p is None:
        return as_tensor(input).bernoulli(generator=generator)
    return as_tensor(input).bernoulli(p, generator=generator)


def get_device(input: Tensor) -> int:
    """The function form of Tensor.get_device."""
    return as_tensor(input).get_device()


def is_floating_point(input: Tensor) -> bool:
    """The function form of Tensor.is_floating_point."""
    return as_tensor(input).is_floating_point()
