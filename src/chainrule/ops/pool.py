"""Pooling primitives of any rank whose windows are given as input positions along each axis
(an (n_out, k) host int array an axis): the 3-D max and average pools and the adaptive max
pools. A box's max or sum is separable: along each axis, one max or add per window offset.
The maxima with their places gather every box's positions at once (one take) and reduce
each box (one argmax, one max). The 2-D strided pools are
ops/conv.py's; argument checks and the 1-D pools (a 2-D pool over a height of one, as
PyTorch's) are nn/pooling.py's.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .. import array, fastpath
from ..array import xp
from ..autograd.primitive import Function, tensor_type
from ..bounded import Bounded
from .conv import folded, padded

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor


def adaptive_windows(n_in: int, n_out: int) -> Any:
    """(n_out, k) positions: window i runs from floor(i*n_in/n_out) up to
    ceil((i+1)*n_in/n_out) (PyTorch's windows), a shorter one repeating its last position."""
    host = array.host
    i = host.arange(n_out)
    start, end = (i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)
    k = int((end - start).max()) if n_out else 1
    return host.minimum(start[:, None] + host.arange(k), end[:, None] - 1)


def _box_places(windows: tuple, sizes: tuple, padding: tuple) -> tuple[Any, Any, Any]:
    """For every box of windows (one window an axis: windows holds an (n_out, k) host array an
    axis) over planes of ``sizes`` padded by ``padding``: its K positions in the flat padded
    plane, row-major in the box, as (K, n_boxes) (each offset's row of every box), their flat
    indices in the unpadded plane (n_boxes, K) and where each box's row starts in that table
    (n_boxes,), host int arrays made once for each windows tuple."""
    key = (id(windows), sizes, padding)
    found = _BOXES.get(key)
    if found is None or found[0] is not windows:  # an id reused by another tuple: made again
        host, rank = array.host, len(windows)
        padded_sizes = [n + lo + hi for n, (lo, hi) in zip(sizes, padding, strict=True)]
        places: Any = 0
        flat: Any = 0
        for axis, where in enumerate(windows):  # (n_out, k) at dims axis and rank + axis
            shape = [1] * (2 * rank)
            shape[axis], shape[rank + axis] = where.shape
            at = where.reshape(shape)
            places = places + at * math.prod(padded_sizes[axis + 1 :])
            flat = flat + (at - padding[axis][0]) * math.prod(sizes[axis + 1 :])
        n_boxes = math.prod(w.shape[0] for w in windows)
        k = math.prod(w.shape[1] for w in windows)
        places = host.ascontiguousarray(places.reshape(n_boxes, k).T)  # (K, n_boxes)
        flat = flat.reshape(n_boxes, k).astype(host.int64)
        found = _BOXES.keep(key, (windows, places, flat, host.arange(0, n_boxes * k, k)))
    return found[1:]


# each windows tuple's box positions, flat indices and row starts, by its id (the tuple kept)
_BOXES: Bounded[tuple, tuple[Any, Any, Any, Any]] = Bounded(256)


def _offset_views(x: Any, where: Any, axis: int) -> list[Any]:
    """For each window offset p, x's values at every window's p-th position along axis
    (..., n_out, ...): a strided view where the windows step evenly (the strided pools'),
    else one take. Separate arrays, so each reduction is whole-array maximums or adds (a
    reduction over a gathered offset axis is several times slower, at any size)."""
    found = _SPLITS.get(id(where))
    if found is None or found[0] is not where:  # an id reused by another array: made again
        steps = array.host.diff(where, axis=0)
        even = where.shape[0] < 2 or bool((steps == steps[:1]).all() and (steps[:1] > 0).all())
        parts = _slices(where) if even else [where[:, p].copy() for p in range(where.shape[1])]
        found = _SPLITS.keep(id(where), (where, even, parts))
    _, even, parts = found
    lead = (slice(None),) * axis
    if even:
        return [x[lead + (s,)] for s in parts]
    return [xp.take(x, array.from_host(p, x), axis=axis) for p in parts]


# each windows array's offsets (slices or positions), by its id (the array kept to check it)
_SPLITS: Bounded[int, tuple[Any, bool, list[Any]]] = Bounded(256)


class _WindowMax(Function):
    """out = the max of each window (a box: one window an axis, over x's last len(windows)
    axes, after a batch and a channel axis or a channel axis alone), padded with the dtype's
    least value; grad_x = grad added at each window's first maximum in row-major order (the
    flat index ``indices()`` gives, as PyTorch's), by PlaneAdd."""

    rule = "grad_x = grad added at each window's first maximum (PlaneAdd)"
    windows: tuple
    padding: tuple
    sizes: tuple
    arg: Any

    def forward(self, x: Any, *, windows: tuple, padding: tuple, winners: bool = False) -> Any:
        """The maxima; with ``winners``, also each box's first maximum (see reduce)."""
        self.windows, self.padding = windows, padding
        self.lead = x.ndim - len(windows)  # the batch and channel axes, or the channel axis
        self.sizes = x.shape[self.lead :]
        return self.reduce(x, winners)

    def reduce(self, x: Any, winners: bool) -> Any:
        """The max of each window of x; with ``winners``, also each box's first maximum's
        offset in it (``self.arg``), which backward finds again from x rather than keeping
        (forward alone skips the arg-max)."""
        # an integer's least value, as -inf has none (its cast is undefined, and warns)
        floating = array.is_floating(x.dtype)
        lowest = -xp.inf if floating else xp.iinfo(x.dtype).min
        out = padded(x, self.padding, lowest)
        self.arg = None
        if winners:  # every box's positions gathered at once (one take), then reduced
            return self.boxed(out, floating)
        # the maxima alone, from the first axis, whose offsets' views are runs of whole rows
        # (faster than views strided along the last axis, at every size)
        for axis in range(self.lead, x.ndim):
            where = self.windows[axis - self.lead]
            if where.shape == (out.shape[axis], 1) and where[-1, 0] == where.shape[0] - 1:
                continue  # windows of one, each its own position: nothing to reduce
            out = folded(xp.maximum, _offset_views(out, where, axis))
        return out.copy() if out is x else out  # a fresh array, never x itself

    def boxed(self, xpad: Any, floating: bool) -> Any:
        """The max of each box of the padded xpad and the first maximum's offset in its box,
        row-major (a NaN wins: the last, as PyTorch's scan): ``self.arg``."""
        lead = xpad.shape[: self.lead]
        places = _box_places(self.windows, self.sizes, self.padding)[0]
        plane = xpad.reshape(lead + (math.prod(xpad.shape[self.lead :]),))  # (..., plane)
        # the offsets outermost: NumPy reduces across long rows faster than along short ones
        boxes = xp.take(plane, array.from_host(places, xpad), axis=-1)  # (..., K, n_boxes)
        arg = boxes.argmax(axis=-2)  # the first maximum
        out = boxes.max(axis=-2)
        if floating and xp.isnan(out).any():  # a NaN wins: the last
            last = boxes.shape[-2] - 1 - xp.isnan(boxes[..., ::-1, :]).argmax(axis=-2)
            arg = xp.where(xp.isnan(out), last, arg)
        self.arg = arg
        return out.reshape(lead + tuple(w.shape[0] for w in self.windows))

    def indices(self) -> Any:
        """Each window's first maximum's flat index in its input plane (d * H * W + h * W + w),
        an int64 array of the output's shape: PyTorch's indices."""
        if self.arg is None:  # forward kept no winners: find them again
            self.reduce(self.inputs[0]._array, winners=True)
        arg = self.arg
        _, flat, starts = _box_places(self.windows, self.sizes, self.padding)
        picked = xp.take(array.from_host(flat, arg), arg + array.from_host(starts, arg))
        return picked.reshape(arg.shape[:-1] + tuple(w.shape[0] for w in self.windows))

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x = self.inputs[0]
        n, c = (1, *x.shape[: self.lead])[-2:]  # an unbatched input's planes: one batch
        index = self.indices().reshape(n, c, -1)
        size = math.prod(self.sizes)
        gx = PlaneAdd.apply(grad.reshape(n, c, -1), index=index, size=size)
        return (gx.reshape(x.shape),)


class MaxPool3dWithIndices(_WindowMax):
    """out[n, c, i, j, l] = max over the box of windows i, j, l of xpad[n, c] (xpad padded
    with -inf; window i along an axis reads positions i*stride + p*dilation); grad_x = grad
    added at each box's first maximum (PlaneAdd)."""

    rule = "grad_x = grad added at each window's first maximum (PlaneAdd)"


class AdaptiveMaxPool2d(_WindowMax):
    """out[n, c, i, j] = max of x[n, c] over adaptive windows i (rows) and j (columns);
    grad_x = grad added at each window's first maximum (PlaneAdd)."""

    rule = "grad_x = grad added at each window's first maximum (PlaneAdd)"


class AdaptiveMaxPool3d(_WindowMax):
    """out[n, c, i, j, l] = max of x[n, c] over adaptive windows i, j, l; grad_x = grad added
    at each window's first maximum (PlaneAdd)."""

    rule = "grad_x = grad added at each window's first maximum (PlaneAdd)"


class PlaneAdd(Function):
    """out = zeros (N, C, size) with g[n, c, l] added at out[n, c, index[n, c, l]] (repeated
    places add up: one bincount over the flattened planes); linear in g, its adjoint reads
    the incoming grad at the index (gather)."""

    rule = "grad_g = the incoming grad gathered at the index"
    saves_inputs = False

    def forward(self, g: Any, *, index: Any, size: int) -> Any:
        self.index = index
        n, c, _ = g.shape
        places = index + xp.arange(0, n * c * size, size, like=index).reshape(n, c, 1)
        weights = g.reshape(-1)
        if weights.dtype not in (xp.float32, xp.float64):  # bincount's weights: float64
            weights = weights.astype(xp.float32)
        out = xp.bincount(places.reshape(-1), weights=weights, minlength=n * c * size)
        return out.astype(g.dtype, copy=False).reshape(n, c, size)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad.gather(2, tensor_type()._make(self.index)),)


# ---------------------------------------------------------------------------------------
# Window sums, for 3-D average pooling: separable, so one gathered sum along each axis.


def _weighted(x: Any, weight: Any) -> Any:
    """x times weight (a number, or an array of the output's spatial shape), x itself for 1."""
    if isinstance(weight, float) and weight == 1:
        return x
    return x * weight


def _slices(where: Any) -> list[slice]:
    """For each offset of strided windows (n_out, k), the slice of positions it reads."""
    n_out = where.shape[0]
    out = []
    for first, second in zip(where[0], where[min(1, n_out - 1)], strict=True):
        step = int(second - first) or 1
        out.append(slice(int(first), int(first) + step * (n_out - 1) + 1, step))
    return out


def _box_matrix(windows: tuple, padding: tuple, sizes: tuple, weight: Any, x: Any) -> Any:
    """The (D*H*W, boxes) matrix whose column b holds box b's weight at each place of the box
    in the unpadded plane (the padding's zeros add nothing), in x's dtype and on its device;
    None where it would hold more than 8,192 numbers or the product more than 2^18 (the
    separable adds are then the faster). Made once for each windows tuple and weight."""
    plane, boxes = math.prod(sizes), math.prod(w.shape[0] for w in windows)
    if not 0 < plane * boxes <= 8192 or x.size * boxes > 1 << 18:
        return None
    if not isinstance(weight, (float, array.host.ndarray)):  # a weight on a device
        return None
    key = (id(windows), padding, sizes, id(weight), x.dtype)
    found = _MATRICES.get(key)
    if found is None or found[0] is not windows or found[1] is not weight:
        host, m = array.host, array.host.ones((1, 1))  # (places so far, boxes so far)
        for where, n, (lo, _) in zip(windows, sizes, padding, strict=True):
            at = where - lo  # (n_out, k) places in the unpadded axis
            axis = (host.arange(n)[:, None, None] == at[None]).sum(axis=2)  # (n, n_out)
            m = m[:, None, :, None] * axis[None, :, None, :]  # (places, n, boxes, n_out)
            m = m.reshape(m.shape[0] * n, -1)
        m = m * (host.asarray(weight).reshape(-1) if isinstance(weight, host.ndarray) else weight)
        found = _MATRICES.keep(key, (windows, weight, m.astype(x.dtype)))
    return array.from_host(found[2], x)


# each windows tuple and weight's box matrix, by their ids (the two kept to check them)
_MATRICES: Bounded[tuple, tuple[Any, Any, Any]] = Bounded(256)


class AvgPool3d(Function):
    """out[n, c, i, j, l] = weight * the sum of xpad[n, c] over the box of windows i, j, l
    (xpad padded with zeros; window i along an axis reads i*stride + p): the average pools,
    weight 1 / the box's size, an array of each box's 1 / divisor, or 1 for integer sums;
    linear in x, its adjoint spreads weight * g over each box (AvgPool3dBackward)."""

    rule = "grad_x = AvgPool3dBackward(grad): weight * grad added over each window"
    saves_inputs = False

    def forward(self, x: Any, *, windows: tuple, padding: tuple, weight: Any) -> Any:
        self.geometry: dict[str, Any] = dict(windows=windows, padding=padding, weight=weight)
        lead = x.ndim - len(windows)  # (N, C) or (C,): the axes before the spatial ones
        self.size = x.shape[lead:]
        if fastpath.enabled() and x.dtype in (xp.float32, xp.float64):
            sums = _box_matrix(windows, padding, self.size, weight, x)  # (D*H*W, boxes)
            if sums is not None:  # a small plane: every box's weighted sum in one product
                outs = tuple(w.shape[0] for w in windows)
                planes = x.reshape(math.prod(x.shape[:lead]), sums.shape[0])  # (N*C, D*H*W)
                return xp.matmul(planes, sums).reshape(x.shape[:lead] + outs)
        out = padded(x, padding, 0)
        # one add per offset, in x's dtype; the first axis first, whose offsets' views are
        # runs of whole rows (an add over views strided along the last axis is slower)
        for axis in range(lead, x.ndim):
            where = windows[axis - lead]
            if where.shape == (out.shape[axis], 1) and where[-1, 0] == where.shape[0] - 1:
                continue  # windows of one, each its own position: nothing to add
            out = folded(xp.add, _offset_views(out, where, axis))
        if out is x:  # nothing padded or added: a fresh array, never a view of x
            out = out.copy()
        if not (isinstance(weight, float) and weight == 1):
            out *= weight  # out is fresh: weighted in place
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (AvgPool3dBackward.apply(grad, size=self.size, **self.geometry),)


class AvgPool3dBackward(Function):
    """out = zeros shaped like AvgPool3d's input with weight * g[n, c, i, j, l] added over box
    (i, j, l); linear in g, its adjoint is AvgPool3d of the incoming grad."""

    rule = "grad_g = AvgPool3d(h) with the same windows and weight (h: the incoming grad)"
    saves_inputs = False

    def forward(self, g: Any, *, size: tuple, windows: tuple, padding: tuple, weight: Any) -> Any:
        self.geometry: dict[str, Any] = dict(windows=windows, padding=padding, weight=weight)
        out = _weighted(g, weight)
        first = g.ndim - len(size)  # the first spatial axis: after (N, C) or (C,)
        for axis in range(first, g.ndim):  # spread along each axis in turn
            (lo, hi), lead = padding[axis - first], (slice(None),) * axis
            spread = xp.zeros(
                out.shape[:axis] + (size[axis - first] + lo + hi,) + out.shape[axis + 1 :],
                dtype=g.dtype, like=g,
            )  # fmt: skip
            for s in _slices(windows[axis - first]):
                spread[lead + (s,)] += out
            out = spread
        crop = tuple(slice(lo, lo + n) for n, (lo, _) in zip(size, padding, strict=True))
        return out[(Ellipsis,) + crop]

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (AvgPool3d.apply(grad, **self.geometry),)


# ---------------------------------------------------------------------------------------
# Adaptive average pooling: a window mean is separable, so each axis is one product with
# its averaging matrix (n_out, n_in), whose row i averages window i.


def averaging_matrix(n_in: int, n_out: int) -> Any:
    """(n_out, n_in) host float64: row i holds 1 / the size of window i over its positions
    (PyTorch's adaptive windows), None where the two sizes agree (the identity)."""
    if n_in == n_out:
        return None
    host = array.host
    i = host.arange(n_out)
    start, end = (i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)
    j = host.arange(n_in)
    inside = (j >= start[:, None]) & (j < end[:, None])
    return inside / (end - start)[:, None]


def _mapped(x: Any, maps: tuple) -> Any:
    """x with each of its last len(maps) axes multiplied by its matrix (out, in) (None: left
    as it is), the last axis first."""
    out, k = x, len(maps)
    for axis in range(x.ndim - 1, x.ndim - 1 - k, -1):
        m = maps[axis - (x.ndim - k)]
        if m is None:
            continue
        m = array.from_host(_in_dtype(m, x.dtype), x)
        lead, rest = out.shape[:axis], out.shape[axis + 1 :]
        if not rest:  # one product for every row: NumPy's stacked ones run one row at a time
            rows = out.reshape(-1, out.shape[axis])  # (prod(lead), in)
            out = xp.matmul(rows, m.T).reshape(lead + (m.shape[0],))  # (..., out)
            continue
        rows = out.reshape(lead + (out.shape[axis], math.prod(rest)))  # (..., in, rest)
        out = xp.matmul(m, rows).reshape(lead + (m.shape[0],) + rest)  # (..., out, rest)
    return out


def _in_dtype(m: Any, dtype: Any) -> Any:
    """The host matrix m in ``dtype``: made once for each matrix (kept, as every caller's
    matrices are made once for each shape) and dtype, read only."""
    if m.dtype == dtype:
        return m
    key = (id(m), dtype)
    found = _CAST.get(key)
    if found is None or found[0] is not m:  # an id reused by another array: made again
        cast = m.astype(dtype)
        cast.flags.writeable = False
        found = _CAST.keep(key, (m, cast))
    return found[1]


_CAST: Bounded[tuple, tuple[Any, Any]] = Bounded(256)


class _AxisMaps(Function):
    """out = x with each of its last axes multiplied by its matrix; linear in x, its adjoint
    multiplies by the transposed matrices (AdaptiveAvgPoolBackward)."""

    rule = "grad_x = AdaptiveAvgPoolBackward(grad): the transposed averaging matrices"
    saves_inputs = False

    def forward(self, x: Any, *, maps: tuple) -> Any:
        self.maps = maps
        return _mapped(x, maps)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        maps = tuple(None if m is None else m.T for m in self.maps)
        return (AdaptiveAvgPoolBackward.apply(grad, maps=maps),)


class AdaptiveAvgPool2d(_AxisMaps):
    """out[n, c, i, j] = the mean of x[n, c] over adaptive windows i (rows) and j (columns):
    x's rows times A_H (Ho, H), its columns times A_W (Wo, W); grad_x = A_H^T grad A_W."""

    rule = "grad_x = AdaptiveAvgPoolBackward(grad): the transposed averaging matrices"


class AdaptiveAvgPool3d(_AxisMaps):
    """out[n, c, i, j, l] = the mean of x[n, c] over adaptive windows i, j, l: each axis times
    its averaging matrix; grad_x = grad times the transposed ones."""

    rule = "grad_x = AdaptiveAvgPoolBackward(grad): the transposed averaging matrices"


class AdaptiveAvgPoolBackward(_AxisMaps):
    """out = g with each of its last axes multiplied by the transpose of an averaging matrix:
    each window's mean of the gradient spread over its positions; its adjoint is itself with
    the matrices transposed back."""

    rule = "grad_g = AdaptiveAvgPoolBackward(h) with the matrices transposed back"


# ---------------------------------------------------------------------------------------
# Max unpooling: each value written back at its index in a zeroed plane.


class _Unpool(Function):
    """out = zeros (N, C, *size) (or (C, *size), unbatched) with x[n, c, l] written at flat
    place index[n, c, l] of its plane (a later write wins where two share a place; index holds
    as many places as x, in any shape); grad_x = grad read at the index."""

    rule = "grad_x = grad gathered at the indices"
    saves_inputs = False

    def forward(self, x: Any, *, index: Any, size: tuple) -> Any:
        lead = x.shape[: x.ndim - len(size)]  # (N, C), or (C,) unbatched
        n, c = (1, *lead)[-2:]
        plane = math.prod(size)
        self.index, self.shape = index.reshape(n, c, -1), x.shape  # (N, C, L)
        out = xp.zeros((n, c, plane), dtype=x.dtype, like=x)
        places = self.index + xp.arange(0, n * c * plane, plane, like=index).reshape(n, c, 1)
        out.reshape(-1)[places.reshape(-1)] = x.reshape(-1)
        return out.reshape(lead + tuple(size))

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        n, c = self.index.shape[:2]
        index = tensor_type()._make(self.index)
        return (grad.reshape(n, c, -1).gather(2, index).reshape(self.shape),)


class MaxUnpool2d(_Unpool):
    """out = zeros (N, C, H, W) with x[n, c, i, j] written at flat place index[n, c, i, j]
    (row * W + column); grad_x = grad read at the index."""

    rule = "grad_x = grad gathered at the indices"


class MaxUnpool3d(_Unpool):
    """out = zeros (N, C, D, H, W) with x[n, c, i, j, l] written at flat place
    index[n, c, i, j, l] (d * H * W + h * W + w); grad_x = grad read at the index."""

    rule = "grad_x = grad gathered at the indices"
