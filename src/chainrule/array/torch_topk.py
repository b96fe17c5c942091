"""PyTorch's bits: the order PyTorch 2.13's CPU ``topk`` gives among tied keys.

``multinomial`` without replacement takes the top n of ``p / q``; where keys tie (weights of 0
among them), PyTorch's order is that of libstdc++'s ``partial_sort`` or ``nth_element`` then
``sort`` over (key, index) pairs compared by key alone. This module replays those algorithms
step by step (``array/torch_streams.py`` draws the keys)."""

from __future__ import annotations

import numpy as np


def topk_indices(keys: np.ndarray, k: int) -> np.ndarray:
    """The indices of the k largest keys, largest first, as PyTorch's CPU ``topk`` gives
    them: NumPy's order where the keys differ, and where some tie, libstdc++'s
    ``partial_sort`` (k * 64 <= n) or ``nth_element`` then ``sort`` of the first k - 1 over
    (key, index) pairs compared by key alone, replayed step by step."""
    order = np.argsort(-keys, kind="stable")[:k]
    chosen = keys[order]
    boundary = keys[np.argsort(-keys, kind="stable")[k]] if k < len(keys) else None
    tied = len(np.unique(chosen)) < k or (boundary is not None and boundary == chosen[-1])
    if not tied:
        return order
    a = list(zip(keys.tolist(), range(len(keys)), strict=True))
    if k * 64 <= len(a):
        _heap_select(a, 0, k, len(a))
        _sort_heap(a, 0, k)
    else:
        _introselect(a, 0, k - 1, len(a), 2 * (len(a).bit_length() - 1))
        if k - 1 > 0:
            _introsort_loop(a, 0, k - 1, 2 * ((k - 1).bit_length() - 1))
            _final_insertion_sort(a, 0, k - 1)
    return np.array([i for _, i in a[:k]], np.int64)


def _gt(x: tuple, y: tuple) -> bool:
    return x[0] > y[0]


def _swap(a: list, i: int, j: int) -> None:
    a[i], a[j] = a[j], a[i]


def _introselect(a: list, first: int, nth: int, last: int, depth: int) -> None:
    while last - first > 3:
        if depth == 0:
            _heap_select(a, first, nth + 1, last)
            _swap(a, first, nth)
            return
        depth -= 1
        cut = _partition_pivot(a, first, last)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(a, first, last)


def _partition_pivot(a: list, first: int, last: int) -> int:
    mid = first + (last - first) // 2
    x, y, z = first + 1, mid, last - 1
    if _gt(a[x], a[y]):
        if _gt(a[y], a[z]):
            _swap(a, first, y)
        elif _gt(a[x], a[z]):
            _swap(a, first, z)
        else:
            _swap(a, first, x)
    elif _gt(a[x], a[z]):
        _swap(a, first, x)
    elif _gt(a[y], a[z]):
        _swap(a, first, z)
    else:
        _swap(a, first, y)
    lo, hi, pivot = first + 1, last, a[first]
    while True:
        while _gt(a[lo], pivot):
            lo += 1
        hi -= 1
        while _gt(pivot, a[hi]):
            hi -= 1
        if not lo < hi:
            return lo
        _swap(a, lo, hi)
        lo += 1


def _insertion_sort(a: list, first: int, last: int) -> None:
    for i in range(first + 1, last):
        val = a[i]
        if _gt(val, a[first]):
            a[first + 1 : i + 1] = a[first:i]
            a[first] = val
        else:
            _linear_insert(a, i)


def _linear_insert(a: list, last: int) -> None:
    val = a[last]
    prev = last - 1
    while _gt(val, a[prev]):
        a[last] = a[prev]
        last, prev = prev, prev - 1
    a[last] = val


def _introsort_loop(a: list, first: int, last: int, depth: int) -> None:
    while last - first > 16:
        if depth == 0:
            _heap_select(a, first, last, last)
            _sort_heap(a, first, last)
            return
        depth -= 1
        cut = _partition_pivot(a, first, last)
        _introsort_loop(a, cut, last, depth)
        last = cut


def _final_insertion_sort(a: list, first: int, last: int) -> None:
    if last - first > 16:
        _insertion_sort(a, first, first + 16)
        for i in range(first + 16, last):
            _linear_insert(a, i)
    else:
        _insertion_sort(a, first, last)


def _push_heap(a: list, first: int, hole: int, top: int, value: tuple) -> None:
    parent = (hole - 1) // 2
    while hole > top and _gt(a[first + parent], value):
        a[first + hole] = a[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    a[first + hole] = value


def _adjust_heap(a: list, first: int, hole: int, length: int, value: tuple) -> None:
    top, child = hole, hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if _gt(a[first + child], a[first + child - 1]):
            child -= 1
        a[first + hole] = a[first + child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        a[first + hole] = a[first + child - 1]
        hole = child - 1
    _push_heap(a, first, hole, top, value)


def _heap_select(a: list, first: int, middle: int, last: int) -> None:
    length = middle - first
    if length > 1:
        for parent in range((length - 2) // 2, -1, -1):
            _adjust_heap(a, first, parent, length, a[first + parent])
    for i in range(middle, last):
        if _gt(a[i], a[first]):
            value = a[i]
            a[i] = a[first]
            _adjust_heap(a, first, 0, length, value)


def _sort_heap(a: list, first: int, last: int) -> None:
    while last - first > 1:
        last -= 1
        value = a[last]
        a[last] = a[first]
        _adjust_heap(a, first, 0, last - first, value)
