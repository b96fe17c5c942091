"""vmap's batching rules for the spatial ops (resampling, grid sampling, unfold and fold, the
pixel and channel shuffles, max unpooling): each runs once on the whole batch, the vmap dim
folded into the op's own batch dim or left in front of the dims it works on; registered with
batching.py, which holds the machinery and the other ops' rules."""

from __future__ import annotations

from typing import Any

from .. import batching
from ..array import xp
from ..batching import call, loop, pool2d
from ..tensor import Tensor


def _only(first: str, batched: dict) -> bool:
    """Whether only the input ``first`` is batched (an index or a shape's arrays never are)."""
    return not any(any(f) if isinstance(f, tuple) else f for k, f in batched.items() if k != first)


def leading(cls: Any, args: dict, batched: dict, size: int) -> Tensor:
    """An op over its input's last dims, whatever dims lead (resampling, the pixel shuffles):
    the batch's dim one more in front."""
    first = next(iter(args))
    return call(cls, args) if _only(first, batched) else loop(cls, args, batched, size)


def blocks(cls: Any, args: dict, batched: dict, size: int) -> Tensor:
    """unfold's and fold's primitives: batched examples (N, ...) folded into B*N, unbatched
    ones given the vmap dim as their batch dim."""
    if not _only("x", batched):
        return loop(cls, args, batched, size)
    rank = 4 if cls.__name__ == "Im2Col" else 3  # an example's rank with its batch dim
    return pool2d(cls, args, batched, size) if args["x"].ndim > rank else call(cls, args)


def _broadcast(x: Any, size: int) -> Any:
    """An input not batched, repeated along a new batch dim (a view)."""
    return x.unsqueeze(0).expand(size, *x.shape)


def grid_sampler(cls: Any, args: dict, batched: dict, size: int) -> Tensor:
    """grid_sample's primitives: the input (B, N, C, *in) and the grid (B, N, *out, dim),
    either batched or both, as B*N samples."""
    x = args["x"] if batched["x"] else _broadcast(args["x"], size)
    grid = args["grid"] if batched["grid"] else _broadcast(args["grid"], size)
    n = x.shape[1]
    folded = {"x": x.reshape(-1, *x.shape[2:]), "grid": grid.reshape(-1, *grid.shape[2:])}
    out = call(cls, {**args, **folded})  # (B*N, C, *out)
    return out.reshape(size, n, *out.shape[1:])


def unpool(cls: Any, args: dict, batched: dict, size: int) -> Tensor:
    """max_unpool's primitives: the values (B, N, C, *in) and their indices (an array of the
    values' shape), either batched or both, as B*N samples; unbatched examples (C, *in) are
    the B samples themselves."""
    x = args["x"] if batched["x"] else _broadcast(args["x"], size)
    index = args["index"]
    if not batched["index"]:  # the same places for every example
        index = xp.broadcast_to(index, (size, *index.shape))
    rank = len(args["size"])  # an example's spatial dims
    if x.ndim - 1 == rank + 1:  # unbatched examples (C, *in): the batch is N
        return call(cls, {**args, "x": x, "index": index})
    n = x.shape[1]
    folded = {"x": x.reshape(-1, *x.shape[2:]), "index": index.reshape(-1, *index.shape[2:])}
    out = call(cls, {**args, **folded})  # (B*N, C, *size)
    return out.reshape(size, n, *out.shape[1:])


LEADING = """UpsampleNearest1d UpsampleNearest2d UpsampleNearest3d UpsampleNearestExact1d
UpsampleNearestExact2d UpsampleNearestExact3d UpsampleLinear1d UpsampleBilinear2d
UpsampleBicubic2d UpsampleTrilinear3d ResampleBackward PixelShuffle PixelUnshuffle
IndexPad IndexPadBackward""".split()

batching.register(
    {
        **dict.fromkeys(LEADING, leading),
        "ChannelShuffle": pool2d,
        "Im2Col": blocks,
        "Col2Im": blocks,
        "GridSampler2d": grid_sampler,
        "GridSampler3d": grid_sampler,
        "MaxUnpool2d": unpool,
        "MaxUnpool3d": unpool,
    }
)
