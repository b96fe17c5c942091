"""chainrule.linalg's norms (norm, vector_norm, matrix_norm, cond) and products (multi_dot,
cross, vecdot, diagonal, vander), all composites of Tensor ops and the decompositions."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .. import fastpath
from ..arguments import need_number, normalize_dim
from ..array import result_array, xp
from ..autograd.saved import record
from ..functions import cat
from ..ops.decompositions import LinalgVectorNorm
from ..ops.linalg import LinalgCross, MatMul
from ..ops.movement import Permute, viewed
from ..tensor import Tensor
from ..tensor import reductions as norms
from ..tensor.arithmetic import matmul
from ..tensor.indexing import cross_dim
from ._checks import constant, floating, low_precision, matrices, tensor_of, with_out
from .decompose import svdvals, untracked
from .solvers import inv_ex

_MATRIX_ORDS = ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf)


@with_out("linalg", exact=True)
def vector_norm(
    x: Any,
    ord: float = 2,
    dim: Any = None,
    keepdim: bool = False,
    *,
    dtype: Any = None,
    out: Any = None,
) -> Tensor:
    """(sum |x|^ord)^(1/ord) over dim (every dim for None); inf and -inf the largest and
    smallest |x|, 0 the count of nonzeros. ``dtype``: x is cast to it first."""
    x = tensor_of(x)
    if not low_precision(x):  # halves: computed in float32, as PyTorch (the op's forward)
        floating(x, "linalg.vector_norm")
    if isinstance(ord, str):
        raise ValueError(f"linalg.vector_norm: ord must be a number; got {ord!r}")
    if dtype is not None:
        x = x.to(dtype)
    return norms.vector_norm(x, ord, dim, keepdim, "linalg.vector_norm")


def _dims(A: Tensor, dim: Sequence[int], op: str) -> tuple[int, int]:
    """The two dims ``dim`` of A (rows, cols), checked and made non-negative."""
    if len(dim) != 2:
        raise ValueError(f"{op}: dim must be a 2-tuple; got {tuple(dim)}")
    ndim, shape = A._array.ndim, A._array.shape
    r, c = normalize_dim(dim[0], ndim, op, shape), normalize_dim(dim[1], ndim, op, shape)
    if r == c:
        raise ValueError(f"{op}: dims must be different; got {tuple(dim)}")
    return r, c


def _to_end(A: Tensor, dim: Sequence[int], op: str) -> tuple[Tensor, int, int]:
    """A with its two dims ``dim`` moved last: (..., rows, cols), and the two dims."""
    r, c = _dims(A, dim, op)
    if (r, c) == (A.ndim - 2, A.ndim - 1):  # already last: no view to make
        return A, r, c
    rest = [d for d in range(A.ndim) if d not in (r, c)]
    return A.permute(*rest, r, c), r, c


@with_out("linalg", exact=True)
def matrix_norm(
    A: Any,
    ord: Any = "fro",
    dim: Sequence[int] = (-2, -1),
    keepdim: bool = False,
    *,
    dtype: Any = None,
    out: Any = None,
) -> Tensor:
    """The matrix norm over the two dims ``dim``: 'fro', 'nuc' (sum of the singular values),
    2 and -2 (the largest and smallest singular value), 1 and -1 (max and min column sums
    of |A|), inf and -inf (max and min row sums)."""
    A = tensor_of(A)
    if dtype is None and low_precision(A) and ord in ("fro", 1, -1, math.inf, -math.inf):
        return matrix_norm(A.float(), ord, dim, keepdim).to(A.dtype)  # as vector_norm
    A = matrices(A, "linalg.matrix_norm")
    if ord not in _MATRIX_ORDS:
        raise ValueError(
            f"linalg.matrix_norm: ord must be one of 'fro', 'nuc', inf, -inf, 1, -1, 2, -2; "
            f"got {ord!r}"
        )
    if dtype is not None:
        A = A.to(dtype)
    if ord in (1, -1, math.inf, -math.inf):  # sums and their extreme over A's own dims, as
        # PyTorch's (its node Amax or Amin, keepdim or not): no permute, no unsqueeze
        r, c = _dims(A, dim, "linalg.matrix_norm")
        summed, kept = (r, c) if abs(ord) == 1 else (c, r)
        sums = A.abs().sum(summed, keepdim=keepdim)
        kept -= not keepdim and kept > summed  # the summed dim gone from before it
        return sums.amax(kept, keepdim=keepdim) if ord > 0 else sums.amin(kept, keepdim=keepdim)
    if ord == "fro":  # over A's own dims, as PyTorch's (LinalgVectorNormBackward0, its ord 2)
        dims = _dims(A, dim, "linalg.matrix_norm")
        if untracked(A):  # no node: the op's forward on the array, without its apply
            return constant(result_array(LinalgVectorNorm().forward(A._array, 2.0, dims, keepdim)))
        return record(LinalgVectorNorm.apply(A, p=2.0, dim=dims, keepdim=keepdim), ord=2)
    M, r, c = _to_end(A, dim, "linalg.matrix_norm")  # "nuc", 2 or -2: of the singular values
    if M.numel() == 0 and ord != "nuc" or M.numel() == 0 and min(M.shape[-2:]) > 0:
        raise ValueError(
            f"linalg.matrix_norm: the {ord} norm of an empty matrix is not defined; got "
            f"shape {tuple(A.shape)}"
        )
    S = svdvals(M)
    if not keepdim:
        return S.sum(-1) if ord == "nuc" else S.amax(-1) if ord == 2 else S.amin(-1)
    one = S.sum(-1, True) if ord == "nuc" else S.amax(-1, True) if ord == 2 else S.amin(-1, True)
    order = [d for d in range(A.ndim) if d not in (r, c)] + [r, c]  # M's dims in A's
    back = sorted(range(A.ndim), key=order.__getitem__)  # (..., 1, 1) -> A's order
    # as PyTorch's, PermuteBackward0, the identity's too (which Tensor.permute leaves out)
    return viewed(_PERMUTE, one.unsqueeze(-1), dims=tuple(back))


_PERMUTE = Permute.named("PermuteBackward0")  # matrix_norm's last permute, a swap's too


@with_out("linalg", exact=True)
def norm(
    A: Any,
    ord: Any = None,
    dim: Any = None,
    keepdim: bool = False,
    *,
    dtype: Any = None,
    out: Any = None,
) -> Tensor:
    """A vector norm (dim an int or one dim; ord None over every dim flattened) or a matrix
    norm (dim two dims, or a 2-D A with ord given)."""
    A = tensor_of(A)
    dims = [dim] if isinstance(dim, int) else None if dim is None else list(dim)
    if dims is not None and len(dims) == 2 or dims is None and ord is not None and A.ndim == 2:
        return matrix_norm(A, "fro" if ord is None else ord, dims or (-2, -1), keepdim, dtype=dtype)
    if dims is None and ord is not None and A.ndim != 1:
        raise ValueError(
            f"linalg.norm: with ord given and dim None, the input must be 1-D or 2-D; got "
            f"shape {tuple(A.shape)}"
        )
    if isinstance(ord, str):
        raise ValueError(f"linalg.norm: order {ord!r} is a matrix norm, over 2 dims; got dim {dim}")
    return vector_norm(A, 2.0 if ord is None else ord, dims, keepdim, dtype=dtype)


@with_out("linalg")
def cond(A: Any, p: Any = None, *, out: Any = None) -> Tensor:
    """The condition number in the norm p: the ratio of the largest and smallest singular
    values for None, 2 and -2; else norm(A) norm(A^-1), inf where A is singular."""
    A = matrices(A, "linalg.cond", square=p not in (None, 2, -2))
    if p in (None, 2, -2):
        S = svdvals(A)
        ratio = S[..., 0] / S[..., -1]
        return ratio if p != -2 else S[..., -1] / S[..., 0]
    inverse, info = inv_ex(A)
    singular = constant(info._array != 0)
    value = matrix_norm(A, p) * matrix_norm(inverse.masked_fill(singular[..., None, None], 0), p)
    return value.masked_fill(singular, math.inf)


@with_out("linalg", exact=True)
def multi_dot(tensors: Sequence[Any], *, out: Any = None) -> Tensor:
    """The product of two or more matrices (the first may be a row vector, the last a
    column vector, each then dropped from the result), in the order of fewest flops. A
    vector end is multiplied as a vector (matmul's 1-D case: no unsqueeze and squeeze)."""
    ts = [tensor_of(t) for t in tensors]
    if len(ts) < 2:
        raise ValueError(f"linalg.multi_dot: expected at least 2 tensors; got {len(ts)}")
    shapes = [tuple(t.shape) for t in ts]
    dims = [shapes[0][0] if len(shapes[0]) == 2 else 1]  # the chain's orders, vectors as 1
    for i, shape in enumerate(shapes):
        if len(shape) != 2 and not (len(shape) == 1 and i in (0, len(ts) - 1)):
            raise ValueError(
                f"linalg.multi_dot: tensor {i} must be 2-D (the first and last may be 1-D); "
                f"got shape {shape}"
            )
        if i and shapes[i - 1][-1] != shape[0]:
            raise ValueError(
                f"linalg.multi_dot: tensors {i - 1} and {i} cannot be multiplied; got shapes "
                f"{shapes[i - 1]} and {shape}"
            )
        dims.append(shape[-1] if len(shape) == 2 or not i else 1)
    if len(ts) == 2:
        return matmul(ts[0], ts[1], _LAST)
    if len(ts) == 3:  # the two orders' costs compared, as PyTorch's
        a, b, c, d = dims
        if a * b * c + a * c * d <= b * c * d + a * b * d:  # (AB)C
            return matmul(ts[0] @ ts[1], ts[2], _LAST)
        return matmul(ts[0], ts[1] @ ts[2], _LAST)
    split = _order(dims)
    k = split[0][len(ts) - 1]
    return matmul(_chain(ts, split, 0, k), _chain(ts, split, k + 1, len(ts) - 1), _LAST)


# multi_dot's last product, named as PyTorch's last node (a view of its products' result)
_LAST = MatMul.named("ViewBackward0")


def _order(dims: list[int]) -> list[list[int]]:
    """The split of each chain i..j of fewest multiplications (the textbook dynamic program)."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j], split[i][j] = min(
                (cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1], k)
                for k in range(i, j)
            )
    return split


def _chain(ts: list[Tensor], split: list[list[int]], i: int, j: int) -> Tensor:
    if i == j:
        return ts[i]
    k = split[i][j]
    return _chain(ts, split, i, k) @ _chain(ts, split, k + 1, j)


@with_out("linalg", exact=True)
def cross(input: Any, other: Any, *, dim: int = -1, out: Any = None) -> Tensor:
    """The cross product of 3-vectors along dim; the two broadcast."""
    a, b = tensor_of(input), tensor_of(other)
    if a._array.ndim != b._array.ndim:
        raise ValueError(
            f"linalg.cross: inputs must have the same number of dimensions; got shapes "
            f"{tuple(a.shape)} and {tuple(b.shape)}"
        )
    if a._array.dtype != b._array.dtype:
        raise TypeError(f"linalg.cross: expects one dtype; got {a.dtype} and {b.dtype}")
    need_number(a, "linalg.cross")
    d = cross_dim(a, b, dim, "linalg.cross")
    if fastpath.off_graph(a) and fastpath.off_graph(b):  # no node: forward's array wrapped
        return Tensor._make(LinalgCross().forward(a._array, b._array, d))
    return LinalgCross.apply(a, b, dim=d)


@with_out("linalg", exact=True)
def vecdot(x: Any, y: Any, *, dim: int = -1, out: Any = None) -> Tensor:
    """sum(x * y) along dim, the two broadcast; vdot's one node for two vectors, as
    PyTorch's."""
    x, y = tensor_of(x), tensor_of(y)
    if x.ndim == 1 and y.ndim == 1 and x._array.dtype == y._array.dtype:
        return x.vdot(y)
    return (x * y).sum(dim)


def diagonal(A: Any, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The diagonal of each matrix that dims dim1 and dim2 hold (offset above it, or below
    for a negative offset), as the last dim."""
    A = tensor_of(A)
    _dims(A, (dim1, dim2), "linalg.diagonal")  # checked here: the error names linalg's op
    return A.diagonal(offset, dim1, dim2)  # a view, as PyTorch's


def vander(x: Any, *, N: int | None = None) -> Tensor:
    """Columns x^0, x^1, ..., x^(N-1) of each vector x (N = its length by default): ones
    beside the running product of N - 1 copies of x, as PyTorch's (its last node a cat)."""
    x = tensor_of(x)
    x = x.reshape(1) if x.ndim == 0 else x  # a number is a vector of one, as PyTorch's
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise ValueError(f"linalg.vander: N must be greater than 1; got {n}")
    if x._array.dtype.kind == "b":
        raise TypeError("linalg.vander: not defined for bool tensors; got dtype bool")
    ones = constant(xp.ones((*x.shape, 1), dtype=x._array.dtype))
    return cat([ones, x.unsqueeze(-1).expand(*x.shape, n - 1).cumprod(-1)], -1)
