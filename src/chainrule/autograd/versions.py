"""Version counters and views: how many times a tensor's array was written in place (a node
compares the count it saw with the count in backward), the box a tensor shares with its views,
and the process's count of writes that lets an untouched graph skip the comparison."""

from __future__ import annotations

import weakref
from typing import Any

from .. import array
from ..array.tensor_type import tensor_type


def version(t: Any) -> int:
    """How many times ``t``'s array was written in place through ``t`` or a tensor sharing
    its counter (a view, ``detach``; not ``.data``, which counts its own writes)."""
    vc = t._vc
    return 0 if vc is None else vc[0]


def versions(inputs: tuple[Any, ...]) -> tuple[int | None, ...]:
    """Each input Tensor's version (None for a plain number), as a node records them."""
    T = tensor_type()
    out: list[int | None] = []  # a loop, not a comprehension: see Function.apply
    for x in inputs:
        if isinstance(x, T):
            vc = x._vc
            out.append(0 if vc is None else vc[0])
        else:
            out.append(None)
    return tuple(out)


def shares_memory(out: Any, of: Any) -> bool:
    """Whether the array an op made lies in its input's memory, a view of it. NumPy and CuPy
    give a view the array that owns the memory as its base, so identity answers the common
    cases (about 20 ns, where may_share_memory takes 200); any other base asks NumPy."""
    base = out.base
    if base is None:  # it owns its memory: a copy
        return False
    return base is of or base is of.base or bool(array.xp.may_share_memory(out, of))


def make_view(out: Any, of: Any) -> None:
    """Make ``out``, which shares ``of``'s array, a view of it: one version counter, and
    the base (``of``'s own base where it is a view). The counter's box also holds a weak
    reference to each view made of it, which a write that joins the graph re-points at the
    base's new node (tensor/views.py); dead ones are dropped as the box doubles in size."""
    box = counter(of)
    out._vc, out._base = box, of._base if of._base is not None else of
    if of._multi_output is not None:  # a view of one of split's outputs is one too
        out._multi_output = of._multi_output
    box.append(weakref.ref(out))
    n = len(box)
    if n > 64 and not n & (n - 1):
        box[1:] = [r for r in box[1:] if r() is not None]


class Counter(list):
    """A version counter's box: the count first, then weak references to the views made of
    the tensor (make_view). Pickled and copied as the count alone, the references having no
    meaning anywhere else (and a weak reference no pickled form)."""

    __slots__ = ()

    def __reduce__(self) -> tuple[type, tuple[list[int]]]:
        return Counter, ([self[0]],)


def counter(t: Any) -> list[Any]:
    """``t``'s version counter, a Counter that views of ``t`` share; made on first use, as
    most tensors are never written in place. The node that made ``t`` and saved it as its
    result (exp's) is given the counter, which its ``_saved_result`` reads (saved_read.py):
    here, not in every op's forward, as a result with no counter was never written."""
    vc = t._vc
    if vc is None:
        vc = t._vc = Counter([0])
        fn = t.grad_fn
        if fn is not None and fn.__dict__.get("saved_result") is t._array:
            fn.out_counter = vc
    return vc


# How many in-place writes this process has recorded, in every thread: a node stamped
# with the count when it was recorded, and finding it unchanged in backward, knows that
# nothing it saved was written since, and skips comparing its inputs' versions one by one
# (engine.unchanged). Any change of the count, in any thread, makes every node check.
writes = [0]


def bump(t: Any) -> None:
    """Record that ``t``'s array was written in place."""
    vc = t._vc  # read here, not through counter(t): every in-place write passes here
    if vc is None:
        vc = counter(t)
    vc[0] += 1
    writes[0] += 1
