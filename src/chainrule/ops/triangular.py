"""torch.triangular_solve's primitive: the solution and a copy of A, its two outputs, made by one
node as PyTorch's TriangularSolveBackward0 (linalg/legacy.py calls it; the solve itself is
decompositions.py's)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..array import xp
from ..autograd.primitive import Function
from .decompositions import LinalgSolveTriangular

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor


class TriangularSolve(Function):
    """out = [X | M] side by side, (..., n, k + n): X solving A X = b (A^T X = b where
    transpose), A triangular (its diagonal ones where unitriangular), and M a copy of A; batch
    dims broadcast. triangular_solve's two outputs share this node (autograd/outputs.py).

    PyTorch's rule: grad_b = solve(A^T, grad_X) (solve(A, grad_X) where transpose); grad_A =
    -grad_b X^T (-X grad_b^T where transpose) kept to A's triangle, plus grad_M whole.
    """

    rule = "grad_b = solve(op(A)^T, grad_X), grad_A = triangle of -grad_b X^T + grad_M"
    saves_out = True  # X, PyTorch's _saved_solution
    outputs_read = (0,)  # the solution (its writes are checked), not the copy

    def forward(
        self,
        b: Any,
        a: Any,
        upper: bool = True,
        transpose: bool = False,
        unitriangular: bool = False,
    ) -> Any:
        self.upper, self.transpose, self.unitriangular = upper, transpose, unitriangular
        lhs = xp.swapaxes(a, -1, -2) if transpose else a  # A^T: the other triangle
        x = LinalgSolveTriangular().forward(lhs, b, upper != transpose, True, unitriangular)
        k = x.shape[-1]
        out = xp.empty((*x.shape[:-1], k + a.shape[-1]), dtype=x.dtype, like=x)  # (..., n, k + n)
        out[..., :k], out[..., k:] = x, a  # A broadcast to the batch
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        b, a = self.inputs
        upper, transpose, unit = self.upper, self.transpose, self.unitriangular
        need_b, need_a = self.needs_input_grad
        k = b.shape[-1]
        arrived = self.arrived() or frozenset((0, 1))  # (shared by the outputs, or not)
        gb = ga = None
        if 0 in arrived:  # the solution's gradient
            lhs = a if transpose else a.mT  # op(A)^T, of the other triangle than op(A)'s
            gb = LinalgSolveTriangular.apply(
                lhs, grad[..., :k], upper=upper == transpose, unitriangular=unit
            )
            if need_a:
                X = out[..., :k]
                ga = -(X @ gb.mT) if transpose else -(gb @ X.mT)
                ga = ga.triu(int(unit)) if upper else ga.tril(-int(unit))
        elif need_b:  # none: PyTorch's zeros
            gb = grad[..., :k]
        if 1 in arrived and need_a:  # the copy's gradient, whole
            ga = grad[..., k:] if ga is None else ga + grad[..., k:]
        return gb if need_b else None, ga
