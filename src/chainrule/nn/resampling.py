"""Resampling for users: ``interpolate`` in every mode PyTorch has without antialiasing, its
older names (``upsample``, ``upsample_nearest``, ``upsample_bilinear``) and the ``Upsample``
modules. Each axis is resampled alone (the modes are separable): its output positions read
one tap (nearest: one gather over every axis), two (linear) or four (cubic) input positions,
weighted (one primitive of ops/resample.py over every axis); 'area' is adaptive average pooling
(pooling.py).
"""

from __future__ import annotations

import functools
import math
import warnings
from typing import Any

from .. import array
from ..autograd.saved import record
from ..bounded import Bounded
from ..ops import resample as resample_ops
from ..tensor import Tensor, as_tensor
from . import spatial_batching  # noqa: F401  (vmap's rules for these ops)
from .module import Module
from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d
from .spatial_args import ntuple

host = array.host

_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")
_RANK = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}  # the modes of one rank
_CUBIC_A = -0.75  # PyTorch's (and OpenCV's) cubic convolution constant


def _scales(
    op: str, shape: tuple[int, ...], size: Any, scale_factor: Any, mode: str, recompute: Any
) -> tuple:
    """(output sizes, the scale factors the kernels use or None per axis), PyTorch's rules:
    a size, or a scale factor (output floor(n * scale)), recomputed from the sizes when
    asked (always for 'area')."""
    dim = len(shape) - 2
    if (size is None) == (scale_factor is None):
        raise ValueError(f"{op}: give exactly one of size and scale_factor; got size {size!r} "
                         f"and scale_factor {scale_factor!r}")  # fmt: skip
    if size is not None:
        if recompute:
            raise ValueError(
                f"{op}: recompute_scale_factor is not meaningful with an explicit size; got "
                f"size {size!r}"
            )
        sizes = ntuple(tuple(size) if isinstance(size, (list, tuple)) else size, dim, op, "size")
        scales: tuple = (None,) * dim
    else:
        factors = scale_factor if isinstance(scale_factor, (list, tuple)) else (scale_factor,) * dim
        if len(factors) != dim:
            raise ValueError(
                f"{op}: scale_factor must have {dim} values for input shape {shape}; got "
                f"{scale_factor!r}"
            )
        scales = tuple(float(f) for f in factors)
        sizes = tuple(math.floor(float(n * s)) for n, s in zip(shape[2:], scales, strict=True))
        if recompute or (recompute is None and mode == "area"):
            scales = (None,) * dim
    if any(n <= 0 for n in sizes):
        raise ValueError(f"{op}: the output size {sizes} must be positive; got input shape {shape}")
    return sizes, scales


def _nearest_taps(n_in: int, n_out: int, scale: float | None, exact: bool) -> Any:
    """(n_out, 1) input positions, PyTorch's arithmetic in float32: floor(i * s) (nearest) or
    floor((i + 0.5) * s) (nearest-exact), s = 1 / scale_factor or n_in / n_out."""
    if n_out == n_in and not exact:
        return host.arange(n_out).reshape(-1, 1)
    if n_out == 2 * n_in and not exact:
        return (host.arange(n_out) >> 1).reshape(-1, 1)
    f32 = host.float32
    s = f32(1.0 / scale) if scale else f32(n_in) / f32(n_out)
    i = host.arange(n_out, dtype=f32) + (f32(0.5) if exact else f32(0))
    return host.minimum(host.floor(i * s).astype(host.int64), n_in - 1).reshape(-1, 1)


def _weighted_taps(n_in: int, n_out: int, scale: float | None, corners: bool, cubic: bool,
                   dt: Any) -> tuple[Any, Any]:  # fmt: skip
    """(n_out, taps) input positions and their weights, 2 taps (linear) or 4 (cubic), in
    PyTorch's arithmetic and opmath dtype ``dt``: the source position of output i is
    i * (n_in - 1) / (n_out - 1) with ``corners`` (align_corners), else (i + 0.5) * s - 0.5,
    s = 1 / scale_factor or n_in / n_out (clamped at 0 for linear)."""
    if corners:
        s = dt(n_in - 1) / dt(n_out - 1) if n_out > 1 else dt(0)
        src = s * host.arange(n_out, dtype=dt)
    else:
        s = dt(1.0 / scale) if scale else dt(n_in) / dt(n_out)
        src = s * (host.arange(n_out, dtype=dt) + dt(0.5)) - dt(0.5)
        if not cubic:
            src = host.maximum(src, dt(0))
    i0 = host.minimum(host.floor(src).astype(host.int64), n_in - 1)
    t = host.clip(src - i0, dt(0), dt(1)).astype(dt)
    if not cubic:
        nxt = i0 + (i0 < n_in - 1)
        return host.stack([i0, nxt], axis=1), host.stack([1 - t, t], axis=1)
    a = dt(_CUBIC_A)

    def near(u: Any) -> Any:  # |u| <= 1
        return ((a + 2) * u - (a + 3)) * u * u + 1

    def far(u: Any) -> Any:  # 1 < |u| < 2
        return ((a * u - 5 * a) * u + 8 * a) * u - 4 * a

    weights = host.stack([far(t + 1), near(t), near(1 - t), far(2 - t)], axis=1)
    taps = host.clip(i0[:, None] + host.arange(-1, 3), 0, n_in - 1)
    return taps, weights


def interpolate(
    input: Tensor,
    size: int | tuple[int, ...] | None = None,
    scale_factor: float | tuple[float, ...] | None = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """input (N, C, *spatial), 1 to 3 spatial dims, resampled to ``size`` or by
    ``scale_factor``: 'nearest' (floor(i * n_in / n_out)), 'nearest-exact' (the nearest
    centre), 'linear' / 'bilinear' / 'trilinear' (linear along each axis), 'bicubic'
    (cubic convolution, a = -0.75, edges repeated) or 'area' (adaptive average pooling).
    ``align_corners`` maps the corner pixels' centres onto each other. uint8 inputs are taken
    by the nearest modes."""
    return _interpolate("interpolate", input, size, scale_factor, mode, align_corners,
                        recompute_scale_factor, antialias)  # fmt: skip


def _interpolate(
    op: str,
    input: Any,
    size: Any,
    scale_factor: Any,
    mode: str,
    align_corners: Any,
    recompute_scale_factor: Any,
    antialias: bool,
) -> Tensor:
    """interpolate, its errors naming ``op`` (interpolate, or the older name called)."""
    x = as_tensor(input)
    given = (
        op, tuple(x.shape), x._array.dtype, _hashable(size), _hashable(scale_factor), mode,
        align_corners, recompute_scale_factor, antialias,
    )  # fmt: skip
    try:
        kind, options, saved = _plan(*given)
    except TypeError as err:  # an argument that is not hashable: planned afresh
        if "unhashable" not in str(err):
            raise
        kind, options, saved = _plan.__wrapped__(*given)
    if saved is None:  # 'area': adaptive average pooling
        return kind(x, options)
    return record(kind.apply(x, **options), **saved)


def _hashable(value: Any) -> Any:
    """A size or scale factor given as a list, as a tuple (kept as a key of _plan)."""
    return tuple(value) if isinstance(value, list) else value


@functools.lru_cache(maxsize=256)
def _plan(
    op: str,
    shape: tuple[int, ...],
    dtype: Any,
    size: Any,
    scale_factor: Any,
    mode: str,
    align_corners: Any,
    recompute_scale_factor: Any,
    antialias: bool,
) -> tuple[Any, Any, Any]:
    """A call's checks and what it runs, which depend on nothing but its arguments and the
    input's shape and dtype, made once for each: (the primitive, its options, what its node
    keeps for PyTorch's ``_saved_*``), or for 'area' (the pool, the output sizes, None)."""
    if mode not in _MODES:
        raise ValueError(f"{op}: mode must be one of {', '.join(_MODES)}; got {mode!r}")
    if antialias:
        raise ValueError(f"{op}: antialias=True is not supported; got mode {mode!r}")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                f"{op}: align_corners can only be set with the modes linear, bilinear, bicubic "
                f"and trilinear; got mode {mode!r} and align_corners={align_corners}"
            )
    dim = len(shape) - 2
    if not 1 <= dim <= 3 or _RANK.get(mode, dim) != dim:
        want = "a 3-D, 4-D or 5-D" if mode not in _RANK else f"a {_RANK[mode] + 2}-D"
        raise ValueError(
            f"{op}: mode {mode!r} needs {want} input (N, C, *spatial); got shape {shape}"
        )
    if dtype == host.uint8 and not mode.startswith("nearest"):
        raise TypeError(
            f"{op}: uint8 input is resampled by the nearest modes only; got mode {mode!r}; "
            "hint: convert to float (PyTorch's uint8 kernels round in fixed point)"
        )
    if dtype != host.uint8 and not array.is_floating(dtype):
        name = array.dtype_object(dtype)
        raise TypeError(f"{op}: mode {mode!r} needs a floating-point tensor; got dtype {name}")
    sizes, scales = _scales(op, shape, size, scale_factor, mode, recompute_scale_factor)
    if mode == "area":
        pool: Any = (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[dim - 1]
        return pool, sizes, None
    names = ("scales",) if dim == 1 else ("scales_d", "scales_h", "scales_w")[3 - dim :]
    saved: dict[str, Any] = {"output_size": tuple(sizes), "self_sym_sizes": shape}
    saved.update(zip(names, scales, strict=True))
    if mode.startswith("nearest"):
        exact = mode == "nearest-exact"
        maps, flat = _nearest(shape[2:], sizes, scales, exact)
        kind = (_UPSAMPLE_NEAREST_EXACT if exact else _UPSAMPLE_NEAREST)[dim - 1]
        return kind, {"maps": maps, "sizes": shape[2:], "flat": flat}, saved
    dt = host.float64 if dtype == host.float64 else host.float32  # PyTorch's opmath
    maps = tuple(
        _map(n_in, n_out, scale, bool(align_corners), mode == "bicubic", dt)
        for n_in, n_out, scale in zip(shape[2:], sizes, scales, strict=True)
    )
    saved["align_corners"] = bool(align_corners)
    return _UPSAMPLE[mode], {"maps": maps, "sizes": shape[2:]}, saved


def _nearest(sizes: tuple, outs: tuple, scales: tuple, exact: bool) -> tuple[tuple, Any]:
    """Each axis' nearest input positions (n_out, 1) and their weights, 1; and each output
    position's input position among the flattened positions of ``sizes`` (the first axis'
    outermost). Made once for each shape where they are small (read only: constants of the
    shapes)."""
    key = (sizes, outs, scales, exact)
    found = _NEAREST.get(key)
    if found is not None:
        return found
    maps = []
    for n_in, n_out, scale in zip(sizes, outs, scales, strict=True):
        taps = host.ascontiguousarray(_nearest_taps(n_in, n_out, scale, exact))
        maps.append((taps, host.ones(taps.shape)))
    found = tuple(maps), resample_ops.nearest_flat(tuple(maps), sizes)
    if found[1].size <= 1 << 16:
        _NEAREST.keep(key, found)
    return found


_NEAREST: Bounded[tuple, Any] = Bounded(256)
_UPSAMPLE_NEAREST = (
    resample_ops.UpsampleNearest1d,
    resample_ops.UpsampleNearest2d,
    resample_ops.UpsampleNearest3d,
)
_UPSAMPLE_NEAREST_EXACT = (
    resample_ops.UpsampleNearestExact1d,
    resample_ops.UpsampleNearestExact2d,
    resample_ops.UpsampleNearestExact3d,
)
_UPSAMPLE: dict[str, Any] = {
    "linear": resample_ops.UpsampleLinear1d,
    "bilinear": resample_ops.UpsampleBilinear2d,
    "bicubic": resample_ops.UpsampleBicubic2d,
    "trilinear": resample_ops.UpsampleTrilinear3d,
}
# each axis' taps and weights, by its sizes, scale, corners, kind and opmath dtype
_MAPS: Bounded[tuple, Any] = Bounded(256)


def _map(n_in: int, n_out: int, scale: Any, corners: bool, cubic: bool, dt: Any) -> Any:
    """_weighted_taps of an axis, made once for each of its arguments."""
    key = (n_in, n_out, scale, corners, cubic, dt)
    found = _MAPS.get(key)
    if found is None:
        taps = _weighted_taps(n_in, n_out, scale, corners, cubic, dt)
        # (n_out, T) in column order: each tap's positions contiguous, as the kernel reads them
        found = _MAPS.keep(key, tuple(host.asfortranarray(a) for a in taps))
    return found


def upsample(
    input: Tensor,
    size: int | tuple[int, ...] | None = None,
    scale_factor: float | tuple[float, ...] | None = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
) -> Tensor:
    """interpolate, under its older name (deprecated in PyTorch, which warns)."""
    warnings.warn(
        "nn.functional.upsample is deprecated. Use nn.functional.interpolate instead.",
        stacklevel=2,
    )
    return _interpolate("upsample", input, size, scale_factor, mode, align_corners, None, False)


def upsample_nearest(
    input: Tensor, size: int | tuple[int, ...] | None = None, scale_factor: float | None = None
) -> Tensor:
    """interpolate with mode 'nearest' (deprecated in PyTorch, which warns)."""
    warnings.warn(
        "nn.functional.upsample_nearest is deprecated. Use nn.functional.interpolate instead.",
        stacklevel=2,
    )
    return _interpolate("upsample_nearest", input, size, scale_factor, "nearest", None, None, False)


def upsample_bilinear(
    input: Tensor, size: int | tuple[int, int] | None = None, scale_factor: float | None = None
) -> Tensor:
    """interpolate with mode 'bilinear' and align_corners=True (deprecated in PyTorch)."""
    warnings.warn(
        "nn.functional.upsample_bilinear is deprecated. Use nn.functional.interpolate instead.",
        stacklevel=2,
    )
    return _interpolate("upsample_bilinear", input, size, scale_factor, "bilinear", True, None,
                        False)  # fmt: skip


class Upsample(Module):
    """Resampling to ``size`` or by ``scale_factor`` (see ``interpolate``)."""

    def __init__(
        self,
        size: int | tuple[int, ...] | None = None,
        scale_factor: float | tuple[float, ...] | None = None,
        mode: str = "nearest",
        align_corners: bool | None = None,
        recompute_scale_factor: bool | None = None,
    ) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):  # kept as floats, as PyTorch's, for its repr
            self.scale_factor: Any = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode, self.align_corners = mode, align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                           recompute_scale_factor=self.recompute_scale_factor)  # fmt: skip

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = f"scale_factor={self.scale_factor!r}"
        else:
            info = f"size={self.size!r}"
        return f"{info}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Nearest resampling of (N, C, H, W)."""

    def __init__(
        self, size: int | tuple[int, int] | None = None, scale_factor: float | None = None
    ) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear resampling of (N, C, H, W) with align_corners=True."""

    def __init__(
        self, size: int | tuple[int, int] | None = None, scale_factor: float | None = None
    ) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


__all__ = [
    "interpolate",
    "upsample",
    "upsample_nearest",
    "upsample_bilinear",
    "Upsample",
    "UpsamplingNearest2d",
    "UpsamplingBilinear2d",
]
