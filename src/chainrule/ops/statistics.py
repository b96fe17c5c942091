"""The primitives of the order statistics and scans beside reduce.py's: one element chosen per
line (median, kthvalue, mode, cummax, cummin), a value shared among the elements equal to it
(median of a whole tensor), logcumsumexp; and the array-level choices of those elements, made
as PyTorch's CPU kernels make them, ties included. The Tensor methods live in tensor/."""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any

from .. import array
from ..array import errstate, is_floating, on_device_of, to_host, xp
from ..autograd.primitive import Function
from .elementwise import Where
from .movement import IndexAdd, along_dim

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor


class Select(Function):
    """out = a[..., index, ...] along dim, reshaped to ``shape`` (a line's chosen element:
    median, kthvalue and mode pick one per line, cummax and cummin one per position);
    grad_a = zeros like a with g added where the values were chosen, as PyTorch's
    value-selecting backward. The node is named as PyTorch names the op's."""

    rule = "grad_a = zeros like a, with grad added at the chosen index along dim"
    saves_inputs = False  # the rule reads the input's shape only

    def forward(
        self, a: Any, index: Any, dim: int, shape: tuple, node_name: str, values: Any = None
    ) -> Any:
        self.index, self.node_name, self.in_shape = index, node_name, a.shape
        self.dim, self.out_shape = dim, shape  # for the node's _saved_*
        if values is None:  # not found with the index (as a sort or a scan finds them)
            return a[self.where].reshape(shape)
        out = values.reshape(shape)
        return out if out.flags.c_contiguous else out.copy()  # C order, as PyTorch's

    @property
    def where(self) -> tuple:
        """The full index of the chosen elements, made when read (a scan's values come
        found, and a backward may never run)."""
        return along_dim(self.index, self.dim, len(self.in_shape))

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        g = grad.reshape(self.index.shape)  # (.., 1, ..) for a reduction, a's shape for a scan
        return (IndexAdd.apply(g, shape=self.in_shape, index=self.where),)


class EvenlyDistribute(Function):
    """out = value, one element's of a (the median of the whole tensor, a NaN if it holds one);
    grad_a = g / count at each element equal to value (each NaN, for a NaN), 0 elsewhere: the
    gradient shared evenly among the ties, as PyTorch's."""

    rule = "grad_a = grad / count(a == out) where a == out (a NaN out: where a is NaN), else 0"

    def forward(self, a: Any, value: Any, node_name: str) -> Any:
        self.node_name, self.value = node_name, value
        return value

    @property
    def mask(self) -> Any:
        """Where the input equals the value (is NaN, for a NaN): found when the rule runs,
        from the input it saves, as PyTorch's saves it."""
        a = self.inputs[0]._array
        return xp.isnan(a) if bool(xp.isnan(self.value)) else a == self.value

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        mask = self.mask
        return (Where.apply(mask, grad / int(mask.sum()), 0.0),)


class LogCumSumExp(Function):
    """out[k] = log(sum of exp(a[j]) for j <= k) along dim, in one ufunc call
    (logaddexp.accumulate, stable at any scale: a primitive for stability, as PyTorch's);
    grad_a[i] = sum over k >= i of g[k] exp(a[i] - out[k]), formed as PyTorch forms it: the
    positive and negative parts of g summed in log space from the end, so nothing overflows."""

    rule = (
        "grad_a = exp(revlogcumsumexp(log g+ - out) + a) - exp(revlogcumsumexp(log g- - out) + a)"
    )
    saves_out = True

    def forward(self, a: Any, dim: int) -> Any:
        self.dim = dim
        if a.ndim == 0 or a.size == 0:
            return a.copy()
        with errstate(invalid="ignore"):  # -inf and -inf: -inf, as PyTorch
            return xp.logaddexp.accumulate(a, axis=dim)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        a, d = self.inputs[0], self.dim
        if a.ndim == 0:  # one element: its own logcumsumexp
            return (grad,)
        lowest = float(xp.finfo(a._array.dtype).min)

        def from_end(t: Tensor) -> Tensor:
            return LogCumSumExp.apply(t.flip(d), dim=d).flip(d)

        # log 0 (where does not take it), lowest - out, and the NaN of -inf + inf at an input
        # of -inf: PyTorch's too
        with errstate(divide="ignore", over="ignore", invalid="ignore"):
            log_abs = grad.abs().log()
            pos = Where.apply(grad._array > 0, log_abs, lowest)
            neg = Where.apply(grad._array < 0, log_abs, lowest)
            return ((from_end(pos - out) + a).exp() - (from_end(neg - out) + a).exp(),)


# -- which element each line chooses, as PyTorch's CPU kernels choose it ------------------


def lines_last(a: Any, dim: int) -> tuple[Any, Any]:
    """a with dims dim and -1 swapped, (.., n), a view; and its stable sorting order there:
    value, then position, NaN last (PyTorch's order for ties)."""
    lines = a.swapaxes(dim, -1)  # (.., n)
    return lines, lines.argsort(axis=-1, kind="stable")  # the method: no Python wrapper


def kept(index: Any, dim: int) -> Any:
    """A value per line of lines_last's (..) as a keepdim-shaped array along dim."""
    return index[..., None].swapaxes(dim, -1)  # (.., 1) -> a's shape with 1 at dim


def picked(order: Any, rank: Any) -> Any:
    """order's element at ``rank`` in each line: order (.., n), rank (..) ints; (..)."""
    flat = order.reshape(-1, order.shape[-1])  # (lines, n)
    rows = xp.arange(flat.shape[0], like=flat)
    return flat[rows, rank.reshape(-1)].reshape(order.shape[:-1])


def median_index(a: Any, dim: int, ignore_nan: bool) -> tuple[Any, Any]:
    """The index of each line's median along dim and, where found with it, its value (else
    None), both keepdim-shaped, as PyTorch's CPU kernel: the lower of the two middle values,
    ties by position (its order is value, then index); median's is a line's first NaN if it
    has one, nanmedian's the median of the rest (of a line of NaN only, the one
    std::nth_element leaves first)."""
    lines, order = lines_last(a, dim)
    n = lines.shape[-1]
    nans = xp.isnan(lines) if is_floating(a.dtype) else None
    if nans is None or not xp.count_nonzero(nans):  # one rank for every line
        index = order[..., (n - 1) // 2]  # (..): the place of the value at the middle rank
        return kept(index, dim), kept(picked(lines, index), dim)  # and the value there
    count = nans.sum(axis=-1)  # (..): the NaN of each line, sorted last in their order
    if not ignore_nan:
        index = picked(order, xp.where(count > 0, n - count, (n - 1) // 2))
        return kept(index, dim), None
    index = picked(order, xp.maximum((n - count - 1) // 2, 0))
    return kept(xp.where(count == n, first_of_equals(n), index), dim), None


def first_of_equals(n: int) -> int:
    """The position std::nth_element (libstdc++'s introselect) leaves first among n elements
    that are all equivalent (a line of NaN only, for nanmedian): its partitions, step for
    step, with a comparison that is always false."""
    idx, hi, depth = list(range(n)), n, 2 * (n.bit_length() - 1) if n else 0
    while hi > 3 and depth:
        depth -= 1
        mid = hi // 2
        idx[0], idx[mid] = idx[mid], idx[0]  # the median of three, all equal: the middle
        lo, top = 1, hi
        while True:
            top -= 1
            if lo >= top:
                break
            idx[lo], idx[top] = idx[top], idx[lo]
            lo += 1
        hi = lo  # the cut is past the first position: keep the part before it
    return idx[0]


def kth_index(a: Any, k: int, dim: int) -> tuple[Any, Any]:
    """The index of each line's k-th smallest value along dim (NaN largest), and that value,
    both keepdim-shaped, as PyTorch's CPU kernel, a quickselect, picks it among equal values:
    the only place the value is where it is unique in its line, the quickselect itself (in
    Python) where not."""
    lines, order = lines_last(a, dim)
    index = kept(order[..., k - 1], dim)
    near = xp.sort(lines, axis=-1)[..., max(k - 2, 0) : k + 1]  # the k-th and its neighbours
    values = kept(near[..., min(k - 1, 1)], dim)
    # sorted, so where the neighbours rise strictly the k-th value is unique; the quickselect
    # repicks the other lines (equal values there, or a NaN, which compares false: unique
    # values give it the same place)
    rising = near[..., 1:] > near[..., :-1]  # (.., 1 or 2)
    if xp.count_nonzero(rising) < rising.size:  # (count_nonzero: no Python wrapper, as any's)

        def pick(line: list) -> int:
            return quick_select(line, k - 1)

        tied = kept(~rising.all(axis=-1), dim)
        index = repicked(a, index, dim, tied, pick, QUICKSELECT_BUDGET)
    return index, values


# The most elements a call repicks in Python, about 0.3 s of it (quickselect ~0.6 us an
# element, mode's std::sort ~3 us): past it, the index among equal values (and mode's with
# NaN) is the vectorised one, by position among the equal values, not PyTorch's own.
QUICKSELECT_BUDGET, SORT_BUDGET = 1 << 19, 1 << 16


def repicked(a: Any, index: Any, dim: int, which: Any, pick: Any, budget: int) -> Any:
    """index (keepdim-shaped) with the lines ``which`` marks chosen again by ``pick`` (the
    line's values as a list: PyTorch's own kernel, step for step in Python, on the host),
    unless they hold more than ``budget`` elements in all."""
    n = a.shape[dim]
    if int(which.sum()) * n > budget:
        return index
    lines = to_host(xp.moveaxis(a, dim, -1).reshape(-1, n))  # (lines, n)
    chosen = to_host(xp.moveaxis(index, dim, -1))  # (.., 1)
    flat = chosen.reshape(-1).copy()  # (lines,)
    for line in xp.flatnonzero(to_host(xp.moveaxis(which, dim, -1))):
        flat[line] = pick(lines[line].tolist())
    return xp.moveaxis(on_device_of(flat.reshape(chosen.shape), a), -1, dim)


def quick_select(values: list, k: int) -> int:
    """The original position of the k-th (from 0) smallest of values, NaN largest, by
    PyTorch's CPU quickselect (Sedgewick's partition, median of three), step for step."""
    arr, idx = list(values), list(range(len(values)))

    def gt(x: Any, y: Any) -> bool:
        return (x != x and y == y) or x > y

    def swap(i: int, j: int) -> None:
        arr[i], arr[j], idx[i], idx[j] = arr[j], arr[i], idx[j], idx[i]

    lo, hi = 0, len(arr) - 1
    while hi > lo:
        if hi == lo + 1:
            if gt(arr[lo], arr[hi]):
                swap(lo, hi)
            break
        swap((lo + hi) >> 1, lo + 1)
        if gt(arr[lo + 1], arr[hi]):
            swap(lo + 1, hi)
        if gt(arr[lo], arr[hi]):
            swap(lo, hi)
        if gt(arr[lo + 1], arr[lo]):
            swap(lo + 1, lo)
        i, j, pivot = lo + 1, hi, arr[lo]
        while True:
            i += 1
            while gt(pivot, arr[i]):
                i += 1
            j -= 1
            while gt(arr[j], pivot):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return idx[k]


def mode_index(a: Any, dim: int) -> tuple[Any, Any]:
    """The index of each line's most frequent value along dim and, where found with it, its
    value (else None), both keepdim-shaped, as PyTorch's CPU kernel: of equally frequent
    values the smallest, at the last place std::sort leaves it. That is the last place it
    holds where std::sort keeps equal values in order (a line of at most 16, without NaN);
    other lines with ties or NaN take std::sort itself."""
    lines = a.swapaxes(dim, -1)  # (.., n)
    n = lines.shape[-1]
    s = lines.copy()  # (.., n), sorted in place: xp.sort's copy and sort without its wrapper
    s.sort(axis=-1)
    rises = xp.count_nonzero(s[..., 1:] > s[..., :-1])  # a NaN, sorted last, compares false
    if rises == s.size - s.size // n:  # every line rises strictly: no value twice, no NaN,
        # each line's mode is its smallest, at its one place
        return kept(lines.argmin(axis=-1), dim), kept(s[..., 0], dim)
    order = lines.argsort(axis=-1, kind="stable")  # lines_last's order
    s = s.reshape(-1, n)  # (lines, n)
    ends = xp.empty(s.shape, dtype=bool, like=s)  # the last of each run of equal values
    xp.not_equal(s[:, 1:], s[:, :-1], out=ends[:, :-1])
    ends[:, -1] = True
    last = xp.flatnonzero(ends)  # every line ends a run: no run crosses two lines
    runs = xp.zeros(s.shape, dtype=last.dtype, like=s)
    lengths = last + 1  # each run's length, at its end
    lengths[1:] -= last[:-1] + 1
    runs.reshape(-1)[last] = lengths
    best = runs.argmax(axis=-1)  # the first longest run: the smallest value, at its end
    rows = xp.arange(s.shape[0], like=s)
    index = kept(order.reshape(-1, n)[rows, best].reshape(lines.shape[:-1]), dim)
    odd = xp.isnan(s[:, -1]) if is_floating(a.dtype) else xp.zeros(len(s), dtype=bool, like=s)
    if n > 16:
        odd |= ~ends.all(axis=-1)
    if odd.any():
        which = kept(odd.reshape(lines.shape[:-1]), dim)
        index = repicked(a, index, dim, which, std_sort_mode, SORT_BUDGET)
    return index, None


def std_sort_mode(values: list) -> int:
    """PyTorch's mode of one line, step for step: (value, position) pairs sorted by value by
    libstdc++'s std::sort (introsort, then insertion sort; NaN compares false), the first
    longest run of equal values, its last position."""
    pairs = [(v, i) for i, v in enumerate(values)]
    introsort(pairs)
    best, index, run = 0, 0, 0
    for k, (v, i) in enumerate(pairs):
        run += 1
        if k == len(pairs) - 1 or v != pairs[k + 1][0]:
            if run > best:
                best, index = run, i
            run = 0
    return index


def introsort(p: list) -> None:
    """libstdc++'s std::sort of pairs by their first (a < b), in place, as it moves them."""

    def less(x: Any, y: Any) -> bool:
        return x[0] < y[0]

    def loop(lo: int, hi: int, depth: int) -> bool:
        while hi - lo > 16:
            if depth == 0:
                return False  # heapsort's order of ties: not followed
            depth -= 1
            a, b, c = lo + 1, lo + (hi - lo) // 2, hi - 1  # the median of three to the front
            if less(p[a], p[b]):
                m = b if less(p[b], p[c]) else (c if less(p[a], p[c]) else a)
            else:
                m = a if less(p[a], p[c]) else (c if less(p[b], p[c]) else b)
            p[lo], p[m] = p[m], p[lo]
            i, j = lo + 1, hi
            while True:
                while i < hi - 1 and less(p[i], p[lo]):  # bounds C++ leaves to the data
                    i += 1
                j -= 1
                while j > lo and less(p[lo], p[j]):
                    j -= 1
                if i >= j:
                    break
                p[i], p[j] = p[j], p[i]
                i += 1
            if not loop(i, hi, depth):
                return False
            hi = i
        return True

    def insert(i: int, guarded: bool) -> None:
        v = p[i]
        if guarded and less(v, p[0]):
            p[1 : i + 1] = p[0:i]
            p[0] = v
            return
        while i > 0 and less(v, p[i - 1]):
            p[i] = p[i - 1]
            i -= 1
        p[i] = v

    if not loop(0, len(p), 2 * (len(p).bit_length() - 1)):
        p.sort(key=lambda x: x[0])
        return
    for i in range(1, min(len(p), 16)):
        insert(i, True)
    for i in range(16, len(p)):
        insert(i, False)


def running_index(a: Any, out: Any, dim: int) -> Any:
    """The index along dim of each running max (or min) ``out`` of a: the last position so
    far holding that value (or, once a NaN is met, the last NaN), as PyTorch's cummax."""
    hit = a == out
    if is_floating(a.dtype):
        hit |= xp.isnan(a)
    positions = _positions(a.shape[dim], a.ndim - dim - 1)
    if type(a) is not array.host.ndarray:
        positions = array.from_host(positions, a)
    return xp.maximum.accumulate(hit * positions, axis=dim)  # 0 where it misses


@functools.lru_cache(maxsize=64)
def _positions(n: int, after: int) -> Any:
    """0 .. n - 1 along a dim with ``after`` dims after it, (n, 1, ..., 1), read-only: made
    once for each, shared by the calls."""
    positions = array.host.arange(n).reshape((-1,) + (1,) * after)
    positions.flags.writeable = False
    return positions


def lower_median(a: Any, ignore_nan: bool) -> Any:
    """The median of every element (the lower middle value), as a 0-d array: NaN where a
    NaN is (median) or all are (nanmedian)."""
    flat = a.reshape(-1)
    if is_floating(a.dtype):
        nans = xp.isnan(flat)
        if nans.any():
            if not ignore_nan or nans.all():
                return on_device_of(math.nan, a, a.dtype)
            flat = flat[~nans]
    if not flat.size:  # no elements: NaN, as PyTorch
        return on_device_of(math.nan, a, a.dtype)
    k = (flat.size - 1) // 2
    return xp.partition(flat, k)[k : k + 1].reshape(())  # a 0-d array, not a NumPy scalar
