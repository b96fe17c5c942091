"""linalg.matrix_exp of a batch whose matrices need different Taylor degrees (ops/decompositions.py
matrix_exp_taylor): each as PyTorch computes it alone, NaN for a NaN matrix."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr

# 1-norms of 4x4 matrices spread across every degree's theta, float32's and float64's
SCALES = [1e-17, 1e-9, 1e-6, 1e-4, 1e-2, 0.05, 0.2, 0.5, 1.0, 2.0, 6.0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_batch_of_every_degree_matches_each_matrix_alone_and_torch(dtype: type) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((len(SCALES), 2, 4, 4))  # (11, 2, 4, 4)
    x = (x / np.abs(x).sum(-2).max(-1)[..., None, None]) * np.array(SCALES)[:, None, None, None]
    x = x.astype(dtype)
    got = cr.linalg.matrix_exp(cr.tensor(x)).numpy()
    want = torch.linalg.matrix_exp(torch.tensor(x)).numpy()
    tol = 2e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())
    for i in range(len(SCALES)):  # a batch gives what each of its matrices gives alone
        np.testing.assert_array_equal(got[i, 1], cr.linalg.matrix_exp(cr.tensor(x[i, 1])).numpy())


def test_a_nan_matrix_gives_nan_beside_finite_ones() -> None:
    x = np.stack([np.full((2, 2), np.nan), np.eye(2), np.full((2, 2), np.inf)])  # (3, 2, 2)
    got = cr.linalg.matrix_exp(cr.tensor(x)).numpy()
    assert np.isnan(got[0]).all() and not np.isfinite(got[2]).all()
    np.testing.assert_allclose(got[1], np.diag([np.e, np.e]), rtol=1e-15)


def test_the_gradient_of_a_batch_matches_torch() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 3, 3)) * np.array([1e-3, 0.3, 4.0])[:, None, None]
    ours, theirs = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    v = rng.standard_normal((3, 3, 3))
    (g,) = cr.grad(cr.linalg.matrix_exp(ours), ours, cr.tensor(v))
    (tg,) = torch.autograd.grad(torch.linalg.matrix_exp(theirs), theirs, torch.tensor(v))
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-12, atol=1e-12)
