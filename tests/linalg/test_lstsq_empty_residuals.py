"""lstsq's empty residuals (no residuals: a square or wide A, or gelsy) come from a node of
PyTorch's name, LinalgLstsqBackward0, with its saved values, and pass no gradient, as
PyTorch's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr

CASES = [((3, 3), (3, 2), None), ((2, 5, 3), (2, 5, 2), "gelsy"), ((3, 3), (3,), None)]
CASES += [((2, 3), (2, 2), "gelsd"), ((2, 3, 3), (2, 3), "gelss")]


def _run(lib: Any, a_shape: tuple, b_shape: tuple, driver: Any) -> tuple:
    A = lib.tensor(np.random.default_rng(0).standard_normal(a_shape), requires_grad=True)
    B = lib.tensor(np.random.default_rng(1).standard_normal(b_shape), requires_grad=True)
    residuals = lib.linalg.lstsq(A, B, driver=driver).residuals
    f = residuals.grad_fn
    saved = {k: tuple(getattr(f, k).shape) for k in dir(f) if k.startswith("_saved_")}
    residuals.sum().backward()
    return tuple(residuals.shape), f.name(), saved, A.grad, B.grad


@pytest.mark.parametrize(("a_shape", "b_shape", "driver"), CASES, ids=str)
def test_empty_residuals_are_torchs(a_shape: tuple, b_shape: tuple, driver: Any) -> None:
    ours, theirs = _run(cr, a_shape, b_shape, driver), _run(torch, a_shape, b_shape, driver)
    assert ours == theirs
    assert ours[:2] == ((0,), "LinalgLstsqBackward0") and ours[3] is None


EMPTY_A = [((0, 3), (0, 2)), ((2, 0, 3), (2, 0, 1)), ((3, 0), (3, 2)), ((0, 0), (0, 1))]
EMPTY_A += [((0, 2, 2), (0, 2, 1))]


@pytest.mark.parametrize(("a_shape", "b_shape"), EMPTY_A, ids=str)
@pytest.mark.parametrize("driver", [None, "gelsd"])
def test_an_empty_a_solves_as_torchs(a_shape: tuple, b_shape: tuple, driver: Any) -> None:
    """An A without rows, columns or matrices: every output's shape and value, and the zero
    gradients, as PyTorch's (the batch was once reshaped by -1, which an empty A cannot say)."""
    got, want = [], []
    for lib, out in ((cr, got), (torch, want)):
        A = lib.zeros(a_shape, dtype=lib.float64, requires_grad=True)
        B = lib.zeros(b_shape, dtype=lib.float64, requires_grad=True)
        result = lib.linalg.lstsq(A, B, driver=driver)
        result.solution.sum().backward()
        out += [x.detach().numpy() for x in result] + [A.grad.numpy(), B.grad.numpy()]
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        np.testing.assert_array_equal(g, w)
