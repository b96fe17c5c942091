"""Resampling's primitives (interpolate's modes but area): each axis of the output a
weighted sum of a few taps of the input along it, one axis at a time, given per axis as taps
(n_out, T), input positions, and their weights (n_out, T), host arrays; the nearest modes'
one tap of weight 1 a single gather over every axis. The adjoint is the same kind of map
with the pattern transposed (each input position's readers and their weights), so gradients
of every order are exact. Argument checks and the taps themselves live in nn/resampling.py.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .. import array, fastpath
from ..array import xp
from ..autograd.primitive import Function

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor


def transposed(taps: Any, weights: Any, n_in: int) -> tuple[Any, Any]:
    """The pattern of the map's adjoint: for each of n_in input positions, the outputs that
    read it and with what weight, (n_in, T') host arrays padded with weight-0 reads of
    output 0 (T' the most readers of one position)."""
    host = array.host
    n_out, t = taps.shape
    where, rows = taps.reshape(-1), host.repeat(host.arange(n_out), t)
    order = host.argsort(where, kind="stable")
    where, rows, w = where[order], rows[order], weights.reshape(-1)[order]
    counts = host.bincount(where, minlength=n_in)
    width = max(int(counts.max()) if counts.size else 0, 1)
    slot = host.arange(where.size) - host.repeat(host.cumsum(counts) - counts, counts)
    out_taps = host.zeros((n_in, width), dtype=host.int64)
    out_weights = host.zeros((n_in, width), dtype=weights.dtype)
    out_taps[where, slot] = rows
    out_weights[where, slot] = w
    return out_taps, out_weights


def _along(x: Any, axis: int, taps: Any, weights: Any) -> Any:
    """x resampled along axis: out[..., i, ...] = sum_k weights[i, k] * x[..., taps[i, k], ...];
    one gather per tap k, weighted by its column broadcast over the later axes, summed in
    the taps' order (PyTorch's)."""
    n_out, t = taps.shape
    if fastpath.enabled() and x.size // max(x.shape[axis], 1) * n_out * t <= _FEW:
        return _along_at_once(x, axis, taps, weights)
    w = weights.astype(x.dtype, copy=False).reshape((n_out, t) + (1,) * (x.ndim - axis - 1))
    if type(x) is not array.host.ndarray:
        taps, w = array.from_host(taps, x), array.from_host(w, x)
    out = _gather(x, axis, taps[:, 0])
    out *= w[:, 0]
    for k in range(1, t):
        picked = _gather(x, axis, taps[:, k])
        picked *= w[:, k]
        out += picked
    return out


_FEW = 2048  # gathered values up to which every tap at once is the faster (fewer calls)


def _along_at_once(x: Any, axis: int, taps: Any, weights: Any) -> Any:
    """_along with every tap gathered by one take, the tap's index outermost, weighted at
    once and summed over it: fewer NumPy calls, more passes (a few values' way)."""
    n_out, t = taps.shape
    taps, w = taps.T.reshape(-1), weights.T.astype(x.dtype, copy=False)  # (T*o,), (T, o)
    if type(x) is not array.host.ndarray:
        taps, w = array.from_host(taps, x), array.from_host(w, x)
    picked = x.take(taps, axis=axis)
    picked = picked.reshape(x.shape[:axis] + (t, n_out) + x.shape[axis + 1 :])  # (.., T, o, ..)
    picked *= w.reshape((t, n_out) + (1,) * (x.ndim - axis - 1))
    return xp.add.reduce(picked, axis=axis)


def _gather(x: Any, axis: int, index: Any) -> Any:
    """x.take(index, axis=axis), (.., len(index), ..); with the fast path on, a last axis of
    few outputs by indexing, which NumPy runs faster there (fastpath/table.py); take is the
    faster from some tens of outputs (2-5x for an image's rows)."""
    if fastpath.enabled() and axis == x.ndim - 1 and len(index) <= _SHORT:
        return x[..., index]
    return x.take(index, axis=axis)


_SHORT = 16  # outputs along a last axis up to which indexing gathers them faster


class _Resample(Function):
    """out = x with each of its last axes resampled (a weighted sum of taps along it);
    linear in x, its adjoint the same with each axis' pattern transposed."""

    rule = "grad_x = ResampleBackward(grad): each axis' taps and weights transposed"
    saves_inputs = False

    def forward(self, x: Any, *, maps: tuple, sizes: tuple) -> Any:
        """maps: (taps, weights) per resampled (last) axis; sizes: the input's size along
        each of those axes (for the adjoint)."""
        self.maps, self.sizes = maps, sizes
        out, first = x, x.ndim - len(maps)  # maps[i] for axis first + i
        last_first = range(x.ndim - 1, first - 1, -1)
        if fastpath.enabled():  # the axis that shrinks most first: fewer values for the rest
            axes = sorted(last_first, key=lambda a: len(maps[a - first][0]) / max(x.shape[a], 1))
        else:  # PyTorch's order
            axes = list(last_first)
        for axis in axes:
            out = _along(out, axis, *maps[axis - first])
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        pairs = list(zip(self.maps, self.sizes, strict=True))
        maps = tuple(transposed(taps, weights, n) for (taps, weights), n in pairs)
        sizes = tuple(taps.shape[0] for taps, _ in self.maps)
        return (ResampleBackward.apply(grad, maps=maps, sizes=sizes),)


class UpsampleLinear1d(_Resample):
    """out[n, c, i] = sum_k w[i, k] * x[n, c, taps[i, k]]: linear interpolation along the
    length; grad_x = grad spread back with the same weights."""

    rule = "grad_x = ResampleBackward(grad): each axis' taps and weights transposed"


class UpsampleBilinear2d(_Resample):
    """out[n, c, i, j] = sum_{k, l} wh[i, k] ww[j, l] x[n, c, th[i, k], tw[j, l]]: linear
    interpolation along the height and the width; grad_x = grad spread back alike."""

    rule = "grad_x = ResampleBackward(grad): each axis' taps and weights transposed"


class UpsampleBicubic2d(_Resample):
    """out[n, c, i, j] = sum_{k, l} wh[i, k] ww[j, l] x[n, c, th[i, k], tw[j, l]]: cubic
    convolution (4 taps) along the height and the width; grad_x = grad spread back alike."""

    rule = "grad_x = ResampleBackward(grad): each axis' taps and weights transposed"


class UpsampleTrilinear3d(_Resample):
    """out[n, c, i, j, l] = linear interpolation of x along the depth, the height and the
    width, one axis at a time; grad_x = grad spread back alike."""

    rule = "grad_x = ResampleBackward(grad): each axis' taps and weights transposed"


def nearest_flat(maps: tuple, sizes: tuple) -> Any:
    """Each output position's input position among the flattened positions of ``sizes``,
    from each axis' one tap (n_out, 1) in maps, the first axis' positions outermost."""
    flat = array.host.zeros((), dtype=array.host.int64)
    for (taps, _), n in zip(maps, sizes, strict=True):
        flat = (flat * n)[..., None] + taps[:, 0]  # (o_0, .., o_d)
    return flat.reshape(-1)


class _Nearest(_Resample):
    """out = x read at one input position an output position along each resampled axis;
    maps' taps (n_out, 1) weigh 1, so the adjoint is a resampling's."""

    def forward(self, x: Any, *, maps: tuple, sizes: tuple, flat: Any = None) -> Any:
        """One gather: ``flat`` is nearest_flat(maps, sizes), given where it is kept."""
        self.maps, self.sizes = maps, sizes
        flat = nearest_flat(maps, sizes) if flat is None else flat
        lead = x.shape[: x.ndim - len(sizes)]
        rows = x.reshape(lead + (math.prod(sizes),))  # (.., prod(sizes))
        out = rows.take(array.from_host(flat, x), axis=-1)  # (.., prod(out sizes))
        return out.reshape(lead + tuple(taps.shape[0] for taps, _ in maps))


class UpsampleNearest1d(_Nearest):
    """out[n, c, i] = x[n, c, taps[i]], taps[i] = floor(i * n_in / n_out): nearest
    resampling along the length; grad_x = grad summed back at each tap."""

    rule = "grad_x = ResampleBackward(grad): grad summed back at each output's input position"


class UpsampleNearest2d(_Nearest):
    """out[n, c, i, j] = x[n, c, th[i], tw[j]]: nearest resampling along the height and the
    width; grad_x = grad summed back at each tap."""

    rule = "grad_x = ResampleBackward(grad): grad summed back at each output's input position"


class UpsampleNearest3d(_Nearest):
    """out[n, c, i, j, l] = x[n, c, td[i], th[j], tw[l]]: nearest resampling along the depth,
    the height and the width; grad_x = grad summed back at each tap."""

    rule = "grad_x = ResampleBackward(grad): grad summed back at each output's input position"


class UpsampleNearestExact1d(_Nearest):
    """out[n, c, i] = x[n, c, taps[i]], taps[i] = floor((i + 0.5) * n_in / n_out): the
    nearest centre along the length; grad_x = grad summed back at each tap."""

    rule = "grad_x = ResampleBackward(grad): grad summed back at each output's input position"


class UpsampleNearestExact2d(_Nearest):
    """out[n, c, i, j] = x[n, c, th[i], tw[j]], each tap the nearest centre: along the height
    and the width; grad_x = grad summed back at each tap."""

    rule = "grad_x = ResampleBackward(grad): grad summed back at each output's input position"


class UpsampleNearestExact3d(_Nearest):
    """out[n, c, i, j, l] = x[n, c, td[i], th[j], tw[l]], each tap the nearest centre: along
    the depth, the height and the width; grad_x = grad summed back at each tap."""

    rule = "grad_x = ResampleBackward(grad): grad summed back at each output's input position"


class ResampleBackward(_Resample):
    """out = g with each of its last axes spread back over the input positions its taps read,
    weighted: the adjoint of a resampling; its own adjoint is the resampling again."""

    rule = "grad_g = ResampleBackward(h) with each axis' pattern transposed back"
