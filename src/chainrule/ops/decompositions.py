"""The matrix decompositions and solvers of chainrule.linalg, as primitives on LAPACK (NumPy's,
SciPy's where NumPy has no routine): inverse, solve, determinant, Cholesky, eigh, SVD,
triangular solve, pseudoinverse, least squares and the matrix exponential (LU, QR and solve
are in lu_qr.py). The public functions, their arguments and the composites built on these
live in chainrule/linalg/.

A decomposition of several parts (eigh's L and Q, SVD's U, S and Vh) is one
primitive per part: the public function decomposes once and passes the arrays in as
``result``; each part's rule is PyTorch's rule with the other parts' gradients 0, and the
engine sums the parts' contributions, which is the whole rule since it is linear in them.
Every rule is written in Tensor ops on these same primitives, so second derivatives come free.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any

from ..array import errstate, from_host, host, ndarray, to_host, xp
from ..array.tensor_type import tensor_type
from ..autograd.primitive import Function
from ..fastpath import passes
from ..fastpath.rowsums import row_sums
from . import lapack
from .linalg import LinalgSvd, kept_apart
from .movement import Cat

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor


class LinAlgError(RuntimeError):
    """PyTorch's torch.linalg.LinAlgError: a matrix is singular, or not positive-definite."""


def scipy_linalg(op: str) -> Any:
    """scipy.linalg, imported when first needed: the ops NumPy has no routine for. SciPy
    computes on the host: its functions are given host copies of device arrays, and their
    arrays come back to the device the first array argument was on."""
    try:
        import scipy.linalg
    except ImportError:  # pragma: no cover - scipy is in the test environment
        raise ImportError(
            f"{op}: needs SciPy; install it with `pip install chainrule[linalg]`"
        ) from None
    return _OnHost(scipy.linalg)


class _OnHost:
    """A SciPy module or function whose calls take and give device arrays (see
    scipy_linalg); what a call returns that can be called again (a LAPACK routine) too."""

    def __init__(self, target: Any) -> None:
        self.target = target

    def __getattr__(self, name: str) -> Any:
        return _OnHost(getattr(self.target, name))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        device = next((a for a in args if isinstance(a, ndarray)), None)
        args = tuple(to_host(a) if isinstance(a, ndarray) else a for a in args)
        kwargs = {k: to_host(v) if isinstance(v, ndarray) else v for k, v in kwargs.items()}
        out = self.target(*args, **kwargs)

        def back(v: Any) -> Any:
            if device is not None and isinstance(v, host.ndarray):
                return from_host(v, device)
            return _OnHost(v) if callable(v) else v

        return tuple(map(back, out)) if isinstance(out, tuple) else back(out)


def _where(batch: tuple[int, ...], flat: int) -> str:
    """'(batch element i)' for the flat index of a batch of matrices, '' for one matrix."""
    return f" (batch element {flat})" if batch else ""


def lu_info(a: Any) -> Any:
    """getrf's info for each matrix of a (int32, batch shape): 0, or the 1-based index of the
    first zero on U's diagonal, what PyTorch reports for a singular matrix."""
    batch = a.shape[:-2]
    flat = a.reshape(math.prod(batch), *a.shape[-2:])
    info = xp.zeros(len(flat), dtype=xp.int32)
    if a.shape[-1] == 0:
        return info.reshape(batch)
    getrf = scipy_linalg("linalg.lu_factor").lapack.get_lapack_funcs("getrf", (a,))
    for i, m in enumerate(flat):
        info[i] = getrf(m)[2]
    return info.reshape(batch)


def cholesky_info(a: Any) -> Any:
    """potrf's info for each matrix of a (int32, batch shape): 0, or the order of the first
    leading minor that is not positive-definite."""
    batch = a.shape[:-2]
    flat = a.reshape(math.prod(batch), *a.shape[-2:])
    info = xp.zeros(len(flat), dtype=xp.int32)
    potrf = scipy_linalg("linalg.cholesky").lapack.get_lapack_funcs("potrf", (a,))
    for i, m in enumerate(flat):
        info[i] = potrf(m, lower=True)[1]
    return info.reshape(batch)


def singular_error(op: str, a: Any) -> LinAlgError:
    """PyTorch's error for a singular matrix, naming the batch element and the zero pivot."""
    info = lu_info(a).reshape(-1)
    first = int(xp.flatnonzero(info)[0]) if info.any() else 0
    return LinAlgError(
        f"{op}: the input matrix is singular{_where(a.shape[:-2], first)}: the diagonal "
        f"element {int(info[first])} of its LU factor is zero; got shape {tuple(a.shape)}"
    )


class LinalgInvEx(Function):
    """out = A^-1 for each square matrix of A (..., n, n)

    grad_A = -out^T grad out^T.
    """

    rule = "grad_A = -out^T @ grad @ out^T"
    saves_inputs = False
    saves_out = True

    def forward(self, a: Any, check: bool = True, factor: Any = None) -> Any:
        if factor is not None:  # a's LU factor, from the forward of det or slogdet
            return lapack.inv_from_lu(*factor)
        try:
            return lapack.inv(a)
        except xp.linalg.LinAlgError:
            if check:
                raise singular_error("linalg.inv", a) from None
        out = xp.empty_like(a)  # inv_ex: each singular matrix's inverse is NaN, its info > 0
        singular = lu_info(a) != 0
        out[singular] = xp.nan
        out[~singular] = xp.linalg.inv(a[~singular])
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        inv_t = out.mT
        return (-(inv_t @ grad @ inv_t),)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        inv_t = xp.swapaxes(out, -1, -2)
        g = inv_t @ grad @ inv_t
        return (xp.negative(g, out=g),)


class LinalgSolveTriangular(Function):
    """out = X solving A X = B (left) or X A = B with A triangular (upper or lower, its
    diagonal taken as ones where unitriangular); the other triangle of A is never read.

    grad_B = solve_triangular(A^T, grad) (the other triangle); grad_A = -grad_B X^T (left)
    or -X^T grad_B, kept to A's triangle (strictly, where unitriangular).
    """

    rule = "grad_B = solve_triangular(A^T, grad), grad_A = triangle of -grad_B @ out^T"
    saves_out = True

    def forward(
        self, a: Any, b: Any, upper: bool, left: bool = True, unitriangular: bool = False
    ) -> Any:
        self.options = (upper, left, unitriangular)
        if not left:  # X A = B  <=>  A^T X^T = B^T, A^T of the other triangle
            a, b, upper = a.swapaxes(-1, -2), b.swapaxes(-1, -2), not upper
        if a.shape[:-2] != b.shape[:-2]:
            shape = xp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
            a = xp.broadcast_to(a, (*shape, *a.shape[-2:]))
            b = xp.broadcast_to(b, (*shape, *b.shape[-2:]))
        if lapack.host_float(a) and a.dtype == b.dtype:  # trsm itself, empty arrays too
            out = lapack.solve_triangular(a, b, lower=not upper, unit=unitriangular)
        elif b.size == 0 or a.size == 0:
            out = xp.zeros(b.shape, dtype=xp.result_type(a, b))
        else:
            solve = scipy_linalg("linalg.solve_triangular").solve_triangular
            out = solve(a, b, lower=not upper, unit_diagonal=unitriangular, check_finite=False)
            out = out.astype(xp.result_type(a, b), copy=False)
        return out.swapaxes(-1, -2) if not left else out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        a, _ = self.inputs
        upper, left, unit = self.options
        need_a, _ = self.needs_input_grad
        gb = LinalgSolveTriangular.apply(a.mT, grad, upper=not upper, left=left, unitriangular=unit)
        ga = None
        if need_a:
            ga = -(gb @ out.mT) if left else -(out.mT @ gb)
            ga = ga.triu(1 if unit else 0) if upper else ga.tril(-1 if unit else 0)
        return ga, gb


class LinalgDet(Function):
    """out = det(A)

    grad_A = grad det(A) A^-T, A^-1 from the forward's LU factor; where det(A) = 0 that is 0,
    as PyTorch's (which solves with a perturbed LU factor there, and multiplies by det(A) = 0).
    """

    rule = "grad_A = grad * out * inv(A)^T (0 where out = 0)"
    saves_out = True

    def forward(self, a: Any) -> Any:
        out, self.factor = lapack.det(a)
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        (a,) = self.inputs
        singular = out._array == 0
        g = (grad * out).unsqueeze(-1).unsqueeze(-1)
        if not singular.any():
            return (g * LinalgInvEx.apply(a.mT, factor=self.factor),)  # factor: A^T's
        eye = xp.eye(a.shape[-1], dtype=a._array.dtype)
        safe = xp.where(singular[..., None, None], eye, a._array)  # the identity where singular
        return (g * LinalgInvEx.apply(_keep_graph(a, safe)).mT,)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        if self.factor is None or not out.all():  # NumPy's det, or a singular matrix
            return tensor_rule(self, grad, out)
        return ((grad * out)[..., None, None] * lapack.inv_from_lu(*self.factor),)


def tensor_rule(fn: Function, grad: Any, out: Any) -> tuple[Any, ...]:
    """A node's Tensor rule on arrays: where its rule on arrays serves only the common case."""
    T = tensor_type()
    return tuple(None if g is None else g._array for g in fn.backward(T._make(grad), T._make(out)))


def _keep_graph(a: Any, replaced: Any) -> Any:
    """a with the singular matrices of its batch replaced by the identity, through a's
    graph where they are kept (a where of a's own values and constants)."""
    T = type(a)
    same = T._make(xp.all(replaced == a._array, axis=(-2, -1), keepdims=True))
    return a.where(same, T._make(replaced))


class LinalgSlogdet(Function):
    """out = (sign, log|det(A)|) stacked: out[0] the sign, out[1] log|det(A)| (slogdet's two
    outputs, which share this node: autograd/outputs.py)

    grad_A = grad[1] A^-T, A^-1 from the forward's LU factor where it has one; the sign is
    a constant (its gradient unread).
    """

    rule = "grad_A = grad[1] * inv(A)^T"
    saves_out = False
    outputs_read: tuple[int, ...] = ()  # the outputs the rule reads (their writes are checked)

    def forward(self, a: Any, result: Any = None, factor: Any = None) -> Any:
        if result is None:
            *result, factor = lapack.slogdet(a)
        self.factor = factor
        sign, logabsdet = result
        out = xp.empty((2, *xp.shape(sign)), dtype=a.dtype, like=a)  # (2, *batch)
        out[0], out[1] = sign, logabsdet
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        (a,) = self.inputs
        factor = self.factor
        if factor is not None and not xp.diagonal(factor[0], axis1=-2, axis2=-1).all():
            factor = None  # a singular matrix: inv's own error (as PyTorch's, an inf or NaN)
        inv_t = LinalgInvEx.apply(a.mT, factor=factor)  # factor: A^T's
        return (grad[1].unsqueeze(-1).unsqueeze(-1) * inv_t,)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        factor = self.factor
        if factor is None or not xp.diagonal(factor[0], axis1=-2, axis2=-1).all():
            return tensor_rule(self, grad, out)
        return (grad[1][..., None, None] * lapack.inv_from_lu(*factor),)


class LinalgCholeskyEx(Function):
    """out = L, lower triangular with A = L L^T (or U = L^T where upper), from A's lower
    triangle; ``op`` names the public function in its error (cholesky, linalg.cholesky_ex).

    With Phi(X) = tril(X) with its diagonal halved, PyTorch's rule:
    G = tril(L^T grad_L); grad_A = L^-T (G + tril(G, -1)^T) / 2 L^-1.
    """

    rule = "grad_A = L^-T (tril(L^T grad) + tril(L^T grad, -1)^T) / 2 L^-1"
    saves_inputs = False
    saves_out = True

    def forward(
        self, a: Any, upper: bool = False, check: bool = True, op: str = "linalg.cholesky"
    ) -> Any:
        self.upper = upper
        try:
            out = lapack.cholesky(a)
        except xp.linalg.LinAlgError:
            info = cholesky_info(a)
            if check:
                flat = info.reshape(-1)
                first = int(xp.flatnonzero(flat)[0])
                where = f" (Batch element {first}):" if a.ndim > 2 else ""
                raise LinAlgError(  # PyTorch's words, and the shape
                    f"{op}:{where} The factorization could "
                    f"not be completed because the input is not positive-definite (the "
                    f"leading minor of order {int(flat[first])} is not positive-definite); "
                    f"got shape {tuple(a.shape)}"
                ) from None
            out = from_host(lapack.cholesky_stopped(to_host(a), to_host(info)), a)
        return xp.swapaxes(out, -1, -2).copy() if upper else out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        L, gL = (out.mT, grad.mT) if self.upper else (out, grad)
        G = (L.mT @ gL).tril()
        G = (G + G.tril(-1).mT) * 0.5
        G = LinalgSolveTriangular.apply(L.mT, G, upper=True, left=True)
        return (LinalgSolveTriangular.apply(L, G, upper=False, left=False),)


class LinalgEigh(Function):
    """out = one part (``part``: "L", the eigenvalues ascending, or "Q", the eigenvectors in
    its columns) of A = Q diag(L) Q^T, from A's lower (UPLO "L") or upper triangle.

    With E[i, j] = L[j] - L[i] (1 on the diagonal), PyTorch's rule:
    grad_A = Q (diag(grad_L) + (Q^T grad_Q - grad_Q^T Q) / 2 / E) Q^T.
    """

    rule = "grad_A = Q (diag(grad_L) + skew(Q^T grad_Q) / 2 / E) Q^T, E[i, j] = L[j] - L[i]"

    def forward(self, a: Any, part: Any, UPLO: Any = "L", result: Any = None) -> Any:
        self.part, self.uplo = part, UPLO
        self.result = L, Q = lapack.eigh(a, UPLO) if result is None else result
        return kept_apart(L if part == "L" else Q)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        (a,) = self.inputs
        L, Q = (LinalgEigh.apply(a, part=p, UPLO=self.uplo, result=self.result) for p in "LQ")
        if self.part == "L":
            return ((Q * grad.unsqueeze(-2)) @ Q.mT,)
        n = L.shape[-1]
        eye = xp.eye(n, dtype=L._array.dtype)
        E = L.unsqueeze(-2) - L.unsqueeze(-1) + type(L)._make(eye)  # (..., n, n)
        X = Q.mT @ grad
        return (Q @ ((X - X.mT) * 0.5 / E) @ Q.mT,)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        L, Q = self.result
        Qt = xp.swapaxes(Q, -1, -2)
        if self.part == "L":
            return ((Q * grad[..., None, :]) @ Qt,)
        eye = xp.eye(L.shape[-1], dtype=L.dtype, like=L)  # (n, n)
        E = L[..., None, :] - L[..., None] + eye  # (..., n, n)
        X = Qt @ grad
        return (Q @ ((X - xp.swapaxes(X, -1, -2)) * 0.5 / E) @ Qt,)


class LinalgSvdEx(LinalgSvd):
    """out = one part (``part``: "U", "S" or "Vh") of a = U diag(S) Vh, reduced or full
    (``full_matrices``): LinalgSvd's rule on the first k = min(m, n) columns of U and rows of
    Vh, the only ones A determines (PyTorch narrows the full factors' gradients so too)."""

    rule = LinalgSvd.rule

    def forward(self, a: Any, part: Any, full_matrices: bool = False, result: Any = None) -> Any:
        self.part, self.full = part, full_matrices
        if result is None:
            result = lapack.svd(a, full_matrices)
        self.result = result  # as found (full factors where full_matrices), as PyTorch saves
        return kept_apart(dict(zip(("U", "S", "Vh"), result, strict=True))[part])

    def reduced(self) -> tuple[Any, Any, Any]:
        """The first k = min(m, n) columns of U and rows of Vh: what the rule reads."""
        U, S, Vh = self.result
        k = S.shape[-1]
        return (None, S, None) if U is None else (U[..., :, :k], S, Vh[..., :k, :])

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        a = self.inputs[0]
        if not a._array.size:  # no matrix, or matrices with no elements: nothing to move
            return (a.new_zeros(a.shape),)
        if self.full:
            k = min(a.shape[-2:])
            grad = grad[..., :, :k] if self.part == "U" else grad
            grad = grad[..., :k, :] if self.part == "Vh" else grad
        return LinalgSvd.backward(self, grad, out)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        a = self.inputs[0]._array
        if not a.size:
            return (xp.zeros_like(a),)
        if self.full:  # the first k columns of U, rows of Vh
            k = min(a.shape[-2:])
            grad = grad[..., :, :k] if self.part == "U" else grad
            grad = grad[..., :k, :] if self.part == "Vh" else grad
        return LinalgSvd.backward_arrays(self, grad, out)


def pinv_backward(grad: Any, pinv: Any, a: Any) -> Any:
    """PyTorch's pinv_backward: the gradient of A+ at A, in the smaller dims' products."""
    m, n = a.shape[-2:]
    # swapaxes, not mT: NumPy 1's arrays have no mT
    pinv_t, grad_t = pinv.swapaxes(-1, -2), grad.swapaxes(-1, -2)
    if m <= n:
        K = grad_t @ pinv
        KpinvT = K @ pinv_t
        first = -(pinv @ K).swapaxes(-1, -2)
        return first + KpinvT - (a @ pinv) @ KpinvT + (pinv_t @ pinv) @ (grad_t - K @ a)
    K = pinv @ grad_t
    pinvTK = pinv_t @ K
    first = -(K @ pinv).swapaxes(-1, -2)
    return first + (grad_t - a @ K) @ pinv @ pinv_t + pinvTK - pinvTK @ pinv @ a


class LinalgPinv(Function):
    """out = A+, the pseudoinverse: V diag(1/S where S > max(atol, rtol max S), else 0) U^T
    (hermitian: from eigh, by |eigenvalue|).

    grad_A = PyTorch's pinv_backward(grad, A+, A), which assumes the rank constant.
    """

    rule = "grad_A = -A+^T grad^T A+^T + projections of grad onto A's complement spaces"
    saves_out = True

    def forward(self, a: Any, atol: Any, rtol: Any, hermitian: bool = False) -> Any:
        if a.size == 0:
            return xp.zeros((*a.shape[:-2], a.shape[-1], a.shape[-2]), dtype=a.dtype)
        if hermitian:
            L, Q = lapack.eigh(a)
            size = xp.abs(L)
            cut = xp.maximum(atol, rtol * size.max(-1, keepdims=True))  # (..., 1)
            inv = xp.where(size > cut, 1 / xp.where(size > cut, L, 1), 0).astype(a.dtype)
            return (Q * inv[..., None, :]) @ xp.swapaxes(Q, -1, -2)
        U, S, Vh = lapack.svd(a, full_matrices=False)
        cut = xp.maximum(atol, rtol * S[..., :1])
        inv = xp.where(S > cut, 1 / xp.where(S > cut, S, 1), 0).astype(a.dtype)
        return (xp.swapaxes(Vh, -1, -2) * inv[..., None, :]) @ xp.swapaxes(U, -1, -2)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        (a,) = self.inputs
        return (pinv_backward(grad, out, a),)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        return (pinv_backward(grad, out, self.inputs[0]._array),)  # its ops serve arrays too


class LinalgLstsq(Function):
    """out = X minimising ||A X - B|| (LAPACK's driver, with rcond), B (..., m, k); batch
    dims broadcast. Where ``residuals`` asks and every A has full rank: with the residuals
    R = ||A X - B||^2 per column as a last row, (..., n + 1, k), lstsq's two outputs that
    share this node (autograd/outputs.py).

    PyTorch's rule, through the pseudoinverse: grad_A = pinv_backward(grad_X B^T, A+, A),
    grad_B = A+^T grad_X; with r = A X - B, the residuals add 2 (r grad_R) X^T to grad_A and
    -2 r grad_R to grad_B (grad_R a row scaling r's columns).
    """

    rule = (
        "grad_A = pinv_backward(grad_X @ B^T, pinv(A), A) + 2 (r grad_R) X^T, "
        "grad_B = pinv(A)^T @ grad_X - 2 r grad_R, r = A X - B"
    )
    saves_out = True  # the solution, PyTorch's _saved_solution
    outputs_read = (0,)  # the solution (its writes are checked), not the residuals

    def forward(
        self,
        a: Any,
        b: Any,
        rcond: Any = None,
        driver: Any = "gelsy",
        found: Any = None,
        residuals: bool = False,
    ) -> Any:
        self.residuals = False
        if a.ndim == b.ndim == 2 and driver == "gelsy" and not residuals and a.size and b.size:
            if lapack.host_float(a) and a.dtype == b.dtype:  # one matrix: gelsy itself
                eps = float(xp.finfo(a.dtype).eps) * max(a.shape) if rcond is None else rcond
                out, rank = lapack.gelsy(a, b, eps)
                if found is not None:
                    found["rank"] = host.array(rank, dtype=host.int64)
                    found["sv"] = host.zeros(min(a.shape), dtype=a.dtype)
                    found["residuals"] = False
                return out
        shape = xp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        count = math.prod(shape)  # the matrices (-1 cannot say how many where A is empty)
        a = xp.broadcast_to(a, (*shape, *a.shape[-2:])).reshape(count, *a.shape[-2:])
        b = xp.broadcast_to(b, (*shape, *b.shape[-2:])).reshape(count, *b.shape[-2:])
        m, n = a.shape[-2:]
        k = b.shape[-1]
        dtype = xp.result_type(a, b)
        out = xp.zeros((len(a), n, k), dtype=dtype)
        rank = xp.zeros(len(a), dtype=xp.int64)
        values = xp.zeros((len(a), min(m, n)), dtype=dtype)
        if a.size and b.size:
            eps = float(xp.finfo(dtype).eps) * max(m, n) if rcond is None else rcond
            if driver == "gelsy" and lapack.host_float(a) and a.dtype == b.dtype:
                for i in range(len(a)):  # gelsy itself
                    out[i], rank[i] = lapack.gelsy(a[i], b[i], eps)
            else:
                lstsq = scipy_linalg("linalg.lstsq").lstsq
                for i in range(len(a)):
                    x, _, r, sv = lstsq(
                        a[i], b[i], cond=eps, lapack_driver=driver, check_finite=False
                    )
                    out[i], rank[i] = x, r
                    if sv is not None:
                        values[i] = sv
        if found is not None:  # what lstsq returns beside the solution
            found["rank"], found["sv"] = rank.reshape(shape), values.reshape(*shape, min(m, n))
        self.residuals = residuals and bool((rank == min(m, n)).all())
        if self.residuals:  # the residuals of each column, as a last row
            r = a @ out - b  # (count, m, k)
            out = xp.concatenate((out, (r * r).sum(-2, keepdims=True)), axis=-2)
            n += 1
        if found is not None:
            found["residuals"] = self.residuals
        return out.reshape(*shape, n, k)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        a, b = self.inputs
        if self.arrived() == {1} and not self.residuals:  # the empty residuals' gradient
            return None, None  # alone: none, as PyTorch's
        need_a, need_b = self.needs_input_grad
        n = a.shape[-1]
        gX = grad[..., :n, :] if self.residuals else grad
        rtol = float(xp.finfo(a._array.dtype).eps) * max(a.shape[-2:])
        pinv = LinalgPinv.apply(a, atol=0.0, rtol=rtol)
        ga = pinv_backward(gX @ b.mT, pinv, a) if need_a else None
        gb = pinv.mT @ gX if need_b else None
        if self.residuals:
            X = out[..., :n, :]
            w = (a @ X - b) * (grad[..., n : n + 1, :] * 2.0)  # (..., m, k)
            ga = None if ga is None else ga + w @ X.mT
            gb = None if gb is None else gb - w
        return ga, gb


class LinalgLstsqEmpty(Function):
    """out = lstsq's empty residuals (where it has none: m <= n, A not of full rank, or the
    gelsy driver), an output of A's and B's graph made by a node named as PyTorch's one node
    of lstsq (LinalgLstsq.named); grad_A and grad_B: none, as PyTorch's."""

    rule = "grad_A = None, grad_B = None (no residuals)"
    saves_inputs = False

    def forward(self, a: Any, b: Any) -> Any:
        return xp.zeros_like(a, shape=(0,))  # on a's device

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return None, None


# Bader, Blanes and Casas (2019), "Computing the matrix exponential with an optimized Taylor
# polynomial approximation", the method PyTorch uses, in its order of operations so that float32
# results round as PyTorch's: the largest 1-norm each degree serves, per dtype, ...
_MEXP_THETAS = {
    "float32": (1.192092800768788e-07, 5.978858893805233e-04, 5.116619363445086e-02,
                5.800524627688768e-01, 1.461661507209034e00, 3.010066362817634e00),
    "float64": (2.220446049250313e-16, 2.580956802971767e-08, 3.397168839976962e-04,
                4.991228871115323e-02, 2.996158913811580e-01, 1.090863719290036e00),
}  # fmt: skip
# ... and the paper's coefficients of degrees 12 and 18, each row one B_i over the powers
# (I, A, A^2, A^3) and (I, A, A^2, A^3, A^6)
_MEXP_B12 = (
    (9.0198e-16, 0.46932117595418237389, -0.20099424927047284052, -0.04623946134063071740),
    (5.31597895759871264183, 1.19926790417132231573, 0.01179296240992997031,
     0.01108844528519167989),
    (0.18188869982170434744, 0.05502798439925399070, 0.09351590770535414968,
     0.00610700528898058230),
    (-2.0861320e-13, -0.13181061013830184015, -0.02027855540589259079,
     -0.00675951846863086359),
)  # fmt: skip
_MEXP_B18 = (
    (0.0, -1.00365581030144618291e-01, -8.02924648241156932449e-03,
     -8.92138498045729985177e-04, 0.0),
    (0.0, 3.97849749499645077844e-01, 1.36783778460411720168e00, 4.98289622525382669416e-01,
     -6.37898194594723280150e-04),
    (-1.09676396052962061844e01, 1.68015813878906206114e00, 5.71779846478865511061e-02,
     -6.98210122488052056106e-03, 3.34975017086070470649e-05),
    (-9.04316832390810593223e-02, -6.76404519071381882256e-02, 6.75961301770459654925e-02,
     2.95552570429315521194e-02, -1.39180257516060693404e-05),
    (0.0, 0.0, -9.23364619367118555360e-02, -1.69364939002081722752e-02,
     -1.40086798182036094347e-05),
)  # fmt: skip


def matrix_exp_taylor(a: Any) -> Any:
    """exp(a) of a stack of square matrices (batch, n, n), n > 1, as PyTorch picks for each:
    the Taylor polynomial of the least degree whose theta bounds its 1-norm, or degree 18 on
    a / 2^s squared s times; the matrices of one degree computed together."""
    bounds, theta = _mexp_thetas(a.dtype)
    norms = xp.abs(a).sum(-2).max(-1)  # (batch,) the 1-norms
    degree = xp.searchsorted(bounds, norms)  # (batch,) 0..5: the least theta >= it; NaN: 5
    if len(a) == 1:  # one matrix, one degree: nothing to select
        return _taylor(a, int(degree[0]), norms, theta)
    out = xp.empty_like(a)
    for d in xp.unique(degree).tolist():
        chosen = degree == d
        out[chosen] = _taylor(a[chosen], d, norms[chosen], theta)
    return out


@functools.cache  # once per dtype: on one small matrix, dtype.name alone took 2 of 37 us
def _mexp_thetas(dtype: Any) -> tuple[Any, float]:
    """The thetas of degrees 1 to 12 in ``dtype`` (a 1-norm is compared with them in its own
    dtype, as PyTorch's) and degree 18's."""
    thetas = _MEXP_THETAS[dtype.name]
    return xp.asarray(thetas[:5], dtype=dtype), thetas[5]


def _taylor(a: Any, degree: int, norms: Any, theta: float) -> Any:
    """exp(a) of a stack (batch, n, n) by the Taylor polynomial of degree 1, 2, 4, 8 or 12
    (``degree`` 0 to 4), or 18 (5) on each a / 2^s (s from its 1-norm in ``norms``), squared s
    times."""
    eye = xp.eye(a.shape[-1], dtype=a.dtype)[None].repeat(len(a), 0)  # (batch, n, n)

    def combine(powers: list, rows: tuple) -> list:
        coefs = xp.asarray(rows, dtype=a.dtype)  # rounded to a's dtype, as PyTorch's
        return list(xp.tensordot(coefs, xp.stack(powers), axes=(1, 0)))

    if degree == 0:
        return eye + a
    if degree < 5:
        a2 = a @ a
    if degree == 1:
        return eye + a + a2 / 2
    if degree == 2:
        (c,) = combine([eye, a, a2], ((1 / 2, 1 / 6, 1 / 24),))
        return eye + a + a2 @ c
    if degree == 3:
        r = 0.1330413469565007072504e2  # sqrt(177)
        x3 = 2 / 3
        x1, x2 = x3 * ((1 + r) / 88), x3 * ((1 + r) / 352)
        x4 = (-271 + 29 * r) / (315 * x3)
        x5, x6 = (-11 + 11 * r) / (1260 * x3), (-99 + 11 * r) / (5040 * x3)
        x7, y2 = (89 - r) / (5040 * x3), (857 - 58 * r) / 630
        (c,) = combine([a, a2], ((x1, x2),))
        a4 = a2 @ c
        (left,) = combine([a2, a4], ((x3, 1.0),))
        (right,) = combine([eye, a, a2, a4], ((x4, x5, x6, x7),))
        (out,) = combine([eye, a, a2, a4, left @ right], ((1.0, 1.0, y2, 0.0, 1.0),))
        return out
    if degree == 4:
        b0, b1, b2, b3 = combine([eye, a, a2, a @ a2], _MEXP_B12)
        b2 = b2 + b3 @ b3
        return b0 + (b1 + b2) @ b2
    with errstate(invalid="ignore", over="ignore"):  # inf and NaN as PyTorch's, unwarned
        s = xp.fmax(xp.ceil(xp.log2(norms / theta)), 0)  # (batch,) in a's dtype, as PyTorch's
        s[s == xp.inf] = 0  # a NaN (fmax's 0) or inf norm: no scaling (the result is NaN)
        low, high = int(s.min()), int(s.max())
        if high:  # (batch, n, n): each scaled by its own power of 2 (none: a itself)
            a = a / 2.0 ** s[:, None, None]
        a2 = a @ a
        a3 = a @ a2  # A^3 = A A^2, in the order PyTorch multiplies
        b0, b1, b2, b3, b4 = combine([eye, a, a2, a3, a3 @ a3], _MEXP_B18)
        a9 = b0 @ b4 + b3
        out = b1 + (b2 + a9) @ a9
        for _ in range(low):  # the squarings every matrix takes
            out = out @ out
        for p in range(low, high):
            squared = s > p  # (batch,) the matrices still to square
            out[squared] = out[squared] @ out[squared]
    return out


class LinalgMatrixExp(Function):
    """out = exp(A) = sum_k A^k / k!

    grad_A = the top right block of exp([[A^T, grad], [0, A^T]]) (PyTorch's rule).
    """

    rule = "grad_A = exp([[A^T, grad], [0, A^T]])[:n, n:]"

    def forward(self, a: Any) -> Any:
        if a.size == 0:
            return a.copy()
        if a.shape[-1] == 1:
            return xp.exp(a)
        flat = a.reshape(-1, *a.shape[-2:])  # (batch, n, n)
        return matrix_exp_taylor(flat).reshape(a.shape)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        (a,) = self.inputs
        n, d = a.shape[-1], grad.ndim
        at = a.mT.expand(*grad.shape)
        top = Cat.apply(at, grad, dim=d - 1)  # (..., n, 2n)
        bottom = Cat.apply(at * 0.0, at, dim=d - 1)
        big = LinalgMatrixExp.apply(Cat.apply(top, bottom, dim=d - 2))  # (..., 2n, 2n)
        return (big[..., :n, n:],)


class LinalgVectorNorm(Function):
    """out = (sum |x|^p)^(1/p) over ``dim`` (max |x| for p = inf, min for -inf, the count of
    nonzeros for p = 0).

    PyTorch's norm_backward, case by case, so that second derivatives (and their NaNs at
    x = 0) are PyTorch's too: p = 1: sgn(x) grad; p = 2: grad (x / out, 0 where out = 0);
    p = +-inf: sgn(x) grad over the elements at |x| = out, shared; p < 1:
    sgn(x) |x|^(p-1) (0 at x = 0) grad out^(1-p); else x |x|^(p-2) grad / out^(p-1) (0
    where out = 0); p = 0: no gradient.
    """

    rule = "grad_x = x |x|^(p-2) grad / out^(p-1), 0 where out = 0 (p = 2: grad x / out)"
    saves_out = True

    def forward(self, x: Any, p: Any, dim: Any, keepdim: Any) -> Any:
        self.p, self.dim, self.keepdim = p, dim, keepdim
        if x.size == 0:  # NumPy refuses the norm of nothing; PyTorch's is 0
            return xp.zeros(_reduced_shape(x.shape, dim, keepdim), dtype=x.dtype)
        a = x.astype(xp.float32) if x.dtype.itemsize < 4 else x  # halves: in float32, as PyTorch
        axis = dim if x.ndim else None
        if p == 2:  # a dot product (one BLAS call over every dim): 10x NumPy's vector_norm
            if dim is None or len(set(dim)) == x.ndim:  # a matrix's Frobenius norm too
                out = xp.sqrt(xp.vdot(a, a))  # a NumPy scalar: apply makes it an array
                out = out.reshape((1,) * x.ndim) if keepdim else out
            elif dim == (x.ndim - 1,) and x.ndim > 1 and x.size > 2048:
                # along the rows, past row_sums' threshold: their sums by BLAS, where NumPy's
                # sum walks many short rows one at a time (10x at (333334, 3))
                squares = (a * a).reshape(-1, x.shape[-1])  # (M, n), one row per result
                kept = x.shape[:-1] + (1,) if keepdim else x.shape[:-1]  # (..., 1) or (...)
                out = xp.sqrt(row_sums(squares)).reshape(kept)
            else:
                out = xp.sqrt(passes.reduce(xp.add, a * a, axis, keepdim))
        elif p == 0:
            out = (a != 0).sum(axis, dtype=a.dtype, keepdims=keepdim)
        else:  # NumPy's vector_norm's own steps, without its Python wrapper
            m = xp.abs(a)
            if p == math.inf or p == -math.inf:
                out = passes.reduce(xp.maximum if p > 0 else xp.minimum, m, axis, keepdim)
            elif p == 1:
                out = passes.reduce(xp.add, m, axis, keepdim)
            else:
                m **= p
                out = passes.reduce(xp.add, m, axis, keepdim) ** (1.0 / p)
        return out if out.dtype == x.dtype else out.astype(x.dtype)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        (x,) = self.inputs
        p = self.p
        if p == 0:
            return (None,)  # as PyTorch: x.grad stays None
        if not self.keepdim and x.ndim:
            shape = _reduced_shape(x.shape, self.dim, True)  # (.., 1, ..) at the dims
            grad, out = grad.reshape(*shape), out.reshape(*shape)
        T = type(x)
        if p == 1:
            return (x.sign() * grad,)
        zero = T._make(out._array == 0)
        if p == 2:
            return (grad * (x / out).masked_fill(zero, 0.0),)
        if p in (math.inf, -math.inf):
            a = x._array
            mask = T._make(((xp.abs(a) == out._array) | xp.isnan(a)).astype(a.dtype))
            count = mask.sum(self.dim, keepdim=True)
            return (x.sign() * ((grad / count) * mask),)
        if p < 1:
            scaled = x.sign() * x.abs().pow(p - 1).masked_fill(T._make(x._array == 0), 0.0)
            return (scaled * grad * out.pow(1 - p),)
        scaled = x.sign() * x.abs().pow(p - 1) if p < 2 else x * x.abs().pow(p - 2)
        return (scaled * (grad / out.pow(p - 1)).masked_fill(zero, 0.0),)


def _reduced_shape(shape: tuple[int, ...], dim: Any, keepdim: bool) -> tuple[int, ...]:
    dims = range(len(shape)) if dim is None else [d % len(shape) for d in dim]
    if keepdim:
        return tuple(1 if i in dims else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in dims)


class CholeskySolve(Function):
    """out = X solving L L^T X = B (U^T U X = B where upper), from the factor's triangle.

    PyTorch's rule, which differentiates by the whole factor: grad_B = cholesky_solve(grad),
    C = grad_B X^T + X grad_B^T, grad_L = -C L (upper: -L C).
    """

    rule = "grad_B = cholesky_solve(grad, L), grad_L = -(grad_B X^T + X grad_B^T) L"
    saves_out = True

    def forward(self, b: Any, factor: Any, upper: bool = False) -> Any:
        self.upper = upper
        solve = LinalgSolveTriangular().forward
        if upper:  # U^T U X = B
            y = solve(xp.swapaxes(factor, -1, -2), b, upper=False)
            return solve(factor, y, upper=True)
        y = solve(factor, b, upper=False)
        return solve(xp.swapaxes(factor, -1, -2), y, upper=True)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        _, factor = self.inputs
        need_b, need_l = self.needs_input_grad
        gb = CholeskySolve.apply(grad, factor, upper=self.upper)
        gl = None
        if need_l:
            common = gb @ out.mT
            common = common + common.mT
            gl = -(factor @ common) if self.upper else -(common @ factor)
        return (gb if need_b else None), gl
