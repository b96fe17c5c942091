"""Tensors that share memory in a saved object: which of them to write as views into the
memory of another (save), and those views made again in the loaded arrays (load). PyTorch
keeps one storage for a tensor and its views, so its files hold their bytes once; so do
serialization.py's."""

from __future__ import annotations

import math
from typing import Any

from . import array
from .tensor import Tensor

xp = array.host  # files are read into host memory


def views_of_others(obj: Any) -> dict[int, tuple[Tensor, int]]:
    """The tensors in obj whose memory lies inside another's that is written whole, by id:
    that other tensor (C-contiguous, of the same dtype) and the offset of their first element
    in it, in elements. PyTorch keeps one storage for a tensor and its views; so does the
    file. Per array that owns memory, the tensor spanning most of it covers the others."""
    found: list[Tensor] = []
    todo, seen = [obj], set()
    while todo:  # every tensor in obj (save's own walk checks the nesting)
        x = todo.pop()
        if isinstance(x, Tensor) and x._array.size:
            found.append(x)
        elif isinstance(x, (dict, list, tuple)) and id(x) not in seen:
            seen.add(id(x))
            todo.extend(x.values() if isinstance(x, dict) else x)
    groups: dict[int, list[Tensor]] = {}
    for t in found:
        root = t._array
        while isinstance(root.base, type(t._array)):
            root = root.base
        groups.setdefault(id(root), []).append(t)
    views: dict[int, tuple[Tensor, int]] = {}
    for members in groups.values():
        covers = [t for t in members if t._array.flags.c_contiguous]
        if len(members) < 2 or not covers:
            continue
        cover = max(covers, key=lambda c: c._array.nbytes)
        c = cover._array
        start, end = array.data_ptr(c), array.data_ptr(c) + c.nbytes
        for t in members:
            a = t._array
            lo, hi = _span(a)
            same = (array.data_ptr(a), a.shape, a.strides) == (start, c.shape, c.strides)
            gap = array.data_ptr(a) - start
            if (
                not same  # the same memory as the cover: its "memory" alias
                and a.dtype == c.dtype
                and start <= lo
                and hi <= end
                and gap % a.itemsize == 0
                and all(s % a.itemsize == 0 for s in a.strides)
            ):
                views[id(t)] = (cover, gap // a.itemsize)
    return views


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
    if not all(type(n) is int for n in numbers) or len(shape) != len(steps) or min(shape) < 0:
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
