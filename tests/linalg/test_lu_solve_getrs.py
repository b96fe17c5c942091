"""linalg.lu_solve as one op, LAPACK's getrs, its node PyTorch's LinalgLuSolveBackward0: every
(left, adjoint), broadcast batches and empty shapes, values, first and second derivatives
and saved values against PyTorch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr

SHAPES = [((3, 3), (3, 2)), ((2, 4, 4), (4, 3)), ((1, 3, 3), (2, 3, 5)), ((3, 3), (0, 3, 2))]


def _run(lib: Any, lu_shape: tuple, b_shape: tuple, left: bool, adjoint: bool) -> list[Any]:
    rng = np.random.default_rng(0)
    a = rng.standard_normal(lu_shape) + 3 * np.eye(lu_shape[-1])
    if not left:
        b_shape = (*b_shape[:-2], b_shape[-1], b_shape[-2])
    A = lib.tensor(a, requires_grad=True)
    B = lib.tensor(rng.standard_normal(b_shape), requires_grad=True)
    X = lib.linalg.lu_solve(*lib.linalg.lu_factor(A), B, left=left, adjoint=adjoint)
    f = X.grad_fn
    saved = (f._saved_left, f._saved_adjoint, tuple(f._saved_pivots.shape), f.name())
    up = lib.tensor(np.random.default_rng(1).standard_normal(tuple(X.shape)))
    gA, gB = lib.autograd.grad((X * up).sum(), (A, B), create_graph=True)
    hA, hB = lib.autograd.grad((gA * gA).sum() + (gB * gB).sum(), (A, B), retain_graph=True)
    first = lib.autograd.grad((X * up).sum(), (A, B))  # first order alone: the array rule
    values = [X, gA, gB, hA, hB, *first]
    return [*(t.detach().numpy() for t in values), saved]


@pytest.mark.parametrize(("lu_shape", "b_shape"), SHAPES, ids=str)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve_agrees_with_pytorch(
    lu_shape: tuple, b_shape: tuple, left: bool, adjoint: bool
) -> None:
    *ours, ours_saved = _run(cr, lu_shape, b_shape, left, adjoint)
    *theirs, theirs_saved = _run(torch, lu_shape, b_shape, left, adjoint)
    for got, want in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10)
    assert ours_saved == theirs_saved
    assert ours_saved[-1] == "LinalgLuSolveBackward0"


def test_lu_solve_in_float32_agrees_with_pytorch() -> None:
    rng = np.random.default_rng(2)
    a = (rng.standard_normal((5, 5)) + 3 * np.eye(5)).astype(np.float32)
    b = rng.standard_normal((5, 2)).astype(np.float32)
    got = cr.linalg.lu_solve(*cr.linalg.lu_factor(cr.tensor(a)), cr.tensor(b))
    want = torch.linalg.lu_solve(*torch.linalg.lu_factor(torch.tensor(a)), torch.tensor(b))
    assert got.dtype == cr.float32
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
