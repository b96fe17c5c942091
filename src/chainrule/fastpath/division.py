"""fmod, remainder and floor division of float32 arrays by passes in float64
(fastpath/table.py), where NumPy's loops call the C library's fmodf once an element
(remainder and floor_divide too, as PyTorch's algorithms start from fmod); with the switch
off, NumPy's ufuncs (remainder's zero given a's sign, as PyTorch's).

Exact, not near: a float32 quotient a / b computed in float64 is within 2**-29 of the true
one while |a / b| < 2**24, and a true quotient that is not a whole number lies at least
2**-24 from one (a and b hold 24 bits each), so trunc and floor of it are the true ones; the
whole number n then has 24 bits at most, n * b at most 48 (exact in float64), and a - n * b
is fmod's result, which a float32 holds, so the subtraction is exact too. PyTorch's
floor_divide (fmod, then (a - fmod) / b in float32, then a rounding step) gives floor(a / b)
while |a / b| < 2**22 (its division's error stays under 1/2). The elements past these bounds,
and inf, NaN and division by 0, take NumPy's ufunc, one element each.
"""

from __future__ import annotations

import math
from typing import Any

from .. import array
from .switch import state

xp = array.xp

# Below this many elements NumPy's one ufunc call costs less than the passes' several.
DIVISION_MIN = 2048
FMOD_QUOTIENT_MAX = 2.0**24  # trunc(a / b) is exact below, and so is a - trunc(a / b) * b
FLOOR_QUOTIENT_MAX = 2.0**22  # PyTorch's floor_divide is floor(a / b) below


def fmod(a: Any, b: Any) -> Any:
    """``xp.fmod(a, b)`` of a float32 array and a float32 array or a number: in float64,
    the remainder with a's sign (a zero too: copysign)."""
    d = _divisor(a, b)
    if d is None:
        return xp.fmod(a, b)
    q = xp.divide(a, d, dtype=xp.float64)
    xp.trunc(q, out=q)
    outside = _outside(q)
    q *= d
    out = xp.subtract(a, q, out=xp.empty(q.shape, xp.float32), casting="same_kind")
    xp.copysign(out, a, out=out)
    if out.size and xp.isnan(out.min()):  # b inf: 0 * inf, where fmod gives a
        nan = xp.isnan(out)
        outside = nan if outside is None else outside | nan
    return patched(out, outside, xp.fmod, a, d)


def floor_divide(a: Any, b: Any) -> Any:
    """``xp.floor_divide(a, b)`` of a float32 array and a float32 array or a number: the
    floor of the quotient in float64 (-0.0 where it is -0.0, as PyTorch's copysign)."""
    d = _divisor(a, b)
    if d is None or (not d.ndim and math.isinf(d)):
        return xp.floor_divide(a, b)
    q = xp.divide(a, d, dtype=xp.float64)
    xp.floor(q, out=q)
    outside = _outside(q, FLOOR_QUOTIENT_MAX)
    infinite = xp.isinf(d) if d.ndim else None  # a / inf is +-0, where PyTorch's give -1 below 0
    if infinite is not None and infinite.any():
        infinite = xp.broadcast_to(infinite, q.shape)
        outside = infinite if outside is None else outside | infinite
    return patched(q.astype(xp.float32), outside, xp.floor_divide, a, d)


def remainder(a: Any, b: Any, plain: Any) -> Any:
    """PyTorch's remainder (b's sign, a zero a's) of a float32 array and a float32 array or
    a number, in float64: a - floor(a / b) * b, exact as fmod's a - trunc(a / b) * b is, then
    rounded once, as PyTorch's fmod + b rounds its exact sum, a zero with a's sign; the
    elements past the bounds take ``plain`` (NumPy's remainder), each on its own. None
    where the passes do not apply (a small or not float32, the switch off)."""
    d = _divisor(a, b)
    if d is None or not d.ndim and (math.isinf(d) or d == 0):  # every element takes plain
        return None
    q = xp.divide(a, d, dtype=xp.float64)
    xp.floor(q, out=q)
    outside = _outside(q)
    q *= d
    out = xp.subtract(a, q, out=xp.empty(q.shape, xp.float32), casting="same_kind")
    xp.copysign(out, a, out=out, where=out == 0)  # a zero has a's sign, as fmod's
    if d.ndim and out.size and xp.isnan(out.min()):  # b inf: 0 * inf, where plain's a or inf
        nan = xp.isnan(out)
        outside = nan if outside is None else outside | nan
    return patched(out, outside, plain, a, d)


def _outside(q: Any, bound: float = FMOD_QUOTIENT_MAX) -> Any:
    """Where the whole quotients q are past ``bound``, NaN or inf (a mask), or None where
    none is: two reductions, which read q once each, answer most calls, before the mask's
    three passes (one of them a new float64 array)."""
    if not q.size or (q.max() < bound and q.min() > -bound):
        return None  # a NaN maximum or minimum fails the comparison
    return ~(xp.abs(q) < bound)


def _divisor(a: Any, b: Any) -> Any:
    """b as a float32 array or NumPy scalar where the passes apply to a and b (float32
    NumPy arrays, or a and a number; DIVISION_MIN elements of a or more, the switch on), else
    None. A few dividends over many divisors keep fmodf, which is quick where |a| < |b|."""
    if type(a) is not array.host.ndarray or a.size < DIVISION_MIN:  # the quick refusal first
        return None
    if not state.on or a.dtype != xp.float32:
        return None
    if isinstance(b, (int, float)) and not isinstance(b, bool):
        return xp.float32(b)  # as NumPy casts a number
    return b if type(b) is array.host.ndarray and b.dtype == xp.float32 else None


def patched(out: Any, outside: Any, ufunc: Any, a: Any, b: Any) -> Any:
    """out with the ufunc's values where ``outside`` (None: nowhere), each element on its own
    (the elements a pass over the bits cannot take; ulps.py's too)."""
    if outside is not None and outside.any():
        where = xp.nonzero(outside)
        a, b = xp.broadcast_arrays(a, b)
        out[where] = ufunc(a[where], b[where])
    return out
