"""The LAPACK calls of the decompositions, each in its array's own precision and with no copy
it does not need. NumPy's linalg computes a float32 matrix in float64 and rounds the result
(twice the time of LAPACK's float32 routine, and another rounding than PyTorch's, which runs
the float32 routine), and copies each matrix into a buffer of its own; SciPy's linalg calls
the routine of the array's dtype on the array. SciPy loops over a batch in Python, though
(tens of microseconds a matrix), where NumPy's loop is compiled: so one matrix, or matrices
of order 64 or more, go to SciPy; batches of small matrices, device arrays, and every array
where SciPy is not installed go to NumPy."""

from __future__ import annotations

import warnings
from typing import Any

from ..array import host, xp

LARGE = 64  # the order from which a batch of matrices goes to SciPy's LAPACK calls


def direct(a: Any) -> Any:
    """scipy.linalg for a float32 or float64 host array of one matrix or of large ones,
    holding elements (SciPy refuses empty batches), else None (NumPy's linalg serves)."""
    if a.dtype not in (host.float32, host.float64) or not isinstance(a, host.ndarray):
        return None
    if a.size == 0 or a.ndim > 2 and a.shape[-1] < LARGE:
        return None
    try:
        import scipy.linalg
    except ImportError:  # pragma: no cover - scipy is in the test environment
        return None
    return scipy.linalg


def inv(a: Any) -> Any:
    sl = direct(a)
    return xp.linalg.inv(a) if sl is None else sl.inv(a, check_finite=False)


def det(a: Any) -> Any:
    sl = direct(a)
    if sl is None:
        return xp.linalg.det(a)
    with warnings.catch_warnings():  # a singular matrix's det is 0, not a warning
        warnings.simplefilter("ignore")
        return sl.det(a, check_finite=False).astype(a.dtype)


def slogdet(a: Any) -> tuple[Any, Any]:
    """(sign, log|det|), from getrf's diagonal and row swaps where SciPy serves."""
    sl = direct(a)
    if sl is None:
        return xp.linalg.slogdet(a)
    with warnings.catch_warnings():  # a singular matrix is a zero on the diagonal
        warnings.simplefilter("ignore")
        lu, piv = sl.lu_factor(a, check_finite=False)
    diag = xp.diagonal(lu, axis1=-2, axis2=-1)  # (..., n)
    swaps = (piv != xp.arange(a.shape[-1])).sum(-1) % 2
    sign = xp.where(swaps == 1, -1, 1) * xp.prod(xp.sign(diag), axis=-1)
    with xp.errstate(divide="ignore"):
        logabsdet = xp.log(xp.abs(diag)).sum(-1)
    return sign.astype(a.dtype), logabsdet.astype(a.dtype)


def cholesky(a: Any) -> Any:
    """L with L L^T = a, from a's lower triangle."""
    sl = direct(a)
    if sl is None:
        return xp.linalg.cholesky(a)
    return sl.cholesky(a, lower=True, check_finite=False)


def eigh(a: Any, UPLO: str = "L") -> tuple[Any, Any]:
    """(eigenvalues ascending, eigenvectors), by syevd as NumPy's and PyTorch's."""
    sl = direct(a)
    if sl is None:
        return xp.linalg.eigh(a, UPLO=UPLO)
    return sl.eigh(a, lower=UPLO == "L", driver="evd", check_finite=False)


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True) -> Any:
    """(U, S, Vh), or S where not compute_uv, by gesdd as NumPy's and PyTorch's."""
    sl = direct(a)
    if sl is None:
        return xp.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return sl.svd(
        a, full_matrices=full_matrices, compute_uv=compute_uv, check_finite=False,
        lapack_driver="gesdd",
    )  # fmt: skip


def qr(a: Any, mode: str = "reduced") -> tuple[Any, Any]:
    """(Q, R), "reduced" or "complete", by geqrf and orgqr as NumPy's and PyTorch's."""
    sl = direct(a)
    if sl is None:
        return xp.linalg.qr(a, mode=mode)
    return sl.qr(a, mode="full" if mode == "complete" else "economic", check_finite=False)


def solve(a: Any, b: Any) -> Any:
    """X with a X = b, by getrf and getrs (SciPy's for one system, NumPy's gesv otherwise)."""
    sl = direct(a)
    if sl is None or a.ndim != 2 or b.ndim != 2 or b.dtype != a.dtype:
        return xp.linalg.solve(a, b)
    with warnings.catch_warnings():  # a zero pivot is NumPy's error, raised below
        warnings.simplefilter("ignore")
        factor = sl.lu_factor(a, check_finite=False)
    if not xp.diagonal(factor[0]).all():
        raise xp.linalg.LinAlgError("Singular matrix")
    return sl.lu_solve(factor, b, check_finite=False)
