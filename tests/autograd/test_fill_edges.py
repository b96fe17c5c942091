"""zero_'s and fill_'s nodes have PyTorch's edges: the written tensor's (and fill_'s 0-d
tensor value's), never the mask of the where that stands for them; and a write through a view
shows PyTorch's CopySlices edges: the base's, then the write's other inputs'. A reshape shows
PyTorch's nodes: a clone below one that copies, a _reshape_alias for one that views a tensor
out of row-major order."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import chainrule as cr


def _edges(fn: Any, depth: int = 4) -> Any:
    """The graph below fn as nested (name, output number, edges), depth levels deep."""
    if fn is None or depth == 0:
        return None if fn is None else type(fn).__name__
    return (type(fn).__name__, [(_edges(g, depth - 1), i) for g, i in fn.next_functions])


WRITES = {
    "zero_": lambda lib, y, v: y.zero_(),
    "fill_": lambda lib, y, v: y.fill_(2.0),
    "fill_ of a tensor": lambda lib, y, v: y.fill_(lib.tensor(2.0)),
    "fill_ of a tensor that requires grad": lambda lib, y, v: y.fill_(v),
    "zero_ of a view": lambda lib, y, v: y[0].zero_(),
    "fill_ of a view": lambda lib, y, v: y[1:].fill_(v),
    "mul_ of a view": lambda lib, y, v: y[0].mul_(2),
    "add_ of a view": lambda lib, y, v: y[:, 1].add_(y[:, 0].detach() * v),
}


@pytest.mark.parametrize("name", list(WRITES))
def test_the_writes_edges_are_torchs(name: str) -> None:
    got = []
    for lib in (cr, torch):
        x = lib.ones(3, 4, requires_grad=True)
        v = lib.tensor(3.0, requires_grad=True)
        y = x * 2
        WRITES[name](lib, y, v)
        got.append(_edges(y.grad_fn))
    assert got[0] == got[1]


RESHAPES = {
    "a copying reshape": lambda lib, x: x.t().reshape(12),
    "a copying flatten": lambda lib, x: x.t().flatten(),
    "a viewing reshape": lambda lib, x: x.reshape(2, 6),
    "a viewing reshape of a transpose": lambda lib, x: x.t().reshape(4, 3),
    "a view of a transpose": lambda lib, x: x.t().view(4, 3),
    "a viewing flatten of a slice": lambda lib, x: x[:, 1:3].flatten(),
    "tensordot": lambda lib, x: lib.tensordot(
        lib.ones(2, 3, 4, requires_grad=True), lib.ones(4, 3, 5) * x[0, 0], ([1, 2], [1, 0])
    ),
}


@pytest.mark.parametrize("name", list(RESHAPES))
def test_a_reshape_that_copies_shows_torchs_clone_below_it(name: str) -> None:
    """PyTorch's copying reshape is an unsafe view of a clone: chainrule's one node shows a
    CloneBackward0 between it and its input, the same node before and after backward; its
    reshape that views a tensor out of row-major order is a _reshape_alias."""
    got = []
    for lib in (cr, torch):
        x = lib.ones(3, 4, requires_grad=True)
        y = RESHAPES[name](lib, x * 2)
        before = _edges(y.grad_fn)
        y.sum().backward()
        assert _edges(y.grad_fn) == before
        got.append(before)
    assert got[0] == got[1]
