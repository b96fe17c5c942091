"""Reductions and running sums by passes over whole arrays (fastpath/table.py), where NumPy's
own loop walks many short lines one at a time; with the switch off, the ufunc's own reduce
or accumulate.

Halving: NumPy reduces the leading axis of an (n, r) array a row at a time, r elements a
step, so short rows cost it ten times a pass over the array; halving combines the rows'
second half into their first, again and again, each step one pass over whole rows. A sum so
made is pairwise, as PyTorch's cascade sum is, where NumPy's over a leading axis adds one row
after another. NumPy's product of a whole array multiplies one element after another (it has
no vector loop for it, as it has for sums and maxima), so that too is halved, as short rows.

Steps: NumPy's accumulate (and reduce) walks each line along the axis on its own, so many
short lines cost it a loop of a few elements each; here each step adds (multiplies, takes the
greater of) one whole slice of lines into the next, the same operations in the same order
(but for a sum along a last axis of 8 or more, which NumPy adds in eight lanes)."""

from __future__ import annotations

import math
from typing import Any

from .. import array
from .switch import state

# Halving pays where the leading run holds at least this many rows of at most ROW_MAX elements
# each: below, the ufunc's own rows cost less than halving's log2(n) calls.
ROWS_MIN = 1024
ROW_MAX = 16
# Below this many elements neither halving (ROWS_MIN rows of 2) nor steps (LINES_MIN lines of
# 2, below) pays, and reduce asks nothing more.
SIZE_MIN = 2 * ROWS_MIN


def reduce(ufunc: Any, a: Any, dims: Any, keepdims: bool) -> Any:
    """``ufunc.reduce(a, axis=dims, keepdims=keepdims)`` for a non-negative dim, a tuple of
    them or None, add, multiply, maximum or minimum (sums and products of floats only, as
    NumPy's reduce keeps an integer's wider dtype): by halving where dims start with a leading
    run of axes of a C-ordered array whose rows after that run are short, or where they are
    every dim of a C-ordered product (NumPy multiplies one element after another); by steps
    where they are one short axis across many lines (``stepped``'s)."""
    if not _applies(ufunc, a):
        return ufunc.reduce(a, axis=dims, keepdims=keepdims)
    if isinstance(dims, int):
        dims = (dims,)
    if dims is None:
        if ufunc is array.xp.multiply and a.size >= ROWS_MIN * ROW_MAX and a.flags.c_contiguous:
            return _product(a, keepdims)
        return ufunc.reduce(a, axis=dims, keepdims=keepdims)
    lead = 0
    if a.flags.c_contiguous:
        while lead in dims:
            lead += 1
    rows = math.prod(a.shape[:lead])
    row = a.size // rows if rows else 0
    if lead and rows >= ROWS_MIN and 2 <= row <= ROW_MAX:
        out = _halved(ufunc, a.reshape(rows, row)).reshape(a.shape[lead:])
        rest = tuple(d - lead for d in dims if d >= lead)
        if rest:
            out = ufunc.reduce(out, axis=rest, keepdims=keepdims)
        if keepdims:
            out = out.reshape((1,) * lead + out.shape)
        return out
    if _steps_pay(a, dims):
        return _stepped(ufunc, a, dims[0], keepdims)
    return ufunc.reduce(a, axis=dims, keepdims=keepdims)


def _applies(ufunc: Any, a: Any) -> bool:
    """Whether passes may take the ufunc over a: the switch on, a past SIZE_MIN elements, and
    a float where the ufunc sums or multiplies (NumPy's reduce widens an integer's dtype)."""
    return state.on and a.size >= SIZE_MIN and (ufunc not in _WIDENED or a.dtype.char in "fd")


# Sums and products whose NumPy reduce widens an integer's dtype: passes keep to floats.
_WIDENED = (array.xp.add, array.xp.multiply)


def _product(a: Any, keepdims: bool) -> Any:
    """The product of every element of a C-ordered array: its elements as FOLDS blocks
    multiplied into the first's product with the second (an eighth of the elements: a
    scratch array that stays in cache, where halving made one of half), that as rows of
    ROW_MAX halved, the ROW_MAX left and the last few multiplied by the ufunc."""
    multiply, flat = array.xp.multiply, a.reshape(-1)
    whole = flat.size - flat.size % (ROW_MAX * FOLDS)
    blocks = flat[:whole].reshape(FOLDS, -1)  # (FOLDS, whole / FOLDS)
    part = multiply(blocks[0], blocks[1])
    for block in blocks[2:]:
        multiply(part, block, out=part)
    out = _halved(multiply, part.reshape(-1, ROW_MAX))  # (ROW_MAX,)
    out = multiply.reduce(out) * multiply.reduce(flat[whole:])
    return out.reshape((1,) * a.ndim) if keepdims else out


FOLDS = 8  # the blocks a whole product is first multiplied in


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


def stepped(ufunc: Any, a: Any, dims: Any, keepdims: bool) -> Any:
    """``reduce``'s result where it takes steps over a along dims (halving never takes them
    first there), else None: one axis of 2 to STEPS_MAX elements across at least LINES_MIN
    lines, with reduce's own checks (the switch, the size, a float's sum or product)."""
    if dims is None or not _applies(ufunc, a):
        return None
    dims = (dims,) if isinstance(dims, int) else dims
    return _stepped(ufunc, a, dims[0], keepdims) if _steps_pay(a, dims) else None


def _steps_pay(a: Any, dims: tuple) -> bool:
    """Whether steps pay over a along dims: one axis of 2 to STEPS_MAX elements across at
    least LINES_MIN lines."""
    n = a.shape[dims[0]] if len(dims) == 1 else 0
    return 2 <= n <= STEPS_MAX and a.size >= LINES_MIN * n


def _stepped(ufunc: Any, a: Any, axis: int, keepdims: bool) -> Any:
    """ufunc.reduce(a, axis=axis, keepdims=keepdims): each slice along the axis combined into
    the result in turn, the order of NumPy's own loop along an axis that is not the last."""
    steps = array.xp.moveaxis(a, axis, 0)  # (n, ...): a view, step k its slice k
    out = ufunc(steps[0], steps[1])  # a new array that the other steps are combined into
    for k in range(2, steps.shape[0]):
        ufunc(out, steps[k], out=out)
    return array.xp.expand_dims(out, axis) if keepdims else out


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
