"""The padding layers (ZeroPad, ConstantPad, ReflectionPad, ReplicationPad and CircularPad,
1-, 2- and 3-D), each a Module over ``cr.pad`` with its mode, as PyTorch's."""

from __future__ import annotations

from typing import Any

from ..functions import pad
from ..tensor import Tensor
from .module import Module

__all__ = [
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
]


def _widths(layer: str, padding: Any, dims: int) -> tuple[int, ...]:
    """PyTorch's padding argument: one int for every side, or 2·dims ints (left, right, then
    top, bottom, then front, back)."""
    if isinstance(padding, int) and not isinstance(padding, bool):
        return (padding,) * (2 * dims)
    widths = tuple(padding)
    if len(widths) != 2 * dims or not all(isinstance(w, int) for w in widths):
        raise ValueError(f"{layer}: padding must be an int or {2 * dims} ints; got {padding!r}")
    return widths


class _Pad(Module):
    """One padding layer: its mode and its number of padded dims, set by each subclass."""

    mode = "constant"
    dims = 1

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _widths(type(self).__name__, padding, self.dims)

    def forward(self, input: Tensor) -> Tensor:
        return pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPad(_Pad):
    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPad):
    dims = 1


class ConstantPad2d(_ConstantPad):
    dims = 2


class ConstantPad3d(_ConstantPad):
    dims = 3


class _ZeroPad:
    """A ConstantPad of zeros, shown by its padding alone (each ZeroPad is its ConstantPad)."""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)  # type: ignore[call-arg]

    def extra_repr(self) -> str:
        return f"{self.padding}"  # type: ignore[attr-defined]


class ZeroPad1d(_ZeroPad, ConstantPad1d):
    pass


class ZeroPad2d(_ZeroPad, ConstantPad2d):
    pass


class ZeroPad3d(_ZeroPad, ConstantPad3d):
    pass


class ReflectionPad1d(_Pad):
    mode, dims = "reflect", 1


class ReflectionPad2d(_Pad):
    mode, dims = "reflect", 2


class ReflectionPad3d(_Pad):
    mode, dims = "reflect", 3


class ReplicationPad1d(_Pad):
    mode, dims = "replicate", 1


class ReplicationPad2d(_Pad):
    mode, dims = "replicate", 2


class ReplicationPad3d(_Pad):
    mode, dims = "replicate", 3


class CircularPad1d(_Pad):
    mode, dims = "circular", 1


class CircularPad2d(_Pad):
    mode, dims = "circular", 2


class CircularPad3d(_Pad):
    mode, dims = "circular", 3
