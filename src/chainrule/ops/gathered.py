"""Pooling of a few windows in one or two calls: the maxima by one take of every window's
places in x and one reduction, the sums by one product with a 0/1 matrix of the places each
window covers, each made once for each shape and geometry (ops/conv.py's pool_max and
AvgPool2d ask them first, with the fast path on; their passes over the kernel's offsets are
the plain way)."""

from __future__ import annotations

import math
from typing import Any

from .. import array
from ..array import xp
from ..bounded import Bounded
from .windows import out_hw, strided_windows


def gathered_max(x: Any, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple) -> Any:
    """The max of every window of x (N, C, H, W) by one take of each window's places in x
    (a place in the padding read as one of the window's own, which leaves its max as it is)
    and one reduction over the kernel's offsets, the leading axis (a reduction along a short
    last axis costs more); None where a window holds no place of x, or where the places
    number more than 256 a pass of the plain way (its kh + kw - 2 passes are more calls; a
    take costs more a place)."""
    key = (x.shape, kernel, stride, padding, dilation)
    found = _GATHERS.get(key, False)
    if found is False:
        found = _GATHERS.keep(key, _gather_places(x.shape, kernel, stride, padding, dilation))
    if found is None:
        return None
    places, shape = found
    boxes = x.reshape(-1).take(array.from_host(places, x))  # (kh * kw, N * C * Ho * Wo)
    return xp.maximum.reduce(boxes, axis=0).reshape(shape)


def _gather_places(
    shape: tuple, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple
) -> tuple[Any, tuple] | None:
    """gathered_max's places (kh*kw, N*C*Ho*Wo) in x and output shape, or None."""
    size = shape[2:]
    outs = out_hw(size, kernel, stride, dilation, padding)
    if shape[0] * shape[1] * math.prod(outs) * math.prod(kernel) > 256 * (sum(kernel) - 2):
        return None
    if 0 in shape:  # nothing to take
        return None
    host, axes = array.host, []
    for n, q, s, d, (lo, _), o in zip(size, kernel, stride, dilation, padding, outs, strict=True):
        at = strided_windows(o, q, s, d) - lo  # (o, q) places
        inside = (at >= 0) & (at < n)
        if not inside.any(axis=1).all():  # a window of padding alone
            return None
        first = at[host.arange(o), inside.argmax(axis=1)]  # each window's first inside
        axes.append(host.where(inside, at, first[:, None]))
    rows, cols = axes  # (Ho, kh) and (Wo, kw) places
    in_plane = rows.T[:, None, :, None] * size[1] + cols.T[None, :, None, :]  # (kh, kw, Ho, Wo)
    planes = host.arange(shape[0] * shape[1]) * math.prod(size)  # each plane's first place
    places = in_plane.reshape(-1, 1, outs[0] * outs[1]) + planes[:, None]  # (kh*kw, N*C, Ho*Wo)
    return places.reshape(len(places), -1), (*shape[:2], *outs)


# each input shape and geometry's _gather_places (None: the plain way)
_GATHERS: Bounded[tuple, Any] = Bounded(256)


def window_sums(x: Any, kernel: tuple, stride: tuple, padding: tuple) -> Any:
    """The sum of every window of x (N, C, H, W), padded with zeros, float32 or float64, by
    one product of its planes (N * C, H * W) with the (H * W, Ho * Wo) matrix of 1 where window
    (i, j) covers a place of x; None where the matrix would hold more than 1,024 numbers or
    the product more than 65,536 terms (there the kh + kw passes of the plain way cost less)."""
    key = (x.shape, x.dtype.char, kernel, stride, padding)
    found = _SUMS.get(key, False)
    if found is False:
        found = _SUMS.keep(key, _covers(x.shape, x.dtype.char, kernel, stride, padding))
    if found is None:
        return None
    covers, shape = found
    size = x.shape[-2:]
    planes = x.reshape(-1, size[0] * size[1])  # (N * C, H * W)
    return planes.dot(array.from_host(covers, x)).reshape(shape)  # (N, C, Ho, Wo), fresh


def _covers(shape: tuple, char: str, kernel: tuple, stride: tuple, padding: tuple) -> Any:
    """window_sums' (H * W, Ho * Wo) matrix of dtype ``char`` and output shape, or None."""
    size = shape[-2:]
    outs = out_hw(size, kernel, stride, (1, 1), padding)
    places, windows = math.prod(size), math.prod(outs)
    if places * windows > 1024 or math.prod(shape) * windows > 65536 or 0 in shape:
        return None
    if char not in "fd":  # the half types' and integers' sums as the plain way makes them
        return None
    host, axes = array.host, []
    for n, q, s, (lo, _), o in zip(size, kernel, stride, padding, outs, strict=True):
        at = strided_windows(o, q, s, 1) - lo  # (o, q) places, some in the padding
        axes.append((at[:, :, None] == host.arange(n)).any(axis=1))  # (o, n): o covers n
    rows, cols = axes
    covers = rows[:, None, :, None] & cols[None, :, None, :]  # (Ho, Wo, H, W)
    covers = covers.reshape(windows, places).T.astype(char)  # (H * W, Ho * Wo)
    covers.flags.writeable = False
    return covers, (*shape[:-2], *outs)


# each input shape, dtype and geometry's _covers (None: the plain way)
_SUMS: Bounded[tuple, Any] = Bounded(256)
