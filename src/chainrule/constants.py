"""torch's numeric constants (``cr.inf``, ``cr.nan``, ``cr.pi``, ``cr.e``, ``cr.newaxis``) and
its memory formats (``cr.contiguous_format``, ``cr.channels_last``, ...), which say how a copy
lays out its elements."""

from __future__ import annotations

import math
from typing import Any

inf = math.inf
nan = math.nan
pi = math.pi
e = math.e
newaxis = None  # x[:, cr.newaxis] adds a dim, as None does


class TorchName:
    """An object PyTorch knows as ``torch.<name>``, one per name (a memory format, a layout):
    printed as PyTorch prints it, and pickled by name, so it loads as the same object."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self) -> str:  # the module's global of that name
        return self.name


class memory_format(TorchName):  # noqa: N801 (PyTorch's name: torch.memory_format)
    """How a copy lays out its elements (PyTorch's ``torch.memory_format``):
    ``contiguous_format`` in C order; ``channels_last``, a 4-D (N, C, H, W) tensor with its
    channels innermost in memory (as an N, H, W, C array); ``channels_last_3d`` the same for
    5-D (N, C, D, H, W); ``preserve_format``, the source's own layout, what clone, to and the
    ``*_like`` factories keep by default."""

    def __init__(self, name: str, order: tuple[int, ...] | None = None) -> None:
        super().__init__(name)
        self.order = order


class layout(TorchName):  # noqa: N801 (PyTorch's name: torch.layout)
    """How a tensor keeps its elements (PyTorch's ``torch.layout``): ``strided`` (a dense
    array) or ``sparse_coo`` (indices and values)."""


strided = layout("strided")
sparse_coo = layout("sparse_coo")
contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last", (0, 2, 3, 1))
channels_last_3d = memory_format("channels_last_3d", (0, 2, 3, 4, 1))


def memory_order(fmt: Any, ndim: int, op: str) -> tuple[int, ...] | None:
    """The dims of an ``ndim`` tensor in the order ``fmt`` lays them out in memory, outermost
    first; None for the source's own layout (None or preserve_format). Refuses what is no
    memory format, and a channels-last format of a tensor of another rank, as PyTorch."""
    if fmt is None or fmt is preserve_format:
        return None
    if not isinstance(fmt, memory_format):
        raise TypeError(
            f"{op}: memory_format must be a cr.memory_format (cr.contiguous_format, "
            f"cr.channels_last, ...); got {type(fmt).__name__}"
        )
    if fmt.order is None:
        return tuple(range(ndim))
    if len(fmt.order) != ndim:
        raise RuntimeError(
            f"{op}: required rank {len(fmt.order)} tensor to use {fmt.name} format; got a "
            f"{ndim}-D tensor"
        )
    return fmt.order


def laid_out(arr: Any, order: tuple[int, ...]) -> bool:
    """Whether an array's elements lie without gaps with its dims in ``order`` (outermost
    first), dims of size 1 not counting, as PyTorch's contiguity checks."""
    step = arr.itemsize
    for d in reversed(order):
        if arr.shape[d] != 1:
            if arr.strides[d] != step:
                return arr.size == 0
            step *= arr.shape[d]
    return True


def channels_last_order(arr: Any) -> tuple[int, ...] | None:
    """The channels-last order of a 4-d or 5-d array whose steps grow as a channels-last
    tensor's do, gaps allowed (PyTorch's suggest_memory_format), else None."""
    if arr.ndim not in (4, 5) or arr.strides[1] == 0:
        return None
    order = (0, *range(2, arr.ndim), 1)
    least = 0
    for d in reversed(order):  # innermost first: C, then W, H (, D), then N
        if arr.shape[d] == 0 or arr.strides[d] < least or d == 0 and least == arr.strides[1]:
            return None
        least = arr.strides[d] * max(arr.shape[d], 1)
    return order


__all__ = [
    "channels_last",
    "channels_last_3d",
    "contiguous_format",
    "e",
    "inf",
    "memory_format",
    "nan",
    "newaxis",
    "pi",
    "preserve_format",
]
