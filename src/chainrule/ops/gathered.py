"""Max pooling of a few windows by one take: every window's places in x, made once for each
shape and geometry, and one reduction (ops/conv.py's pool_max asks it first, with the fast
path on; its passes over the kernel's offsets are the plain way)."""

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
