"""nextafter of float32 and float64 arrays on their bits (fastpath/table.py), where NumPy's
loop calls the C library's nextafter once an element; with the switch off, NumPy's ufunc.

A float's bits read as a signed integer of its width count its ulps: one more is the next
float away from zero, one less the next toward it (for either sign, the sign bit being the
integer's). So the step toward b is +1 where b lies away from zero beyond a ((b > a) ==
(a > 0)), -1 elsewhere. Where that reading fails, NumPy's ufunc takes the element: a == b
(b is the answer), NaN (compared unordered), and a zero a (the smallest subnormal with b's
sign).
"""

from __future__ import annotations

from typing import Any

from .. import array
from .division import patched
from .switch import state

xp = array.xp

# Below this many elements NumPy's one ufunc call costs less than the passes' several.
NEXTAFTER_MIN = 4096
_BITS = {"f": xp.int32, "d": xp.int64}


def nextafter(a: Any, b: Any) -> Any:
    """``xp.nextafter(a, b)`` of two float32 or float64 NumPy arrays of one dtype."""
    if (
        type(a) is not array.host.ndarray
        or type(b) is not array.host.ndarray
        or max(a.size, b.size) < NEXTAFTER_MIN  # the quick refusals first
        or not state.on
        or b.dtype != a.dtype
        or a.dtype.char not in _BITS
    ):
        return xp.nextafter(a, b)
    bits = _BITS[a.dtype.char]
    above = b > a
    away = above == (a > 0)  # b beyond a, away from zero
    out = xp.add(a.view(bits), away, dtype=bits)
    out += away
    out -= 1  # a's bits + 1 where away, - 1 elsewhere
    odd = ~(above | (b < a))  # equal or NaN
    odd |= a == 0
    return patched(out.view(a.dtype), odd, xp.nextafter, a, b)
