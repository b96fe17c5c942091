"""linalg.lu_solve against PyTorch's for a factor with row swaps and one without (P = I,
where no rows are moved), on each side and adjoint, values and gradients."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.tolerances import tol

_RNG = np.random.default_rng(0)
_SWAPS = _RNG.standard_normal((2, 4, 4))
_NONE = _SWAPS + 8 * np.eye(4)  # diagonally dominant: getrf swaps no rows
_B = _RNG.standard_normal((2, 4, 3))
_G = _RNG.standard_normal((2, 4, 3))


@pytest.mark.parametrize(
    ("a", "left", "adjoint"),
    [
        (a, left, adj)
        for a, (left, adj) in itertools.product(
            (_SWAPS, _NONE), [(True, False), (True, True), (False, False), (False, True)]
        )
    ],
    ids=[
        f"{s}-{l}-{j}"
        for s, (l, j) in itertools.product(
            ("swaps", "no_swaps"),
            [("left", "plain"), ("left", "adjoint"), ("right", "plain"), ("right", "adjoint")],
        )
    ],
)
def test_lu_solve_agrees_with_or_without_row_swaps(
    a: np.ndarray, left: bool, adjoint: bool
) -> None:
    b = _B if left else _B.swapaxes(-1, -2)
    g = _G if left else _G.swapaxes(-1, -2)
    results = []
    for m in (cr, torch):
        A, B = m.tensor(a, requires_grad=True), m.tensor(b, requires_grad=True)
        LU, piv = m.linalg.lu_factor(A)
        X = m.linalg.lu_solve(LU, piv, B, left=left, adjoint=adjoint)
        (X * m.tensor(g)).sum().backward()
        results.append((X.detach().numpy(), A.grad.numpy(), B.grad.numpy(), piv.numpy()))
    ours, theirs = results
    np.testing.assert_array_equal(ours[3], theirs[3])
    for o, t in zip(ours[:3], theirs[:3], strict=True):
        np.testing.assert_allclose(o, t, **tol("float64"))
