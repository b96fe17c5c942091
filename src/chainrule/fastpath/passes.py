"""Reductions and running sums by passes over whole arrays (fastpath/table.py), where NumPy's
own loop walks many short lines one at a time; with the switch off, the ufunc's own reduce
or accumulate.

Halving: NumPy reduces the leading axis of an (n, r) array a row at a time, r elements a
step, so short rows cost it ten times a pass over the array; halving combines the rows'
second half into their first, again and again, each step one pass over whole rows. A sum so
made is pairwise, as PyTorch's cascade sum is, where NumPy's over a leading axis adds one row
after another.

Steps: NumPy's accumulate walks each line along the axis on its own, so many short lines
cost it a loop of a few elements each; here each step adds (multiplies) one whole slice of
lines into the next, the same operations in the same order, so the same bits."""

from __future__ import annotations

import math
from typing import Any

from .. import array
from .switch import state

# Halving pays where the leading run holds at least this many rows of at most ROW_MAX elements
# each: below, the ufunc's own rows cost less than halving's log2(n) calls.
ROWS_MIN = 1024
ROW_MAX = 16


def reduce(ufunc: Any, a: Any, dims: Any, keepdims: bool) -> Any:
    """``ufunc.reduce(a, axis=dims, keepdims=keepdims)`` for a non-negative dim, a tuple of
    them or None, add, maximum or minimum: by halving where dims start with a leading run of
    axes of a C-ordered array whose rows after that run are short (sums of floats only, as
    NumPy's reduce keeps an integer sum's wider dtype)."""
    lead = 0
    if isinstance(dims, int):
        dims = (dims,)
    if dims is not None and state.on and a.flags.c_contiguous:
        while lead in dims:
            lead += 1
    rows = math.prod(a.shape[:lead])
    row = a.size // rows if rows else 0
    if (
        lead == 0
        or rows < ROWS_MIN
        or not 2 <= row <= ROW_MAX
        or (ufunc is array.xp.add and a.dtype.char not in "fd")
    ):
        return ufunc.reduce(a, axis=dims, keepdims=keepdims)
    out = _halved(ufunc, a.reshape(rows, row)).reshape(a.shape[lead:])
    rest = tuple(d - lead for d in dims if d >= lead)
    if rest:
        out = ufunc.reduce(out, axis=rest, keepdims=keepdims)
    if keepdims:
        out = out.reshape((1,) * lead + out.shape)
    return out


def _halved(ufunc: Any, rows: Any) -> Any:
    """(r,) the ufunc over the n rows of (n, r) ``rows``: the second half of the rows
    combined into the first (an odd last row into the first row), until one is left."""
    n = rows.shape[0]
    half = n // 2
    out = ufunc(rows[:half], rows[half : 2 * half])  # (n // 2, r): a new array to halve in
    if n % 2:
        ufunc(out[:1], rows[2 * half :], out=out[:1])
    n = half
    while n > 1:
        half = n // 2
        ufunc(out[:half], out[half : 2 * half], out=out[:half])
        if n % 2:
            ufunc(out[:1], out[2 * half : n], out=out[:1])
        n = half
    return out[0]


# Steps pay where at least LINES_MIN lines run along an axis of at most STEPS_MAX elements:
# below, the ufunc's own loop costs less than a call per step.
LINES_MIN = 1024
STEPS_MAX = 16


def accumulate(ufunc: Any, a: Any, axis: int, dtype: Any) -> Any:
    """``ufunc.accumulate(a, axis=axis, dtype=dtype)`` of an array of one dim or more (add
    or multiply): by steps along the axis where it is short and the lines are many."""
    n = a.shape[axis]
    if not (state.on and 2 <= n <= STEPS_MAX and a.size // n >= LINES_MIN):
        return ufunc.accumulate(a, axis=axis, dtype=dtype)
    out = a.astype(dtype)  # a new C-ordered array, which the steps write into
    steps = array.xp.moveaxis(out, axis, 0)  # (n, ...): a view, step k its slice k
    for k in range(1, n):
        ufunc(steps[k - 1], steps[k], out=steps[k])
    return out
