"""Where a view's elements lie in its base: what a write through a view records, and
what the gradient of a view follows back (tensor/inplace.py, ops/movement.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .modules import data_ptr


def view_positions(base: Any, view: Any) -> np.ndarray:
    """An int64 host array of ``view``'s shape: each element of ``view`` as its flat
    (C-order) position among ``base``'s elements. Read from the two arrays' addresses and
    strides only (no values), so it serves any device; ValueError where ``view`` reaches
    memory that is not one of base's elements."""
    item = base.itemsize
    strides = base.strides + view.strides
    shift = data_ptr(view) - data_ptr(base)
    if view.itemsize != item or shift % item or any(s % item for s in strides):
        raise ValueError(
            f"view_positions: an array of shape {view.shape} and dtype {view.dtype} is not a "
            f"view of one of shape {base.shape} and dtype {base.dtype} by elements"
        )
    where = _offsets(base.shape, base.strides, item)  # each base element's memory offset
    low = int(where.min()) if where.size else 0
    table = np.full(int(where.max()) - low + 1 if where.size else 0, -1, np.int64)
    table[where.ravel() - low] = np.arange(where.size)
    at = _offsets(view.shape, view.strides, item) + shift // item - low
    inside = (at >= 0) & (at < table.size)
    positions = table[np.where(inside, at, 0)] if table.size else np.zeros(at.shape, np.int64)
    if not inside.all() or (positions < 0).any():
        raise ValueError(
            f"view_positions: the array of shape {view.shape} reaches memory outside the "
            f"elements of its base of shape {base.shape}"
        )
    return positions


def _offsets(shape: tuple, strides: tuple, item: int) -> np.ndarray:
    """Each element's offset from the first, in elements, for an array of this layout."""
    out = np.zeros(shape, np.int64)
    for d, (n, s) in enumerate(zip(shape, strides, strict=True)):
        step = np.arange(n, dtype=np.int64) * (s // item)
        out += step.reshape((n,) + (1,) * (len(shape) - d - 1))
    return out
