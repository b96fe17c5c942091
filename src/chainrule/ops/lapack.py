"""The LAPACK calls of the decompositions, each in its array's own precision and with no copy
it does not need. NumPy's linalg computes a float32 matrix in float64 and rounds the result
(twice the time of LAPACK's float32 routine, and another rounding than PyTorch's, which runs
the float32 routine), and copies each matrix into a buffer of its own; SciPy's linalg calls
the routine of the array's dtype on the array. SciPy loops over a batch in Python, though
(tens of microseconds a matrix), where NumPy's loop is compiled: so one matrix, or matrices
of order 64 or more, go to SciPy; batches of small matrices, device arrays, and every array
where SciPy is not installed go to NumPy."""

from __future__ import annotations

import functools
import warnings
from typing import Any

from .. import fastpath
from ..array import host, xp
from . import batched_lu

LARGE = 64  # the order from which a batch of matrices goes to SciPy's LAPACK calls


def direct(a: Any) -> Any:
    """scipy.linalg for a float32 or float64 host array of one matrix or of large ones,
    holding elements (SciPy refuses empty batches), else None (NumPy's linalg serves)."""
    if not host_float(a) or a.size == 0 or a.ndim > 2 and a.shape[-1] < LARGE:
        return None
    try:
        import scipy.linalg
    except ImportError:  # pragma: no cover - scipy is in the test environment
        return None
    return scipy.linalg


def host_float(a: Any) -> bool:
    """Whether a is a float32 or float64 host array: what SciPy's LAPACK routines take."""
    return isinstance(a, host.ndarray) and a.dtype.char in "fd"


def by_columns(a: Any, many: int, largest: int = batched_lu.LARGEST) -> bool:
    """Whether batched_lu may take a batch a by LAPACK's steps over the batch, where the switch
    is on (fastpath/table.py): a host float array of at least ``many`` order^2 matrices of
    order ``largest`` at most."""
    return host_float(a) and batched_lu.serves(a, many, largest)


def inv(a: Any) -> Any:
    """A^-1, by getrf and getri on A^T where SciPy serves (C order is A^T in LAPACK's: no
    copy into it, and (A^T)^-1 read transposed is A^-1); NumPy's gesv on I otherwise, or
    getrf's steps by columns for many small matrices."""
    if direct(a) is None:
        if fastpath.enabled() and by_columns(a, 32):
            return batched_lu.inv(a)
        return xp.linalg.inv(a)
    lu, piv, _ = lu_factor(xp.swapaxes(a, -1, -2))
    if not lu.diagonal(axis1=-2, axis2=-1).all():
        raise xp.linalg.LinAlgError("Singular matrix")
    return xp.swapaxes(inv_from_lu(lu, piv), -1, -2)


def routine(name: str, dtype: Any) -> Any:
    """SciPy's LAPACK routine ``name`` (getrf, getri, ...) for dtype, looked up once: the
    lookup costs more than the routine on a small matrix."""
    return _routine(name, host.dtype(dtype).char)


@functools.cache
def _routine(name: str, char: str) -> Any:
    import scipy.linalg

    return scipy.linalg.get_lapack_funcs(name, dtype=host.dtype(char))


@functools.lru_cache(maxsize=256)
def _getri_work(char: str, n: int) -> int:
    """getri's best workspace for order n: SciPy's default (n) runs its unblocked
    algorithm, twice the time at n = 512."""
    return max(1, int(_routine("getri_lwork", char)(n)[0]))


def lu_factor(a: Any) -> tuple[Any, Any, Any]:
    """(LU, pivots, info) of each matrix of a host float array (holding elements), by getrf
    itself: L's strict lower triangle below U's upper one, pivots 0-based (int32), info
    getrf's (int32, a's batch shape): 0, or the 1-based index of the first zero on U's
    diagonal. A zero pivot is no error: it is U's diagonal, where a singular matrix shows it.
    NumPy has no LU: a batch of small matrices loops here too, at a microsecond a matrix of
    order 8 (SciPy's lu_factor loops at six). Each matrix is factored in place, in a copy of
    the batch in LAPACK's column-major order made at once (getrf given a C-ordered matrix
    copies it in and out: a third of the loop's time at order 8)."""
    getrf = _routine("getrf", a.dtype.char)
    if a.ndim == 2:
        lu, piv, info = getrf(a)
        return lu, piv, host.array(info, dtype=host.int32)
    if fastpath.enabled() and by_columns(a, 8):  # many small: getrf's steps by columns
        return batched_lu.lu_factor(a)
    m, n = a.shape[-2:]
    flat = host.array(host.swapaxes(a.reshape(-1, m, n), -1, -2), order="C")  # (batch, n, m)
    piv = host.empty((len(flat), min(m, n)), dtype=host.int32)
    info = host.empty(len(flat), dtype=host.int32)
    for i, t in enumerate(flat):  # t.T: the matrix, column-major, written over
        _, piv[i], info[i] = getrf(t.T, overwrite_a=1)
    batch = a.shape[:-2]
    lu = host.ascontiguousarray(host.swapaxes(flat, -1, -2)).reshape(a.shape)
    return lu, piv.reshape(*batch, piv.shape[-1]), info.reshape(batch)


def inv_from_lu(lu: Any, piv: Any) -> Any:
    """A^-1 from lu_factor's (LU, pivots) of nonsingular matrices, by getri alone."""
    getri = routine("getri", lu.dtype)
    work = _getri_work(lu.dtype.char, lu.shape[-1])
    if lu.ndim == 2:
        return getri(lu, piv, lwork=work)[0]
    flat, pivots = lu.reshape(-1, *lu.shape[-2:]), piv.reshape(-1, piv.shape[-1])
    out = host.empty(flat.shape, dtype=lu.dtype)
    for i in range(len(flat)):
        out[i] = getri(flat[i], pivots[i], lwork=work)[0]
    return out.reshape(lu.shape)


def det(a: Any) -> tuple[Any, Any]:
    """(det, factor): the determinant of each matrix of a, from getrf's diagonal and row
    swaps as PyTorch's, and the factor (LU, pivots) of a^T that gave it (a^T: the same
    determinant, no copy of a C-ordered matrix into LAPACK's order, and its getri is the
    A^-T of the gradient), or None where NumPy's linalg serves or getrf's steps by columns
    factor many small matrices (their gradient's inverse by columns too)."""
    if direct(a) is not None:
        lu, piv, _ = lu_factor(xp.swapaxes(a, -1, -2))
        factor = (lu, piv)
        diag = lu.diagonal(axis1=-2, axis2=-1)  # (..., n)
    elif fastpath.enabled() and by_columns(a, 64, largest=4):
        diag, piv = batched_lu.diagonal(a)  # NumPy's det: a matrix at a time, in float64
        factor = None
    else:
        return xp.linalg.det(a), None
    with xp.errstate(over="ignore"):  # a determinant past the dtype's range is inf
        out = diag.prod(-1)
    return xp.asarray(out * _swap_sign(piv), dtype=a.dtype), factor


def slogdet(a: Any) -> tuple[Any, Any, Any]:
    """(sign, log|det|, factor), from getrf's diagonal and row swaps where SciPy serves;
    factor as det's."""
    if direct(a) is None:
        return (*xp.linalg.slogdet(a), None)
    lu, piv, _ = lu_factor(xp.swapaxes(a, -1, -2))
    diag = lu.diagonal(axis1=-2, axis2=-1)  # (..., n)
    sign = _swap_sign(piv) * xp.sign(diag).prod(-1)
    with xp.errstate(divide="ignore"):  # a singular matrix: log 0 = -inf
        logabsdet = xp.log(xp.abs(diag)).sum(-1)
    return xp.asarray(sign, dtype=a.dtype), xp.asarray(logabsdet, dtype=a.dtype), (lu, piv)


def _swap_sign(piv: Any) -> Any:
    """(-1)^(the number of row swaps), from getrf's 0-based pivots (..., k)."""
    swaps = xp.count_nonzero(piv != xp.arange(piv.shape[-1], dtype=piv.dtype), axis=-1)
    return 1 - 2 * (swaps % 2)


def cholesky(a: Any) -> Any:
    """L with L L^T = a, from a's lower triangle: potrf itself for one matrix (as SciPy's
    cholesky calls it, at a third of its time on a small one), SciPy's for a batch of large
    ones, potf2's steps by columns for many small ones."""
    sl = direct(a)
    if sl is None:
        if fastpath.enabled() and by_columns(a, 64):
            return batched_lu.cholesky(a)  # NumPy's: a matrix at a time, in float64
        return xp.linalg.cholesky(a)
    if a.ndim > 2:
        return sl.cholesky(a, lower=True, check_finite=False)
    L, info = routine("potrf", a.dtype)(a, lower=1, clean=1)
    if info:  # as SciPy's cholesky words it
        raise xp.linalg.LinAlgError(
            f"{info}-th leading minor of the array is not positive definite"
        )
    return L


def cholesky_stopped(a: Any, info: Any) -> Any:
    """PyTorch's L for each host matrix of a (..., n, n) by potrf's info (its batch shape):
    L where info is 0; where it is k, the first leading minor that is not positive-definite,
    what potf2 leaves (and MKL's potrf, PyTorch's): the first k - 1 columns factored,
    L[k-1, k-1] = a[k-1, k-1] - L[k-1, :k-1] . L[k-1, :k-1] (not positive), and the rest of
    a's lower triangle as it was."""
    out = host.tril(a)
    flat, stops = out.reshape(-1, *a.shape[-2:]), info.reshape(-1)  # views of out
    good = stops == 0
    if good.any():
        flat[good] = host.linalg.cholesky(flat[good])
    for i in host.flatnonzero(stops):
        m, j = flat[i], int(stops[i]) - 1
        if j:
            top = host.linalg.cholesky(m[:j, :j])  # (j, j)
            m[j:, :j] = solve_triangular(top, m[j:, :j].T, lower=True).T  # (n - j, j)
            m[:j, :j] = top
            m[j, j] -= m[j, :j] @ m[j, :j]
    return out


def eigh(a: Any, UPLO: str = "L") -> tuple[Any, Any]:
    """(eigenvalues ascending, eigenvectors), by syevd as NumPy's and PyTorch's: called
    directly for one matrix (SciPy's eigh spends six times the routine's time on a small one
    checking its arguments and asking for the workspace), SciPy's for a batch of large ones."""
    sl = direct(a)
    if sl is None:
        return xp.linalg.eigh(a, UPLO=UPLO)
    if a.ndim > 2:
        return sl.eigh(a, lower=UPLO == "L", driver="evd", check_finite=False)
    lower = int(UPLO == "L")
    lwork, liwork = _work("syevd", a.dtype.char, a.shape[-1], compute_v=1, lower=lower)
    w, v, info = routine("syevd", a.dtype)(a, compute_v=1, lower=lower, lwork=lwork, liwork=liwork)
    if info:  # NaN in the matrix, or LAPACK's rare failure
        raise xp.linalg.LinAlgError(
            f"eigh: the algorithm failed to converge (syevd's error {info}); the matrix holds "
            "NaN or is ill-conditioned"
        )
    return w, v


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True) -> Any:
    """(U, S, Vh), or S where not compute_uv, by gesdd as NumPy's and PyTorch's: called
    directly for one matrix (as eigh), SciPy's for a batch of large ones."""
    sl = direct(a)
    if sl is None:
        return xp.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    if a.ndim > 2:
        return sl.svd(
            a, full_matrices=full_matrices, compute_uv=compute_uv, check_finite=False,
            lapack_driver="gesdd",
        )  # fmt: skip
    uv, full = int(compute_uv), int(full_matrices)
    (lwork,) = _work("gesdd", a.dtype.char, *a.shape, compute_uv=uv, full_matrices=full)
    u, s, vh, info = routine("gesdd", a.dtype)(a, compute_uv=uv, full_matrices=full, lwork=lwork)
    if info == -4:  # SciPy's svd's errors, word for word
        raise ValueError("A has a NaN entry")
    if info:
        raise xp.linalg.LinAlgError("SVD did not converge")
    return (u, s, vh) if compute_uv else s


def gelsy(a: Any, b: Any, cond: float) -> tuple[Any, int]:
    """(X, rank): min ||a X - b|| for one host float matrix a (m x n) and b (m x k) of a's
    dtype, by gelsy itself, as SciPy's lstsq calls it (whose checks and workspace query cost
    five times the routine on a small matrix)."""
    m, n = a.shape
    if m == n >= _BY_LU and fastpath.enabled():  # square, of full rank by a margin: by LU
        x = _solve_well_conditioned(a, b, cond)
        if x is not None:
            return x, n
    k = b.shape[1]
    if m < n:  # gelsy writes X (n rows) over b
        b = host.concatenate((b, host.zeros((n - m, k), dtype=b.dtype)))
    (lwork,) = _work("gelsy", a.dtype.char, m, n, k, cond)
    jpvt = host.zeros((n, 1), dtype=host.int32)
    _, x, _, rank, info = routine("gelsy", a.dtype)(a, b, jpvt, cond, lwork, False, False)
    if info < 0:  # pragma: no cover - an argument LAPACK refuses: a bug here
        raise ValueError(f"illegal value in {-info}-th argument of internal gelsy")
    return x[:n], rank


def _solve_well_conditioned(a: Any, b: Any, cond: float) -> Any:
    """X with a X = b for a square a whose rank gelsy finds full, by getrf and getrs (half
    gelsy's time at order 512, a QR with column pivoting), or None where that is not sure.
    gelsy's rank is the order of the largest leading block of R (A P = Q R) whose estimated
    2-norm condition number is under 1 / cond; its estimates of R's extreme singular values
    lie within them, so a cond_2(A) under 1 / cond gives full rank. cond_2 is at most
    sqrt(cond_1 cond_inf), which gecon estimates from below (rarely by a factor past 10): a
    margin of 100 covers that. a^T is factored (C order is a^T in LAPACK's: no transposing
    copy), and getrs solves with its transpose."""
    lu, piv, info = routine("getrf", a.dtype)(a.T)
    if info:  # a zero pivot: singular
        return None
    gecon = routine("gecon", a.dtype)
    absolute = host.abs(a)
    rcond_1, _ = gecon(lu, absolute.sum(1).max(), norm="1")  # lu is a^T's: its 1-norm a's inf
    rcond_inf, _ = gecon(lu, absolute.sum(0).max(), norm="I")
    if not rcond_1 * rcond_inf > (_MARGIN * cond) ** 2:
        return None
    x, _ = routine("getrs", a.dtype)(lu, piv, b, trans=1)
    return x


_MARGIN = 100.0  # how far under gelsy's threshold the estimated condition number must be
_BY_LU = 48  # the order from which LU and two condition estimates take less time than gelsy


@functools.lru_cache(maxsize=256)
def _work(name: str, char: str, *shape: int, **options: int) -> tuple[int, ...]:
    """The best workspace sizes of LAPACK routine ``name`` for a matrix of that shape, asked
    once. A float32 routine gives its float sizes in float32, which may round them down:
    such a size is taken as float32's next value up, as SciPy takes it."""
    *sizes, _ = _routine(name + "_lwork", char)(*shape, **options)
    up = host.float32(host.inf)
    return tuple(
        int(host.nextafter(host.float32(x), up) if char == "f" and isinstance(x, float) else x)
        for x in sizes
    )


def qr(a: Any, mode: str = "reduced") -> tuple[Any, Any]:
    """(Q, R), "reduced" or "complete", by geqrf and orgqr as NumPy's and PyTorch's: called
    directly for one matrix (SciPy's qr spends ten times the routines' time on a small one
    asking for their workspace), and for each matrix of a batch of large ones (SciPy's qr
    asks for each one's)."""
    if direct(a) is None:
        return xp.linalg.qr(a, mode=mode)
    if a.ndim > 2:
        return _qr_batch(a, mode)
    m, n = a.shape
    k = min(m, n)
    geqrf, orgqr = routine("geqrf", a.dtype), routine("orgqr", a.dtype)
    h, tau, _, _ = geqrf(a, lwork=_NB * max(n, 1))  # R above the diagonal, reflectors below
    top = h if mode == "complete" else h[:k]
    # a kept mask (triu builds its own each call), and a Python 0, which keeps top's dtype
    # and costs where half a NumPy scalar's time
    R = host.where(_upper(*top.shape), top, 0)
    if mode == "complete" and m > n:  # Q: m x m, from the k reflectors
        v = host.zeros((m, m), dtype=a.dtype, order="F")
        v[:, :n] = h
    else:
        v = h[:, :k]  # F-ordered: no copy
    Q, _, _ = orgqr(v, tau, lwork=_NB * max(v.shape[1], 1), overwrite_a=1)
    return Q, R


def _qr_batch(a: Any, mode: str) -> tuple[Any, Any]:
    """qr's (Q, R) of each matrix of a host float batch (..., m, n), by the routines of its
    dtype, a matrix at a time."""
    m, n = a.shape[-2:]
    k = min(m, n)
    top = m if mode == "complete" else k  # R's rows, and Q's columns
    geqrf, orgqr = routine("geqrf", a.dtype), routine("orgqr", a.dtype)
    flat = a.reshape(-1, m, n)
    Q = host.empty((len(flat), m, top), dtype=a.dtype)
    R = host.empty((len(flat), top, n), dtype=a.dtype)
    v = host.zeros((m, top), dtype=a.dtype, order="F")  # the reflectors (zeros past k)
    for i in range(len(flat)):
        h, tau, _, _ = geqrf(flat[i], lwork=_NB * max(n, 1))
        R[i] = h[:top]
        v[:, :k] = h[:, :k]
        Q[i], _, _ = orgqr(v, tau, lwork=_NB * max(top, 1))
    R = host.where(_upper(top, n), R, R.dtype.type(0))
    return Q.reshape(*a.shape[:-2], m, top), R.reshape(*a.shape[:-2], top, n)


def _upper(m: int, n: int) -> Any:
    """The mask of an m x n matrix's upper triangle (its diagonal included), made once for
    a small matrix (a kept mask of a large one would hold its memory for good)."""
    return _small_upper(m, n) if m * n <= SMALL else ~host.tri(m, n, -1, dtype=bool)


@functools.lru_cache(maxsize=64)
def _small_upper(m: int, n: int) -> Any:
    return ~host.tri(m, n, -1, dtype=bool)


SMALL = 1 << 16  # the most elements of a triangle's mask that is kept


def householder_product(a: Any, tau: Any) -> Any:
    """The first n columns of H_1 ... H_k for each matrix of a host float array a (..., m, n)
    holding the reflectors below its diagonal and tau (..., k) of a's dtype, m >= n >= k:
    LAPACK's orgqr on each matrix, which reads only the reflectors."""
    orgqr = routine("orgqr", a.dtype)
    m, n = a.shape[-2:]
    flat = a.reshape(-1, m, n)
    taus = tau.reshape(len(flat), tau.shape[-1])
    out = host.empty(flat.shape, dtype=a.dtype)
    for i in range(len(flat)):
        out[i], _, _ = orgqr(flat[i], taus[i], lwork=_NB * max(n, 1))
    return out.reshape(a.shape)


_NB = 64  # LAPACK's block size for geqrf and orgqr (OpenBLAS asks for 32 columns): their workspace


def solve_triangular(a: Any, b: Any, lower: bool, unit: bool = False) -> Any:
    """X with A X = B for host float arrays of one dtype, A (..., n, n) lower or upper
    triangular (its diagonal ones where unit; the other triangle unread), B (..., n, k),
    batch shapes equal: BLAS's trsm on each matrix. SciPy's solve_triangular costs ten times
    the routine on a small matrix, and loops over a batch at 8 us a matrix.

    trsm is given the transposes, X^T = B^T A^-T: C-ordered arrays are LAPACK's order
    transposed, so nothing is copied into it, and X^T comes back in C order as X."""
    if a.size == 0 or b.size == 0:
        return host.zeros(b.shape, dtype=a.dtype)
    trsm = blas("trsm", a.dtype.char)
    flag = int(not lower)  # A^T's triangle
    if a.ndim == 2:
        return trsm(1.0, a.T, b.T, side=1, lower=flag, diag=int(unit)).T
    out = host.empty(b.shape, dtype=a.dtype)
    flat_a, flat_b = a.reshape(-1, *a.shape[-2:]), b.reshape(-1, *b.shape[-2:])
    flat_out = out.reshape(flat_b.shape)
    for i in range(len(flat_b)):
        flat_out[i] = trsm(1.0, flat_a[i].T, flat_b[i].T, side=1, lower=flag, diag=int(unit)).T
    return out


@functools.cache
def blas(name: str, char: str) -> Any:
    """SciPy's BLAS routine ``name`` (trsm, trmm) of dtype ``char``, found once."""
    import scipy.linalg

    return scipy.linalg.get_blas_funcs(name, dtype=host.dtype(char))


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
