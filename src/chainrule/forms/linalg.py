"""The function forms of the linear-algebra methods (torch.det, torch.inverse, torch.svd, ...):
``cr.det(A)`` is ``A.det()``, ``input`` made a Tensor first; ``out=`` where PyTorch's function
takes it."""

from __future__ import annotations

from typing import Any

from ..linalg._checks import with_out
from ..linalg.decompose import Qr
from ..linalg.legacy import SvdUSV, TriangularSolve
from ..linalg.solvers import Slogdet
from ..tensor import Tensor, as_tensor

__all__ = [
    "cholesky",
    "cholesky_inverse",
    "cholesky_solve",
    "det",
    "inverse",
    "logdet",
    "lu",
    "lu_solve",
    "matrix_exp",
    "matrix_power",
    "orgqr",
    "pinverse",
    "qr",
    "slogdet",
    "svd",
    "triangular_solve",
]


def det(input: Tensor) -> Tensor:
    """The function form of Tensor.det."""
    return as_tensor(input).det()


def logdet(input: Tensor) -> Tensor:
    """The function form of Tensor.logdet."""
    return as_tensor(input).logdet()


@with_out("")
def slogdet(input: Tensor, *, out: Any = None) -> Slogdet:
    """The function form of Tensor.slogdet (``out=`` as PyTorch's)."""
    return as_tensor(input).slogdet()


@with_out("", exact=True)
def inverse(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.inverse (``out=`` as PyTorch's)."""
    return as_tensor(input).inverse()


@with_out("")
def cholesky(input: Tensor, upper: bool = False, *, out: Any = None) -> Tensor:
    """The function form of Tensor.cholesky (``out=`` as PyTorch's)."""
    return as_tensor(input).cholesky(upper)


@with_out("")
def cholesky_solve(input: Tensor, input2: Any, upper: bool = False, *, out: Any = None) -> Tensor:
    """The function form of Tensor.cholesky_solve (``out=`` as PyTorch's)."""
    return as_tensor(input).cholesky_solve(input2, upper)


@with_out("")
def cholesky_inverse(input: Tensor, upper: bool = False, *, out: Any = None) -> Tensor:
    """The function form of Tensor.cholesky_inverse (``out=`` as PyTorch's)."""
    return as_tensor(input).cholesky_inverse(upper)


@with_out("")
def svd(input: Tensor, some: bool = True, compute_uv: bool = True, *, out: Any = None) -> SvdUSV:
    """The function form of Tensor.svd (``out=`` as PyTorch's)."""
    return as_tensor(input).svd(some, compute_uv)


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """The function form of Tensor.pinverse."""
    return as_tensor(input).pinverse(rcond)


@with_out("")
def qr(input: Tensor, some: bool = True, *, out: Any = None) -> Qr:
    """The function form of Tensor.qr (``out=`` as PyTorch's)."""
    return as_tensor(input).qr(some)


@with_out("", exact=False)
def lu(input: Tensor, pivot: bool = True, get_infos: bool = False, out: Any = None) -> tuple:
    """The function form of Tensor.lu (``out=`` as PyTorch's)."""
    return as_tensor(input).lu(pivot, get_infos)


@with_out("", exact=True)
def lu_solve(input: Tensor, LU_data: Any, LU_pivots: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.lu_solve (``out=`` as PyTorch's)."""
    return as_tensor(input).lu_solve(LU_data, LU_pivots)


@with_out("")
def triangular_solve(
    input: Tensor,
    A: Any,
    upper: bool = True,
    transpose: bool = False,
    unitriangular: bool = False,
    *,
    out: Any = None,
) -> TriangularSolve:
    """The function form of Tensor.triangular_solve (``out=`` as PyTorch's)."""
    return as_tensor(input).triangular_solve(A, upper, transpose, unitriangular)


@with_out("", exact=True)
def matrix_power(input: Tensor, n: int, *, out: Any = None) -> Tensor:
    """The function form of Tensor.matrix_power (``out=`` as PyTorch's)."""
    return as_tensor(input).matrix_power(n)


def matrix_exp(input: Tensor) -> Tensor:
    """The function form of Tensor.matrix_exp."""
    return as_tensor(input).matrix_exp()


@with_out("")
def orgqr(input: Tensor, input2: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.orgqr (``out=`` as PyTorch's)."""
    return as_tensor(input).orgqr(input2)
