"""Sampling grids, for users: ``affine_grid`` (the sampling positions of an affine map) and
``grid_sample`` (an input read at arbitrary positions: bilinear, nearest or bicubic, with
zeros, border or reflection padding); grid_sample's primitives are ops/grid.py's.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

from .. import array
from ..arguments import need_float
from ..autograd.saved import record
from ..bounded import Bounded
from ..ops import grid as grid_ops
from ..tensor import Tensor, as_tensor
from . import spatial_batching  # noqa: F401  (vmap's rules for these ops)

xp = array.xp

_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")


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
    spatial = tuple(size[2:])
    base = _base_grid(spatial, corners, theta._array)  # (P, dim + 1)
    out = grid_ops.AffineGridGenerator.apply(theta, base=base, shape=(size[0], *spatial, dim))
    return record(out, align_corners=corners, size=tuple(size))


def _base_grid(spatial: tuple, corners: bool, like: Any) -> Any:
    """(P, dim + 1): each output pixel's [x, y (, z), 1], x along the width; a small one
    (where making it costs more than using it) made once for each size, corners and dtype on
    the host (read only: a constant of the shapes)."""
    on_host = type(like) is array.host.ndarray
    key = (spatial, corners, like.dtype)
    base = _BASE_GRIDS.get(key) if on_host else None
    if base is None:
        dim = len(spatial)
        axes = [_steps(n, corners, like) for n in reversed(spatial)]  # x, y (, z)
        mesh = xp.meshgrid(*reversed(axes), indexing="ij")  # each (D,) H, W
        ones = xp.ones(mesh[0].shape, dtype=like.dtype, like=like)
        base = xp.stack([*reversed(mesh), ones], axis=-1).reshape(-1, dim + 1)  # (P, dim + 1)
        if on_host and base.size <= _KEPT_SIZE:
            base.flags.writeable = False
            _BASE_GRIDS.keep(key, base)
    return base


_BASE_GRIDS: Bounded[tuple, Any] = Bounded(64)
_KEPT_SIZE = 1 << 16  # the largest base grid kept (elements), so the kept ones stay small


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
    x, grid = as_tensor(input), as_tensor(grid)
    sampler = _sampler(
        tuple(x.shape), tuple(grid.shape), x._array.dtype, grid._array.dtype, mode, padding_mode
    )
    corners = _corners_default("grid_sample", align_corners)
    out = sampler.apply(x, grid, mode=mode, padding=padding_mode, corners=corners)
    return record(
        out, align_corners=corners, interpolation_mode=_MODES.index(mode),
        padding_mode=_PADDINGS.index(padding_mode),
    )  # fmt: skip


@functools.lru_cache(maxsize=256)
def _sampler(
    shape: tuple[int, ...], grid_shape: tuple[int, ...], dtype: Any, grid_dtype: Any,
    mode: str, padding_mode: str,
) -> Any:  # fmt: skip
    """grid_sample's checks of a call, which depend only on its shapes, dtypes and modes,
    made once for each; its primitive."""
    op = "grid_sample"
    if mode not in _MODES:
        raise ValueError(f"{op}: mode must be one of {', '.join(_MODES)}; got {mode!r}")
    if padding_mode not in _PADDINGS:
        raise ValueError(
            f"{op}: padding_mode must be one of {', '.join(_PADDINGS)}; got {padding_mode!r}"
        )
    for kind in (dtype, grid_dtype):
        if not array.is_floating(kind):
            name = array.dtype_object(kind)
            raise TypeError(f"{op}: needs a floating-point tensor; got dtype {name}")
    dim = len(shape) - 2
    if (
        dim not in (2, 3)
        or len(grid_shape) != len(shape)
        or grid_shape[-1] != dim
        or grid_shape[0] != shape[0]
    ):
        raise ValueError(
            f"{op}: expected input (N, C, H, W) with grid (N, Ho, Wo, 2), or (N, C, D, H, W) "
            f"with grid (N, Do, Ho, Wo, 3); got input shape {shape} and grid shape {grid_shape}"
        )
    if mode == "bicubic" and dim != 2:
        raise ValueError(f"{op}: mode 'bicubic' needs a 4-D input; got input shape {shape}")
    # chainrule's bfloat16 math gives float32 (NumPy has no bfloat16 loops): that pair mixes
    if dtype != grid_dtype and {dtype, grid_dtype} != {array.bfloat16, array.float32}:
        raise TypeError(
            f"{op}: input and grid must share one dtype; got {array.dtype_object(dtype)} and "
            f"{array.dtype_object(grid_dtype)}"
        )
    return grid_ops.GridSampler2d if dim == 2 else grid_ops.GridSampler3d


__all__ = ["affine_grid", "grid_sample"]
