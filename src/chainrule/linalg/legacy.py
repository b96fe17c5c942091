"""The bodies of PyTorch's older linear-algebra spellings (torch.det, torch.inverse, torch.svd
with V rather than Vh, torch.triangular_solve with its arguments reversed, ...), each a call of
the linalg function it names: Tensor's methods (tensor/linalg.py) call them, forms/linalg.py
is their function forms."""

from __future__ import annotations

from typing import Any, NamedTuple

from ..array import xp
from ..autograd.node import named
from ..ops import decompositions as D
from ..ops import lapack, triangular
from ..tensor import Tensor, where
from . import decompose, solvers
from ._checks import constant, floating, matrices, same_dtype, tensor_of


class SvdUSV(NamedTuple):
    U: Tensor
    S: Tensor
    V: Tensor


class TriangularSolve(NamedTuple):
    solution: Tensor
    cloned_coefficient: Tensor


def det(input: Any) -> Tensor:
    """linalg.det."""
    return solvers.det(input)


def logdet(input: Any) -> Tensor:
    """log det(A): NaN where det(A) < 0, -inf where it is 0."""
    A = tensor_of(input)
    floating(A, "logdet")
    if decompose.untracked(A):  # no node: slogdet's arrays, without its outputs' tensors
        A = matrices(A, "linalg.slogdet", square=True)
        sign, logabsdet, _ = lapack.slogdet(A._array)
        return constant(xp.where(sign == -1, xp.nan, logabsdet))
    sign, logabsdet = solvers.slogdet(A)
    return where(sign == -1, float("nan"), logabsdet)  # as PyTorch's


def slogdet(input: Any) -> solvers.Slogdet:
    """linalg.slogdet."""
    return solvers.slogdet(input)


def inverse(input: Any) -> Tensor:
    """linalg.inv."""
    return solvers.inv(input)


def matrix_power(input: Any, n: int) -> Tensor:
    """linalg.matrix_power."""
    return solvers.matrix_power(input, n)


def matrix_exp(input: Any) -> Tensor:
    """linalg.matrix_exp."""
    return solvers.matrix_exp(input)


def cholesky(input: Any, upper: bool = False) -> Tensor:
    """linalg.cholesky, its node and errors PyTorch's of this older op (CholeskyBackward0)."""
    A = matrices(input, "cholesky", square=True)
    return named(D.LinalgCholeskyEx.apply(A, upper=upper, op="cholesky"), "CholeskyBackward0")


def cholesky_solve(input: Any, input2: Any, upper: bool = False) -> Tensor:
    """X with A X = B, A = L L^T given by its Cholesky factor input2 (U^T U where upper);
    input is B; batch dims broadcast."""
    B = matrices(input, "cholesky_solve")
    L = matrices(input2, "cholesky_solve", square=True)
    same_dtype(B, L, "cholesky_solve")
    if B.shape[-2] != L.shape[-1]:
        raise ValueError(
            f"cholesky_solve: incompatible shapes of B and the factor; got shapes "
            f"{tuple(B.shape)} and {tuple(L.shape)}"
        )
    return D.CholeskySolve.apply(B, L, upper=upper)


def cholesky_inverse(input: Any, upper: bool = False) -> Tensor:
    """A^-1 for A = L L^T (U^T U where upper) given by its Cholesky factor."""
    L = matrices(input, "cholesky_inverse", square=True)
    eye = Tensor._make(xp.eye(L.shape[-1], dtype=L._array.dtype))  # broadcast to L's batch
    return _CHOLESKY_INVERSE.apply(eye, L, upper=upper)  # L checked: cholesky_solve's pass


# cholesky_inverse's solve, its node named as PyTorch's for the op
_CHOLESKY_INVERSE = D.CholeskySolve.named("CholeskyInverseBackward0")


def svd(input: Any, some: bool = True, compute_uv: bool = True) -> SvdUSV:
    """(U, S, V) with A = U diag(S) V^T: V, not Vh; reduced unless some=False. Without
    compute_uv, U and V are zeros (and carry no gradient)."""
    A = matrices(input, "svd")
    if not compute_uv:
        S = decompose.svdvals(A)
        m, n = A.shape[-2:]
        zeros = xp.zeros
        dtype = A._array.dtype
        return SvdUSV(
            Tensor._make(zeros((*A.shape[:-2], m, m), dtype=dtype)),
            S,
            Tensor._make(zeros((*A.shape[:-2], n, n), dtype=dtype)),
        )
    U, S, Vh = decompose.svd(A, full_matrices=not some)
    return SvdUSV(U, S, Vh.mT)


def pinverse(input: Any, rcond: float = 1e-15) -> Tensor:
    """linalg.pinv with rtol = rcond."""
    return solvers.pinv(input, rtol=rcond)


def qr(input: Any, some: bool = True) -> decompose.Qr:
    """linalg.qr, mode "reduced" where some, else "complete"."""
    return decompose.qr(input, "reduced" if some else "complete")


def lu(A: Any, pivot: bool = True, get_infos: bool = False) -> tuple:
    """(LU, pivots), and info where get_infos: linalg.lu_factor_ex."""
    LU, pivots, info = decompose.lu_factor_ex(matrices(A, "lu"), pivot=pivot)
    return (LU, pivots, info) if get_infos else (LU, pivots)


def lu_solve(b: Any, LU_data: Any, LU_pivots: Any) -> Tensor:
    """linalg.lu_solve(LU_data, LU_pivots, b)."""
    b, LU_data = matrices(b, "lu_solve"), matrices(LU_data, "lu_solve")
    return decompose.lu_solve(LU_data, LU_pivots, b)


def triangular_solve(
    b: Any,
    A: Any,
    upper: bool = True,
    transpose: bool = False,
    unitriangular: bool = False,
) -> TriangularSolve:
    """(X, a copy of A) with A X = b (A^T X = b where transpose), A triangular; batch dims
    broadcast. One op, whose node the two outputs share, as PyTorch's."""
    A = matrices(A, "triangular_solve", square=True)
    b = matrices(b, "triangular_solve")
    same_dtype(A, b, "triangular_solve")
    shape_b, shape_a = b._array.shape, A._array.shape
    if shape_b[-2] != shape_a[-1]:
        raise ValueError(
            f"triangular_solve: A and b must have as many rows; got shapes {shape_a} and {shape_b}"
        )
    packed = triangular.TriangularSolve.apply(
        b, A, upper=upper, transpose=transpose, unitriangular=unitriangular
    )  # (..., n, k + n): X beside A's copy
    k, batch = shape_b[-1], (slice(None),) * (packed._array.ndim - 1)
    parts = [(*batch, slice(0, k)), (*batch, slice(k, None))]
    return TriangularSolve(*solvers.outputs(packed, "TriangularSolve", parts))


def orgqr(input: Any, input2: Any) -> Tensor:
    """linalg.householder_product(input, input2)."""
    return decompose.householder_product(matrices(input, "orgqr"), input2)
