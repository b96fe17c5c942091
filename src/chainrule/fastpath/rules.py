"""The tricks of the backward pass that are no op's own algorithm: rules on arrays
(``gradients``), the relu mask on a gradient's bits (``masked``) and selection on them
(``select``), 0-d arrays' values as NumPy scalars (``on_value``), Embedding's scatter
(``add_at_rows``) and the write clock (``unchanged``); docs/performance.md has the figures."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import array
from ..autograd.primitive import Function, tensor_type
from ..autograd.versions import writes
from .switch import state


def gradients(fn: Function, grad: Any, out: Any) -> Sequence[Any]:
    """A node's input gradients with the fast path on (first-order gradients, no observer
    that needs the plain rules): by its ``backward_arrays`` where it has one, else by its
    ``backward``."""
    rule = fn.backward_arrays
    if rule is None:
        return fn.backward(grad, out)
    make = tensor_type()._make
    grads = []  # a loop, not a comprehension: see Function.apply
    for r in rule(grad._array, out._array):
        grads.append(None if r is None else make(r, False))
    return grads


xp = array.xp

# A float's bits read as a signed integer of its width: see masked.
_BITS = {2: array.xp.int16, 4: array.xp.int32, 8: array.xp.int64}


def masked(grad: Any, mask: Any) -> Any:
    """The array ``grad`` where ``mask``, else 0, with NaN and inf kept out of the zeros
    (NaN * 0 is NaN), in a new array.

    On a float array the mask multiplies grad's bits read as integers: x * 1 keeps every
    bit, x * 0 is all bits 0, which is +0.0, whatever x was. One pass, as fast as the float
    product, with no pass to look for NaN and inf first and no floating-point flag to
    silence (inf * 0 raises one). A float with no integer of its width (float128), and any
    other dtype, takes a selection, as does every dtype with the switch off."""
    bits = _BITS.get(grad.itemsize) if array.is_floating(grad.dtype) else None
    if bits is None or not state.on:
        return array.xp.where(mask, grad, 0).astype(grad.dtype, copy=False)
    return (grad.view(bits) * mask).view(grad.dtype)


# Up to this many elements where's one call costs less than select's three.
SELECT_MIN = 1024


def select(mask: Any, x: Any, y: Any) -> Any:
    """``xp.where(mask, x, y)`` in a new array of x's dtype, for a float array x and y an
    array of its dtype or a number.

    On the bits read as integers, y ^ ((x ^ y) * mask): where mask is 1 the product keeps
    x ^ y and the second xor gives back x's bits, where it is 0 y's bits stay. Three passes
    with no branch, where NumPy's where branches on every element and pays for each
    mispredicted one (a random mask costs it ten times the passes). Any other case, up to
    SELECT_MIN elements, and every case with the switch off, takes the selection."""
    bits = _BITS.get(x.itemsize) if array.is_floating(x.dtype) else None
    if bits is not None and state.on and x.size > SELECT_MIN:
        if not isinstance(y, array.ndarray):
            y = x.dtype.type(y)  # a number in x's dtype, as where's result has it
        if y.dtype == x.dtype:
            y = y.view(bits)
            out = xp.bitwise_xor(x.view(bits), y)
            out *= mask
            out ^= y
            return out.view(x.dtype)
    return array.xp.where(mask, x, y).astype(x.dtype, copy=False)


# The dtypes whose 0-d arrays an op computes on as a NumPy scalar (see on_value).
_VALUES = (array.host.float32, array.host.float64)


def on_value(a: Any, fn: Any) -> Any:
    """``fn`` of a 0-d float32 or float64 host array's one value, a NumPy scalar of its
    dtype, made a 0-d array again: NumPy's scalar arithmetic is the arrays' in one rounding
    and dtype (Python numbers beside it are weak), and ufuncs take scalars too, for a fifth
    of the cost of the passes over a 0-d array, each a whole ufunc call. None where it does
    not apply (another array, the switch off) or where a user's filter raised a warning that
    the op's passes silence: the caller then runs its passes."""
    if not state.on or a.ndim or type(a) is not array.host.ndarray or a.dtype not in _VALUES:
        return None
    try:
        return array.host.asarray(fn(a[()]), a.dtype)
    except (RuntimeWarning, FloatingPointError):
        return None


# Below this many gradient elements np.add.at's own loop is the faster of the two.
ADD_AT_MAX = 4096


def add_at_rows(out: Any, index: Any, g: Any) -> bool:
    """``np.add.at(out, index, g)`` by ``add_rows`` where index picks whole rows by one
    integer array (Embedding's lookup) and the gradient is past ADD_AT_MAX elements; False
    (nothing done) otherwise, or with the switch off, for np.add.at to do it."""
    rows = _rows_index(index) if state.on else None
    if rows is None or g.size <= ADD_AT_MAX or out.ndim == 0:
        return False
    add_rows(out, rows, g)
    return True


def _rows_index(index: Any) -> Any:
    """The integer array when index picks whole rows along the first dim (``w[idx]``, the
    lookup behind Embedding), else None."""
    if isinstance(index, tuple) and len(index) == 1:
        index = index[0]
    if isinstance(index, array.ndarray) and index.dtype.kind in "iu":
        return index
    return None


def add_rows(out: Any, rows: Any, g: Any) -> None:
    """out[rows[k]] += g[k] for every k, repeats accumulating: ``np.add.at(out, rows, g)``
    without its per-element loop.

    The k are sorted by row (a stable sort, so each row's terms keep their order). Then
    either each row's terms are summed by one ``add.reduceat`` (its cost grows with the
    number of distinct rows; NumPy may pair the terms in another order than one by one,
    so the last bit can differ from np.add.at's), or in rounds: round r adds each row's
    r-th term, one vectorised fancy-index update touching every row at most once (its cost
    grows with the most repeated row's count; the sums are np.add.at's bit for bit). The
    cheaper of the two is taken, by a cost model measured with NumPy 2.4.
    """
    flat = rows.reshape(-1)
    if flat.size == 0:
        return
    flat = xp.where(flat < 0, flat + out.shape[0], flat)
    terms = g.reshape(flat.size, -1)
    dest = out.reshape(out.shape[0], -1)
    order = xp.argsort(flat, kind="stable")
    ordered = flat[order]
    first = xp.empty(flat.size, dtype=bool, like=flat)
    first[0] = True
    xp.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    starts = xp.flatnonzero(first)
    lengths = xp.diff(xp.append(starts, flat.size))
    most = int(lengths.max())
    # reduceat costs about 10 ns per distinct row and column; a round about 5 us
    if starts.size * terms.shape[1] < 500 * most:
        dest[ordered[starts]] += xp.add.reduceat(terms[order], starts, axis=0)
        return
    dest[ordered[starts]] += terms[order[starts]]
    if most > 1:
        rank = xp.arange(flat.size, like=flat) - xp.repeat(starts, lengths)  # place in its row
        for r in range(1, most):
            at = xp.flatnonzero(rank == r)
            dest[ordered[at]] += terms[order[at]]


def unchanged(fn: Function) -> bool:
    """Whether nothing was written in place, in any thread, since ``fn`` was recorded
    (versions.writes, the process's count of writes, is as the node saw it): then the
    engine skips comparing its inputs' versions one by one."""
    return state.on and fn.stamp == writes[0]
