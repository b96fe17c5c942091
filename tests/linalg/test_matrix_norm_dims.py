"""linalg.matrix_norm over any two dims, keepdim or not: values, gradients and the last
node's name against PyTorch's (the sums' Amax or Amin, the Frobenius norm's vector norm,
the singular values' permute back)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import chainrule as cr

ORDS = ["fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf]
DIMS = [(0, 2), (2, 0), (-1, -2), (1, 0), (-2, -1)]


@pytest.mark.parametrize("ord", ORDS, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_matrix_norm_over_any_dims_is_torchs(ord: object, keepdim: bool) -> None:
    x = np.random.default_rng(0).standard_normal((3, 2, 4))
    for dim in DIMS:
        found = []
        for lib in (torch, cr):
            t = lib.tensor(x, requires_grad=True)
            y = lib.linalg.matrix_norm(t, ord, dim, keepdim)
            y.backward(lib.ones_like(y) * 2)
            found.append((y.detach().numpy(), t.grad.numpy(), y.grad_fn.name()))
        (want, want_grad, want_name), (got, got_grad, got_name) = found
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12)
        np.testing.assert_allclose(got_grad, want_grad, rtol=1e-10, atol=1e-12)
        assert got_name == want_name, (dim, got_name, want_name)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_frobenius_norm_recording_nothing_is_torchs(keepdim: bool, dtype: type) -> None:
    x = np.random.default_rng(1).standard_normal((3, 2, 4)).astype(dtype)
    for dim in DIMS:
        with torch.no_grad():
            want = torch.linalg.matrix_norm(torch.tensor(x), "fro", dim, keepdim)
        got = cr.linalg.matrix_norm(cr.tensor(x), "fro", dim, keepdim)
        assert got.grad_fn is None and got.shape == tuple(want.shape)
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_allclose(
            got.numpy(), want.numpy(), rtol=1e-3 if dtype == np.float16 else 1e-6
        )
    whole = cr.linalg.matrix_norm(cr.tensor(x[0]))  # a 0-d result of one matrix
    assert whole.shape == () and np.isclose(
        whole.item(), np.linalg.norm(x[0].astype(np.float64)), rtol=1e-3
    )
