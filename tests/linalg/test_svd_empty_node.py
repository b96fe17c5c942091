"""The SVD of matrices with no elements: PyTorch's factors (identities where full) and its
node, LinalgSvdBackward0, on U, S, Vh and svdvals, with a gradient of A's shape; and the
factors that node keeps, full where full_matrices, as PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr


@pytest.mark.parametrize("shape", [(0, 3, 5), (3, 0), (0, 3), (2, 0, 0), (5, 0)], ids=str)
@pytest.mark.parametrize("full", [True, False])
def test_empty_svd_is_torchs_with_its_node(shape: tuple[int, ...], full: bool) -> None:
    found = []
    for lib in (torch, cr):
        A = lib.zeros(shape, dtype=lib.float64, requires_grad=True)
        U, S, Vh = lib.linalg.svd(A, full_matrices=full)
        values = lib.linalg.svdvals(A)
        (U.sum() + S.sum() + Vh.sum() + values.sum()).backward()
        names = {t.grad_fn.name() for t in (U, S, Vh, values)}
        found.append(([t.detach().numpy() for t in (U, S, Vh)], names, tuple(A.grad.shape)))
    (want, want_names, want_grad), (got, got_names, got_grad) = found
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    assert got_names == want_names == {"LinalgSvdBackward0"}
    assert got_grad == want_grad == shape


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 4, 3), (0, 3, 5), (5, 0)], ids=str)
@pytest.mark.parametrize("full", [True, False])
def test_svd_node_saves_torchs_factors(shape: tuple[int, ...], full: bool) -> None:
    """The node keeps the factors as found (full where full_matrices), as PyTorch's saves."""
    found = []
    for lib in (torch, cr):
        A = lib.tensor(np.random.default_rng(0).standard_normal(shape), requires_grad=True)
        U, S, _ = lib.linalg.svd(A, full_matrices=full)
        f = U.grad_fn
        found.append({k: tuple(getattr(f, k).shape) for k in ("_saved_U", "_saved_S", "_saved_Vh")})
        (U[..., :, : min(shape[-2:])].abs().sum() + S.sum()).backward()
        found.append(A.grad.numpy())
    assert found[0] == found[2]
    np.testing.assert_allclose(found[3], found[1], rtol=1e-9, atol=1e-12)
