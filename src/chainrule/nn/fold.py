"""Rearranging pixels, for users: ``unfold`` (every sliding block as a column), its adjoint
``fold`` (columns summed back into an image), ``pixel_shuffle`` / ``pixel_unshuffle`` (channels
to space and back) and ``channel_shuffle``, with their modules: argument checks over
primitives (ops/conv.py's Im2Col and Col2Im, ops/shuffle.py's shuffles), each the adjoint of
another.
"""

from __future__ import annotations

from typing import Any

from .. import array, fastpath
from ..arguments import positive_int
from ..autograd.saved import record
from ..bounded import Bounded
from ..ops import conv as conv_ops
from ..ops import shuffle as shuffle_ops
from ..ops.windows import out_hw
from ..tensor import Tensor, as_tensor
from . import spatial_batching  # noqa: F401  (vmap's rules for these ops)
from .module import Module
from .pooling import plain_args
from .spatial_args import check_dtype, check_positive, ntuple

xp = array.xp


def _block_args(op: str, kernel_size: Any, dilation: Any, padding: Any, stride: Any) -> tuple:
    """(kernel, dilation, padding, stride) as pairs, checked; parsed once for each set of
    arguments given as ints or tuples of ints."""
    given = (kernel_size, dilation, padding, stride)
    if not plain_args(given):  # a list, a NumPy int, a float to refuse: parsed afresh
        return _parse_block_args(op, *given)
    key = (op, *given)
    found = _BLOCK_ARGS.get(key)
    if found is None:
        found = _BLOCK_ARGS.keep(key, _parse_block_args(op, *given))
    return found


_BLOCK_ARGS: Bounded[tuple, tuple] = Bounded(256)


def _parse_block_args(op: str, kernel_size: Any, dilation: Any, padding: Any, stride: Any) -> tuple:
    kernel = ntuple(kernel_size, 2, op, "kernel_size")
    dil = ntuple(dilation, 2, op, "dilation")
    pads = ntuple(padding, 2, op, "padding")
    step = ntuple(stride, 2, op, "stride")
    for name, v in (("kernel_size", kernel), ("dilation", dil), ("stride", step)):
        check_positive(v, op, name)
    if any(p < 0 for p in pads):
        raise ValueError(f"{op}: padding must be non-negative; got {pads}")
    return kernel, dil, pads, step


def _blocks(op: str, size: tuple, kernel: tuple, dil: tuple, pads: tuple, step: tuple) -> Any:
    """The number of blocks along each axis (Ho, Wo), which must be positive."""
    n_out = out_hw(size, kernel, step, dil, tuple((p, p) for p in pads))
    if any(n <= 0 for n in n_out):
        raise ValueError(
            f"{op}: the sliding blocks do not fit: input spatial size {tuple(size)}, "
            f"kernel_size {kernel}, dilation {dil}, padding {pads} and stride {step} give "
            f"{n_out} blocks"
        )
    return n_out


def unfold(
    input: Tensor,
    kernel_size: int | tuple[int, int],
    dilation: int | tuple[int, int] = 1,
    padding: int | tuple[int, int] = 0,
    stride: int | tuple[int, int] = 1,
) -> Tensor:
    """Every kernel_size block of input (N, C, H, W) or (C, H, W) as a column:
    (N, C * kh * kw, L), L the number of blocks, channels outermost as PyTorch's."""
    op = "unfold"
    x = as_tensor(input)
    if x.ndim not in (3, 4):
        raise ValueError(
            f"{op}: expected a 3-D (unbatched) or 4-D (batched) input; got shape {x.shape}"
        )
    check_dtype(x, op)
    kernel, dil, pads, step = _block_args(op, kernel_size, dilation, padding, stride)
    _blocks(op, x.shape[-2:], kernel, dil, pads, step)  # the blocks must fit
    pairs = ((pads[0], pads[0]), (pads[1], pads[1]))
    out = conv_ops.Im2Col.apply(x, kernel=kernel, stride=step, padding=pairs, dilation=dil)
    return record(
        out, dilation=dil, kernel_size=kernel, padding=pads, stride=step,
        self_sym_argsize_minus_1=x.shape[-1], self_sym_argsize_minus_2=x.shape[-2],
    )  # fmt: skip


def fold(
    input: Tensor,
    output_size: int | tuple[int, int],
    kernel_size: int | tuple[int, int],
    dilation: int | tuple[int, int] = 1,
    padding: int | tuple[int, int] = 0,
    stride: int | tuple[int, int] = 1,
) -> Tensor:
    """The adjoint of unfold: columns (N, C * kh * kw, L) or (C * kh * kw, L) summed back into
    an image (N, C, *output_size), each block's elements added where unfold read them."""
    op = "fold"
    x = as_tensor(input)
    if x.ndim not in (2, 3):
        raise ValueError(
            f"{op}: expected a 2-D (unbatched) or 3-D (batched) input; got shape {x.shape}"
        )
    check_dtype(x, op)
    size = ntuple(output_size, 2, op, "output_size")
    kernel, dil, pads, step = _block_args(op, kernel_size, dilation, padding, stride)
    ho, wo = _blocks(op, size, kernel, dil, pads, step)
    ck, length = x.shape[-2:]
    k = kernel[0] * kernel[1]
    if ck % k or length != ho * wo:
        raise ValueError(
            f"{op}: the input must be (N, C * {k}, {ho * wo}) for kernel_size {kernel} and "
            f"{ho} x {wo} blocks of output_size {size}; got shape {tuple(input.shape)}"
        )
    pairs = ((pads[0], pads[0]), (pads[1], pads[1]))
    out = conv_ops.Col2Im.apply(
        x, size=size, kernel=kernel, stride=step, padding=pairs, dilation=dil
    )
    return record(out, dilation=dil, kernel_size=kernel, padding=pads, stride=step)


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r), r = upscale_factor: each group of r^2
    channels becomes an r x r block of pixels."""
    op = "pixel_shuffle"
    x = as_tensor(input)
    r = positive_int(upscale_factor, "upscale_factor", op)
    s = x._array.shape  # the array's shape: a tuple, no Size to make
    if len(s) < 3 or s[-3] % (r * r):
        raise ValueError(
            f"{op}: expected an input of at least 3 dims whose channels (dim -3) are divisible "
            f"by upscale_factor^2 = {r * r}; got shape {x.shape}"
        )
    check_dtype(x, op)
    if fastpath.off_graph(x):  # no node: forward's array wrapped
        return Tensor._make(shuffle_ops.PixelShuffle().forward(x._array, r=r))
    return record(shuffle_ops.PixelShuffle.apply(x, r=r), upscale_factor=r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H * r, W * r) -> (*, C * r^2, H, W), r = downscale_factor: the inverse of
    pixel_shuffle."""
    op = "pixel_unshuffle"
    x = as_tensor(input)
    r = positive_int(downscale_factor, "downscale_factor", op)
    s = x._array.shape  # the array's shape: a tuple, no Size to make
    if len(s) < 3 or s[-2] % r or s[-1] % r:
        raise ValueError(
            f"{op}: expected an input of at least 3 dims whose height and width are divisible "
            f"by downscale_factor = {r}; got shape {x.shape}"
        )
    check_dtype(x, op)
    if fastpath.off_graph(x):  # no node: forward's array wrapped
        return Tensor._make(shuffle_ops.PixelUnshuffle().forward(x._array, r=r))
    return record(shuffle_ops.PixelUnshuffle.apply(x, r=r), downscale_factor=r)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """(N, C, *) with its channels, seen as (groups, C / groups), transposed: channel
    g * (C / groups) + j moves to j * groups + g."""
    op = "channel_shuffle"
    x = as_tensor(input)
    g = positive_int(groups, "groups", op)
    if x.ndim < 3 or x.shape[1] % g:
        raise ValueError(
            f"{op}: expected an input of at least 3 dims whose channels (dim 1) are divisible "
            f"by groups = {g}; got shape {x.shape}"
        )
    check_dtype(x, op)
    return record(shuffle_ops.ChannelShuffle.apply(x, groups=g), groups=g)


class Unfold(Module):
    """Every sliding block as a column (see ``unfold``)."""

    def __init__(
        self, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1
    ) -> None:
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = (
            kernel_size,
            dilation,
            padding,
            stride,
        )

    def forward(self, input: Tensor) -> Tensor:
        return unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
            f"stride={self.stride}"
        )


class Fold(Module):
    """Columns summed back into an image (see ``fold``)."""

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:  # fmt: skip
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                    self.stride)  # fmt: skip

    def extra_repr(self) -> str:
        return (
            f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
            f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}"
        )


class PixelShuffle(Module):
    """Channels to space (see ``pixel_shuffle``)."""

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """Space to channels (see ``pixel_unshuffle``)."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """Channels interleaved across groups (see ``channel_shuffle``)."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


__all__ = [
    "unfold",
    "fold",
    "pixel_shuffle",
    "pixel_unshuffle",
    "channel_shuffle",
    "Unfold",
    "Fold",
    "PixelShuffle",
    "PixelUnshuffle",
    "ChannelShuffle",
]
