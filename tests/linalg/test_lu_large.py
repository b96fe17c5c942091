"""linalg.lu of matrices past the size whose triangle masks are kept (tril and triu each call,
the permutation put as ones in zeros): P, L, U and the gradient against PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr


@pytest.mark.parametrize("shape", [(300, 300), (400, 200), (200, 400), (2, 260, 260)], ids=str)
def test_lu_of_a_large_matrix_is_torchs(shape: tuple[int, ...]) -> None:
    a = np.random.default_rng(0).standard_normal(shape)
    found = []
    for lib in (torch, cr):
        A = lib.tensor(a, requires_grad=True)
        P, L, U = lib.linalg.lu(A)
        (L.sum() + 2 * U.sum()).backward()
        found.append([P.numpy(), L.detach().numpy(), U.detach().numpy(), A.grad.numpy()])
    for got, want in zip(found[1], found[0], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
