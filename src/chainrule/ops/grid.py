"""grid_sample's primitives (GridSampler2d, GridSampler3d): an input read at arbitrary
positions, each output a weighted sum of taps gathered from the input's planes; and
affine_grid's (AffineGridGenerator). Argument checks live in nn/grid.py.

Along each axis a position gives its taps (the integer positions read: 2 for linear, 4 for
cubic, 1 for nearest) and their weights, functions of the position's fraction t; the taps of a
point are every combination of one tap an axis, weighted by the product of their axes'
weights, zero where a tap falls outside the input.
"""

from __future__ import annotations

import copy
import functools
import math
from typing import TYPE_CHECKING, Any

from .. import array
from ..array import xp
from ..autograd.primitive import Function, tensor_type
from ..bounded import Bounded
from ..fastpath import masked
from .elementwise import Where
from .movement import Stack

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor

_CUBIC_A = -0.75  # PyTorch's cubic convolution coefficient


def _reflect(c: Any, bounds: _Axes) -> tuple[Any, Any]:
    """c reflected into [low, low + span] as often as needed (each axis' low and span at c's
    shape, _Axes'), as PyTorch's reflect_coordinates: |c - low| folded by span, each odd
    fold mirrored; and where the slope is -1 (the odd folds of a c above low, the even ones
    of a c below), as _pad_slopes reads it. What is left past the folds is c - folds * span,
    PyTorch's fmod within a rounding."""
    low, span, zero = bounds.low, bounds.span, bounds.zero
    c = c - low
    flipped = c < zero  # the slope's sign before the folds
    c = xp.abs(c, out=c)
    folds = xp.floor(c / span)
    odd = (folds.astype(xp.int64) & 1) == 1  # PyTorch's int flips % 2
    # not fmod: NumPy's float32 fmod takes about 50 ns an element, 100 times a product's
    extra = xp.subtract(c, xp.multiply(folds, span, out=folds), out=c)
    out = xp.where(odd, span - extra, extra)
    out += low
    return out, odd != flipped


def _padded(c: Any, bounds: _Axes, padding: str) -> tuple[Any, Any, Any]:
    """Positions along the axes (each axis' bounds at c's shape, _Axes') with the padding
    applied: clipped to [0, n - 1] for the border, first reflected for the reflection; and
    what _pad_slopes reads: the positions before the clip, and where reflection flipped
    them (None where it did not run)."""
    if padding == "zeros":
        return c, None, None
    mirrored = None
    if padding == "reflection":
        c, mirrored = _reflect(c, bounds)
        if bounds.flat:  # align_corners on an axis of one: its one position
            c *= bounds.spread
    return xp.minimum(xp.maximum(c, bounds.zero), bounds.high), c, mirrored


def _pad_slopes(before: Any, mirrored: Any, bounds: _Axes) -> Any:
    """d padded position / d position, from what _padded kept: 1 strictly inside [0, n - 1]
    and 0 elsewhere (PyTorch's clip_coordinates_set_grad), negated where reflection mirrored
    (reflect_coordinates_set_grad's sign; 0 on a flat axis)."""
    slope = ((before > 0) & (before < bounds.high)).astype(before.dtype)
    if mirrored is not None:
        sign = mirrored.astype(before.dtype)  # 1 where the slope is -1
        sign *= -2
        sign += 1
        slope *= sign
        if bounds.flat:
            slope *= bounds.spread
    return slope


def _weights(t: Any, parts: tuple[Any, ...]) -> Any:
    """Each tap's weight at fraction t (an array or a Tensor, with an axis of taps that
    broadcasts against the parts', as _polynomials gives them): linear (1 - t, t), or cubic
    convolution (taps -1, 0, 1, 2) of u = (t + 1, t, 1 - t, 2 - t), each weight a cubic in
    its u, evaluated for every tap at once (Horner's rule, the same numbers as the
    polynomials' own order)."""
    sign, shift, *cubic = parts
    u = t * sign + shift
    if not cubic:  # linear: the weight is u itself
        return u
    high, second, first, last = cubic
    return ((u * high + second) * u + first) * u + last


def _tap_weights(t: Any, parts: tuple[Any, ...]) -> Any:
    """_weights on arrays, the same operations in one buffer (and u's): no temporary of the
    full shape for each step."""
    sign, shift, *cubic = parts
    u = t * sign
    u += shift
    if not cubic:
        return u
    high, second, first, last = cubic
    out = u * high
    out += second
    out *= u
    out += first
    out *= u
    out += last
    return out


@functools.lru_cache(maxsize=8)
def _polynomials(mode: str, kind: Any) -> tuple[Any, ...]:
    """(T, 1) arrays in dtype ``kind`` (read only): each tap's u as t * sign + shift, and for
    bicubic the coefficients of each tap's cubic in u, highest first: the near one
    (a + 2) u^3 - (a + 3) u^2 + 1 for taps 0 and 1, the far one a u^3 - 5a u^2 + 8a u - 4a
    for taps -1 and 2."""
    a = _CUBIC_A
    rows: list[tuple[float, ...]] = [(-1, 1), (1, 0)]  # linear: u = (1 - t, t)
    if mode == "bicubic":
        rows = [(1, 1, -1, -1), (1, 0, 1, 2)]
        rows += [(a, a + 2, a + 2, a), (-5 * a, -(a + 3), -(a + 3), -5 * a)]
        rows += [(8 * a, 0, 0, 8 * a), (-4 * a, 1, 1, -4 * a)]
    out = tuple(array.host.array(row, dtype=kind)[:, None] for row in rows)
    for part in out:
        part.flags.writeable = False
    return out


def _weight_slopes(t: Any, parts: tuple[Any, ...]) -> Any:
    """The derivative in t of each tap's weight (t an array, as _tap_weights'): d w / d u
    times d u / d t, the sign; linear's the sign alone (-1 and 1 at a NaN t too, as
    PyTorch's)."""
    sign, shift, *cubic = parts
    if not cubic:
        return xp.broadcast_to(sign, xp.broadcast_shapes(sign.shape, t.shape)).astype(t.dtype)
    high, second, first, _ = cubic
    u = t * sign + shift
    return ((u * (3 * high) + 2 * second) * u + first) * sign


def _slopes(t: Any, mode: str) -> list[Any]:
    """The derivative in t of each of _weights' weights (t a Tensor)."""
    if mode == "bilinear":  # constants, -1 and 1 at a NaN or infinite t too, as PyTorch's
        return [_const(-1.0, t._array), _const(1.0, t._array)]
    a = _CUBIC_A

    def near(u: Any) -> Any:
        return (3 * (a + 2) * u - 2 * (a + 3)) * u

    def far(u: Any) -> Any:
        return (3 * a * u - 10 * a) * u + 8 * a

    return [far(t + 1), near(t), -near(1 - t), -far(2 - t)]


class _Axes:
    """The constants of one sampling's shapes, each at the full shape of the taps
    (dim, T, M), M = N * P: every axis' size, its last position n - 1, reflection's low end
    and span (where align_corners leaves an axis of one a single position, ``flat``: its span
    taken as 1, its positions multiplied by ``spread``, 0 there), its stride in the flattened
    input, d position / d (grid + 1), the taps' offsets and _weights' polynomials; the scale
    d position / d grid of each axis, as numbers; and the numbers the positions meet, 0-d.
    Small ones are copied to their full shape and kept, the positions made at that shape
    too (``at_positions``), as NumPy's loops run fastest over arrays of one shape (a
    broadcast costs more than the arithmetic on a few elements); large ones stay (dim, 1, 1)
    or (1, T, 1), made for each call, and the positions (dim, 1, M)."""

    def __init__(
        self, sizes: tuple[int, ...], mode: str, corners: bool, dtype: Any, m: int
    ) -> None:
        host = array.host
        dim, taps = len(sizes), {"bilinear": 2, "nearest": 1, "bicubic": 4}[mode]
        kept = m <= _KEPT_POSITIONS
        self.at_positions = (dim, taps if kept else 1, m)

        def shaped(values: Any, kind: Any = dtype, per: str = "axis") -> Any:
            """Values per axis (dim,), or per tap (T,) with ``per="tap"``, at the full shape."""
            values = host.asarray(values, dtype=kind)
            values = values[None, :, None] if per == "tap" else values[:, None, None]
            return host.broadcast_to(values, (dim, taps, m)).copy() if kept else values

        size = host.array(sizes, dtype=host.float64)
        span = size - 1 if corners else size
        self.half = shaped(span / 2)  # the position is (grid + 1) * half (- 0.5)
        self.high = shaped(size - 1)  # the padding's bounds
        self.low = shaped(size * 0 if corners else size * 0 - 0.5)
        self.span = shaped(host.where(span == 0, 1, span))
        self.flat = bool((span == 0).any())
        self.spread = shaped(span != 0)
        self.int_high = shaped(size - 1, host.uint64)  # a tap is within if at most this
        self.strides = shaped(host.cumprod((1, *sizes[:-1])), host.int64)
        # the taps around a position: its floor and the next (bicubic: from one before it)
        cubic = mode == "bicubic"
        offsets = host.arange(-cubic, taps - cubic)
        self.offsets = shaped(offsets, dtype if cubic else host.int64, per="tap")
        parts = _polynomials(mode, dtype) if mode != "nearest" else ()
        self.polynomials = tuple(shaped(part[:, 0], per="tap") for part in parts)
        numbers = (host.array(v, dtype=dtype) for v in (0, 1, 0.5))
        self.zero, self.one, self.pixel_half = numbers
        self.scales = [(n - 1) / 2 if corners else n / 2 for n in sizes]  # d position / d grid
        self.dim, self.volume = dim, math.prod(sizes)

    def on(self, like: Any) -> _Axes:
        """These constants on like's device."""
        moved = copy.copy(self)
        for name, value in vars(moved).items():
            if isinstance(value, array.host.ndarray):
                setattr(moved, name, array.from_host(value, like))
        moved.polynomials = tuple(array.from_host(part, like) for part in self.polynomials)
        return moved


def _axes(sizes: tuple[int, ...], mode: str, corners: bool, dtype: Any, m: int) -> _Axes:
    """A sampling's constants, kept for each small shape (a bounded number of them)."""
    key = (sizes, mode, corners, dtype, m)
    found = _AXES.get(key)
    if found is None and m > _KEPT_POSITIONS:
        return _Axes(sizes, mode, corners, dtype, m)
    if found is None:
        found = _AXES.keep(key, _Axes(sizes, mode, corners, dtype, m))
    return found


_AXES: Bounded[tuple, _Axes] = Bounded(64)
_KEPT_POSITIONS = 1 << 10  # the most positions M whose constants are kept


def _starts(n: int, p: int, volume: int) -> Any:
    """(N * P,): where the sample each position belongs to starts along a plane of the
    batch, n * volume; kept for small shapes (read only)."""
    key = (n, p, volume)
    found = _STARTS.get(key)
    if found is None:
        found = (array.host.arange(n) * volume).repeat(p)
        if found.size <= _KEPT_POSITIONS:
            found.flags.writeable = False
            _STARTS.keep(key, found)
    return found


_STARTS: Bounded[tuple, Any] = Bounded(64)


def _starts_on(n: int, p: int, volume: int, like: Any) -> Any:
    """_starts on like's device."""
    starts = _starts(n, p, volume)
    return starts if type(like) is array.host.ndarray else array.from_host(starts, like)


def _outer(parts: Any, add: bool = False) -> Any:
    """Per-axis values (dim, T, M) combined for every combination of one tap an axis: their
    products (with ``add``, their sums), (K, M) with K = T^dim, the first axis' tap varying
    fastest."""
    combine = xp.add if add else xp.multiply
    out = parts[-1]
    taps, m = out.shape
    for part in parts[-2::-1]:  # (y,) x: each axis' taps the next faster
        if taps == 1:  # one combination: the parts of one shape, no broadcast
            out = combine(out, part)  # (1, M)
            continue
        out = combine(out[:, None], part).reshape(out.shape[0] * taps, m)  # (K so far, M)
    return out


def _combined(parts: list[Any]) -> Any:
    """The products of one (N, T_d, P) Tensor an axis, for every combination of taps
    (N, K, P), the first axis' tap varying fastest."""
    dim = len(parts)
    out: Any = None
    for d, part in enumerate(parts):  # x, y (, z): x's taps the last of the K axes
        n, taps, p = part.shape
        shaped = part.reshape(n, *([1] * (dim - 1 - d)), taps, *([1] * d), p)
        out = shaped if out is None else out * shaped
    n, p = parts[0].shape[0], parts[0].shape[2]
    return out.reshape(n, math.prod(part.shape[1] for part in parts), p)


class GridSampler2d(Function):
    """out[n, c, p] = sum_k w_k[n, p] * x[n, c, tap_k[n, p]]: x (N, C, H, W) read at grid
    (N, Ho, Wo, 2) (x, y from -1 to 1), the taps every pair of one tap along x and one along y,
    w_k the product of their weights (bilinear, nearest or bicubic), zero outside the input;
    the padding moves each position (border, reflection) or leaves it (zeros).

    grad_x: grad * w_k added back at each tap; grad_grid[..., d]: sum_k (sum_c grad * x at
    tap k) * dw_k/dt_d * dt_d/dgrid_d (zero for nearest), with t_d the position's fraction.
    """

    rule = (
        "grad_x = grad * w_k scattered to tap k; grad_grid_d = sum_k sum_c(grad * x[tap_k]) * "
        "dw_k/dt_d * dt_d/dgrid_d"
    )

    def forward(self, x: Any, grid: Any, *, mode: str, padding: str, corners: bool) -> Any:
        self.mode = mode
        n, c = x.shape[:2]
        sizes = x.shape[2:][::-1]  # along x, y (, z): W, H (, D)
        dim, out_shape = len(sizes), grid.shape[1:-1]
        p = math.prod(out_shape)
        work = grid.dtype if grid.dtype in (xp.float32, xp.float64) else xp.dtype(xp.float32)
        g = grid.reshape(n, p, dim).astype(work, copy=False)  # (N, P, dim)
        m = n * p
        ax = _axes(sizes, mode, corners, work, m)
        if type(g) is not array.host.ndarray:
            ax = ax.on(g)
        # every axis at once, (dim, T or 1, M), each position in the grid's own dtype (a
        # narrower grid's, bfloat16's or float16's, each step rounded to it, as PyTorch's)
        # PyTorch's (grid + 1) / 2 * (n - 1) or ((grid + 1) * n - 1) / 2, the same numbers
        # as (grid + 1) * half (- 0.5), halving being exact
        one, half, pixel_half = ax.one, ax.half, ax.pixel_half
        if grid.dtype != work:
            one, half, pixel_half = (v.astype(grid.dtype) for v in (one, half, pixel_half))
        pos = xp.empty(ax.at_positions, dtype=grid.dtype, like=grid)
        xp.add(grid.reshape(m, dim).T[:, None], one, out=pos)  # (dim, 1, M) read
        pos *= half
        if not corners:
            pos -= pixel_half
        pos = pos.astype(work, copy=False)
        if mode == "bicubic":  # the fraction from the position itself; the padding on each tap
            low = xp.floor(pos)
            taps = _padded(low + ax.offsets, ax, padding)[0].astype(xp.int64)  # (dim, 4, M)
            t, self.before = pos - low, None
        else:
            pos, self.before, self.mirrored = _padded(pos, ax, padding)
            if mode == "nearest":
                taps, t = xp.rint(pos).astype(xp.int64), pos  # (dim, 1, M)
            else:
                low = xp.floor(pos)
                t = pos - low
                taps = low.astype(xp.int64) + ax.offsets  # (dim, 2, M)
        # the taps within the input (None: all are, as bicubic's padded taps, NaN positions
        # aside, whose weights are NaN already), each in one comparison: as unsigned, a
        # negative tap, and the integer a NaN position gives, is past the last; a tap outside
        # reads the last place, weighted 0
        unsigned = taps.view(xp.uint64)  # (dim, T, M)
        inside: Any = None
        if mode != "bicubic" or padding == "zeros":
            inside = unsigned <= ax.int_high
        xp.minimum(unsigned, ax.int_high, out=unsigned)
        taps *= ax.strides
        if mode == "nearest":
            w = inside
        else:
            w = _tap_weights(t, ax.polynomials)  # (dim, T, M)
            if inside is not None:
                w *= inside
        # each tap read from x's planes side by side, (C, N * volume), at the tap's place
        # plus its sample's start (added to one axis' taps, so once to every combination):
        # (C, K, M), the long axis last (NumPy's loops run fastest along it, whatever the
        # batch and the grid)
        if n > 1:  # (the first sample's start is 0)
            taps[0] += _starts_on(n, p, ax.volume, taps)
        index = _outer(taps, add=True)  # (K, M): every combination of one tap an axis
        self.grid_used, self.t, self.inside, self.axes = g, t, inside, ax
        self.index, self.w = index, w
        k = index.shape[0]
        planes = x.reshape(n, c, ax.volume).swapaxes(0, 1).reshape(c, n * ax.volume)
        # every index is a place of the planes: "clip" only skips take's bounds check
        vals = planes.take(index, axis=1, mode="clip").astype(work, copy=False)  # (C, K, M)
        if mode == "nearest":  # one tap: its value where it is within, 0 elsewhere
            out = xp.zeros((n, c, p), dtype=work, like=vals)
            within = _outer(w).reshape(n, p)  # every axis' tap within
            xp.copyto(out.swapaxes(0, 1), vals.reshape(c, n, p), where=within)
        elif mode == "bicubic":  # PyTorch's order: each row's 4 taps along x, then the 4 rows
            rows = xp.einsum("cyxm,xm->cym", vals.reshape(c, 4, 4, m), w[0])  # (C, 4, M)
            out = xp.einsum("cynp,ynp->ncp", rows.reshape(c, 4, n, p), w[1].reshape(4, n, p))
        else:  # PyTorch's: each tap's weight the product of its axes'
            weight = _outer(w)  # (K, M)
            out = xp.einsum("cknp,knp->ncp", vals.reshape(c, k, n, p), weight.reshape(k, n, p))
        return out.reshape(n, c, *out_shape).astype(x.dtype, copy=False)

    def _per_axis(self) -> None:
        """The forward's per-axis fractions (N, P), slopes (N, P) or numbers, and insides
        (N, T, P) (None where every tap is within the input) as the backward reads them."""
        n, p = self.grid_used.shape[:2]
        dim = self.axes.dim
        self.ts = [self.t[d, 0].reshape(n, p) for d in range(dim)]  # t: (dim, T or 1, M)
        scales = self.axes.scales
        if self.before is None:
            self.slopes = scales
        else:
            slope = _pad_slopes(self.before, self.mirrored, self.axes)  # (dim, T or 1, M)
            self.slopes = [slope[d, 0].reshape(n, p) * scales[d] for d in range(dim)]
        if self.inside is None:
            self.insides = [None] * dim
            return
        taps = self.inside.shape[1]  # (dim, T, M), bool
        inside = self.inside.astype(self.grid_used.dtype)  # as weights
        self.insides = [inside[d].reshape(taps, n, p).transpose(1, 0, 2) for d in range(dim)]

    def _fractions(self, grid: Tensor) -> list[Any]:
        """The fraction t along each axis as a Tensor of grid, so the gradients differentiate
        again in grid: t_d = grid_d * slope_d + (t_d - grid_d * slope_d), the second term
        held constant."""
        n, p = self.grid_used.shape[:2]
        out = []
        flat = grid.reshape(n, p, len(self.ts))
        for d, (t, slope) in enumerate(zip(self.ts, self.slopes, strict=True)):
            g = self.grid_used[..., d]
            out.append(flat[..., d] * _const(slope, t) + _const(t - g * slope, t))
        return out

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, Any]:
        """The rule on the forward's layout, (C, K, M): grad_x as one count of grad * w_k by
        place in x's planes side by side, grad_grid from one gather at the same places."""
        x, grid = self.inputs
        need_x, need_g = self.needs_input_grad
        ax, index, w = self.axes, self.index, self.w  # (K, M), (dim, T, M)
        (n, c), m = x.shape[:2], index.shape[1]
        work = self.grid_used.dtype
        g = grad.reshape(n, c, m // n if n else 0).swapaxes(0, 1).reshape(c, 1, m)  # (C, 1, M)
        g = g.astype(work, copy=False)
        # the taps within the input (None: every tap is), where a tap outside adds nothing
        within = None
        if self.inside is not None and self.mode != "nearest":
            within = _outer(self.inside)  # (K, M)
        gx = gg = None
        if need_x:
            added = g * _outer(w)  # (C, K, M)
            if within is not None:
                added = masked(added, within)
            planes = n * ax.volume  # (C, N * volume): each channel's planes side by side
            places = index + (xp.arange(c, like=index) * planes)[:, None, None]  # (C, K, M)
            flat = xp.bincount(places.reshape(-1), added.reshape(-1), minlength=c * planes)
            gx = flat.reshape(c, n, ax.volume).swapaxes(0, 1).reshape(x.shape)  # (N, C, ...)
            gx = gx.astype(x.dtype)
        if need_g and self.mode == "nearest":  # a step function: zeros, as PyTorch's
            gg = xp.zeros(grid.shape, dtype=grid.dtype, like=index)
        elif need_g:
            planes = x._array.reshape(n, c, ax.volume).swapaxes(0, 1).reshape(c, n * ax.volume)
            vals = planes.take(index, axis=1, mode="clip").astype(work, copy=False)  # (C, K, M)
            vals *= g
            along = xp.add.reduce(vals, axis=0)  # (K, M): sum_c grad * x at tap k
            if within is not None:
                along = masked(along, within)
            slopes = _weight_slopes(self.t, ax.polynomials)  # (dim, T, M)
            scales = ax.scales
            if self.before is not None:  # the padding's own slope, per position
                pad = _pad_slopes(self.before, self.mirrored, ax)[:, 0]  # (dim, M)
                scales = [pad[d] * scales[d] for d in range(ax.dim)]
            gg = xp.empty((m, ax.dim), dtype=work, like=index)
            for d in range(ax.dim):
                dw = _outer([slopes[e] if e == d else w[e] for e in range(ax.dim)])  # (K, M)
                dw *= along
                gg[:, d] = xp.add.reduce(dw, axis=0) * scales[d]
            gg = gg.reshape(grid.shape).astype(grid.dtype, copy=False)
        return gx, gg

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        self._per_axis()
        x, grid = self.inputs
        need_x, need_g = self.needs_input_grad
        n, c = x.shape[:2]
        k, p = self.index.shape[0], self.grid_used.shape[1]
        spatial = self.index - _starts_on(n, p, self.axes.volume, self.index)  # (K, M)
        places = spatial.reshape(k, n, p).transpose(1, 0, 2).reshape(n, 1, k * p)
        if self.mode == "nearest":  # the weights are the insides (never None here)
            ts, per_axis = self.ts, [_const(m, None) for m in self.insides]
        else:
            ts = self._fractions(grid)
            polys = _polynomials(self.mode, self.grid_used.dtype)  # (T, 1) each
            if type(self.grid_used) is not array.host.ndarray:
                polys = tuple(array.from_host(part, self.grid_used) for part in polys)
            per_axis = [_weights(t[:, None], polys) for t in ts]
        # the taps within the input, (N, K, P) (None: every tap is); as PyTorch's, a tap
        # outside adds nothing, selected out, where a NaN or infinite position makes its
        # weights NaN (the weights themselves are not masked: the gradient of a position
        # along one axis is NaN where its weights along another are)
        within = None  # nearest's weights are the insides themselves: nothing to select
        if self.mode != "nearest" and self.insides[0] is not None:
            within = _combined(self.insides) != 0  # on the arrays: no Tensor ops
        w = _combined(per_axis)  # (N, K, P)
        g = grad.reshape(n, c, 1, p)
        index = _const(xp.broadcast_to(places, (n, c, k * p)), None)  # (N, C, K*P)
        gx = gg = None
        if need_x:
            added = _within(g * w.unsqueeze(1), None if within is None else within[:, None])
            added = added.reshape(n, c, k * p)  # (N, C, K*P)
            zeros = _const(xp.zeros((n, c, math.prod(x.shape[2:])), dtype=x._array.dtype,
                                    like=x._array), None)  # fmt: skip
            gx = zeros.scatter_add(2, index, added.to(x.dtype)).reshape(x.shape)
        if need_g:
            if self.mode == "nearest":  # a step function: zeros (at NaN too), as PyTorch's
                gg = _const(xp.zeros_like(grid._array), None)
            else:
                flat = x.reshape(n, c, math.prod(x.shape[2:]))  # (N, C, H*W)
                vals = flat.gather(2, index).reshape(n, c, k, p)
                along = _within((g * vals).sum(1), within)  # (N, K, P): sum_c grad * x at k
                slopes = [stack(_slopes(t, self.mode), 1) for t in ts]
                parts = []
                for d, slope in enumerate(self.slopes):
                    dw = _combined([slopes[e] if e == d else per_axis[e] for e in range(len(ts))])
                    parts.append((along * dw).sum(1) * _const(slope, self.ts[d]))  # (N, P)
                gg = stack(parts, -1).reshape(grid.shape).to(grid.dtype)
        return gx, gg


class GridSampler3d(GridSampler2d):
    """out[n, c, p] = sum_k w_k[n, p] * x[n, c, tap_k[n, p]]: x (N, C, D, H, W) read at grid
    (N, Do, Ho, Wo, 3) (x, y, z from -1 to 1), as GridSampler2d with one more axis (bilinear
    is trilinear; no bicubic)."""

    rule = (
        "grad_x = grad * w_k scattered to tap k; grad_grid_d = sum_k sum_c(grad * x[tap_k]) * "
        "dw_k/dt_d * dt_d/dgrid_d, over the three axes"
    )


def _within(values: Tensor, within: Any) -> Tensor:
    """values where the tap is within the input, 0 where it is not, selected (a NaN value
    outside is 0 too); within None: every tap is."""
    return values if within is None else Where.apply(within, values, 0.0)


def _const(values: Any, like: Any) -> Any:
    """values (an array, or a number broadcast like ``like``) as a Tensor outside the graph."""
    if not hasattr(values, "shape"):
        values = xp.full(like.shape, values, dtype=like.dtype, like=like)
    return tensor_type()._make(values)


def stack(parts: list[Any], dim: int) -> Any:
    """Tensors stacked along a new dim."""
    return Stack.apply(*parts, dim=dim % (parts[0].ndim + 1))


class AffineGridGenerator(Function):
    """out = (base @ theta^T) viewed as (N, *spatial, dim): each output pixel's position
    [x, y (, z), 1] (base, (P, dim + 1), a constant of the shapes) mapped by each theta
    (N, dim, dim + 1);  grad_theta = grad^T @ base, grad viewed as (N, P, dim). One node, as
    PyTorch's, where the composition was a product and a view."""

    rule = "grad_theta = grad^T @ base"
    saves_inputs = False

    def forward(self, theta: Any, base: Any, shape: tuple[int, ...]) -> Any:
        self.base = base
        return xp.matmul(base, xp.swapaxes(theta, -1, -2)).reshape(shape)  # (N, *spatial, dim)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        n, dim = grad.shape[0], grad.shape[-1]
        flat = grad.reshape(n, -1, dim)  # (N, P, dim)
        return (flat.mT @ tensor_type()._make(self.base),)  # (N, dim, dim + 1)
