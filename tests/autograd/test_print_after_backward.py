"""Whatever a user can print after backward prints, on every op of the catalog: the tensors,
their nodes, the nodes' names and edges (next_functions, down to the leaves) and metadata
are what they were before backward freed the graph, and the saved inputs say they were
freed, as PyTorch's do."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.autograd.test_graph_as_torch import walk
from tests.ops import test_ops as catalog

SAVED = ("_saved_self", "_saved_other")


def _shown(outs: list[Any]) -> list[Any]:
    """Everything printed of the outputs and their graphs."""
    shown = []
    for o in outs:
        shown += [repr(o), str(o), o.shape, o.grad_fn is not None]
        if o.grad_fn is not None:
            fn = o.grad_fn
            repr(fn)
            shown += [fn.name(), walk(fn), dict(fn.metadata)]
            shown += [[(type(e).__name__, i) for e, i in fn.next_functions]]
    return shown


def _saved_after_backward(fn: Any) -> None:
    for attr in SAVED:
        try:
            getattr(fn, attr)
        except RuntimeError as e:  # freed, as PyTorch says
            assert "freed" in str(e)
        except AttributeError:  # a node that saves no such input, as in PyTorch
            pass


@pytest.mark.parametrize("row", catalog.GRAD_ROWS, ids=[r.name for r in catalog.GRAD_ROWS])
def test_everything_prints_after_backward(row: Any) -> None:
    ours, _ = catalog._inputs(row, np.float64)
    outs = [o for o in catalog._outs(row.fn(cr, *ours)) if o.requires_grad]
    for k, o in enumerate(outs):
        if o.grad_fn is not None:
            o.grad_fn.metadata["output"] = k
    before = _shown(outs)
    weights, _ = catalog._upstream(outs)
    sum((o * w).sum() for o, w in zip(outs, weights, strict=True)).backward()
    assert _shown(outs) == before
    for o in outs:
        if o.grad_fn is not None:
            _saved_after_backward(o.grad_fn)
    for x in ours:
        if isinstance(x, cr.Tensor):
            repr(x), repr(x.grad)


def test_a_pow_prints_after_backward_as_torch() -> None:
    shown = []
    for lib in (cr, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x**2
        y.sum().backward()
        fn = y.grad_fn
        edges = [e.name() for e, _ in fn.next_functions if e is not None]
        with pytest.raises(RuntimeError, match="(?i)freed"):
            _ = fn._saved_self
        shown.append((str(y), fn.name(), edges))
    assert shown[0] == shown[1]
