"""Sampling grids, for users: ``affine_grid`` (the sampling positions of an affine map) and
``grid_sample`` (an input read at arbitrary positions: bilinear, nearest or bicubic, with
zeros, border or reflection padding). Composite: the positions are Tensor arithmetic on the
grid, the reads a gather of the flattened input at the integer corners, weighted by the
fractional parts, so the gradients in the input and in the grid come from those ops.
"""

from __future__ import annotations

import itertools
import math
import warnings
from typing import Any

from .. import array
from ..arguments import need_float
from ..tensor import Tensor, as_tensor, matmul, where

xp = array.xp

_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")
_CUBIC_A = -0.75


def _corners_default(op: str, align_corners: bool | None) -> bool:
    if align_corners is None:  # PyTorch's default since 1.3, with its warning
        warnings.warn(
            f"Default {op} behavior has changed to align_corners=False since 1.3.0. Please "
            "specify align_corners=True if the old behavior is desired.",
            stacklevel=3,
        )
        return False
    return bool(align_corners)


def _steps(n: int, corners: bool, like: Any) -> Any:
    """n positions from -1 to 1 (PyTorch's base grid): the pixels' centres, or with
    ``corners`` their outer edges' ends; 0 alone for n = 1."""
    if n <= 1:
        return xp.zeros(n, dtype=like.dtype, like=like)
    out = array.host.linspace(-1, 1, n, dtype=like.dtype)  # a constant of the shapes
    return array.from_host(out if corners else out * like.dtype.type((n - 1) / n), like)


def affine_grid(theta: Tensor, size: list[int], align_corners: bool | None = None) -> Tensor:
    """The grid (N, H, W, 2) (or (N, D, H, W, 3)) of positions theta (N, 2, 3) (or (N, 3, 4))
    maps the output's pixels to, for grid_sample: [x, y, 1] @ theta^T, x and y from -1 to 1
    across the output's width and height."""
    op = "affine_grid"
    theta = as_tensor(theta)
    need_float(theta, op)
    size = [int(s) for s in size]
    corners = _corners_default(op, align_corners)
    dim = len(size) - 2
    if dim not in (2, 3) or theta.shape != (size[0], dim, dim + 1):
        raise ValueError(
            f"{op}: expected size (N, C, H, W) with theta (N, 2, 3), or (N, C, D, H, W) with "
            f"theta (N, 3, 4); got size {tuple(size)} and theta shape {theta.shape}"
        )
    if min(size) <= 0:
        raise ValueError(f"{op}: every size must be positive; got size {tuple(size)}")
    spatial = size[2:]
    axes = [_steps(n, corners, theta._array) for n in reversed(spatial)]  # x, y (, z)
    mesh = xp.meshgrid(*reversed(axes), indexing="ij")  # each (D,) H, W
    ones = xp.ones(mesh[0].shape, dtype=theta._array.dtype, like=theta._array)
    base = xp.stack([*reversed(mesh), ones], axis=-1).reshape(-1, dim + 1)  # (P, dim + 1)
    out = matmul(Tensor._make(base), theta.mT)  # (N, P, dim)
    return out.reshape(size[0], *spatial, dim)


def _reflect(c: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """c reflected into [twice_low / 2, twice_high / 2] as often as needed (PyTorch's
    reflect_coordinates)."""
    if twice_low == twice_high:
        return c * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    c = (c - low).abs()
    extra = c.fmod(span)
    flips = xp.floor(c._array / span)
    return where(Tensor._make(flips % 2 == 0), extra + low, span - extra + low)


def _source(coord: Tensor, n: int, padding: str, corners: bool) -> Tensor:
    """Grid values (-1 to 1) as input positions along an axis of n, padding applied (PyTorch's
    grid_sampler_compute_source_index)."""
    c = (coord + 1) / 2 * (n - 1) if corners else ((coord + 1) * n - 1) / 2
    if padding == "border":
        c = c.clamp(0, n - 1)
    elif padding == "reflection":
        c = _reflect(c, 0, 2 * (n - 1)) if corners else _reflect(c, -1, 2 * n - 1)
        c = c.clamp(0, n - 1)
    return c


def _bounded(pos: Any, n: int, padding: str, corners: bool) -> Any:
    """A bicubic tap's integer position with the padding applied (on arrays)."""
    if padding == "border":
        return xp.clip(pos, 0, n - 1)
    if padding == "reflection":
        c = _reflect(
            Tensor._make(pos.astype(float)), *((0, 2 * (n - 1)) if corners else (-1, 2 * n - 1))
        )
        return xp.clip(c._array, 0, n - 1).astype(xp.int64)
    return pos


def _cubic(t: Tensor) -> list[Tensor]:
    """The four cubic convolution weights of taps -1, 0, 1, 2 at fraction t."""
    a = _CUBIC_A

    def near(u: Tensor) -> Tensor:
        return ((a + 2) * u - (a + 3)) * u * u + 1

    def far(u: Tensor) -> Tensor:
        return ((a * u - 5 * a) * u + 8 * a) * u - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def grid_sample(
    input: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool | None = None,
) -> Tensor:
    """input (N, C, H, W) read at grid (N, Ho, Wo, 2) (x, y from -1 to 1; 5-D input with
    (N, Do, Ho, Wo, 3) likewise): each output the 'bilinear' (trilinear in 3-D) mix of the
    corners around its position, the 'nearest' pixel (ties to even) or the 'bicubic' mix of
    4 x 4 (2-D only); positions outside read 'zeros', the 'border' or the 'reflection'."""
    op = "grid_sample"
    x, grid = as_tensor(input), as_tensor(grid)
    if mode not in _MODES:
        raise ValueError(f"{op}: mode must be one of {', '.join(_MODES)}; got {mode!r}")
    if padding_mode not in _PADDINGS:
        raise ValueError(
            f"{op}: padding_mode must be one of {', '.join(_PADDINGS)}; got {padding_mode!r}"
        )
    need_float(x, op)
    need_float(grid, op)
    dim = x.ndim - 2
    if (
        dim not in (2, 3)
        or grid.ndim != x.ndim
        or grid.shape[-1] != dim
        or grid.shape[0] != x.shape[0]
    ):
        raise ValueError(
            f"{op}: expected input (N, C, H, W) with grid (N, Ho, Wo, 2), or (N, C, D, H, W) "
            f"with grid (N, Do, Ho, Wo, 3); got input shape {x.shape} and grid shape {grid.shape}"
        )
    if mode == "bicubic" and dim != 2:
        raise ValueError(f"{op}: mode 'bicubic' needs a 4-D input; got input shape {x.shape}")
    # chainrule's bfloat16 math gives float32 (NumPy has no bfloat16 loops): that pair mixes
    bf16 = {x._array.dtype, grid._array.dtype} == {array.bfloat16, array.float32}
    if x.dtype != grid.dtype and not bf16:
        raise TypeError(
            f"{op}: input and grid must share one dtype; got {x.dtype} and {grid.dtype}"
        )
    corners = _corners_default(op, align_corners)
    n, c = x.shape[:2]
    sizes = x.shape[2:][::-1]  # along x, y (, z): W, H (, D)
    out_shape = grid.shape[1:-1]
    p = math.prod(out_shape)
    flat_in = x.reshape(n, c, math.prod(x.shape[2:]))  # (N, C, S)
    strides = [math.prod(sizes[:k]) for k in range(dim)]  # 1, W (, W*H)
    coords = [grid[..., k].reshape(n, p) for k in range(dim)]  # (N, P) each

    def read(positions: list[Any], weight: Any) -> Tensor:
        """The input at integer positions (one (N, P) array an axis), zero outside, times
        weight (a Tensor or an array, (N, P))."""
        inside = xp.ones((n, p), dtype=bool, like=x._array)
        flat = xp.zeros((n, p), dtype=xp.int64, like=x._array)
        for pos, size, stride in zip(positions, sizes, strides, strict=True):
            inside &= (pos >= 0) & (pos < size)
            flat += xp.clip(pos, 0, size - 1) * stride
        index = Tensor._make(xp.broadcast_to(flat[:, None, :], (n, c, p)))
        mask = Tensor._make(inside.astype(x._array.dtype))
        return flat_in.gather(2, index) * (weight * mask).unsqueeze(1)  # (N, C, P)

    if mode == "bicubic":
        raw = [(coord + 1) / 2 * (size - 1) if corners else ((coord + 1) * size - 1) / 2
               for coord, size in zip(coords, sizes, strict=True)]  # fmt: skip
        starts = [xp.floor(r._array).astype(xp.int64) for r in raw]
        weights = [
            _cubic(r - Tensor._make(s.astype(r._array.dtype)))
            for r, s in zip(raw, starts, strict=True)
        ]
        out: Any = None
        for i, j in itertools.product(range(4), range(4)):
            px = _bounded(starts[0] - 1 + i, sizes[0], padding_mode, corners)
            py = _bounded(starts[1] - 1 + j, sizes[1], padding_mode, corners)
            term = read([px, py], weights[0][i] * weights[1][j])
            out = term if out is None else out + term
        return out.reshape(n, c, *out_shape)
    src = [
        _source(coord, size, padding_mode, corners)
        for coord, size in zip(coords, sizes, strict=True)
    ]
    if mode == "nearest":  # the gradient in the grid is zero, as PyTorch's
        out = read([xp.rint(s._array).astype(xp.int64) for s in src], src[0] * 0 + 1)
        return out.reshape(n, c, *out_shape)
    lows = [xp.floor(s._array) for s in src]
    fracs = [s - Tensor._make(low) for s, low in zip(src, lows, strict=True)]
    out = None
    for bits in itertools.product((0, 1), repeat=dim):
        weight: Any = None
        for b, t in zip(bits, fracs, strict=True):
            w = t if b else 1 - t
            weight = w if weight is None else weight * w
        positions = [low.astype(xp.int64) + b for low, b in zip(lows, bits, strict=True)]
        term = read(positions, weight)
        out = term if out is None else out + term
    return out.reshape(n, c, *out_shape)


__all__ = ["affine_grid", "grid_sample"]
