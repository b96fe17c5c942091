"""softmax of a large array's rows without the shift by each row's max where that is safe
(fastpath/exps.py), with it where not (a NaN, an inf, large values, a row all -inf or far
below 0); softmax and log_softmax made without a node where none is recorded: values and
gradients against torch, in either mode."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.fastpath import exps
from tests.helpers import fast_path_on


def _scores(dtype: type = np.float32) -> np.ndarray:
    """(4, 64, 64) attention scores (16,384 elements), -inf above the diagonal (causal)."""
    x = np.random.default_rng(0).standard_normal((4, 64, 64)).astype(dtype) * 3
    x[:, np.triu(np.ones((64, 64), bool), 1)] = -np.inf
    return x


def _row_all_masked(x: np.ndarray) -> None:
    x[0, 5] = -np.inf


def _an_inf(x: np.ndarray) -> None:
    x[1, 3, 2] = np.inf


def _a_nan(x: np.ndarray) -> None:
    x[2, 7, 1] = np.nan


def _large(x: np.ndarray) -> None:
    x += 100


def _row_far_below(x: np.ndarray) -> None:
    x[3, 9] -= 200


EDITS: list[tuple[str, Callable[[np.ndarray], None], bool]] = [
    ("causal", lambda x: None, True),
    ("row_all_masked", _row_all_masked, False),
    ("an_inf", _an_inf, False),
    ("a_nan", _a_nan, False),
    ("large", _large, False),
    ("row_far_below", _row_far_below, False),
]


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("name", "edit", "unshifted"), EDITS, ids=[e[0] for e in EDITS])
def test_softmax_of_large_rows_matches_torch(
    name: str, edit: Callable, unshifted: bool, dtype: type, op: str
) -> None:
    """softmax's exps unshifted where it is safe, and only there; log_softmax's shift (the
    rows' max by fmax, which a NaN leaves out) as PyTorch's, a NaN's row all NaN."""
    x = _scores(dtype)
    edit(x)
    with fast_path_on():
        assert (exps.unshifted(x, 2) is not None) is unshifted
    ours, theirs = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    got, want = getattr(ours, op)(-1), getattr(theirs, op)(-1)
    torch.testing.assert_close(
        torch.from_numpy(got.detach().numpy()), want.detach(), equal_nan=True
    )
    g = np.random.default_rng(1).standard_normal(x.shape).astype(dtype)
    got.backward(cr.tensor(g))
    want.backward(torch.from_numpy(g))
    torch.testing.assert_close(torch.from_numpy(ours.grad.numpy()), theirs.grad, equal_nan=True)


def test_unshifted_exps_leave_other_dims_and_small_arrays_alone() -> None:
    x = _scores()
    with fast_path_on():
        assert exps.unshifted(x, 1) is None  # not the last dim
        assert exps.unshifted(x[:, :2, :8], 2) is None  # 64 elements
        assert exps.unshifted(np.ascontiguousarray(x.transpose(0, 2, 1)), 2) is not None
        assert exps.unshifted(x.transpose(0, 2, 1), 2) is None  # not C-ordered
    with cr.fastpath.disabled():
        assert exps.unshifted(x, 2) is None


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape", [(2, 3, 4), (3, 5), (5,), (), (0, 3), (64, 10)])
def test_softmax_family_without_a_node_matches_torch(op: str, shape: tuple) -> None:
    """No node recorded (an input that wants no gradient, or no_grad): the same values as
    torch's along every dim, and with a node, PyTorch's node."""
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    for dim in range(-max(len(shape), 1), max(len(shape), 1)):
        want = getattr(torch.from_numpy(x), op)(dim)
        got = getattr(cr.tensor(x), op)(dim)
        assert got.grad_fn is None and got.shape == tuple(want.shape)
        torch.testing.assert_close(torch.from_numpy(got.numpy()), want)
        with cr.no_grad():
            quiet = getattr(cr.tensor(x, requires_grad=True), op)(dim)
        assert quiet.grad_fn is None and not quiet.requires_grad
        torch.testing.assert_close(torch.from_numpy(quiet.numpy()), want)
    recorded = getattr(cr.tensor(x, requires_grad=True), op)(-1)
    assert type(recorded.grad_fn).__name__ == ("Softmax" if op == "softmax" else "LogSoftmax") + (
        "Backward0"
    )
