"""The reference backward (autograd/reference.py, what a learner reads first) and the real
engine give the same gradients on every differentiable row of the op catalog, so the short
version can never drift from what runs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import reference
from tests.ops import test_ops as catalog


def _gradients(row: Any, dtype: Any, run: Any) -> list[Any]:
    """The leaves' gradients after ``run(loss)``, the loss a random weighting of the row's
    outputs (never a plain sum, which hides a rule that mixes up its positions)."""
    ours, _ = catalog._inputs(row, dtype)
    outs = [o for o in catalog._outs(row.fn(cr, *ours)) if o.requires_grad]
    weights, _ = catalog._upstream(outs)
    loss = sum((o * w).sum() for o, w in zip(outs, weights, strict=True))
    run(loss)
    return [x.grad for x in ours if isinstance(x, cr.Tensor)]


def _engine(loss: Any) -> None:
    with cr.autograd.fastpath.disabled():
        loss.backward()


def _reference(loss: Any) -> None:
    """The reference walk, with the ops' own rules on their plain lines as the engine's are
    (a rule may hold a speed trick at its line, behind the switch)."""
    with cr.autograd.fastpath.disabled():
        reference.backward(loss)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("row", catalog.GRAD_ROWS, ids=[r.name for r in catalog.GRAD_ROWS])
def test_reference_backward_equals_the_engine(row: Any, dtype: Any) -> None:
    expected = _gradients(row, dtype, _engine)
    got = _gradients(row, dtype, _reference)
    assert len(got) == len(expected) > 0
    for g, e in zip(got, expected, strict=True):
        assert (g is None) == (e is None)
        if e is not None:  # the same rules in the same order: the same bits
            assert g.shape == e.shape and g.dtype == e.dtype
            np.testing.assert_array_equal(g.numpy(), e.numpy())


def test_reference_backward_accumulates_a_reused_node_and_a_broadcast() -> None:
    x = cr.tensor([[1.0, 2.0, 3.0]], requires_grad=True)  # (1, 3), broadcast to (2, 3)
    b = cr.tensor([[1.0], [2.0]], requires_grad=True)  # (2, 1)
    reference.backward((x * x + b).sum())
    np.testing.assert_array_equal(x.grad.numpy(), [[4.0, 8.0, 12.0]])  # 2 rows of 2x
    np.testing.assert_array_equal(b.grad.numpy(), [[3.0], [3.0]])
    reference.backward((x * b).sum())  # accumulates into .grad, never assigns
    np.testing.assert_array_equal(x.grad.numpy(), [[7.0, 11.0, 15.0]])


def test_reference_toposort_has_no_recursion_limit() -> None:
    x = cr.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(5000):
        y = y * 1.0
    reference.backward(y)
    assert x.grad.item() == 1.0
