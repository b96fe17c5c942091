"""linalg.lu and lu_factor as getrf leaves them: P made by LAPACK's own row swaps (laswp on
the identity) for one matrix and by the swaps' order for a batch, info as getrf reports it
(the first zero on U's diagonal), and lu_unpack refusing pivots no getrf could give."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.tolerances import OP, tol

SHAPES = [(1, 1), (8, 8), (5, 3), (3, 5), (2, 4, 4), (3, 2, 6, 4)]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_lu_of_a_small_matrix_is_torchs(shape: tuple[int, ...], dtype: str) -> None:
    a = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    P, L, U = cr.linalg.lu(cr.tensor(a))
    want = torch.linalg.lu(torch.tensor(a))
    np.testing.assert_array_equal(P.numpy(), want.P.numpy())  # no ties among the pivots
    assert P.dtype == getattr(cr, dtype) and P.is_contiguous()
    for got, theirs in ((L, want.L), (U, want.U)):
        np.testing.assert_allclose(got.numpy(), theirs.numpy(), **tol(dtype, OP))
    np.testing.assert_allclose((P @ L @ U).numpy(), a, **tol(dtype, OP))
    flipped = cr.linalg.lu(cr.tensor(a[..., ::-1, :].copy())).P  # the identity laswp copies
    again = cr.linalg.lu(cr.tensor(a)).P  # is I still
    np.testing.assert_array_equal(again.numpy(), want.P.numpy())
    np.testing.assert_array_equal(flipped.numpy(), torch.linalg.lu(torch.tensor(a).flip(-2)).P)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_lu_factor_ex_info_is_the_first_zero_pivot(dtype: str) -> None:
    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 5, 5))
    a[1, :, 2] = 0  # a zero column stays zero through the elimination: U[2, 2] = 0
    a[2, :, 3:] = 0  # zeros from column 3 on: the first is U[3, 3]
    a[3] = 0
    a = a.astype(dtype)
    ours = cr.linalg.lu_factor_ex(cr.tensor(a))
    theirs = torch.linalg.lu_factor_ex(torch.tensor(a))
    assert ours.info.dtype == cr.int32 and ours.info.tolist() == [0, 3, 4, 1]
    assert ours.info.tolist() == theirs.info.tolist()
    one = cr.linalg.lu_factor_ex(cr.tensor(a[1]))
    assert one.info.shape == () and one.info.item() == 3
    with pytest.raises(cr.linalg.LinAlgError, match="singular"):
        cr.linalg.lu_factor_ex(cr.tensor(a[1]), check_errors=True)


@pytest.mark.parametrize("pivots", [[1, 5, 3], [0, 2, 3]], ids=str)
def test_lu_unpack_refuses_pivots_outside_the_rows(pivots: list[int]) -> None:
    LU = cr.tensor(np.random.default_rng(3).standard_normal((3, 3)))
    low, high = min(pivots), max(pivots)
    with pytest.raises(
        ValueError,
        match=rf"^lu_unpack: pivots must be between 1 and LU's rows \(3\); got pivots from "
        rf"{low} to {high}$",
    ):
        cr.lu_unpack(LU, cr.tensor(pivots, dtype=cr.int32))
    _, L, _ = cr.lu_unpack(LU, cr.tensor(pivots, dtype=cr.int32), unpack_pivots=False)
    assert L.shape == (3, 3)  # PyTorch's: pivots not unpacked are not read


@pytest.mark.parametrize("parts", ["LU", "L", "U"])
def test_lu_gradient_of_one_matrix_is_torchs(parts: str) -> None:
    """One matrix's rule reads L and U in LU itself: against PyTorch's with rows swapped, for
    gradients of L, U or both given in column-major order (and against central differences
    in float64 for both)."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((6, 6))
    gL, gU = (np.asfortranarray(rng.standard_normal((6, 6))) for _ in range(2))
    grads = []
    for lib in (cr, torch):
        A = lib.tensor(a, requires_grad=True)
        _, L, U = lib.linalg.lu(A)
        chosen = [(t, g) for t, g, p in ((L, gL, "L"), (U, gU, "U")) if p in parts]
        lib.autograd.backward([t for t, _ in chosen], [lib.tensor(g) for _, g in chosen])
        grads.append(A.grad.numpy())
    assert not (torch.linalg.lu(torch.tensor(a)).P == torch.eye(6, dtype=torch.float64)).all()
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-12)
    if parts == "LU":

        def f(x: np.ndarray) -> float:
            _, L, U = torch.linalg.lu(torch.tensor(x))
            return float((L.numpy() * gL).sum() + (U.numpy() * gU).sum())

        eps, numeric = 1e-6, np.zeros_like(a)
        for i in np.ndindex(a.shape):
            d = np.zeros_like(a)
            d[i] = eps
            numeric[i] = (f(a + d) - f(a - d)) / (2 * eps)
        np.testing.assert_allclose(grads[0], numeric, rtol=1e-5, atol=1e-6)
