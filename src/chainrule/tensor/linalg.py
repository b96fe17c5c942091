"""The Tensor methods of PyTorch's linear-algebra spellings (t.det(), t.inverse(),
t.cholesky(), t.svd(), ...): a mixin for Tensor, each method one call of its function in
linalg/legacy.py.

linalg/ is above tensor/ (its functions make Tensors), so this file cannot import it, not even
inside a method (that would be an import cycle): linalg/__init__.py hands its legacy module to
``use_legacy`` once, when it is imported (chainrule's __init__ imports it), as tensor/ tells
the array layer of the Tensor class (array/tensor_type.py). Imports flow downward."""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Any

from .core import Core

if TYPE_CHECKING:  # legacy: see use_legacy; Tensor: see core.py
    from ..linalg import legacy
    from ..linalg.decompose import Qr
    from ..linalg.legacy import SvdUSV, TriangularSolve
    from ..linalg.solvers import Slogdet
    from . import Tensor
    from .core import TensorSelf


def use_legacy(module: ModuleType) -> None:
    """Where the methods' functions are: linalg/__init__.py gives its legacy module, once."""
    global legacy
    legacy = module


class LinalgMethods(Core):
    """t.det(), t.logdet(), t.slogdet(), t.inverse(), t.cholesky(), t.cholesky_solve(),
    t.cholesky_inverse(), t.svd(), t.pinverse(), t.qr(), t.lu(), t.lu_solve(),
    t.triangular_solve(), t.matrix_power(), t.matrix_exp() and t.orgqr()."""

    __slots__ = ()

    def det(self: TensorSelf) -> Tensor:
        return legacy.det(self)

    def logdet(self: TensorSelf) -> Tensor:
        return legacy.logdet(self)

    def slogdet(self: TensorSelf) -> Slogdet:
        return legacy.slogdet(self)

    def inverse(self: TensorSelf) -> Tensor:
        return legacy.inverse(self)

    def cholesky(self: TensorSelf, upper: bool = False) -> Tensor:
        return legacy.cholesky(self, upper)

    def cholesky_solve(self: TensorSelf, input2: Any, upper: bool = False) -> Tensor:
        return legacy.cholesky_solve(self, input2, upper)

    def cholesky_inverse(self: TensorSelf, upper: bool = False) -> Tensor:
        return legacy.cholesky_inverse(self, upper)

    def svd(self: TensorSelf, some: bool = True, compute_uv: bool = True) -> SvdUSV:
        return legacy.svd(self, some, compute_uv)

    def pinverse(self: TensorSelf, rcond: float = 1e-15) -> Tensor:
        return legacy.pinverse(self, rcond)

    def qr(self: TensorSelf, some: bool = True) -> Qr:
        return legacy.qr(self, some)

    def lu(self: TensorSelf, pivot: bool = True, get_infos: bool = False) -> tuple:
        return legacy.lu(self, pivot, get_infos)

    def lu_solve(self: TensorSelf, LU_data: Any, LU_pivots: Any) -> Tensor:
        return legacy.lu_solve(self, LU_data, LU_pivots)

    def triangular_solve(
        self: TensorSelf,
        A: Any,
        upper: bool = True,
        transpose: bool = False,
        unitriangular: bool = False,
    ) -> TriangularSolve:
        return legacy.triangular_solve(self, A, upper, transpose, unitriangular)

    def matrix_power(self: TensorSelf, n: int) -> Tensor:
        return legacy.matrix_power(self, n)

    def matrix_exp(self: TensorSelf) -> Tensor:
        return legacy.matrix_exp(self)

    def orgqr(self: TensorSelf, input2: Any) -> Tensor:
        return legacy.orgqr(self, input2)
