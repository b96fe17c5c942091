"""Which shapes of B linalg.lstsq takes, as PyTorch's rule: B has A's dims or one fewer; it is
a vector (or a batch of them) where it is 1-D or of A's shape without its last dim, else a
matrix whose batch dims broadcast (one dim short: with its leading dims, rows among them); the
rank and singular values are of A's batch. Answers and refusals, values and gradients."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.testing import gradcheck
from tests.tolerances import LAYER, tol

ANSWERED = [
    ((2, 5, 3), (2, 5), None),  # a batch of vectors
    ((3, 2, 5, 3), (3, 2, 5), "gelsd"),
    ((5, 3), (5,), "gelss"),
    ((5, 5, 3), (5, 2), None),  # a matrix one dim short: its rows broadcast with A's batch
    ((1, 5, 3), (5, 2), "gelsd"),
    ((1, 5, 3), (2, 5, 2), "gelss"),  # rank and singular values of A's batch (1,)
    ((2, 5, 3), (1, 5, 2), None),
]
REFUSED = [
    ((2, 5, 3), (5, 2), "batch dims do not broadcast"),
    ((2, 5, 3), (1, 5), "the same number of rows"),  # not A's shape less a dim: a matrix
    ((1, 5, 3), (2, 5), "the same number of rows"),
    ((3, 2, 5, 3), (1, 2, 5), "the same number of rows"),
    ((2, 5, 3), (5,), "as many dims as A or one fewer"),
    ((5, 3), (2, 5, 1), "as many dims as A or one fewer"),
    ((5, 3), (4,), "the same number of rows"),
]


def _inputs(lib: Any, a_shape: tuple, b_shape: tuple) -> tuple[Any, Any]:
    rng = np.random.default_rng(3)
    A = lib.tensor(rng.standard_normal(a_shape), requires_grad=True)
    B = lib.tensor(rng.standard_normal(b_shape), requires_grad=True)
    return A, B


@pytest.mark.parametrize(("a_shape", "b_shape", "driver"), ANSWERED, ids=str)
def test_lstsq_answers_as_torch(a_shape: tuple, b_shape: tuple, driver: Any) -> None:
    outs, grads = [], []
    for lib in (torch, cr):
        A, B = _inputs(lib, a_shape, b_shape)
        result = lib.linalg.lstsq(A, B, driver=driver)
        g = np.random.default_rng(4).standard_normal(tuple(result.solution.shape))
        result.solution.backward(lib.tensor(g))
        outs.append([x.detach().numpy() for x in result])
        grads.append([A.grad.numpy(), B.grad.numpy()])
    for ours, theirs in zip(outs[1] + grads[1], outs[0] + grads[0], strict=True):
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, **tol(np.float64, LAYER))


@pytest.mark.parametrize(("a_shape", "b_shape", "why"), REFUSED, ids=str)
def test_lstsq_refuses_as_torch(a_shape: tuple, b_shape: tuple, why: str) -> None:
    with pytest.raises(RuntimeError):
        torch.linalg.lstsq(*_inputs(torch, a_shape, b_shape))
    with pytest.raises(ValueError) as refused:
        cr.linalg.lstsq(*_inputs(cr, a_shape, b_shape))
    message = str(refused.value)
    assert message.startswith("linalg.lstsq: ") and why in message
    assert message.endswith(f"; got shapes {a_shape} and {b_shape}")


def test_lstsq_of_a_matrix_one_dim_short_matches_finite_differences() -> None:
    A, B = _inputs(cr, (3, 3, 2), (3, 2))
    assert gradcheck(lambda a, b: cr.linalg.lstsq(a, b).solution, [A, B])
