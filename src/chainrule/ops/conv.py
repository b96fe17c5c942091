"""Convolution of every rank, plain and transposed, and max-pooling primitives on (N, C, *size)
arrays: windows as strided views, each product one matrix multiplication. Argument checks
live in nn/conv.py, nn/pooling.py and nn/fold.py.
"""

from __future__ import annotations

import math
from itertools import product
from typing import TYPE_CHECKING, Any

from .. import array, fastpath
from ..array import xp
from ..autograd.primitive import Function
from ..bounded import Bounded
from .gathered import gathered_max, window_sums
from .movement import Pad
from .windows import out_hw

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor

# Geometry, passed to every op as keyword options (normalised by nn/conv.py), one entry per
# spatial axis: stride (s, ...), padding ((before, after), ...), dilation (d, ...), groups g.


def _inside(padding: tuple, size: tuple) -> tuple[slice, ...]:
    """The slices of a padded array's spatial axes (its last ones) that hold the unpadded."""
    return tuple(slice(lo, lo + n) for (lo, _), n in zip(padding, size, strict=True))


def padded(x: Any, padding: tuple, value: float = 0.0) -> Any:
    """x with its last len(padding) axes padded by ``value`` (a fresh array; x itself if no
    padding)."""
    key = (x.shape, padding)
    found = _PADS.get(key)
    if found is None:  # the padded shape and where x goes in it, once for each shape
        lead = x.shape[: x.ndim - len(padding)]
        size = x.shape[len(lead) :]
        shape = (*lead, *(n + lo + hi for n, (lo, hi) in zip(size, padding, strict=True)))
        inside = (..., *_inside(padding, size)) if shape != x.shape else None
        found = _PADS.keep(key, (shape, inside))
    shape, inside = found
    if inside is None:
        return x
    if value == 0.0:
        out = xp.zeros(shape, dtype=x.dtype, like=x)
    else:  # filled in place: xp.full is the same two steps behind a Python call
        out = xp.empty(shape, dtype=x.dtype, like=x)
        out.fill(value)
    out[inside] = x
    return out


# each input shape and padding's padded shape and the index of x in it (None: no padding)
_PADS: Bounded[tuple, tuple[tuple, Any]] = Bounded(256)


def _windows(
    xpad: Any, kernel: tuple, outs: tuple, stride: tuple, dilation: tuple, lead: int = 2
) -> Any:
    """A read-only view (*lead's axes, *kernel, *outs, *the axes after) of every window of
    xpad, whose spatial axes follow its first ``lead`` (N, C; C where the batch goes last):
    no copy.

    view[n, c, *p, *i] = xpad[n, c, *(i*s + p*d)] along each spatial axis.
    """
    end = lead + len(kernel)
    steps = xpad.strides[lead:end]
    strides = (
        *xpad.strides[:lead],
        *(t * d for t, d in zip(steps, dilation, strict=True)),
        *(t * s for t, s in zip(steps, stride, strict=True)),
        *xpad.strides[end:],
    )
    shape = (*xpad.shape[:lead], *kernel, *outs, *xpad.shape[end:])
    return array.strided_view(xpad, shape, strides)


def unfold(
    x: Any, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple, groups: int
) -> Any:
    """Every window of x, copied once into one contiguous buffer cols (N, g, C/g*K, L), K the
    kernel's and L the output's number of positions.

    Memory: N*C*K*L elements (K times the input at stride 1), the one large buffer a
    convolution makes. It lives only while one product runs: the forward does not keep it
    (the weight gradient unfolds x again), so a network's saved activations stay the size
    of its inputs and outputs, as in PyTorch.
    """
    outs = out_hw(x.shape[2:], kernel, stride, dilation, padding)
    view = _windows(padded(x, padding), kernel, outs, stride, dilation)
    # (N, C, *kernel, *outs) -> (N, g, C/g*K, L): the reshape is the one copy; the sizes
    # are spelled out, as -1 cannot be resolved for an empty batch
    k = x.shape[1] // groups * math.prod(kernel)
    return view.reshape(x.shape[0], groups, k, math.prod(outs))


# the bytes of windows one block of images copies where the batch goes last: a block's
# windows stay in the cache, and never reach malloc's threshold for fresh (faulted) pages
BLOCK_BYTES = 1 << 19


def batch_block(x: Any, kernel: tuple, outs: tuple) -> int:
    """The images a block of _batch_blocks holds, or 0 where the plain layout is the faster:
    each copy's inner runs are the output's rows there, a block's images here."""
    per_image = x.shape[1] * math.prod(kernel) * math.prod(outs) * x.itemsize  # windows' bytes
    block = min(BLOCK_BYTES // per_image, x.shape[0]) if per_image else 0
    return block if block > outs[-1] else 0


def _batch_blocks(x: Any, kernel: tuple, outs: tuple, block: int, geometry: dict) -> Any:
    """For small planes, x's windows with the batch last, a block of images at a time: for
    each block of m images from ``start``, (start, m, cols (g, K, L*m)), cols copied once
    with inner runs of m images (the plain unfold's runs are the output's rows)."""
    stride, padding, dilation = geometry["stride"], geometry["padding"], geometry["dilation"]
    c, groups = x.shape[1], geometry["groups"]
    k, positions = c // groups * math.prod(kernel), math.prod(outs)
    size = tuple(length + lo + hi for length, (lo, hi) in zip(x.shape[2:], padding, strict=True))
    inside = (slice(None), *_inside(padding, x.shape[2:]))
    for start in range(0, x.shape[0], block):
        part = x[start : start + block]
        m = part.shape[0]
        xpad = xp.zeros((c, *size, m), dtype=x.dtype, like=x)
        xpad[inside] = part.transpose(*range(1, x.ndim), 0)  # (C, *size, m)
        view = _windows(xpad, kernel, outs, stride, dilation, lead=1)  # (C, *kernel, *outs, m)
        yield start, m, view.reshape(groups, k, positions * m)  # (g, K, L*m), the one copy


def _offsets(k: int, stride: int, dilation: int, n_out: int) -> list[slice]:
    """For each kernel offset p along one axis, the slice of the padded axis it reads at every
    output position: p*dilation, then on by stride."""
    return [slice(p * dilation, p * dilation + stride * (n_out - 1) + 1, stride) for p in range(k)]


def fold(cols: Any, size: tuple, stride: tuple, padding: tuple, dilation: tuple) -> Any:
    """The adjoint of unfold: add every window of cols (g, *kernel, C/g, *outs, N) back into
    an (N, C, *size) array. One loop over the kernel's offsets, never over pixels; each
    offset adds runs of N numbers (more where the windows of the last axis are contiguous)."""
    rank = len(size)
    groups, kernel, c_group = cols.shape[0], cols.shape[1 : 1 + rank], cols.shape[1 + rank]
    outs, n = cols.shape[2 + rank : -1], cols.shape[-1]
    padded = tuple(m + lo + hi for m, (lo, hi) in zip(size, padding, strict=True))
    out = xp.zeros((groups, c_group, *padded, n), dtype=cols.dtype, like=cols)
    reads = [
        _offsets(k, s, d, m) for k, s, d, m in zip(kernel, stride, dilation, outs, strict=True)
    ]
    for offset, where in zip(product(*map(range, kernel)), product(*reads), strict=True):
        into, part = (slice(None), slice(None), *where), (slice(None), *offset)
        out[into] += cols[part]
    inside = (slice(None), slice(None), *_inside(padding, size))
    out = out[inside]  # (g, C/g, *size, N)
    # one copy into C order, as PyTorch lays the result out: (N, g, C/g, *size)
    out = out.transpose(rank + 2, 0, *range(1, rank + 2)).copy(order="C")
    return out.reshape(n, groups * c_group, *size)  # (N, C, *size), a view


def _spatial_sum(grad: Tensor) -> Tensor:
    """A bias's gradient: grad (N, C, *size) summed over all but its channels."""
    return grad.sum(dim=(0, *range(2, grad.ndim)))


class Convolution(Function):
    """out[n, o, *i] = b[o] + sum_{c, *p} xpad[n, o's group's c, *(i*s + p*d)] * w[o, c, *p]
    (cross-correlation, as PyTorch) over any number of spatial axes, computed as one batched
    matmul w (g, O/g, K) @ cols (N, g, K, L), K = C/g times the kernel's positions (with
    the fast path on, small planes by blocks of images with the batch last: _batch_blocks).

    The gradients are the adjoints in x (ConvTranspose) and in w (ConvWeightGrad), both
    primitives whose own gradients are convolutions again, so gradients of any order are
    exact.
    """

    rule = (
        "grad_x = ConvTranspose(grad, w), grad_w = ConvWeightGrad(x, grad), grad_b = grad "
        "summed over all but its channels"
    )
    saves_inputs = (0, 1)  # x and w only for each other's gradient; the bias never

    def forward(
        self,
        x: Any,
        weight: Any,
        bias: Any,
        *,
        stride: tuple,
        padding: tuple,
        dilation: tuple,
        groups: int,
    ) -> Any:
        self.geometry: dict[str, Any] = dict(
            stride=stride, padding=padding, dilation=dilation, groups=groups
        )
        c_out, kernel = weight.shape[0], weight.shape[2:]
        outs = out_hw(x.shape[2:], kernel, stride, dilation, padding)
        block = batch_block(x, kernel, outs) if fastpath.enabled() else 0
        if block:  # small planes: the windows' copies run along the batch
            w = weight.reshape(groups, c_out // groups, -1)  # (g, O/g, K)
            out = xp.empty((x.shape[0], c_out, math.prod(outs)), dtype=x.dtype, like=x)
            for start, m, cols in _batch_blocks(x, kernel, outs, block, self.geometry):
                part = xp.matmul(w, cols).reshape(c_out, -1, m)  # (O, L, m)
                if bias is not None:  # added while the block is in the cache
                    part += bias.reshape(c_out, 1, 1)
                out[start : start + m] = part.transpose(2, 0, 1)  # (m, O, L)
            return out.reshape(x.shape[0], c_out, *outs)  # (N, O, *outs)
        cols = unfold(x, kernel, **self.geometry)  # (N, g, K, L)
        w = weight.reshape(groups, c_out // groups, cols.shape[2])  # (g, O/g, K)
        out = xp.matmul(w, cols)  # (N, g, O/g, L)
        out = out.reshape(x.shape[0], c_out, *outs)  # (N, O, *outs)
        if bias is not None:
            out += bias.reshape(c_out, *(1,) * len(outs))  # (O, 1, ...); out is fresh
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x, weight, bias = self.inputs
        need_x, need_w, need_b = self.needs_input_grad
        gx = gw = None
        if need_x:
            gx = ConvTranspose.apply(grad, weight, None, size=x.shape[2:], **self.geometry)
        if need_w:
            gw = ConvWeightGrad.apply(x, grad, kernel=weight.shape[2:], **self.geometry)
        return gx, gw, _spatial_sum(grad) if need_b else None


class ConvTranspose(Function):
    """out = b + the adjoint of Convolution in x: out[n, c, *y] = b[c] + sum over the windows
    (*i, *p) that read xpad[n, c, *y] of g[n, o, *i] * w[o, c, *p], cropped to ``size``.
    Computed as one batched matmul w^T (g, K*C/g, O/g) @ g, then fold: g as (g, O/g, L*N)
    with the fast path on, as (N, g, O/g, L) with it off.

    h below is the upstream gradient, shaped like Convolution's input.
    """

    rule = (
        "grad_g = Convolution(h, w), grad_w = ConvWeightGrad(h, g), grad_b = h summed over "
        "all but its channels  (h: the incoming grad)"
    )
    saves_inputs = (0, 1)  # g and w only for each other's gradient; the bias never

    def forward(
        self,
        g: Any,
        weight: Any,
        bias: Any,
        *,
        size: tuple,
        stride: tuple,
        padding: tuple,
        dilation: tuple,
        groups: int,
    ) -> Any:
        self.geometry: dict[str, Any] = dict(
            stride=stride, padding=padding, dilation=dilation, groups=groups
        )
        n, c_out, outs = g.shape[0], g.shape[1], g.shape[2:]
        c_group, kernel = weight.shape[1], weight.shape[2:]
        o_group, k, positions = c_out // groups, math.prod(kernel), math.prod(outs)
        w = weight.reshape(groups, o_group, c_group, k).transpose(0, 3, 2, 1)
        w = w.reshape(groups, k * c_group, o_group)  # (g, K*C/g, O/g)
        if fastpath.enabled():  # the batch last, in memory: fold adds runs of N numbers
            g = g.reshape(n, groups, o_group, positions).transpose(1, 2, 3, 0)  # (g, O/g, L, N)
            g = g.reshape(groups, o_group, positions * n)  # (g, O/g, L*N), a copy
            cols = xp.matmul(w, g).reshape(groups, *kernel, c_group, *outs, n)
        else:  # in the batch's order, and fold reads it through a transposed view
            cols = xp.matmul(w, g.reshape(n, groups, o_group, positions))  # (N, g, K*C/g, L)
            cols = cols.reshape(n, groups, *kernel, c_group, *outs)
            cols = cols.transpose(*range(1, cols.ndim), 0)  # (g, *kernel, C/g, *outs, N)
        out = fold(cols, size, stride, padding, dilation)  # (N, C, *size), fresh
        if bias is not None:
            out += bias.reshape(-1, *(1,) * len(size))  # (C, 1, ...)
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        g, weight, _ = self.inputs
        need_g, need_w, need_b = self.needs_input_grad
        h, geometry = _fitted(grad, g.shape[2:], weight.shape[2:], self.geometry)
        gg = Convolution.apply(h, weight, None, **geometry) if need_g else None
        gw = None
        if need_w:
            gw = ConvWeightGrad.apply(h, g, kernel=weight.shape[2:], **geometry)
        return gg, gw, _spatial_sum(grad) if need_b else None


def _fitted(h: Any, size: tuple, kernel: tuple, geometry: dict) -> tuple[Any, dict]:
    """h (N, C, *spatial) and a geometry under which Convolution's windows over it number
    ``size`` along each axis (the adjoint of a transposed convolution of that size): where an
    output_padding of at least the stride (with a larger dilation) made places no window
    reads, the after-padding shrinks, or h is cropped; otherwise both as they are."""
    stride, dilation, padding = geometry["stride"], geometry["dilation"], geometry["padding"]
    if out_hw(h.shape[2:], kernel, stride, dilation, padding) == tuple(size):
        return h, geometry
    ends, pads = [], []
    for n, want, k, s, d, (lo, _) in zip(
        h.shape[2:], size, kernel, stride, dilation, padding, strict=True
    ):
        reach = (want - 1) * s + d * (k - 1) + 1 - lo  # h's places and padding the windows read
        ends.append(min(n, reach))
        pads.append((lo, max(0, reach - n)))
    kept = (slice(None), slice(None), *(slice(0, e) for e in ends))
    cropped = h[kept]  # no place a window skips
    return cropped, {**geometry, "padding": tuple(pads)}


class ConvWeightGrad(Function):
    """out[o, c, *p] = sum_{n, *i} g[n, o, *i] * xpad[n, o's group's c, *(i*s + p*d)]: the
    adjoint of Convolution in w, one batched matmul cols (N, g, K, L) @ g^T summed over N
    (with the fast path on, small planes by blocks of images with the batch last).

    h below is the upstream gradient, shaped like w.
    """

    rule = "grad_x = ConvTranspose(g, h), grad_g = Convolution(x, h)  (h: the incoming grad)"

    def forward(
        self,
        x: Any,
        g: Any,
        *,
        kernel: tuple,
        stride: tuple,
        padding: tuple,
        dilation: tuple,
        groups: int,
    ) -> Any:
        self.geometry: dict[str, Any] = dict(
            stride=stride, padding=padding, dilation=dilation, groups=groups
        )
        n, c_out = g.shape[:2]
        block = batch_block(x, kernel, g.shape[2:]) if fastpath.enabled() else 0
        if block:  # small planes: the windows and g with the batch last, a block at a time
            o_group, k = c_out // groups, x.shape[1] // groups * math.prod(kernel)
            gw = xp.zeros((groups, o_group, k), dtype=g.dtype, like=g)
            for start, m, cols in _batch_blocks(x, kernel, g.shape[2:], block, self.geometry):
                part = g[start : start + m].reshape(m, groups, o_group, -1)  # (m, g, O/g, L)
                part = part.transpose(1, 2, 3, 0).reshape(groups, o_group, -1)  # (g, O/g, L*m)
                gw += xp.matmul(part, cols.transpose(0, 2, 1))  # (g, O/g, K)
            return gw.reshape(c_out, x.shape[1] // groups, *kernel)  # (O, C/g, *kernel)
        cols = unfold(x, kernel, **self.geometry)  # (N, g, K, L)
        g = g.reshape(n, groups, c_out // groups, cols.shape[3])  # (N, g, O/g, L)
        if fastpath.enabled():  # cols @ g^T: the large operand goes to BLAS as laid out
            gw = xp.matmul(cols, g.transpose(0, 1, 3, 2)).sum(axis=0)  # (g, K, O/g)
            gw = gw.transpose(0, 2, 1)  # (g, O/g, K)
        else:
            gw = xp.matmul(g, cols.transpose(0, 1, 3, 2)).sum(axis=0)  # (g, O/g, K)
        return gw.reshape(c_out, x.shape[1] // groups, *kernel)  # (O, C/g, *kernel)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x, g = self.inputs
        need_x, need_g = self.needs_input_grad
        gx = None
        if need_x:
            gx = ConvTranspose.apply(g, grad, None, size=x.shape[2:], **self.geometry)
        gg = Convolution.apply(x, grad, None, **self.geometry) if need_g else None
        return gx, gg


# ---------------------------------------------------------------------------------------
# Max pooling. The arg-max is found in two passes, along the width then along the height,
# each a loop over kernel offsets of whole-array operations; ties go to the first maximum
# in row-major window order (as PyTorch), since a later offset wins only if strictly larger.


def _first_max(views: list[Any], nan_last: bool = False) -> tuple[Any, Any]:
    """Elementwise max of equally shaped arrays and the index of the first one holding it;
    with ``nan_last``, of the last NaN where there is one (PyTorch's scan: a NaN wins)."""
    best, arg = views[0], None
    for k, v in enumerate(views[1:], start=1):
        later = v > best
        if nan_last:
            later |= xp.isnan(v)
        # maximum, not a select, so NaN propagates; the first step makes the fresh buffer
        best = xp.maximum(best, v, out=None if k == 1 else best)
        if arg is None:  # offsets 0 and 1 so far: the comparison is the index
            arg = later.astype(xp.uint8 if len(views) <= 256 else xp.intp)
        else:  # a strict win at offset k beats every earlier offset, all < k: max() records it
            xp.maximum(arg, later * arg.dtype.type(k), out=arg)
    if arg is None:  # a kernel of one along this axis: copy, never return a view of the input
        best, arg = best.copy(), xp.zeros(best.shape, dtype=xp.uint8, like=best)
    return best, arg


def folded(ufunc: Any, views: list[Any]) -> Any:
    """``ufunc`` (xp.maximum: NaN propagates; xp.add: in their dtype) over equally shaped
    arrays, one after another into one fresh array."""
    if len(views) == 1:
        return views[0].copy()
    acc = ufunc(views[0], views[1])
    for v in views[2:]:
        ufunc(acc, v, out=acc)
    return acc


def pool_max(
    x: Any, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple, winners: bool = True
) -> tuple:
    """Max pooling of x (N, C, H, W): the output (N, C, Ho, Wo), the winning column offset
    of every (padded row, output column) (N, C, Hp, Wo) and the winning row offset of every
    output (N, C, Ho, Wo); window (i, j) reads xpad[i*sh + p*dh, j*sw + q*dw]. Without
    ``winners``, the output alone (the offsets None): maxima only, no comparisons."""
    # an integer's least value, as -inf has none (its cast is undefined, and warns)
    if not winners and fastpath.enabled():
        top = gathered_max(x, kernel, stride, padding, dilation)
        if top is not None:  # a few windows: one take and one reduction
            return top, None, None
    lowest = -xp.inf if array.is_floating(x.dtype) else xp.iinfo(x.dtype).min
    xpad = padded(x, padding, lowest)
    rows, columns = _pool_slices(x.shape[2:], kernel, stride, dilation, padding)
    if not winners:
        row_max = folded(xp.maximum, [xpad[..., s] for s in columns])
        if len(rows) == 1 and rows[0] == slice(0, row_max.shape[2], 1):
            return row_max, None, None  # one row a window, every row: a fresh array already
        return folded(xp.maximum, [row_max[:, :, s] for s in rows]), None, None
    row_max, col_arg = _first_max([xpad[..., s] for s in columns])
    out, row_arg = _first_max([row_max[:, :, s] for s in rows])
    if array.is_floating(x.dtype) and xp.isnan(out).any():  # a NaN wins: its place found again
        row_max, col_arg = _first_max([xpad[..., s] for s in columns], nan_last=True)
        out, row_arg = _first_max([row_max[:, :, s] for s in rows], nan_last=True)
    return out, col_arg, row_arg


def _pool_slices(
    size: tuple, kernel: tuple, stride: tuple, dilation: tuple, padding: tuple
) -> tuple[list[slice], list[slice]]:
    """(row slices, column slices): the slices of the padded input each kernel offset reads
    (_offsets along each axis), made once for each input size and geometry."""
    key = (size, kernel, stride, dilation, padding)
    found = _POOL_SLICES.get(key)
    if found is None:
        (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
        ho, wo = out_hw(size, kernel, stride, dilation, padding)
        found = (_offsets(kh, sh, dh, ho), _offsets(kw, sw, dw, wo))
        _POOL_SLICES.keep(key, found)
    return found


_POOL_SLICES: Bounded[tuple, tuple[list[slice], list[slice]]] = Bounded(256)


def take_along(a: Any, index: Any, axis: int) -> Any:
    """take_along_axis(a, index, axis) for an index of a's shape but along axis, by flat
    positions: one take (NumPy's take_along_axis builds the same index in Python, several
    times slower on small arrays)."""
    outer = math.prod(a.shape[:axis])
    inner = math.prod(a.shape[axis + 1 :])
    n = a.shape[axis]
    starts = xp.arange(0, outer * n * inner, n * inner, like=index).reshape(-1, 1, 1)
    place = starts + index.reshape(outer, -1, inner) * inner + xp.arange(inner, like=index)
    return xp.take(a, place).reshape(index.shape)  # (outer, k, inner) -> index's shape


def pool_indices(
    col_arg: Any, row_arg: Any, size: tuple, stride: tuple, padding: tuple, dilation: tuple
) -> Any:
    """The flat index (row * W + column, in the unpadded input of ``size``) of each window's
    first maximum, from pool_max's offsets: PyTorch's ``return_indices``."""
    (sh, sw), (dh, dw), ((top, _), (left, _)) = stride, dilation, padding
    _, _, ho, wo = row_arg.shape
    rows = xp.arange(ho, like=row_arg).reshape(ho, 1) * sh + row_arg.astype(xp.int64) * dh
    q = take_along(col_arg, rows, axis=2).astype(xp.int64)  # (N, C, Ho, Wo)
    cols = xp.arange(wo, like=q) * sw + q * dw
    return (rows - top) * size[1] + (cols - left)


class MaxPool2d(Function):
    """out[n, c, i, j] = max_{p, q} xpad[n, c, i*sh + p*dh, j*sw + q*dw], xpad padded with
    -inf; an unbatched x (C, H, W) is pooled as a batch of one.

    Saves two small index arrays instead of windows: the winning column offset of every
    (padded row, output column) and the winning row offset of every output. A call that
    will not record (``winners=False``) finds the maxima alone; the offsets are then found
    again from x when asked for.
    """

    rule = "grad_x = grad routed to the first arg-max of each window (MaxPool2dScatter)"
    col_arg: Any
    row_arg: Any

    def forward(
        self,
        x: Any,
        *,
        kernel: tuple,
        stride: tuple,
        padding: tuple,
        dilation: tuple,
        winners: bool = True,
    ) -> Any:
        self.geometry: dict[str, Any] = dict(
            kernel=kernel, stride=stride, padding=padding, dilation=dilation
        )
        self.unbatched = x.ndim == 3  # (C, H, W): pooled as a batch of one, as PyTorch's
        out, self.col_arg, self.row_arg = pool_max(
            _one_batch(x), kernel, stride, padding, dilation, winners
        )
        return out[0] if self.unbatched else out

    def winners(self) -> tuple[Any, Any]:
        """(col_arg, row_arg): the winning offsets, found again from x if forward skipped them
        (of a batch of one, for an unbatched x)."""
        if self.row_arg is None:
            x = _one_batch(self.inputs[0]._array)
            _, self.col_arg, self.row_arg = pool_max(x, **self.geometry)
        return self.col_arg, self.row_arg

    def indices(self) -> Any:
        """Each window's first maximum's flat index (row * W + column): PyTorch's indices."""
        g, size = self.geometry, self.inputs[0].shape[-2:]
        col_arg, row_arg = self.winners()
        flat = pool_indices(col_arg, row_arg, size, g["stride"], g["padding"], g["dilation"])
        return flat[0] if self.unbatched else flat

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        size = self.inputs[0].shape[-2:]
        col_arg, row_arg = self.winners()
        g = grad.unsqueeze(0) if self.unbatched else grad  # the offsets' batch of one
        gx = MaxPool2dScatter.apply(g, row_arg, col_arg, size=size, **self.geometry)
        return (gx.squeeze(0) if self.unbatched else gx,)


def _one_batch(x: Any) -> Any:
    """An unbatched (C, H, W) array as a batch of one (1, C, H, W), a view; x if batched."""
    return x[None] if x.ndim == 3 else x


def _scatter(dest: Any, g: Any, mask: Any, once: bool) -> None:
    """dest += g * mask; where each place of a zeroed dest is written ``once``, the product
    goes straight into dest, with no temporary."""
    if once:
        xp.multiply(g, mask, out=dest)
    else:
        dest += g * mask


class MaxPool2dScatter(Function):
    """out = zeros shaped like MaxPool2d's input with g[n, c, i, j] added at the arg-max of
    window (i, j) (given by its row and column offsets); linear in g, and its adjoint reads
    h at the arg-max of each window.
    """

    rule = "grad_g = the incoming grad read at the arg-max of each window"

    def forward(
        self,
        g: Any,
        row_arg: Any,
        col_arg: Any,
        *,
        size: tuple,
        kernel: tuple,
        stride: tuple,
        padding: tuple,
        dilation: tuple,
    ) -> Any:
        self.geometry: dict[str, Any] = dict(
            kernel=kernel, stride=stride, padding=padding, dilation=dilation
        )
        (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
        (top, bottom), (left, right) = padding
        n, c, ho, wo = g.shape
        hp = size[0] + top + bottom
        # first undo the row pass into (N, C, Hp, Wo), then the column pass into the input;
        # two offsets reach one place only where windows overlap (stride < dilated kernel)
        # (with the fast path on, written straight into place where windows do not overlap)
        fast = fastpath.enabled()
        rows = xp.zeros((n, c, hp, wo), dtype=g.dtype, like=g)
        for p, s in enumerate(_offsets(kh, sh, dh, ho)):
            _scatter(rows[:, :, s], g, row_arg == p, once=fast and sh >= dh * (kh - 1) + 1)
        out = xp.zeros((n, c, hp, size[1] + left + right), dtype=g.dtype, like=g)
        for q, s in enumerate(_offsets(kw, sw, dw, wo)):
            _scatter(out[..., s], rows, col_arg == q, once=fast and sw >= dw * (kw - 1) + 1)
        return out[:, :, top : top + size[0], left : left + size[1]]

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        _, row_arg, col_arg = self.inputs
        geometry = self.geometry
        (kh, kw), (sh, sw), (dh, dw) = geometry["kernel"], geometry["stride"], geometry["dilation"]
        (top, bottom), (left, right) = geometry["padding"]
        n, c, ho, wo = row_arg.shape
        h = grad
        if top or bottom or left or right:
            h = Pad.apply(h, widths=((0, 0), (0, 0), (top, bottom), (left, right)))
        rows = None
        for q, s in enumerate(_offsets(kw, sw, dw, wo)):
            term = h[..., s] * (col_arg == q).astype(h.dtype)  # (N, C, Hp, Wo)
            rows = term if rows is None else rows + term
        assert rows is not None  # a kernel has at least one column
        gg = None
        for p, s in enumerate(_offsets(kh, sh, dh, ho)):
            term = rows[:, :, s] * (row_arg == p).astype(h.dtype)  # (N, C, Ho, Wo)
            gg = term if gg is None else gg + term
        return gg, None, None


# ---------------------------------------------------------------------------------------
# Window sums, for average pooling: a loop over the kernel offsets of whole-array adds,
# where a convolution with a constant kernel copied every window and ran a matmul.


class AvgPool2d(Function):
    """out[n, c, i, j] = weight * sum_{p, q} xpad[n, c, i*sh + p, j*sw + q], xpad padded with
    zeros: the average pools (weight 1 / the window's size, an array (Ho, Wo) of each
    window's 1 / divisor, or 1 for integer sums), of x (N, C, H, W) or unbatched (C, H, W);
    linear in x, its adjoint spreads weight * g over each window (AvgPool2dBackward)."""

    rule = "grad_x = AvgPool2dBackward(grad): weight * grad added over each window"
    saves_inputs = False

    def forward(self, x: Any, *, kernel: tuple, stride: tuple, padding: tuple, weight: Any) -> Any:
        self.geometry: dict[str, Any] = dict(
            kernel=kernel, stride=stride, padding=padding, weight=weight
        )
        self.size, self.unbatched = x.shape[-2:], x.ndim == 3
        x = _one_batch(x)  # an unbatched x: a batch of one
        out = window_sums(x, kernel, stride, padding) if fastpath.enabled() else None
        if out is None:  # more than a few windows (a few: one product, window_sums)
            xpad = padded(x, padding)
            row_slices, col_slices = _pool_slices(self.size, kernel, stride, (1, 1), padding)
            # separable: each window's rows summed first (one add per offset over runs of
            # whole rows), then its columns; kh + kw adds, not kh * kw
            if len(row_slices) == 1:  # a kernel one row high: the rows as they are
                rows = xpad[:, :, row_slices[0]]  # (N, C, Ho, Wp)
            else:
                rows = folded(xp.add, [xpad[:, :, s] for s in row_slices])  # (N, C, Ho, Wp)
            out = folded(xp.add, [rows[..., s] for s in col_slices])  # (N, C, Ho, Wo), fresh
        if not (isinstance(weight, float) and weight == 1):
            out *= weight  # out is fresh: weighted in place
        return out[0] if self.unbatched else out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (AvgPool2dBackward.apply(grad, size=self.size, **self.geometry),)


class AvgPool2dBackward(Function):
    """out = zeros shaped like AvgPool2d's input with weight * g[n, c, i, j] added over window
    (i, j); linear in g, its adjoint is AvgPool2d of the incoming grad."""

    rule = "grad_g = AvgPool2d(h) with the same windows and weight (h: the incoming grad)"
    saves_inputs = False

    def forward(
        self,
        g: Any,
        *,
        size: tuple,
        kernel: tuple,
        stride: tuple,
        padding: tuple,
        weight: Any,
    ) -> Any:
        self.geometry: dict[str, Any] = dict(
            kernel=kernel, stride=stride, padding=padding, weight=weight
        )
        unbatched, g = g.ndim == 3, _one_batch(g)  # an unbatched g: a batch of one
        (top, bottom), (left, right) = padding
        n, c, ho = g.shape[:3]
        hp, wp = size[0] + top + bottom, size[1] + left + right
        part = g if isinstance(weight, float) and weight == 1 else g * weight
        row_slices, col_slices = _pool_slices(size, kernel, stride, (1, 1), padding)
        # the adjoint of the separable sums: spread along the columns, then along the rows
        rows = xp.zeros((n, c, ho, wp), g.dtype, like=g)
        for s in col_slices:
            rows[..., s] += part
        if len(row_slices) == 1 and ho == hp:  # one row a window, every row: spread already
            out = rows
        else:
            out = xp.zeros((n, c, hp, wp), g.dtype, like=g)
            for s in row_slices:
                out[:, :, s] += rows
        out = out[:, :, top : top + size[0], left : left + size[1]]
        return out[0] if unbatched else out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (AvgPool2d.apply(grad, **self.geometry),)


# ---------------------------------------------------------------------------------------
# unfold and fold for users (nn.functional's): every block as a column, and its adjoint, each
# one take or one add.at by a cached index (the adds of fold over a view of the columns with
# the batch last cost 2-7x more, at every size).


def _block_places(geometry: dict, size: tuple, channels: int, n: int) -> Any:
    """For each entry (n, c, *p, *i) of the columns (N, C*K, L), its flat place in the padded
    batch (N, C, *padded): along each axis i*s + p*d. Made once for each key (host ints)."""
    key = (*geometry.values(), size, channels, n)
    found = _PLACES.get(key)
    if found is not None:
        return found
    kernel, stride, padding, dilation = (geometry[k] for k in ("kernel", "stride", "padding",
                                                                "dilation"))  # fmt: skip
    outs = out_hw(size, kernel, stride, dilation, padding)
    rank, host = len(size), array.host
    place = host.arange(n * channels).reshape(-1, *(1,) * (2 * rank))  # (N*C, 1, ...)
    for a, (lo, hi) in enumerate(padding):  # (N*C, *kernel, *outs), one axis at a time
        at_kernel, at_outs = [1] * (1 + 2 * rank), [1] * (1 + 2 * rank)
        at_kernel[1 + a], at_outs[1 + rank + a] = kernel[a], outs[a]
        offsets = (host.arange(kernel[a]) * dilation[a]).reshape(at_kernel)
        starts = (host.arange(outs[a]) * stride[a]).reshape(at_outs)
        place = place * (size[a] + lo + hi) + offsets + starts
    place = place.reshape(-1)
    place.flags.writeable = False
    _PLACES.keep(key, place)
    return place


_PLACES: Bounded[tuple, Any] = Bounded(64)


def _places_for(x: Any, geometry: dict, size: tuple, channels: int, n: int) -> Any:
    """_block_places on x's device."""
    place = _block_places(geometry, size, channels, n)
    return place if type(x) is array.host.ndarray else array.from_host(place, x)


class Im2Col(Function):
    """out[n, (c, *p), (*i)] = xpad[n, c, *(i*s + p*d)]: every block of x (N, C, H, W), or
    (C, H, W), as a column (N, C*kh*kw, Ho*Wo), one take by each entry's place in xpad;
    linear, its adjoint adds each column back (Col2Im)."""

    rule = "grad_x = Col2Im(grad): each column added back where its block was read"
    saves_inputs = False

    def forward(
        self, x: Any, *, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple
    ) -> Any:
        self.geometry: dict[str, Any] = dict(
            kernel=kernel, stride=stride, padding=padding, dilation=dilation
        )
        self.size = x.shape[-2:]
        batch = x if x.ndim == 4 else x[None]
        n, c = batch.shape[:2]
        place = _places_for(x, self.geometry, self.size, c, n)
        cols = padded(batch, padding).reshape(-1).take(place)  # (N*C*K*L,)
        blocks = math.prod(out_hw(self.size, kernel, stride, dilation, padding))
        cols = cols.reshape(n, c * math.prod(kernel), blocks)  # (N, C*K, L), L for N = 0
        return cols if x.ndim == 4 else cols[0]

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (Col2Im.apply(grad, size=self.size, **self.geometry),)


class Col2Im(Function):
    """out = zeros (N, C, *size) with column (c, *p) of block (*i) of x (N, C*kh*kw, Ho*Wo),
    or (C*kh*kw, Ho*Wo), added at xpad[n, c, *(i*s + p*d)], one add.at by each entry's place:
    the adjoint of Im2Col (nn.functional.fold); its own adjoint is Im2Col."""

    rule = "grad_x = Im2Col(grad): the incoming grad's blocks as columns"
    saves_inputs = False

    def forward(
        self,
        x: Any,
        *,
        size: tuple,
        kernel: tuple,
        stride: tuple,
        padding: tuple,
        dilation: tuple,
    ) -> Any:
        self.geometry: dict[str, Any] = dict(
            kernel=kernel, stride=stride, padding=padding, dilation=dilation
        )
        batch = x if x.ndim == 3 else x[None]
        n, c = batch.shape[0], batch.shape[1] // math.prod(kernel)
        padded = tuple(m + lo + hi for m, (lo, hi) in zip(size, padding, strict=True))
        out = xp.zeros((n, c, *padded), dtype=x.dtype, like=x)
        xp.add.at(out.reshape(-1), _places_for(x, self.geometry, size, c, n), batch.reshape(-1))
        inside = (slice(None), slice(None), *_inside(padding, size))
        out = out[inside]  # (N, C, *size)
        if any(lo or hi for lo, hi in padding):  # one copy into C order, as PyTorch's
            out = out.copy()
        return out if x.ndim == 3 else out[0]

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (Im2Col.apply(grad, **self.geometry),)
