"""The SVD of matrices with no elements: PyTorch's factors (identities where full) and its
node, LinalgSvdBackward0, on U, S, Vh and svdvals, with a gradient of A's shape."""

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
