"""softmax's exps of a large array's rows without the shift by each row's max, where the
array's largest value and the rows' sums show the shift would change nothing but rounding;
with the switch off, the op's own a - max (fastpath/table.py)."""

from __future__ import annotations

import math
from typing import Any

from ..array import xp
from .passes import SIZE_MIN
from .rowsums import row_sums
from .switch import state

# exp(x) of x up to this, summed over a row of up to e^28 elements, stays a finite float32
LARGEST = 60.0
# A row whose exps sum to at least this holds its max at -40 - log(n) or above, so each exp
# within 27 of that max is a normal float32 (e^-87.3 and up) as the shift would make it; the
# rest are shares below e^-27 of the row's sum, which the shift would only round differently
LEAST = math.exp(-40.0)


def unshifted(a: Any, dim: int) -> tuple[Any, Any] | None:
    """exp(a) in an array of its own and its sums along the last dim (kept as 1), for a
    C-ordered float32 or float64 array of SIZE_MIN elements or more taken along its last dim
    (dim), where no value is above LARGEST and every row's sum is LEAST or more; else None
    (a NaN, an inf, a large value, a row all -inf or far below 0: the shift is needed)."""
    if not (
        state.on
        and a.size >= SIZE_MIN
        and dim == a.ndim - 1
        and a.dtype.char in "fd"
        and a.flags.c_contiguous
    ):
        return None
    if not xp.maximum.reduce(a, axis=None) <= LARGEST:  # one pass; a NaN fails it too
        return None
    e = xp.exp(a)
    sums = row_sums(e.reshape(-1, a.shape[-1])).reshape(*a.shape[:-1], 1)  # (..., 1)
    if not xp.minimum.reduce(sums, axis=None) >= LEAST:
        return None
    return e, sums
