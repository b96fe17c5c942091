"""Tensors that share memory in a saved object: which of them to write as views into the
memory of another (save), and those views made again in the loaded arrays (load). PyTorch
keeps one storage for a tensor and its views, so its files hold their bytes once; so do
serialization's."""

from __future__ import annotations

import math
import sys
from typing import Any

from .. import array
from ..sparse import SparseTensor
from ..tensor import Tensor

xp = array.host  # files are read into host memory


def views_of_others(obj: Any) -> dict[int, tuple[Tensor, int]]:
    """The tensors in obj whose memory lies inside another's that is written whole, by id:
    that other tensor (C-contiguous, of the same dtype) and the offset of their first element
    in it, in elements. PyTorch keeps one storage for a tensor and its views, and writes it
    once; so does the file. Per array that owns memory and per dtype, a saved C-contiguous
    tensor spanning all the others covers them; when none does, a 1-D tensor of their whole
    span, which obj does not hold, covers them (save writes it beside them)."""
    found: list[Tensor] = []
    todo, seen = [obj], set()
    while todo:  # every tensor in obj (save's own walk checks the nesting)
        x = todo.pop()
        if isinstance(x, SparseTensor):  # saved as its indices and values
            todo.extend((x._indices(), x._values()))
        elif isinstance(x, Tensor) and x._array.size:
            found.append(x)
        elif isinstance(x, (dict, list, tuple)) and id(x) not in seen:
            seen.add(id(x))
            todo.extend(x.values() if isinstance(x, dict) else x)
    groups: dict[tuple[int, str], list[Tensor]] = {}
    for t in found:
        root = t._array
        while isinstance(root.base, type(t._array)):
            root = root.base
        groups.setdefault((id(root), t._array.dtype.str), []).append(t)
    views: dict[int, tuple[Tensor, int]] = {}
    for members in groups.values():
        places = {(array.data_ptr(t._array), t._array.shape, t._array.strides) for t in members}
        if len(places) < 2:  # one tensor, or the same memory twice: no view to write
            continue
        lo = min(_span(t._array)[0] for t in members)
        hi = max(_span(t._array)[1] for t in members)
        whole = [t for t in members if t._array.flags.c_contiguous and _span(t._array) == (lo, hi)]
        cover = whole[0] if whole else _spanning(members, lo, hi)
        if cover is None:
            continue
        c = cover._array
        start = array.data_ptr(c)
        for t in members:
            a = t._array
            same = (array.data_ptr(a), a.shape, a.strides) == (start, c.shape, c.strides)
            gap = array.data_ptr(a) - start
            if (
                not same  # the same memory as the cover: its "memory" alias
                and gap % a.itemsize == 0
                and all(s % a.itemsize == 0 for s in a.strides)
            ):
                views[id(t)] = (cover, gap // a.itemsize)
    return views


def _spanning(members: list[Tensor], lo: int, hi: int) -> Tensor | None:
    """A 1-D tensor over the memory from ``lo`` to ``hi`` that the members' elements lie in
    (host arrays only; None where the span is not a whole number of elements)."""
    a = next(t._array for t in members if _span(t._array)[0] == lo)
    if not isinstance(a, xp.ndarray) or (hi - lo) % a.itemsize:
        return None
    first = a[
        tuple(
            slice(n - 1, n) if s < 0 else slice(0, 1)
            for s, n in zip(a.strides, a.shape, strict=True)
        )
    ]
    n = (hi - lo) // a.itemsize
    return Tensor._make(xp.lib.stride_tricks.as_strided(first, (n,), (a.itemsize,)))


def _span(a: Any) -> tuple[int, int]:
    """The addresses an array's elements occupy: from its lowest byte to past its highest."""
    ptr = array.data_ptr(a)
    low = sum(s * (n - 1) for s, n in zip(a.strides, a.shape, strict=True) if s < 0)
    high = sum(s * (n - 1) for s, n in zip(a.strides, a.shape, strict=True) if s > 0)
    return ptr + low, ptr + high + a.itemsize


def view_in(base: Any, entry: dict) -> Any:
    """The view a "view" entry names in the array ``base`` (as loaded), checked to lie inside
    it (a damaged file must not reach memory beyond it)."""
    offset, shape, steps = entry["offset"], entry["shape"], entry["stride"]
    numbers = [offset, *shape, *steps]
    if (
        not all(type(n) is int for n in numbers)
        or len(shape) != len(steps)
        or any(n < 0 for n in shape)  # a 0-d view has no sizes at all
        or len(shape) > 64  # NumPy's most dimensions, and its largest array:
        or math.prod(n for n in shape if n) * base.itemsize > sys.maxsize
    ):
        raise ValueError(f"view entry {entry!r}")
    flat = base.reshape(-1)
    low = offset + sum(s * (n - 1) for s, n in zip(steps, shape, strict=True) if s < 0)
    high = offset + sum(s * (n - 1) for s, n in zip(steps, shape, strict=True) if s > 0)
    if not math.prod(shape) or not 0 <= low <= high < flat.size:
        raise ValueError(f"view entry {entry!r} lies outside its tensor of {flat.size} elements")
    item = flat.itemsize
    return xp.lib.stride_tricks.as_strided(
        flat[offset:], tuple(shape), tuple(s * item for s in steps), writeable=True
    )
