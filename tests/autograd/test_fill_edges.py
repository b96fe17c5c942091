"""zero_'s and fill_'s nodes have PyTorch's edges: the written tensor's (and fill_'s 0-d
tensor value's), never the mask of the where that stands for them; and a write through a view
shows PyTorch's CopySlices edges: the base's, then the write's other inputs'."""

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
