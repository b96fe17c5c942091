"""chainrule.linalg's factorisations: eigh, eigvalsh, svd, svdvals, qr, the LU family
(lu_factor, lu, lu_solve, lu_unpack) and householder_product; eig and eigvals refused until
chainrule has complex tensors."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from .. import fastpath
from ..array import xp
from ..autograd.mode import state as modes
from ..autograd.node import Arrivals, named
from ..autograd.outputs import Triangle, join, part_node, share
from ..autograd.primitive import Function, batching, dual
from ..ops import decompositions as D
from ..ops import lapack
from ..ops import lu_qr as LQ
from ..tensor import Tensor
from ._checks import attached, constant, matrices, same_dtype, tensor_of, with_out


class Eigh(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class Svd(NamedTuple):
    U: Tensor
    S: Tensor
    Vh: Tensor


class Qr(NamedTuple):
    Q: Tensor
    R: Tensor


class LuFactor(NamedTuple):
    LU: Tensor
    pivots: Tensor


class LuFactorEx(NamedTuple):
    LU: Tensor
    pivots: Tensor
    info: Tensor


class Lu(NamedTuple):
    P: Tensor
    L: Tensor
    U: Tensor


@with_out("linalg")
def eigh(A: Any, UPLO: str = "L", *, out: Any = None) -> Eigh:
    """(eigenvalues ascending, eigenvectors in columns) of each symmetric matrix, read from
    its lower (UPLO "L") or upper triangle."""
    A = matrices(A, "linalg.eigh", square=True)
    _uplo(UPLO, "linalg.eigh")
    result = lapack.eigh(A._array, UPLO)
    if untracked(A):  # no node: LAPACK's arrays as they are
        return Eigh(*map(constant, result))
    L, Q = (D.LinalgEigh.apply(A, part=p, UPLO=UPLO, result=result) for p in ("L", "Q"))
    return Eigh(L, Q)


@with_out("linalg", exact=True)
def eigvalsh(A: Any, UPLO: str = "L", *, out: Any = None) -> Tensor:
    """The eigenvalues of each symmetric matrix, ascending."""
    A = matrices(A, "linalg.eigvalsh", square=True)
    _uplo(UPLO, "linalg.eigvalsh")
    return D.LinalgEigh.apply(A, part="L", UPLO=UPLO)


_APPLIES = Function.__dict__  # the exporter's trace replaces its apply, and sees every op
_APPLY = _APPLIES["apply"]


def untracked(A: Tensor) -> bool:
    """Whether A's decomposition may give LAPACK's arrays as they are, without each part's
    apply and the copy it keeps apart for backward (fastpath/table.py): where the parts'
    applies would record nothing and nothing else watches them (A needs no gradient or grad
    mode is off; no vmap or dual level open, no exporter tracing the ops, no anomaly mode)."""
    if not fastpath.enabled() or A.requires_grad and modes.grad_enabled:
        return False
    if batching[0] is not None or dual[0] is not None or _APPLIES["apply"] is not _APPLY:
        return False
    return not modes.anomaly


def _uplo(UPLO: str, op: str) -> None:
    if UPLO not in ("L", "U"):
        raise ValueError(f"{op}: UPLO must be 'L' or 'U'; got {UPLO!r}")


@with_out("linalg")
def svd(A: Any, full_matrices: bool = True, *, driver: Any = None, out: Any = None) -> Svd:
    """(U, S, Vh) with A = U diag(S) Vh, S descending; U and Vh square where full_matrices
    (their columns and rows past min(m, n) carry no gradient)."""
    A = matrices(A, "linalg.svd")
    if A._array.size == 0:  # no LAPACK call; the parts' nodes still PyTorch's
        result = _empty_svd(A._array, full_matrices)
    else:
        result = lapack.svd(A._array, full_matrices)
    if untracked(A):  # no node: LAPACK's arrays as they are
        return Svd(*map(constant, result))
    parts = (
        D.LinalgSvdEx.apply(A, part=p, full_matrices=full_matrices, result=result)
        for p in ("U", "S", "Vh")
    )
    return Svd(*parts)


def _empty_svd(a: Any, full: bool) -> tuple[Any, Any, Any]:
    """The SVD of matrices with no elements, as PyTorch gives it (identities where full)."""
    m, n = a.shape[-2:]
    k, batch = min(m, n), a.shape[:-2]
    U = xp.broadcast_to(xp.eye(m, m if full else k, dtype=a.dtype), (*batch, m, m if full else k))
    Vh = xp.broadcast_to(xp.eye(n if full else k, n, dtype=a.dtype), (*batch, n if full else k, n))
    return U.copy(), xp.zeros((*batch, k), dtype=a.dtype), Vh.copy()


@with_out("linalg", exact=True)
def svdvals(A: Any, *, driver: Any = None, out: Any = None) -> Tensor:
    """The singular values of each matrix, descending."""
    A = matrices(A, "linalg.svdvals")
    if A._array.size == 0:
        result = (
            None,
            xp.zeros((*A.shape[:-2], min(A.shape[-2:])), dtype=A._array.dtype, like=A._array),
            None,
        )
    elif A.requires_grad and modes.grad_enabled:  # the vectors backward reads, as PyTorch's
        result = lapack.svd(A._array, full_matrices=False)
    else:  # without the vectors: twice as fast
        result = None, lapack.svd(A._array, compute_uv=False), None
    if untracked(A):  # no node: LAPACK's array as it is
        return constant(result[1])
    return D.LinalgSvdEx.apply(A, part="S", result=result)


@with_out("linalg")
def qr(A: Any, mode: str = "reduced", *, out: Any = None) -> Qr:
    """(Q, R) with A = Q R: Q's columns orthonormal, R upper triangular; mode "reduced"
    (k = min(m, n) columns), "complete" (Q square) or "r" (R only; Q empty)."""
    A = matrices(A, "linalg.qr")
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"linalg.qr: mode must be 'reduced', 'complete' or 'r'; got {mode!r}")
    a = A._array
    result = lapack.qr(a, "complete" if mode == "complete" else "reduced")
    if untracked(A):  # no node: LAPACK's arrays as they are
        Q = result[0] if mode != "r" else xp.zeros((0,), dtype=a.dtype)
        return Qr(constant(Q), constant(result[1]))
    QR = LQ.LinalgQr.apply(A, part="QR", mode=mode, result=result)
    R = LQ.LinalgQr.apply(QR, part="R", mode=mode, result=result, packed=True)
    if mode == "r":
        return Qr(attached(xp.zeros((0,), dtype=a.dtype), A), R)
    Q = LQ.LinalgQr.apply(QR, part="Q", mode=mode, result=result, packed=True)
    if QR.grad_fn is not None:  # Q and R share one node, as PyTorch's
        q = Q.shape[-1]
        if QR.shape[-2] == q:  # Q beside R in QR's one matrix (see ops/lu_qr.py)
            where = [(..., slice(None), slice(0, q)), (..., slice(None), slice(q, None))]
        else:  # Q above R
            where = [
                (..., slice(0, Q.shape[-2]), slice(None)),
                (..., slice(Q.shape[-2], None), slice(None)),
            ]
        places = [(w, tuple(t.shape), None) for w, t in zip(where, (Q, R), strict=True)]
        part_node(QR, (Q, R), places, "LinalgQr", "LinalgQrBackward0")
    return Qr(Q, R)


@with_out("linalg")
def householder_product(A: Any, tau: Any, *, out: Any = None) -> Tensor:
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T, v_i column i of A
    below its diagonal with a 1 on it (LAPACK's orgqr)."""
    A = matrices(A, "linalg.householder_product")
    tau = tensor_of(tau)
    same_dtype(A, tau, "linalg.householder_product")
    m, n = A.shape[-2:]
    k = tau.shape[-1]
    if not m >= n >= k or tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise ValueError(
            f"linalg.householder_product: expected A (..., m, n) with m >= n >= k and tau "
            f"(..., k); got shapes {tuple(A.shape)} and {tuple(tau.shape)}"
        )
    return LQ.LinalgHouseholderProduct.apply(A, tau)


def _lu_parts(A: Tensor, op: str, parts: tuple[str, ...]) -> tuple[Any, ...]:
    """The parts (each "LU", "L" or "U", differentiable) of A = P L U, then LAPACK's
    pivots and getrf's info."""
    a = A._array
    m, n = a.shape[-2:]
    k, batch = min(m, n), a.shape[:-2]
    if a.size == 0:  # no getrf: the parts' nodes still PyTorch's
        pivots = xp.broadcast_to(xp.arange(1, k + 1, dtype=xp.int32), (*batch, k)).copy()
        found = (xp.zeros(a.shape, dtype=a.dtype), pivots, xp.zeros(batch, dtype=xp.int32))
    else:
        found = LQ.lu_arrays(a, op)  # (LU, pivots, info)
    if untracked(A):  # no node: LAPACK's LU and its triangles
        lu = found[0]
        made = (lu if p == "LU" else LQ.triangle(lu, p) for p in parts)
        return (*map(constant, made), *found[1:])
    result = found[:2]  # (LU, pivots), what the node keeps
    LU = LQ.LinalgLu.apply(A, part="LU", result=result)
    return (
        *(
            LU if p == "LU" else LQ.LinalgLu.apply(LU, part=p, result=result, packed=True)
            for p in parts
        ),
        *found[1:],
    )


@with_out("linalg")
def lu_factor(A: Any, *, pivot: bool = True, out: Any = None) -> LuFactor:
    """(LU, pivots): LAPACK's getrf, L below U's diagonal in one matrix, pivots 1-based."""
    LU, pivots, _ = lu_factor_ex(A, pivot=pivot)
    return LuFactor(LU, pivots)


@with_out("linalg")
def lu_factor_ex(
    A: Any, *, pivot: bool = True, check_errors: bool = False, out: Any = None
) -> LuFactorEx:
    """(LU, pivots, info): lu_factor's, with getrf's info (0, or the 1-based index of the
    first zero on U's diagonal)."""
    A = matrices(A, "linalg.lu_factor")
    if not pivot:
        raise ValueError("linalg.lu_factor: LU without pivoting is not supported on the CPU")
    LU, pivots, info = _lu_parts(A, "linalg.lu_factor", ("LU",))
    named(LU, "LinalgLuFactorExBackward0")  # linalg.lu's LU node, as lu_factor's
    if check_errors and info.any():
        raise D.singular_error("linalg.lu_factor", A._array)
    return LuFactorEx(LU, constant(pivots), constant(info))


@with_out("linalg")
def lu(A: Any, *, pivot: bool = True, out: Any = None) -> Lu:
    """(P, L, U) with A = P L U: L unit lower triangular (m x k), U upper (k x n)."""
    A = matrices(A, "linalg.lu")
    if not pivot:
        raise ValueError("linalg.lu: LU without pivoting is not supported on the CPU")
    LU, L, U, pivots, _ = _lu_parts(A, "linalg.lu", ("LU", "L", "U"))
    if L.grad_fn is not None:  # one node, as PyTorch's
        k = L.shape[-1]
        blocks = ((..., slice(None), slice(0, k)), (..., slice(0, k), slice(None)))
        places = [
            (Triangle(b, upper), tuple(t.shape), None)
            for b, upper, t in zip(blocks, (False, True), (L, U), strict=True)
        ]
        part_node(LU, (L, U), places, "LinalgLu", "LinalgLuBackward0")
    return Lu(constant(LQ.permutation(pivots, A.shape[-2], A._array.dtype)), L, U)


@with_out("")
def lu_unpack(
    LU_data: Any,
    LU_pivots: Any,
    unpack_data: bool = True,
    unpack_pivots: bool = True,
    *,
    out: Any = None,
) -> Lu:
    """(P, L, U) from lu_factor's LU and pivots; ``out=`` as PyTorch's."""
    LU = matrices(LU_data, "lu_unpack")
    m, n = LU.shape[-2:]
    k = min(m, n)
    dtype = LU._array.dtype
    pivots = tensor_of(LU_pivots)._array
    if unpack_pivots and pivots.size and not 1 <= pivots.min() <= pivots.max() <= m:
        raise ValueError(
            f"lu_unpack: pivots must be between 1 and LU's rows ({m}); got pivots from "
            f"{int(pivots.min())} to {int(pivots.max())}"
        )
    if LU.requires_grad and modes.grad_enabled:  # one node, as PyTorch's
        L, U = (
            LQ.LinalgLu.apply(LU, part=p, result=(LU._array, pivots), packed=True) for p in "LU"
        )
        _unpack_node(LU, L, U)
    else:
        L = LU[..., :, :k].tril(-1) + constant(xp.eye(m, k, dtype=dtype))
        U = LU[..., :k, :].triu()
    empty = constant(xp.zeros((0,), dtype=dtype))
    return Lu(
        constant(LQ.permutation(pivots, m, dtype)) if unpack_pivots else empty,
        L if unpack_data else empty,
        U if unpack_data else empty,
    )


def _unpack_node(LU: Tensor, L: Tensor, U: Tensor) -> None:
    """Make L and U, each a triangle of LU by its own node, the outputs of one node,
    PyTorch's LuUnpackBackward0: its gradient is L's strict lower triangle and U's upper one
    put in LU's layout, and its hooks see each output's whole gradient."""
    k = L.shape[-1]
    blocks = ((..., slice(None), slice(0, k)), (..., slice(0, k), slice(None)))
    places = [
        (Triangle(b, upper), tuple(t.shape), None)
        for b, upper, t in zip(blocks, (False, True), (L, U), strict=True)
    ]
    node = share(LU, [L.grad_fn, U.grad_fn], places, "LuUnpack", "LuUnpackBackward0", None)
    node.arrivals = Arrivals(whole=True)  # a triangle's hooks see its whole gradient
    join(node, L, 0)
    join(node, U, 1)


@with_out("linalg", exact=True)
def lu_solve(
    LU: Any, pivots: Any, B: Any, *, left: bool = True, adjoint: bool = False, out: Any = None
) -> Tensor:
    """X with A X = B (left) or X A = B, A^T for A where adjoint, A = P L U given by
    lu_factor's LU and pivots."""
    LU = matrices(LU, "linalg.lu_solve", square=True)
    B = matrices(B, "linalg.lu_solve")
    same_dtype(LU, B, "linalg.lu_solve")
    n = LU.shape[-1]
    if B.shape[-2 if left else -1] != n:
        raise ValueError(
            f"linalg.lu_solve: incompatible shapes of LU and B; got shapes "
            f"{tuple(LU.shape)} and {tuple(B.shape)}"
        )
    piv = tensor_of(pivots)._array
    if lapack.host_float(LU._array) and B._array.dtype == LU._array.dtype:  # getrs itself
        return LQ.LinalgLuSolve.apply(LU, B, options=(left, adjoint, piv))
    # L and U read from LU itself: each solve reads one triangle (L's diagonal as ones), and
    # its gradient is that triangle's. P and P^T permute rows, a gather each.
    perm = LQ.row_order(piv, n)  # P^T's rows: (P^T B)[i] = B[perm[i]]
    if not xp.count_nonzero(perm != xp.arange(n)):  # P = I: no rows to move
        perm = None
    back = None if perm is None else xp.argsort(perm, axis=-1)  # P's
    tri = D.LinalgSolveTriangular.apply
    if left and not adjoint:  # P L U X = B
        Y = tri(LU, _rows(B, perm), upper=False, unitriangular=True)
        return tri(LU, Y, upper=True)
    if left:  # U^T L^T P^T X = B
        Y = tri(LU.mT, tri(LU.mT, B, upper=False), upper=True, unitriangular=True)
        return _rows(Y, back)
    if not adjoint:  # X P L U = B: X = Y P^T, Y L U = B
        Y = tri(LU, tri(LU, B, upper=True, left=False), upper=False, left=False, unitriangular=True)
        return _rows(Y.mT, back).mT
    # X U^T L^T P^T = B: X = (B P) L^-T U^-T
    BP = _rows(B.mT, perm).mT
    return tri(
        LU.mT, tri(LU.mT, BP, upper=True, left=False, unitriangular=True), upper=False, left=False
    )


def _rows(g: Tensor, order: Any) -> Tensor:
    """g with its rows taken in ``order`` (LQ.rows), or g itself where order is None."""
    return g if order is None else LQ.rows(g, order)


class LdlFactor(NamedTuple):
    LD: Tensor
    pivots: Tensor


class LdlFactorEx(NamedTuple):
    LD: Tensor
    pivots: Tensor
    info: Tensor


@with_out("linalg")
def ldl_factor_ex(
    A: Any, *, hermitian: bool = False, check_errors: bool = False, out: Any = None
) -> LdlFactorEx:
    """(LD, pivots, info): LAPACK's sytrf of each symmetric matrix, from its lower triangle
    (Bunch-Kaufman pivoting: a negative pivot marks a 2 x 2 block of D). PyTorch gives it no
    gradient, so neither does chainrule."""
    A = matrices(A, "linalg.ldl_factor", square=True)
    a = A._array
    n, batch = a.shape[-1], a.shape[:-2]
    count = math.prod(batch)
    flat = a.reshape(count, n, n)
    LD = xp.zeros_like(flat)
    pivots = xp.zeros((count, n), dtype=xp.int32)
    info = xp.zeros(count, dtype=xp.int32)
    if n:
        sytrf = D.scipy_linalg("linalg.ldl_factor").lapack.get_lapack_funcs("sytrf", (a,))
        for i in range(count):
            ld, piv, info[i] = sytrf(flat[i], lower=1)
            LD[i], pivots[i] = xp.tril(ld), piv
    if check_errors and info.any():
        first = int(xp.flatnonzero(info)[0])
        where = f" (batch element {first})" if batch else ""
        raise D.LinAlgError(
            f"linalg.ldl_factor: the input is singular{where}: D's diagonal element "
            f"{int(info[first])} is zero; got shape {tuple(a.shape)}"
        )
    return LdlFactorEx(
        constant(LD.reshape(a.shape)),
        constant(pivots.reshape(*batch, n)),
        constant(info.reshape(batch)),
    )


@with_out("linalg")
def ldl_factor(A: Any, *, hermitian: bool = False, out: Any = None) -> LdlFactor:
    """(LD, pivots) of ldl_factor_ex."""
    LD, pivots, _ = ldl_factor_ex(A, hermitian=hermitian)
    return LdlFactor(LD, pivots)


@with_out("linalg", exact=True)
def ldl_solve(LD: Any, pivots: Any, B: Any, *, hermitian: bool = False, out: Any = None) -> Tensor:
    """X with A X = B, A given by ldl_factor's LD and pivots (LAPACK's sytrs); batch dims
    broadcast. No gradient, as in PyTorch."""
    LD = matrices(LD, "linalg.ldl_solve", square=True)
    B = matrices(B, "linalg.ldl_solve")
    same_dtype(LD, B, "linalg.ldl_solve")
    piv = tensor_of(pivots)._array
    n, k = LD.shape[-1], B.shape[-1]
    if B.shape[-2] != n:
        raise ValueError(
            f"linalg.ldl_solve: incompatible shapes of LD and B; got shapes "
            f"{tuple(LD.shape)} and {tuple(B.shape)}"
        )
    batch = xp.broadcast_shapes(LD.shape[:-2], B.shape[:-2], piv.shape[:-1])
    count = math.prod(batch)
    ld = xp.broadcast_to(LD._array, (*batch, n, n)).reshape(count, n, n)
    p = xp.broadcast_to(piv, (*batch, n)).reshape(count, n)
    b = xp.broadcast_to(B._array, (*batch, n, k)).reshape(count, n, k)
    X = xp.zeros_like(b)
    if n and k:
        sytrs = D.scipy_linalg("linalg.ldl_solve").lapack.get_lapack_funcs("sytrs", (ld,))
        for i in range(count):
            X[i] = sytrs(ld[i], p[i], b[i], lower=1)[0]
    return constant(X.reshape(*batch, n, k))


@with_out("linalg")
def eig(A: Any, *, out: Any = None) -> Any:
    """Refused: the eigenvalues of a general real matrix are complex."""
    raise TypeError(
        "linalg.eig: complex tensors are not supported yet (the eigenvalues of a general "
        "matrix are complex); for a symmetric matrix use linalg.eigh"
    )


@with_out("linalg")
def eigvals(A: Any, *, out: Any = None) -> Any:
    """Refused: the eigenvalues of a general real matrix are complex."""
    raise TypeError(
        "linalg.eigvals: complex tensors are not supported yet (the eigenvalues of a general "
        "matrix are complex); for a symmetric matrix use linalg.eigvalsh"
    )
