"""logdet and slogdet where nothing is recorded (no grad needed, or grad mode off) give
slogdet's arrays as they are: values, NaN for a negative determinant, -inf for a singular
matrix, dtypes and shapes against PyTorch's, and no node."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr


def _matrices(dtype: Any) -> np.ndarray:
    """(4, 3, 3): a positive determinant, a negative one, a singular matrix, a diagonal one."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 3, 3)) + 3 * np.eye(3)
    a[1, 0] *= -1  # det < 0
    a[2, 1] = 0  # singular: a row of zeros
    a[3] = np.diag([2.0, 0.5, 3.0])
    return a.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("grad", [False, True])
def test_logdet_and_slogdet_untracked_agree_with_pytorch(
    dtype: Any, batched: bool, grad: bool
) -> None:
    a = _matrices(dtype)
    a = a if batched else a[1]
    x, tx = cr.tensor(a, requires_grad=grad), torch.tensor(a, requires_grad=grad)
    with cr.no_grad(), torch.no_grad():
        got = [cr.logdet(x), *cr.linalg.slogdet(x)]
        want = [torch.logdet(tx), *torch.linalg.slogdet(tx)]
    for g, w in zip(got, want, strict=True):
        assert g.grad_fn is None and not g.requires_grad
        assert str(g.dtype)[-7:] == str(w.dtype)[-7:] and tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)
    if batched:
        assert np.isnan(got[0].numpy()[1]) and got[0].numpy()[2] == -np.inf


def test_logdet_of_a_tensor_needing_no_grad_has_no_node() -> None:
    out = cr.logdet(cr.tensor(_matrices(np.float64)[0]))
    assert out.grad_fn is None
    np.testing.assert_allclose(out.item(), np.log(np.linalg.det(_matrices(np.float64)[0])))
