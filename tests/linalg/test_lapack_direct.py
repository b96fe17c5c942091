"""One matrix's eigh, svd, qr, cholesky and lstsq (gelsy) call LAPACK's routine directly, with the
workspace SciPy asks for: the results are SciPy's wrappers' bit for bit (the same routine on
the same matrix), and a NaN is refused as there."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from chainrule import fastpath
from chainrule.ops import lapack

sl = pytest.importorskip("scipy.linalg")

_RNG = np.random.default_rng(0)
_DTYPES = [np.float32, np.float64]


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("UPLO", ["L", "U"])
def test_eigh_is_scipys_syevd(dtype: Any, UPLO: str) -> None:
    a = _RNG.standard_normal((5, 5)).astype(dtype)  # asymmetric: only one triangle is read
    w, v = lapack.eigh(a, UPLO)
    sw, sv = sl.eigh(a, lower=UPLO == "L", driver="evd", check_finite=False)
    assert w.dtype == v.dtype == dtype
    np.testing.assert_array_equal(w, sw)
    np.testing.assert_array_equal(v, sv)


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_is_scipys_gesdd(dtype: Any, shape: tuple[int, int], full: bool) -> None:
    a = _RNG.standard_normal(shape).astype(dtype)
    ours = lapack.svd(a, full_matrices=full)
    theirs = sl.svd(a, full_matrices=full, check_finite=False, lapack_driver="gesdd")
    for o, t in zip(ours, theirs, strict=True):
        assert o.dtype == dtype
        np.testing.assert_array_equal(o, t)
    S = sl.svd(a, compute_uv=False, check_finite=False, lapack_driver="gesdd")
    np.testing.assert_array_equal(lapack.svd(a, compute_uv=False), S)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_is_scipys(shape: tuple[int, int], mode: str) -> None:
    a = _RNG.standard_normal(shape)
    Q, R = lapack.qr(a, mode)
    sQ, sR = sl.qr(a, mode="full" if mode == "complete" else "economic")
    np.testing.assert_allclose(Q, sQ, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(R, sR, rtol=1e-12, atol=1e-12)
    assert not np.tril(R, -1).any()


@pytest.mark.parametrize(
    "dtype, shape",
    [(np.float32, (2, 65, 64)), (np.float32, (2, 1, 64, 70)), (np.float64, (2, 66, 64))],
)
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_of_a_batch_of_large_matrices_is_each_matrixs(dtype: Any, shape: Any, mode: str) -> None:
    a = _RNG.standard_normal(shape).astype(dtype)
    Q, R = lapack.qr(a, mode)
    assert Q.dtype == R.dtype == dtype
    tol = 1e-6 if dtype == np.float32 else 1e-12  # the routines of a's dtype, as SciPy's
    for i in np.ndindex(shape[:-2]):
        sQ, sR = sl.qr(a[i], mode="full" if mode == "complete" else "economic")
        np.testing.assert_allclose(Q[i], sQ, rtol=0, atol=tol)
        np.testing.assert_allclose(R[i], sR, rtol=0, atol=tol)
    assert not np.tril(R, -1).any()


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
@pytest.mark.parametrize("deficient", [False, True])
def test_gelsy_is_scipys_lstsq(dtype: Any, shape: tuple[int, int], deficient: bool) -> None:
    r = min(shape) - deficient  # rank one less where deficient: gelsy's rank sees it
    a = (_RNG.standard_normal((shape[0], r)) @ _RNG.standard_normal((r, shape[1]))).astype(dtype)
    b = _RNG.standard_normal((shape[0], 2)).astype(dtype)
    cond = float(np.finfo(dtype).eps) * max(shape)
    with fastpath.disabled():  # gelsy itself, whatever the shape (a square one: see below)
        x, rank = lapack.gelsy(a, b, cond)
    sx, _, srank, _ = sl.lstsq(a, b, cond=cond, lapack_driver="gelsy", check_finite=False)
    assert x.dtype == dtype and rank == srank == min(shape) - deficient
    np.testing.assert_array_equal(x, sx)


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("n", [48, 70])
def test_gelsy_of_a_well_conditioned_square_matrix_is_by_lu(dtype: Any, n: int) -> None:
    """Full rank by a margin: getrf and getrs, the solution scipy's gelsy's to rounding."""
    a = (_RNG.standard_normal((n, n)) / np.sqrt(n) + 2 * np.eye(n)).astype(dtype)
    b = _RNG.standard_normal((n, 3)).astype(dtype)
    cond = float(np.finfo(dtype).eps) * n
    assert lapack._solve_well_conditioned(a, b, cond) is not None
    x, rank = lapack.gelsy(a, b, cond)
    sx, _, srank, _ = sl.lstsq(a, b, cond=cond, lapack_driver="gelsy", check_finite=False)
    assert x.dtype == dtype and rank == srank == n
    tol = 50 * float(np.finfo(dtype).eps)
    np.testing.assert_allclose(x, sx, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("gap", [0.0, 4.0])
def test_gelsy_of_a_nearly_singular_square_matrix_is_gelsys(dtype: Any, gap: float) -> None:
    """A column another's, or that but for a few units of rounding: no sure full rank, so
    gelsy itself, rank and all."""
    a = _RNG.standard_normal((60, 60))
    a[:, 59] = a[:, 58] + gap * float(np.finfo(dtype).eps) * a[:, 57]
    a, b = a.astype(dtype), _RNG.standard_normal((60, 2)).astype(dtype)
    cond = float(np.finfo(dtype).eps) * 60
    assert lapack._solve_well_conditioned(a, b, cond) is None
    x, rank = lapack.gelsy(a, b, cond)
    sx, _, srank, _ = sl.lstsq(a, b, cond=cond, lapack_driver="gelsy", check_finite=False)
    assert rank == srank
    np.testing.assert_array_equal(x, sx)


@pytest.mark.parametrize("dtype", _DTYPES)
def test_cholesky_is_scipys_potrf(dtype: Any) -> None:
    x = _RNG.standard_normal((4, 4))
    a = (x @ x.T + 4 * np.eye(4)).astype(dtype)
    a[0, 3] = 99.0  # the upper triangle is never read
    L = lapack.cholesky(a)
    assert L.dtype == dtype
    np.testing.assert_array_equal(L, sl.cholesky(a, lower=True, check_finite=False))
    with pytest.raises(np.linalg.LinAlgError, match=r"^3-th leading minor"):
        lapack.cholesky(np.diag([1.0, 2.0, -1.0, 4.0]).astype(dtype))


def test_a_nan_is_refused() -> None:
    a = np.full((3, 3), np.nan)
    with pytest.raises(np.linalg.LinAlgError, match=r"^eigh: the algorithm failed to converge"):
        lapack.eigh(a)
    with pytest.raises(ValueError, match=r"^A has a NaN entry$"):
        lapack.svd(a)


def test_the_workspace_is_asked_once_per_shape() -> None:
    lapack._work.cache_clear()
    for _ in range(3):
        lapack.svd(_RNG.standard_normal((2, 3)), full_matrices=False)
    assert lapack._work.cache_info().misses == 1
