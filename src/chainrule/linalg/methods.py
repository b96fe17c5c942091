"""The Tensor methods of PyTorch's older linear-algebra spellings (t.det(), t.inverse(),
t.cholesky(), ...): a mixin for Tensor, each method one call of its function in legacy.py."""

from __future__ import annotations

from typing import Any

from . import legacy


class LinalgMethods:
    """t.det(), t.logdet(), t.slogdet(), t.inverse(), t.cholesky(), t.cholesky_solve(),
    t.cholesky_inverse(), t.svd(), t.pinverse(), t.qr(), t.lu(), t.lu_solve(),
    t.triangular_solve(), t.matrix_power() and t.matrix_exp()."""

    def det(self) -> Any:
        return legacy.det(self)

    def logdet(self) -> Any:
        return legacy.logdet(self)

    def slogdet(self) -> Any:
        return legacy.slogdet(self)

    def inverse(self) -> Any:
        return legacy.inverse(self)

    def cholesky(self, upper: bool = False) -> Any:
        return legacy.cholesky(self, upper)

    def cholesky_solve(self, input2: Any, upper: bool = False) -> Any:
        return legacy.cholesky_solve(self, input2, upper)

    def cholesky_inverse(self, upper: bool = False) -> Any:
        return legacy.cholesky_inverse(self, upper)

    def svd(self, some: bool = True, compute_uv: bool = True) -> Any:
        return legacy.svd(self, some, compute_uv)

    def pinverse(self, rcond: float = 1e-15) -> Any:
        return legacy.pinverse(self, rcond)

    def qr(self, some: bool = True) -> Any:
        return legacy.qr(self, some)

    def lu(self, pivot: bool = True, get_infos: bool = False) -> Any:
        return legacy.lu(self, pivot, get_infos)

    def lu_solve(self, LU_data: Any, LU_pivots: Any) -> Any:
        return legacy.lu_solve(self, LU_data, LU_pivots)

    def triangular_solve(
        self, A: Any, upper: bool = True, transpose: bool = False, unitriangular: bool = False
    ) -> Any:
        return legacy.triangular_solve(self, A, upper, transpose, unitriangular)

    def matrix_power(self, n: int) -> Any:
        return legacy.matrix_power(self, n)

    def matrix_exp(self) -> Any:
        return legacy.matrix_exp(self)
