"""chainrule.linalg's inverses and solvers: inv, solve, solve_triangular, det, slogdet,
cholesky, lstsq, pinv, matrix_rank, matrix_power, matrix_exp, tensorinv and tensorsolve, on
the primitives of ops/decompositions.py (solve's in lu_qr.py); the factorisations are in
decompose.py."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

from ..array import xp
from ..autograd.forward_ad import carries, set_tangent, tangent_of
from ..autograd.node import named
from ..autograd.outputs import packed_outputs
from ..autograd.saved import record
from ..ops import decompositions as D
from ..ops import elementwise, lapack, lu_qr, movement
from ..tensor import Tensor
from ._checks import constant, low_precision, matrices, same_dtype, tensor_of, with_out
from .decompose import untracked


class InvEx(NamedTuple):
    inverse: Tensor
    info: Tensor


class SolveEx(NamedTuple):
    result: Tensor
    info: Tensor


class Slogdet(NamedTuple):
    sign: Tensor
    logabsdet: Tensor


class CholeskyEx(NamedTuple):
    L: Tensor
    info: Tensor


class Lstsq(NamedTuple):
    solution: Tensor
    residuals: Tensor
    rank: Tensor
    singular_values: Tensor


@with_out("linalg", exact=True)
def inv(A: Any, *, out: Any = None) -> Tensor:
    """A^-1 for each square matrix of A; a singular one is a LinAlgError naming it."""
    A = matrices(A, "linalg.inv", square=True)
    return D.LinalgInvEx.apply(A)


@with_out("linalg")
def inv_ex(A: Any, *, check_errors: bool = False, out: Any = None) -> InvEx:
    """(inverse, info): info (int32, batch shape) is 0, or for a singular matrix the 1-based
    index of the zero on its LU factor's diagonal (its inverse is then NaN)."""
    A = matrices(A, "linalg.inv_ex", square=True)
    result = D.LinalgInvEx.apply(A, check=check_errors)
    return InvEx(result, constant(D.lu_info(A._array)))


def _vector_rhs(A: Tensor, B: Tensor) -> bool:
    """PyTorch's rule for solve's B: a vector (or a batch of them) where it is 1-D or has
    A's shape without its last dim."""
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


@with_out("linalg", exact=True)
def solve(A: Any, B: Any, *, left: bool = True, out: Any = None) -> Tensor:
    """X with A X = B (left) or X A = B, for square A; B a matrix or a vector (1-D, or A's
    shape without its last dim); batch dims broadcast."""
    A = matrices(A, "linalg.solve", square=True)
    B = tensor_of(B)
    same_dtype(A, B, "linalg.solve")
    vector = _vector_rhs(A, B)
    if vector and not left:
        raise ValueError(
            "linalg.solve: a vector B is not supported for left=False; got shapes "
            f"{tuple(A.shape)} and {tuple(B.shape)}; X A = B is then B / A.squeeze(-1)"
        )
    Bm = B.unsqueeze(-1) if vector else B
    if Bm.ndim < 2 or Bm.shape[-2 if left else -1] != A.shape[-1]:
        raise ValueError(
            f"linalg.solve: incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'}; got shapes {tuple(A.shape)} and {tuple(B.shape)}"
        )
    return lu_qr.LinalgSolveEx.apply(A, B, left=left, vector=vector)


@with_out("linalg")
def solve_ex(
    A: Any, B: Any, *, left: bool = True, check_errors: bool = False, out: Any = None
) -> SolveEx:
    """(result, info) of solve; info as inv_ex's."""
    A = matrices(A, "linalg.solve_ex", square=True)
    result = solve(A, B, left=left)
    return SolveEx(result, constant(D.lu_info(A._array)))


@with_out("linalg", exact=True)
def solve_triangular(
    A: Any,
    B: Any,
    *,
    upper: bool,
    left: bool = True,
    unitriangular: bool = False,
    out: Any = None,
) -> Tensor:
    """X with A X = B (left) or X A = B, A upper or lower triangular (its other triangle
    unread; its diagonal ones where unitriangular); batch dims broadcast."""
    A = matrices(A, "linalg.solve_triangular", square=True)
    B = matrices(B, "linalg.solve_triangular")
    same_dtype(A, B, "linalg.solve_triangular")
    if B.shape[-2 if left else -1] != A.shape[-1]:
        raise ValueError(
            f"linalg.solve_triangular: incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'}; got shapes {tuple(A.shape)} and {tuple(B.shape)}"
        )
    return D.LinalgSolveTriangular.apply(A, B, upper=upper, left=left, unitriangular=unitriangular)


@with_out("linalg", exact=True)
def det(A: Any, *, out: Any = None) -> Tensor:
    """The determinant of each square matrix of A."""
    return D.LinalgDet.apply(matrices(A, "linalg.det", square=True))


@with_out("linalg")
def slogdet(A: Any, *, out: Any = None) -> Slogdet:
    """(sign, logabsdet): det(A) = sign exp(logabsdet); sign 0 and logabsdet -inf where A is
    singular."""
    A = matrices(A, "linalg.slogdet", square=True)
    sign, logabsdet, factor = lapack.slogdet(A._array)  # once, for both outputs
    if untracked(A):  # no node: the arrays as they are
        return Slogdet(constant(sign), constant(logabsdet))
    packed = D.LinalgSlogdet.apply(A, result=(sign, logabsdet), factor=factor)  # (2, *batch)
    return Slogdet(*outputs(packed, "LinalgSlogdet", [(0,), (1,)]))


def outputs(packed: Tensor, op: str, indices: list[Any]) -> list[Tensor]:
    """packed[index] for each index, the outputs of ``op`` (its primitive's name), which
    share packed's node as PyTorch's outputs share one (as var_mean's: autograd/outputs.py)."""
    if packed.grad_fn is None:  # no node to share (forward mode's tangents are its parts)
        return list(movement.sliced(movement.GetItem, packed, indices))
    parts = []
    for index in indices:  # the rule of each output's place in packed: indexing's
        part = movement.GetItem()
        part.inputs, part.index = (packed,), index
        parts.append(part)
    read = packed.grad_fn.outputs_read
    outs = packed_outputs(packed, parts, op, op + "Backward0", read, indices)
    if carries((packed,)):  # a dual level is open: each output's tangent is its part
        tangent = tangent_of(packed)
        for out, index in zip(outs, indices, strict=True):
            set_tangent(out, tangent[index])
    return outs


@with_out("linalg", exact=True)
def cholesky(A: Any, *, upper: bool = False, out: Any = None) -> Tensor:
    """L (lower triangular, L L^T = A), or U = L^T where upper, from A's lower triangle; a
    matrix that is not positive-definite is a LinAlgError naming it and its minor."""
    A = matrices(A, "linalg.cholesky", square=True)
    return D.LinalgCholeskyEx.apply(A, upper=upper)


@with_out("linalg")
def cholesky_ex(
    A: Any, *, upper: bool = False, check_errors: bool = False, out: Any = None
) -> CholeskyEx:
    """(L, info): info (int32) is 0, or the order of the first leading minor that is not
    positive-definite (L is then factored up to it, as PyTorch's)."""
    A = matrices(A, "linalg.cholesky_ex", square=True)
    L = D.LinalgCholeskyEx.apply(A, upper=upper, check=check_errors, op="linalg.cholesky_ex")
    info = D.cholesky_info(A._array) if A._array.size else xp.zeros(A.shape[:-2], xp.int32)
    return CholeskyEx(L, constant(info))


def _tolerances(A: Tensor, atol: Any, rtol: Any, rcond: Any = None) -> tuple[Any, Any]:
    """PyTorch's atol and rtol of pinv and matrix_rank, as arrays that broadcast against
    A's batch with a trailing 1: rtol = eps max(m, n) when neither is given, 0 when only
    atol is (and positive); rcond is rtol's older name."""
    if rcond is not None:
        rtol = rcond
    eps = float(xp.finfo(A._array.dtype).eps) * max(A.shape[-2:], default=0)
    atol = 0.0 if atol is None else atol._array if isinstance(atol, Tensor) else atol
    if rtol is None:
        rtol = xp.where(xp.asarray(atol) > 0, 0.0, eps)
    rtol = rtol._array if isinstance(rtol, Tensor) else rtol
    return xp.asarray(atol)[..., None], xp.asarray(rtol)[..., None]


@with_out("linalg")
def pinv(
    A: Any,
    *,
    atol: Any = None,
    rtol: Any = None,
    hermitian: bool = False,
    out: Any = None,
) -> Tensor:
    """The pseudoinverse: singular values (or, hermitian, |eigenvalues|) at most
    max(atol, rtol * the largest) count as 0."""
    A = matrices(A, "linalg.pinv", square=hermitian)
    a, r = _tolerances(A, atol, rtol)
    return D.LinalgPinv.apply(A, atol=a, rtol=r, hermitian=hermitian)


@with_out("linalg")
def matrix_rank(
    A: Any,
    *,
    atol: Any = None,
    rtol: Any = None,
    hermitian: bool = False,
    out: Any = None,
) -> Tensor:
    """The number of singular values (|eigenvalues| where hermitian) above
    max(atol, rtol * the largest), as int64."""
    A = matrices(A, "linalg.matrix_rank", square=hermitian)
    a, r = _tolerances(A, atol, rtol)
    if A._array.size == 0:
        return constant(xp.zeros(A.shape[:-2], dtype=xp.int64))
    if hermitian:
        S = xp.abs(xp.linalg.eigvalsh(A._array))
    else:
        S = lapack.svd(A._array, compute_uv=False)
    cut = xp.maximum(a, r * S.max(-1, keepdims=True))
    return constant((S > cut).sum(-1).astype(xp.int64))


def lstsq(A: Any, B: Any, rcond: Any = None, *, driver: str | None = None) -> Lstsq:
    """(solution, residuals, rank, singular_values) of min ||A X - B|| by LAPACK's driver
    (gelsy unless given, as PyTorch's CPU): residuals ||A X - B||^2 per column where m > n,
    A has full rank and the driver is not gelsy, else empty; rank but for gels; the
    singular values for gelsd and gelss only."""
    A = matrices(A, "linalg.lstsq")
    B = tensor_of(B)
    same_dtype(A, B, "linalg.lstsq")
    driver = driver or "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise ValueError(
            f"linalg.lstsq: driver must be one of 'gels', 'gelsy', 'gelsd' or 'gelss'; "
            f"got {driver!r}"
        )
    shapes = f"got shapes {tuple(A.shape)} and {tuple(B.shape)}"
    if not 0 <= A.ndim - B.ndim <= 1 or B.ndim == 0:
        raise ValueError(f"linalg.lstsq: B must have as many dims as A or one fewer; {shapes}")
    # PyTorch's rule: B is a vector, or a batch of them, where it is 1-D or of A's shape
    # without its last dim; otherwise a matrix (..., m, k), batch dims broadcast
    vector = B.ndim == 1 or tuple(B.shape) == tuple(A.shape[:-1])
    Bm = B.unsqueeze(-1) if vector else B
    if Bm.ndim < 2 or Bm.shape[-2] != A.shape[-2]:
        raise ValueError(f"linalg.lstsq: A and B must have the same number of rows; {shapes}")
    if Bm.ndim < A.ndim:  # a matrix one dim short: PyTorch broadcasts its batch dims with
        # B's leading dims (its rows among them) and expands B, a matrix, to that batch
        try:
            batch = xp.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-1]))
        except ValueError:
            raise ValueError(f"linalg.lstsq: batch dims do not broadcast; {shapes}") from None
        Bm = B.expand(*batch, *B.shape)  # (*batch, m, k)
    lapack = "gelsy" if driver == "gels" else driver
    found: dict[str, Any] = {}  # LAPACK's rank and singular values, as forward met them
    m, n = A.shape[-2:]
    wanted = m > n and driver != "gelsy"  # residuals, where every A has full rank
    X = D.LinalgLstsq.apply(
        A, Bm, rcond=rcond, driver=lapack, found=found, residuals=wanted
    )  # (..., n, k), or (..., n + 1, k): the residuals below the solution
    shape = X.shape[:-2]
    batch = (slice(None),) * len(shape)
    column = (0,) if vector else ()  # a vector B's solution is a vector
    if found["residuals"] or X._array.size:  # both outputs of the one node, as PyTorch's
        # the residuals below the solution, or none: an empty part of X's first row
        none = (0,) * (len(shape) + 1) + (slice(0, 0),)  # X[0, ..., 0, :0], of shape (0,)
        place = (*batch, n) if found["residuals"] else none
        solution, residuals = outputs(X, "LinalgLstsq", [(*batch, slice(0, n), *column), place])
        record(X, solution=solution._array, b=B._array)  # PyTorch's node keeps these
    else:  # an empty X: no place in it for the residuals
        X = record(X, solution=X._array, b=B._array)
        solution = X.squeeze(-1) if vector else X
        # none: empty, from a node of PyTorch's name and saved values
        residuals = record(_NO_RESIDUALS.apply(A, B), solution=solution._array, b=B._array)
    # the rank and singular values are A's: of A's batch, not the one broadcast with B's
    pairs = zip(A.shape[:-2], shape, strict=True)
    own = tuple(slice(None) if a == b else slice(0, 1) for a, b in pairs)
    rank_arr, sv_arr = found["rank"].reshape(shape)[own], found["sv"][own]
    empty = xp.zeros((0,), dtype=A._array.dtype)
    rank = xp.zeros((0,), dtype=xp.int64) if driver == "gels" else rank_arr
    sv = sv_arr if driver in ("gelsd", "gelss") else empty
    return Lstsq(solution, residuals, constant(rank), constant(sv))


@with_out("linalg")
def matrix_power(A: Any, n: int, *, out: Any = None) -> Tensor:
    """A^n by repeated squaring (n < 0: of A^-1; n = 0: the identity)."""
    # integer and half-precision matrices multiply, as PyTorch's; their inverse is refused
    A = matrices(A, "linalg.matrix_power", square=True, numbers=isinstance(n, int) and n >= 0)
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"linalg.matrix_power: n must be an int; got {type(n).__name__}")
    if n == 0:  # the identity copied into A's clone, as PyTorch's (CopyBackwards): grad 0
        eye = xp.broadcast_to(xp.eye(A.shape[-1], dtype=A._array.dtype, like=A._array), A.shape)
        if not A.requires_grad:
            return constant(eye.copy())
        return _COPY.apply(xp.zeros_like(A._array, dtype=bool), A.clone(), constant(eye))
    if n < 0:
        A, n = D.LinalgInvEx.apply(A), -n
    result, square = None, A
    while n:
        if n & 1:
            result = square if result is None else result @ square
        n >>= 1
        if n:
            square = square @ square
    assert result is not None
    return result


def matrix_exp(A: Any) -> Tensor:
    """exp(A) = sum_k A^k / k! of each square matrix (float16 and bfloat16 computed in
    float32, as PyTorch's)."""
    A = tensor_of(A)
    if low_precision(A):
        return matrix_exp(A.float()).to(A.dtype)
    return D.LinalgMatrixExp.apply(matrices(A, "linalg.matrix_exp", square=True))


@with_out("linalg")
def tensorinv(A: Any, ind: int = 2, *, out: Any = None) -> Tensor:
    """The inverse of A in tensordot's sense over its first ``ind`` dims: of shape
    A.shape[ind:] + A.shape[:ind]."""
    A = tensor_of(A)
    if ind <= 0:
        raise ValueError(f"linalg.tensorinv: expected a strictly positive ind; got {ind}")
    rows, cols = A.shape[:ind], A.shape[ind:]
    if math.prod(rows) != math.prod(cols):
        raise ValueError(
            f"linalg.tensorinv: the product of the first {ind} dims must equal the product of "
            f"the rest; got shape {tuple(A.shape)}"
        )
    square = A.reshape(math.prod(rows), math.prod(cols))
    inverse = inv(square)
    out = inverse.reshape(*cols, *rows)
    return out if out is inverse else named(out, "ReshapeAliasBackward0")  # as PyTorch's


@with_out("linalg")
def tensorsolve(A: Any, B: Any, dims: Sequence[int] | None = None, *, out: Any = None) -> Tensor:
    """X with tensordot(A, X, X.ndim) = B: X of shape A.shape[B.ndim:] (``dims`` of A moved
    to the end first)."""
    A, B = tensor_of(A), tensor_of(B)
    if dims is not None:
        moved = [d % A.ndim for d in dims]
        A = A.permute(*[d for d in range(A.ndim) if d not in moved], *moved)
    rest = A.shape[B.ndim :]
    rows = math.prod(B.shape)
    if math.prod(rest) != rows or math.prod(A.shape[: B.ndim]) != rows:
        raise ValueError(
            f"linalg.tensorsolve: A's first B.ndim dims and its other dims must each hold as "
            f"many elements as B; got shapes {tuple(A.shape)} and {tuple(B.shape)}"
        )
    X = solve(A.reshape(rows, rows), B.reshape(rows))
    return movement.Reshape.apply(X, shape=tuple(rest))  # PyTorch's last view, even of (rows,)


# matrix_power(A, 0)'s copy of the identity into A's clone, as PyTorch's copy_ node
_COPY = elementwise.Where.named("CopyBackwards")
# lstsq's empty residuals, their node named as PyTorch's one node of lstsq
_NO_RESIDUALS = D.LinalgLstsqEmpty.named("LinalgLstsqBackward0")
