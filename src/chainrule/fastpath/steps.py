"""Running sums and products along a short axis, a step at a time (fastpath/table.py): NumPy's
accumulate walks each line along the axis on its own, so many short lines cost it a loop of
a few elements each; here each step adds (multiplies) one whole slice of lines into the
next, the same operations in the same order, so the same bits. With the switch off, the
ufunc's own accumulate."""

from __future__ import annotations

from typing import Any

from .. import array
from .switch import state

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
