"""lu_factor, inv and det of many small matrices, which getrf's steps take one column at a
time over the whole batch: pivots (ties to the first largest, zero columns) and info as
PyTorch's getrf gives them, LU, the inverse and the determinant to rounding, the same with
the fast path off, a singular matrix refused as before, and a batch holding a NaN left to
getrf itself."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import fastpath
from chainrule.ops import batched_lu
from tests.tolerances import OP, tol


def _batch(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Random matrices, with ties for the largest |a| in the first column of some and zero
    columns (info) and zero matrices in others (subnormal pivots are left out: MKL scales by
    their infinite reciprocal, OpenBLAS and getf2 divide); a matrix with a near-tie for a
    pivot is drawn again."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal(shape)
    while True:
        a[::3, 1, 0] = -a[::3, 0, 0]  # a tie: the first row stays the pivot
        a[1::7, :, 1] = 0  # U[1, 1] = 0: info 2, no scaling below it
        a[2::11] = 0
        near = _near_ties(a.astype(dtype))
        if not near.any():
            return a.astype(dtype)
        a[near] = rng.standard_normal(a[near].shape)


def _near_ties(a: np.ndarray, margin: float = 1e-3) -> np.ndarray:
    """Which matrices of a (batch shape) meet, at some step of partial pivoting (run here in
    float64), a runner-up within ``margin`` of the largest |candidate|: which row is the
    pivot there depends on rounding, so on the library. Exact ties of the first column (the
    inputs themselves, the first row wins) and columns of zeros are not near-ties."""
    u = a.astype(np.float64).reshape(-1, *a.shape[-2:])  # (batch, m, n), a copy
    rows = np.arange(len(u))
    near = np.zeros(len(u), dtype=bool)
    for k in range(min(u.shape[-2:])):
        c = np.abs(u[:, k:, k])  # (batch, m - k): the candidates for the k-th pivot
        top = c.max(axis=1, keepdims=True)
        close = (c >= top * (1 - margin)).sum(axis=1)
        allowed = (c == top).sum(axis=1) if k == 0 else 1
        near |= (close > allowed) & (top[:, 0] > 0)
        p = k + c.argmax(axis=1)
        u[rows, k], u[rows, p] = u[rows, p], u[rows, k].copy()
        pivot = u[:, k, k, None]  # (batch, 1)
        below = u[:, k + 1 :, k]  # (batch, m - k - 1)
        low = np.divide(below, pivot, out=np.zeros_like(below), where=pivot != 0)
        u[:, k + 1 :, k + 1 :] -= low[:, :, None] * u[:, k, None, k + 1 :]
    return near.reshape(a.shape[:-2])


def test_near_ties_are_found() -> None:
    a = np.array([[[1.0, 2.0], [-1.0, 0.0]], [[1.0, 2.0], [-1.0 - 1e-9, 0.0]]])
    assert _near_ties(a).tolist() == [False, True]  # the exact tie is the inputs' own


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape", [(80, 3, 3), (300, 6, 6), (5, 40, 4, 2), (210, 2, 5)], ids=str)
def test_lu_factor_of_many_small_matrices_is_torchs(shape: tuple[int, ...], dtype: str) -> None:
    a = _batch(shape, dtype)
    assert batched_lu.serves(a, 8)  # the batch takes the columns' way
    want = torch.linalg.lu_factor_ex(torch.tensor(a))
    for on in (True, False):
        fastpath.set_enabled(on)
        try:
            got = cr.linalg.lu_factor_ex(cr.tensor(a))
        finally:
            fastpath.set_enabled(fastpath.switch.DEFAULT)
        np.testing.assert_array_equal(got.pivots.numpy(), want.pivots.numpy())
        np.testing.assert_array_equal(got.info.numpy(), want.info.numpy())
        np.testing.assert_allclose(got.LU.numpy(), want.LU.numpy(), **tol(dtype, OP))
        assert got.pivots.dtype == cr.int32 and got.LU.dtype == getattr(cr, dtype)


def test_a_batch_holding_a_nan_is_left_to_getrf() -> None:
    a = _batch((80, 3, 3), "float64")
    a[5, 2, 2] = np.nan
    assert not batched_lu.serves(a, 8)
    got, want = cr.linalg.lu_factor_ex(cr.tensor(a)), torch.linalg.lu_factor_ex(torch.tensor(a))
    others = np.arange(80) != 5  # where the NaN's pivot lands is the library's own
    np.testing.assert_array_equal(got.pivots.numpy()[others], want.pivots.numpy()[others])
    assert np.isnan(got.LU.numpy()[5]).any()


def test_lu_of_many_small_matrices_is_torchs_with_its_gradient() -> None:
    a = np.random.default_rng(6).standard_normal((80, 3, 3))  # no zero pivot: a gradient
    assert not _near_ties(a).any()  # the pivots are the data's, not rounding's
    g = np.random.default_rng(5).standard_normal(a.shape)
    found = []
    for lib in (torch, cr):
        A = lib.tensor(a, requires_grad=True)
        P, L, U = lib.linalg.lu(A)
        ((L + U) * lib.tensor(g)).sum().backward()
        found.append([P.numpy(), L.detach().numpy(), U.detach().numpy(), A.grad.numpy()])
    for got, want in zip(found[1], found[0], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


def _switched(on: bool, fn: Any) -> Any:
    """fn() with the fast path on or off, then the process's default again."""
    fastpath.set_enabled(on)
    try:
        return fn()
    finally:
        fastpath.set_enabled(fastpath.switch.DEFAULT)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape", [(300, 3, 3), (2, 300, 2, 2), (2048, 8, 8)], ids=str)
def test_inv_of_many_small_matrices_is_torchs(shape: tuple[int, ...], dtype: str) -> None:
    count, n = math.prod(shape[:-2]), shape[-1]
    a = np.random.default_rng(7).standard_normal((2 * count, n, n))
    a[::3, 1, 0] = -a[::3, 0, 0]  # a tie for the first pivot
    a = a[np.linalg.cond(a) < 30][:count].reshape(shape).astype(dtype)  # pivots of all rows
    assert batched_lu.serves(a, 32)
    want = torch.linalg.inv(torch.tensor(a)).numpy()
    for on in (True, False):
        got = _switched(on, lambda: cr.linalg.inv(cr.tensor(a)))
        assert got.dtype == getattr(cr, dtype) and got.is_contiguous()
        np.testing.assert_allclose(got.numpy(), want, **tol(dtype, OP))


def test_inv_of_many_small_matrices_refuses_a_singular_one() -> None:
    a = np.random.default_rng(8).standard_normal((300, 3, 3))
    a[7, :, 2] = 0
    message = r"the diagonal element 3 of its LU factor is zero"
    with pytest.raises(cr.linalg.LinAlgError, match=message):
        cr.linalg.inv(cr.tensor(a))
    out, info = cr.linalg.inv_ex(cr.tensor(a))
    assert info.numpy().nonzero()[0].tolist() == [7] and np.isnan(out.numpy()[7]).all()
    np.testing.assert_allclose(out.numpy()[8], np.linalg.inv(a[8]), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("op", ["inv", "cholesky"])
def test_many_small_matrices_have_torchs_gradient(op: str) -> None:
    """The batched paths' inverse and Cholesky factor, differentiated as PyTorch's."""
    if op == "inv":
        a = np.random.default_rng(9).standard_normal((300, 3, 3)) + 2 * np.eye(3)
    else:
        a = _spd((600, 3, 3), "float64")
    g = np.random.default_rng(10).standard_normal(a.shape)
    found = []
    for lib in (torch, cr):
        A = lib.tensor(a, requires_grad=True)
        (getattr(lib.linalg, op)(A) * lib.tensor(g)).sum().backward()
        found.append(A.grad.numpy())
    np.testing.assert_allclose(found[1], found[0], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape", [(600, 3, 3), (2, 512, 4, 4)], ids=str)
def test_det_of_many_small_matrices_is_torchs(shape: tuple[int, ...], dtype: str) -> None:
    a = _batch(shape, dtype)  # ties, singular and zero matrices among them
    assert batched_lu.serves(a, 64, largest=4)
    want = torch.linalg.det(torch.tensor(a)).numpy()
    for on in (True, False):
        got = _switched(on, lambda: cr.linalg.det(cr.tensor(a)))
        assert got.dtype == getattr(cr, dtype) and got.shape == shape[:-2]
        np.testing.assert_allclose(got.numpy(), want, **tol(dtype, OP))
    assert (want == 0).any() and (want < 0).any()


def test_det_of_many_small_matrices_has_torchs_gradient() -> None:
    a = np.random.default_rng(11).standard_normal((600, 3, 3))
    g = np.random.default_rng(12).standard_normal(600)
    found = []
    for lib in (torch, cr):
        A = lib.tensor(a, requires_grad=True)
        (lib.linalg.det(A) * lib.tensor(g)).sum().backward()
        found.append(A.grad.numpy())
    np.testing.assert_allclose(found[1], found[0], rtol=1e-9, atol=1e-9)


def _spd(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Symmetric positive definite matrices."""
    x = np.random.default_rng(13).standard_normal(shape)
    return (x @ x.swapaxes(-1, -2) + np.eye(shape[-1])).astype(dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape", [(600, 3, 3), (2, 2048, 8, 8)], ids=str)
def test_cholesky_of_many_small_matrices_is_torchs(shape: tuple[int, ...], dtype: str) -> None:
    a = _spd(shape, dtype)
    assert batched_lu.serves(a, 64)
    for upper in (False, True):
        want = torch.linalg.cholesky(torch.tensor(a), upper=upper).numpy()
        for on in (True, False):
            got = _switched(on, lambda u=upper: cr.linalg.cholesky(cr.tensor(a), upper=u))
            assert got.dtype == getattr(cr, dtype) and got.shape == shape
            np.testing.assert_allclose(got.numpy(), want, **tol(dtype, OP))


def test_cholesky_of_many_small_matrices_names_the_first_not_positive_definite() -> None:
    a = _spd((600, 3, 3), "float64")
    a[9, 2, 2] = -1.0  # the leading minor of order 3 is not positive definite
    with pytest.raises(
        cr.linalg.LinAlgError, match=r"\(Batch element 9\): .* leading minor of order 3 is not"
    ):
        cr.linalg.cholesky(cr.tensor(a))
    L, info = cr.linalg.cholesky_ex(cr.tensor(a))
    assert info.numpy().nonzero()[0].tolist() == [9] and info.numpy()[9] == 3
    np.testing.assert_allclose(L.numpy()[8], np.linalg.cholesky(a[8]), rtol=1e-9, atol=1e-12)
