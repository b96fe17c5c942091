"""The LU and QR decompositions of chainrule.linalg as primitives: one node for the factor in
LAPACK's one matrix (LU) or both parts in one matrix (QR), and one node per part taken from
it, so that the gradients of the parts meet at one node and pay for one backward, as
PyTorch's one node for a decomposition does; and solve, by getrf and getrs, whose backward
reuses the forward's LU factor, as PyTorch's. The other decompositions are in
decompositions.py, the LAPACK calls in lapack.py."""

from __future__ import annotations

import functools
import math
import warnings
from typing import TYPE_CHECKING, Any

from .. import fastpath
from ..array import host, xp
from ..autograd.primitive import Function
from . import lapack
from .decompositions import LinalgSolveTriangular, scipy_linalg, singular_error, tensor_rule
from .linalg import kept_apart
from .movement import Cat

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor


class LinalgQr(Function):
    """out = one part (``part``) of A = Q R (``mode`` "reduced" or "complete"): "QR", both
    in one matrix (Q beside R where they have as many rows, else Q above R), or "Q" or "R",
    each taken from the "QR" part (``packed``: the input is that part), so that a gradient
    of both meets at one node and pays for one triangular solve, as PyTorch's.

    With copyltu(M) = tril(M) + tril(M, -1)^T (M's lower triangle made symmetric): for
    m >= n, M = R grad_R^T - grad_Q^T Q and grad_A = (grad_Q + Q copyltu(M)) R^-T (PyTorch's
    rule in another form: the gradient is unique); for m < n, A = [X | Y], R = [U | V]:
    grad_Y = Q grad_V, and grad_X is the square case's with grad_Q + Y grad_V^T for grad_Q.
    The Q and R parts pass their gradient to "QR"'s in its layout.
    """

    rule = "grad_A = (grad_Q + Q copyltu(R grad_R^T - grad_Q^T Q)) R^-T (m >= n)"

    def forward(
        self, a: Any, part: Any, mode: Any = "reduced", result: Any = None, packed: bool = False
    ) -> Any:
        self.part, self.mode, self.packed = part, mode, packed
        if packed:
            self.result = result
            return kept_apart(_qr_part(a, part, result[0].shape[-1]))
        self.result = Q, R = lapack.qr(a, mode) if result is None else result
        beside = Q.shape[-2] == R.shape[-2]
        return xp.concatenate((Q, R), axis=-1 if beside else -2)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        (a,) = self.inputs
        if self.packed:  # Q's or R's gradient, in QR's layout (zeros at the other part)
            beside = a.shape[-2] == self.result[0].shape[-1]  # see _qr_part
            dim = grad.ndim - 1 if beside else grad.ndim - 2
            gap = list(a.shape)
            gap[dim] -= grad.shape[dim]
            zeros = grad.new_zeros(tuple(gap))
            return (Cat.apply(*((grad, zeros) if self.part == "Q" else (zeros, grad)), dim=dim),)
        self.arrived()  # the parts' arrivals are this pass's, for their node's hooks
        m, n = a.shape[-2:]
        if self.mode == "r":
            raise RuntimeError(
                "linalg.qr: the derivative depends on Q, which mode='r' does not compute; "
                "use linalg.qr(A, mode='reduced') to differentiate through linalg.qr"
            )
        if self.mode == "complete" and m > n:
            raise RuntimeError(
                "linalg.qr: the QR decomposition is not differentiable when mode='complete' "
                f"and nrows > ncols; got shape {tuple(a.shape)}"
            )
        QR = LinalgQr.apply(a, part="QR", mode=self.mode, result=self.result)
        Q, R = (
            LinalgQr.apply(QR, part=p, mode=self.mode, result=self.result, packed=True)
            for p in "QR"
        )
        q = Q.shape[-1]
        # a part no gradient reached is zeros in grad: left out, as PyTorch's undefined one
        gQ, gR = (_nonzero(_qr_part(grad, p, q)) for p in "QR")
        if gQ is None and gR is None:
            return (a.new_zeros(a.shape),)
        if m >= n:
            return (_qr_square_grad(Q, R, gQ, gR),)
        Y = a[..., :, m:]  # A = [X | Y], X square
        U = R[..., :, :m]
        gU = None if gR is None else gR[..., :, :m]
        gY = Y * 0.0
        if gR is not None:
            gV = gR[..., :, m:]
            gY = Q @ gV
            gQ = Y @ gV.mT if gQ is None else gQ + Y @ gV.mT
        return (_cat_last(_qr_square_grad(Q, U, gQ, gU), gY),)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        """The rule on arrays, for one matrix or a batch of them on the host, m >= n; the
        Tensor rule otherwise (and for its errors)."""
        Q, R = self.result
        q = Q.shape[-1]
        if self.packed:  # Q's or R's gradient in QR's layout
            g = xp.zeros_like(grad, shape=self.inputs[0].shape)  # on grad's device
            _qr_part(g, self.part, q)[...] = grad
            return (g,)
        m, n = self.inputs[0].shape[-2:]
        if self.mode == "r" or m < n or m > n and self.mode == "complete":
            return tensor_rule(self, grad, out)
        if not lapack.host_float(Q):
            return tensor_rule(self, grad, out)
        self.arrived()  # the parts' arrivals are this pass's, for their node's hooks
        gQ, gR = _qr_part(grad, "Q", q), _qr_part(grad, "R", q)
        M = R @ xp.swapaxes(gR, -1, -2) - xp.swapaxes(gQ, -1, -2) @ Q
        _, _, upper = _triangles(q, q, M.dtype)  # a kept mask for a small matrix
        # M's lower triangle made symmetric: M^T over the diagonal (where it equals M)
        b = Q @ xp.where(upper, xp.swapaxes(M, -1, -2), M) + gQ
        # b R^-T: R X^T = b^T
        return (xp.swapaxes(lapack.solve_triangular(R, xp.swapaxes(b, -1, -2), False), -1, -2),)


class LinalgHouseholderProduct(Function):
    """out = the first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T, v_i column i of A
    (m x n, m >= n >= k) below its diagonal with a 1 on it: LAPACK's orgqr.

    The product taken apart from the left: with Q_i = H_i Q_(i+1) (Q_(k+1) the first n
    columns of I), G_i the gradient at Q_i (G_1 = grad), u = v_i^T G_i, w = v_i^T Q_(i+1):
    grad_tau_i = -u . w, grad_v_i = -tau_i (G_i w^T + Q_(i+1) u^T) (A's column i below its
    diagonal), G_(i+1) = G_i - tau_i v_i u.
    """

    rule = "grad_v_i = -tau_i (G_i w^T + Q_(i+1) u^T), grad_tau_i = -u . w (see the docstring)"
    saves_out = True

    def forward(self, a: Any, tau: Any) -> Any:
        if lapack.host_float(a) and a.size:
            return lapack.householder_product(a, tau)
        return _householder_arrays(a, tau)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        a, tau = self.inputs
        m, n = a.shape[-2:]
        k = tau.shape[-1]
        if not k or not a._array.size:  # Q is constant: both gradients undefined, as PyTorch's
            return None, None
        eye = xp.asarray(xp.eye(m, n, dtype=a._array.dtype), like=a._array)
        V = a.tril(-1) + type(a)._make(eye)  # the reflectors, as tensors of A
        Qs = [type(a)._make(xp.broadcast_to(eye, out.shape))]  # Q_(k+1), Q_k, ..., Q_2
        for i in reversed(range(1, k)):
            v = V[..., :, i : i + 1]
            Qs.append(Qs[-1] - (tau[..., i : i + 1].unsqueeze(-1) * v) @ (v.mT @ Qs[-1]))
        G, gv, gt = grad, [], []
        for i in range(k):
            v, t, Q = V[..., :, i : i + 1], tau[..., i : i + 1].unsqueeze(-1), Qs[k - 1 - i]
            u, w = v.mT @ G, v.mT @ Q  # (..., 1, n)
            gt.append(-(u * w).sum(-1))
            gv.append(-t * (G @ w.mT + Q @ u.mT))
            G = G - (t * v) @ u

        ga = Cat.apply(*gv, dim=a.ndim - 1).tril(-1)  # (..., m, k): below the diagonals
        if k < n:
            ga = Cat.apply(ga, ga.new_zeros((*ga.shape[:-1], n - k)), dim=a.ndim - 1)
        return ga, Cat.apply(*gt, dim=tau.ndim - 1)


def _householder_arrays(a: Any, tau: Any) -> Any:
    """householder_product's forward by the product itself, off the host or for no matrix."""
    m, n = a.shape[-2:]
    eye = xp.eye(m, n, dtype=a.dtype)
    V = xp.tril(a, -1) + eye
    Q = xp.broadcast_to(xp.asarray(eye, like=a), a.shape).copy()
    for i in reversed(range(tau.shape[-1])):
        v = V[..., :, i : i + 1]
        Q -= (tau[..., i, None, None] * v) @ (xp.swapaxes(v, -1, -2) @ Q)
    return Q


def _qr_part(qr: Any, part: str, q: int) -> Any:
    """Q (q columns) or R from QR's one matrix (..., m, q + n), or (..., m + q, q) where Q
    is above R."""
    if qr.shape[-2] == q:  # Q beside R: Q is square
        return qr[..., :, :q] if part == "Q" else qr[..., :, q:]
    m = qr.shape[-2] - q  # Q above R, both of q columns: Q's rows
    return qr[..., :m, :] if part == "Q" else qr[..., m:, :]


def _nonzero(g: Any) -> Any:
    return g if g._array.any() else None


def _qr_square_grad(Q: Any, R: Any, gQ: Any, gR: Any) -> Any:
    """The gradient of A = Q R for R square (m >= n), from gQ and gR (either may be None)."""
    if gR is not None:
        M = R @ gR.mT if gQ is None else R @ gR.mT - gQ.mT @ Q
    else:
        M = -(gQ.mT @ Q)
    b = Q @ (M.tril() + M.tril(-1).mT)  # M's lower triangle made symmetric
    if gQ is not None:
        b = b + gQ
    return LinalgSolveTriangular.apply(R.mT, b, upper=False, left=False)  # b R^-T


def _cat_last(a: Any, b: Any) -> Any:
    return Cat.apply(a, b, dim=a.ndim - 1)


class LinalgLu(Function):
    """out = one part (``part``) of A = P L U, partial pivoting (P a constant): "LU", LAPACK's
    one matrix of both (L's strict lower triangle below U's upper one); "L", unit lower
    triangular (m x k), or "U", upper triangular (k x n), k = min(m, n), each taken from the
    "LU" part (``packed``: the input is that part), so that a gradient of both L and U meets
    at one node and pays for one pair of triangular solves, as PyTorch's.

    PyTorch's rule, for square A: grad_A = P L^-T (tril(L^T grad_L, -1) + triu(grad_U U^T))
    U^-T; a wide or tall A adds the part of U or L beyond the square one (see lu_backward);
    with grad_L the strict lower triangle of "LU"'s gradient and grad_U its upper one. The
    L and U parts pass their gradient to "LU"'s in its layout.
    """

    rule = "grad_A = P L^-T (tril(L^T grad_L, -1) + triu(grad_U U^T)) U^-T (square A)"

    def forward(self, a: Any, part: Any, result: Any, packed: bool = False) -> Any:
        self.part, self.result, self.packed = part, result, packed  # lu_arrays's (LU, pivots)
        return triangle(a, part) if packed else kept_apart(result[0])

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        (a,) = self.inputs
        m, n = a.shape[-2:]
        k = min(m, n)
        if self.packed:  # L's or U's gradient, in LU's layout (zeros beyond the part)
            g = grad.tril(-1) if self.part == "L" else grad.triu()
            if g.shape[-2:] == a.shape[-2:]:
                return (g,)
            dim = g.ndim - 1 if self.part == "L" else g.ndim - 2  # L: m x k, U: k x n
            gap = (m, n - k) if self.part == "L" else (m - k, n)
            zeros = g.new_zeros((*g.shape[:-2], *gap))
            return (Cat.apply(g, zeros, dim=dim),)
        self.arrived()  # the parts' arrivals are this pass's, for their node's hooks
        LU = LinalgLu.apply(a, part="LU", result=self.result)
        L, U = (LinalgLu.apply(LU, part=q, result=self.result, packed=True) for q in "LU")
        g = lu_backward(grad[..., :, :k].tril(-1), grad[..., :k, :].triu(), L, U)
        return (rows(g, xp.argsort(row_order(self.result[1], m), axis=-1)),)  # P g

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        """The rule on arrays, for square matrices on the host; the Tensor rule otherwise."""
        lu, piv = self.result
        n = lu.shape[-1]
        if lu.shape[-2] != n or not lapack.host_float(lu):
            return tensor_rule(self, grad, out)
        below, _, upper = _triangles(n, n, lu.dtype)  # masks, kept for a small matrix
        zero = lu.dtype.type(0)
        if self.packed:  # L's or U's gradient in LU's layout
            return (xp.where(below if self.part == "L" else upper, grad, zero),)
        self.arrived()  # the parts' arrivals are this pass's, for their node's hooks
        if lu.ndim == 2:  # one matrix: BLAS on LU's triangles where they lie
            return (_lu_grad_one(lu, piv, grad, below),)
        L, U = triangle(lu, "L"), triangle(lu, "U")
        Lt, Ut = xp.swapaxes(L, -1, -2), xp.swapaxes(U, -1, -2)
        # tril(L^T grad_L, -1) + triu(grad_U U^T): the two triangles cover a square matrix
        g = xp.where(below, Lt @ xp.where(below, grad, zero), xp.where(upper, grad, zero) @ Ut)
        g = xp.swapaxes(lapack.solve_triangular(U, xp.swapaxes(g, -1, -2), False), -1, -2)
        g = lapack.solve_triangular(Lt, g, False, unit=True)  # L^-T g U^-T
        order = row_order(piv, n)  # (..., n): row order[i] of P g is row i of g
        if order.ndim == 1:  # one matrix: the rows put in place, no inverse to sort for
            out = xp.empty_like(g)
            out[order] = g
            return (out,)
        back = xp.argsort(order, axis=-1)
        return (xp.take_along_axis(g, back[..., :, None], axis=-2),)  # P g


def _lu_grad_one(lu: Any, piv: Any, grad: Any, below: Any) -> Any:
    """LinalgLu's rule on one square host matrix: trmm and trsm read L and U in LU itself
    (L's unit diagonal implied), so neither is made, nor grad's triangles: the product with
    a triangle takes the grad's elements on its own side of the diagonal only. All on
    transposes, BLAS's column-major view of C-ordered arrays (no copy in)."""
    trmm, trsm = lapack.blas("trmm", lu.dtype.char), lapack.blas("trsm", lu.dtype.char)
    f = lu if lu.flags.f_contiguous else host.asfortranarray(lu)  # LU as BLAS reads it
    gt = grad.T  # grad^T
    lower_t = trmm(1.0, f, gt, side=1, lower=1, diag=1)  # grad^T L = (L^T grad)^T
    upper_t = trmm(1.0, f, gt, side=0, lower=0)  # U grad^T = (grad U^T)^T
    # tril(L^T grad, -1) + triu(grad U^T), transposed: strictly above the diagonal and on it
    g_t = xp.where(below.T, lower_t, upper_t)
    g_t = trsm(1.0, f, g_t, side=0, lower=0, overwrite_b=1)  # U^-1 g^T
    g_t = trsm(1.0, f, g_t, side=1, lower=1, diag=1, overwrite_b=1)  # (L^-T g U^-T)^T
    out = xp.empty_like(grad)
    out[row_order(piv, lu.shape[-1])] = g_t.T  # P g: row i of g to row order[i]
    return out


def triangle(lu: Any, part: str) -> Any:
    """L ("L": unit lower triangular, m x k) or U ("U": upper triangular, k x n) of LAPACK's
    m x n LU (..., m, n), k = min(m, n)."""
    m, n = lu.shape[-2:]
    k = min(m, n)
    if m * n > lapack.SMALL and type(lu) is host.ndarray:  # a large matrix's masks are
        # made each call (_triangles): only its own triangle's, by tril or triu, on the
        # transpose where getrf's LU is column-major (a C-ordered pass: a third the time)
        t = lu.flags.f_contiguous and not lu.flags.c_contiguous
        at = xp.swapaxes(lu, -1, -2) if t else lu
        if part == "U":
            U = host.tril(at[..., :, :k]) if t else host.triu(lu[..., :k, :])
            return xp.swapaxes(U, -1, -2) if t else U
        L = host.triu(at[..., :k, :], 1) if t else host.tril(lu[..., :, :k], -1)
        host.einsum("...ii->...i", L[..., :k, :k])[...] = 1  # the unit diagonal, in place
        return xp.swapaxes(L, -1, -2) if t else L
    below, diagonal, upper = _triangles(m, n, lu.dtype)
    if part == "L":  # the strict lower triangle, ones on the diagonal
        return xp.where(xp.asarray(below, like=lu), lu[..., :, :k], xp.asarray(diagonal, like=lu))
    return xp.where(xp.asarray(upper, like=lu), lu[..., :k, :], lu.dtype.type(0))


def _triangles(m: int, n: int, dtype: Any) -> tuple[Any, Any, Any]:
    """For an m x n LU (k = min(m, n)): L's strict lower triangle (m x k), the m x k identity
    (L's unit diagonal, of ``dtype``) and U's upper triangle (k x n), as host masks, made once
    per small shape: a where with them is one pass where tril and triu build their masks each
    call (a large matrix's are made each time: kept, they would hold their memory for good)."""
    return (_small_triangles if m * n <= lapack.SMALL else _made_triangles)(m, n, dtype)


def _made_triangles(m: int, n: int, dtype: Any) -> tuple[Any, Any, Any]:
    k = min(m, n)
    below = host.tri(m, k, -1, dtype=bool)
    return below, host.eye(m, k, dtype=dtype), ~host.tri(k, n, -1, dtype=bool)


_small_triangles = functools.lru_cache(maxsize=64)(_made_triangles)


def rows(g: Any, order: Any) -> Any:
    """g (..., m, n) with its rows taken in ``order`` (..., m), batch dims broadcast: P g for
    a permutation P, as a gather (O(mn)) rather than a product with P (O(m^2 n))."""
    if order.ndim == 1:
        return g[..., order, :]
    batch = xp.broadcast_shapes(g.shape[:-2], order.shape[:-1])
    m, n = g.shape[-2:]
    count = math.prod(batch)
    if count * m * n == 0:  # no rows to move
        return g.expand(*batch, m, n)
    flat = g.expand(*batch, m, n).reshape(count, m, n)
    order = xp.broadcast_to(order, (*batch, m)).reshape(count, m)
    return flat[xp.arange(count)[:, None], order].reshape(*batch, m, n)


def lu_arrays(a: Any, op: str) -> tuple[Any, Any, Any]:
    """LAPACK's LU (m x n: L's strict lower triangle below U's upper one), 1-based pivots
    (int32) and info (int32, batch shape: 0, or the 1-based index of the first zero on U's
    diagonal), from one getrf of each matrix of a (not empty)."""
    if lapack.host_float(a):  # getrf itself: no checks, no warning to silence
        lu, piv, info = lapack.lu_factor(a)
        piv += 1
        return lu, piv, info
    with warnings.catch_warnings():  # a singular matrix is lu_factor's info, not a warning
        warnings.simplefilter("ignore")
        lu, piv = scipy_linalg(op).lu_factor(a, check_finite=False)
    zero = xp.diagonal(lu, axis1=-2, axis2=-1) == 0  # (..., k)
    info = xp.where(zero.any(-1), xp.argmax(zero, axis=-1) + 1, 0).astype(xp.int32)
    return lu.astype(a.dtype, copy=False), (piv + 1).astype(xp.int32), info


def row_order(pivots: Any, m: int) -> Any:
    """perm (..., m) with A = P L U: row perm[i] of A is row i of L U, from LAPACK's 1-based
    row swaps (..., k)."""
    if pivots.ndim == 1 and type(pivots) is host.ndarray:  # one matrix's: no batch to walk
        row = list(range(m))
        for i, j in enumerate(pivots.tolist(), 1):
            row[i - 1], row[j - 1] = row[j - 1], row[i - 1]
        return host.array(row, dtype=host.int64)
    batch = pivots.shape[:-1]
    count = math.prod(batch)
    piv = pivots.reshape(count, pivots.shape[-1]).astype(xp.int64) - 1
    if fastpath.enabled() and count <= 16:  # the swaps one by one on lists: for a few
        # matrices, less time than the array indexing below (a call per column)
        perms = []
        for swaps in piv.tolist():
            row = list(range(m))
            for i, j in enumerate(swaps):
                row[i], row[j] = row[j], row[i]
            perms.append(row)
        return xp.asarray(perms, dtype=xp.int64, like=pivots).reshape(*batch, m)
    # column i's swap over the whole batch at once, on the rows laid end to end
    first = xp.arange(count, like=pivots) * m  # (count,): where each matrix's rows start
    piv += first[:, None]
    perm = xp.tile(xp.arange(m, like=pivots), count)  # (count * m,)
    for i in range(piv.shape[-1]):
        here, there = first + i, piv[:, i]
        perm[here], perm[there] = perm[there], perm[here]
    return perm.reshape(*batch, m)


def permutation(pivots: Any, m: int, dtype: Any) -> Any:
    """P (..., m, m) with A = P L U, from LAPACK's 1-based row swaps (..., k), each in 1..m."""
    char = host.dtype(dtype).char
    if pivots.ndim == 1 and len(pivots) and type(pivots) is host.ndarray and char in "fd":
        # one matrix: LAPACK's laswp makes the swaps on a copy of I's rows, P^T, column-major:
        # its transpose is P in C order
        swap_rows = lapack.routine("laswp", char)
        eye = _identity(m, char) if m * m <= lapack.SMALL else _made_identity(m, char)
        return swap_rows(eye, pivots - 1, 0, len(pivots) - 1, 0, 1, 0).T
    perm = row_order(pivots, m)  # P[i, j] = 1 where perm[j] = i: one comparison
    return (perm[..., None, :] == xp.arange(m, like=perm)[:, None]).astype(dtype)  # (..., m, m)


def _made_identity(m: int, char: str) -> Any:
    """The m x m identity of dtype ``char``, column-major: laswp's input, which it copies (a
    small one is made once, as _triangles' masks)."""
    return host.eye(m, dtype=char, order="F")


_identity = functools.lru_cache(maxsize=64)(_made_identity)


def lu_backward(gL: Any, gU: Any, L: Any, U: Any) -> Any:
    """PyTorch's linalg_lu_backward without P: the gradient of L U at its factors, from the
    gradients of L (strictly lower) and U (upper)."""
    tri = LinalgSolveTriangular.apply
    m, n = L.shape[-2], U.shape[-1]
    if m == n:
        g = (L.mT @ gL).tril(-1) + (gU @ U.mT).triu()
        g = tri(U.mT, g, upper=False, left=False)
        return tri(L.mT, g, upper=True, unitriangular=True)
    if m < n:  # wide: U = [U1 | U2], U1 square
        g = L.mT @ gL - gU @ U.mT  # gU upper already
        g = tri(U[..., :, :m].mT, g.tril(-1), upper=False, left=False)
        g = Cat.apply(g + gU[..., :, :m], gU[..., :, m:], dim=g.ndim - 1)
        return tri(L.mT, g, upper=True, unitriangular=True)
    g = gU @ U.mT - L.mT @ gL  # tall: L = [L1; L2], L1 square; gL strictly lower already
    g = tri(L[..., :n, :].mT, g.triu(), upper=True, unitriangular=True)
    g = Cat.apply(g + gL[..., :n, :], gL[..., n:, :], dim=g.ndim - 2)
    return tri(U.mT, g, upper=False, left=False)


class LinalgLuSolve(Function):
    """out = X with A_op X = B (``left``) or X A_op = B, A_op = A^T where ``adjoint`` else
    A, A = P L U given by LU (L's strict lower triangle below U's upper one) and its 1-based
    pivots: LAPACK's getrs on each matrix, batch dims broadcast.

    grad_B = A_op^-T grad (left) or grad A_op^-T: this op with adjoint flipped; the gradient
    at A_op, -grad_B X^T (left) or -X^T grad_B, transposed where adjoint, is G at A; and
    dA = P dL U + P L dU gives grad_LU = tril(P^T G U^T, -1) + triu(L^T P^T G), each product
    taken through G's factors (G = a b^T: P^T G U^T = (P^T a)(U b)^T).
    """

    rule = (
        "grad_B = lu_solve(LU, grad, adjoint=not adjoint), "
        "grad_LU = tril(P^T G U^T, -1) + triu(L^T P^T G)"
    )
    saves_out = True

    def forward(self, lu: Any, b: Any, options: Any) -> Any:
        self.options = options  # (left, adjoint, pivots)
        left, adjoint, pivots = options
        trans = int(adjoint) if left else int(not adjoint)  # X A_op = B: A_op^T X^T = B^T
        rhs = b if left else xp.swapaxes(b, -1, -2)
        n = lu.shape[-1]
        if lu.ndim == 2 and rhs.ndim == 2 and pivots.ndim == 1 and rhs.size and n:  # one
            # system: getrs itself, no batch to broadcast
            x, _ = lapack.routine("getrs", lu.dtype)(lu, pivots - 1, rhs, trans=trans)
            return x if left else x.T
        batch = xp.broadcast_shapes(lu.shape[:-2], pivots.shape[:-1], rhs.shape[:-2])
        out = host.empty((*batch, *rhs.shape[-2:]), dtype=lu.dtype)
        if out.size and n:  # each system solved in place, in copies of the batch in
            # LAPACK's column-major order made at once (getrs given C-ordered matrices copies
            # them in and out: a third of the loop's time at order 8)
            getrs = lapack.routine("getrs", lu.dtype)
            count = math.prod(batch)
            lus = xp.broadcast_to(lu, (*batch, n, n)).reshape(count, n, n)
            lus = host.array(xp.swapaxes(lus, -1, -2), order="C")  # (count, n, n): LU^T
            pivs = xp.broadcast_to(pivots - 1, (*batch, n)).reshape(count, n)
            rhss = xp.broadcast_to(rhs, out.shape).reshape(count, *rhs.shape[-2:])
            cols = host.array(xp.swapaxes(rhss, -1, -2), order="C")  # (count, k, n)
            for t, p, x in zip(lus, pivs, cols, strict=True):
                getrs(t.T, p, x.T, trans=trans, overwrite_b=1)
            out.reshape(count, *rhs.shape[-2:])[...] = xp.swapaxes(cols, -1, -2)
        elif out.size:  # no rows: nothing to solve
            out[...] = 0
        return out if left else xp.swapaxes(out, -1, -2)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        lu, _ = self.inputs
        left, adjoint, pivots = self.options
        gB = LinalgLuSolve.apply(lu, grad, options=(left, not adjoint, pivots))
        if not self.needs_input_grad[0]:
            return None, gB
        # G = a b^T (n x n, of rank k): -gB X^T at A_op (left) or -X^T gB, transposed
        # where adjoint; its products taken through a and b, O(n^2 k) rather than O(n^3)
        X = out if left else out.mT
        gB_ = gB if left else gB.mT  # both (..., n, k)
        a, b = (-X, gB_) if left == adjoint else (-gB_, X)
        n = lu.shape[-1]
        eye = type(lu)._make(xp.eye(n, dtype=lu._array.dtype, like=lu._array))
        L, U = lu.tril(-1) + eye, lu.triu()
        Pa = rows(a, row_order(pivots, n))  # P^T a: (P^T a)[i] = a[perm[i]]
        return (Pa @ (U @ b).mT).tril(-1) + ((L.mT @ Pa) @ b.mT).triu(), gB

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        """The rule on host arrays (forward's getrs for grad_B), as the Tensor rule."""
        lu = self.inputs[0]._array
        left, adjoint, pivots = self.options
        gB = LinalgLuSolve().forward(lu, grad, (left, not adjoint, pivots))
        if not self.needs_input_grad[0]:
            return None, gB
        X, gB_ = (out, gB) if left else (xp.swapaxes(out, -1, -2), xp.swapaxes(gB, -1, -2))
        a, b = (-X, gB_) if left == adjoint else (-gB_, X)
        n = lu.shape[-1]
        L, U = triangle(lu, "L"), triangle(lu, "U")
        perm = row_order(pivots, n)  # (..., n)
        if perm.ndim == 1:  # one order for every matrix of a: an index, no batch to walk
            Pa = a[..., perm, :]  # P^T a
        else:
            perm = xp.broadcast_to(perm[..., :, None], (*a.shape[:-2], n, 1))  # (..., n, 1)
            Pa = xp.take_along_axis(a, perm, axis=-2)  # P^T a
        bt = xp.swapaxes(b, -1, -2)
        below, _, _ = _triangles(n, n, lu.dtype)
        # the two triangles cover the square: tril(., -1) of one beside triu(.) of the other
        lower = Pa @ xp.swapaxes(U @ b, -1, -2)
        return xp.where(below, lower, (xp.swapaxes(L, -1, -2) @ Pa) @ bt), gB


class LinalgSolveEx(Function):
    """out = X solving A X = B (left) or X A = B, for matrices B (..., n, k), or vectors B
    (``vector``: the matrices of one column, that dim dropped again, as PyTorch's, where not
    left too); batch dims broadcast. ``factor``: A's LU factor where the forward of the
    solve with A^T gave one (see _solve), which this solve reuses, as PyTorch's.

    grad_B = A^-T grad (left) or grad A^-T; grad_A = -grad_B X^T (left) or -X^T grad_B.
    """

    rule = "grad_B = solve(A^T, grad), grad_A = -grad_B @ out^T (left=False: transposed)"
    saves_out = True

    def forward(
        self, a: Any, b: Any, left: bool = True, vector: bool = False, factor: Any = None
    ) -> Any:
        self.left, self.vector = left, vector
        if vector:  # (..., n) -> (..., n, 1), and back
            out, self.factor = _solve(a, b[..., None], left, factor)
            return out[..., 0]
        out, self.factor = _solve(a, b, left, factor)
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        a, _ = self.inputs
        need_a, _ = self.needs_input_grad
        gb = LinalgSolveEx.apply(
            a.mT, grad, left=self.left, vector=self.vector, factor=_transposed(self.factor)
        )
        ga = None
        if need_a:
            gm, X = gb, out
            if self.vector:  # the matrices of one column again: (..., n, 1)
                gm, X = gb.unsqueeze(-1), out.unsqueeze(-1)
            ga = -(gm @ X.mT) if self.left else -(X.mT @ gm)
        return ga, gb

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        """The rule on arrays: the solve with A^T by the forward's factor where it has one."""
        a = self.inputs[0]._array
        g, X = (grad[..., None], out[..., None]) if self.vector else (grad, out)
        gb, _ = _solve(xp.swapaxes(a, -1, -2), g, self.left, _transposed(self.factor))
        ga = None
        if self.needs_input_grad[0]:
            ga = -(gb @ xp.swapaxes(X, -1, -2)) if self.left else -(xp.swapaxes(X, -1, -2) @ gb)
        return ga, gb[..., 0] if self.vector else gb


def _solve(a: Any, b: Any, left: bool, factor: Any = None) -> tuple[Any, Any]:
    """(X, factor): X with a X = b (left) or X a = b, matrices; a singular a is PyTorch's
    error. factor is (LUs, pivots, trans), the lists of getrf's factor of each matrix of a
    transposed (C order is a^T in LAPACK's: no copy into it) or not, and getrs' trans that
    solves with a by them: where SciPy serves a (one matrix, or large ones) and b has a's
    batch shape and dtype (the solve with a^T of the gradient takes it with the other
    trans), else None (NumPy's gesv, which loops over a batch of small ones in compiled
    code)."""
    direct = lapack.direct(a) is not None and b.size and b.dtype == a.dtype
    if not direct or a.shape[:-2] != b.shape[:-2]:
        try:
            if left:
                return lapack.solve(a, b), None
            # X A = B  <=>  A^T X^T = B^T
            x = lapack.solve(xp.swapaxes(a, -1, -2), xp.swapaxes(b, -1, -2))
            return xp.swapaxes(x, -1, -2), None
        except xp.linalg.LinAlgError:
            raise singular_error("linalg.solve", xp.broadcast_to(a, a.shape)) from None
    if factor is None:
        getrf = lapack.routine("getrf", a.dtype)
        factor = ([], [], 1)
        for m in [a] if a.ndim == 2 else a.reshape(-1, *a.shape[-2:]):
            lu, piv, info = getrf(m.T)
            if info:
                raise singular_error("linalg.solve", a)
            factor[0].append(lu)
            factor[1].append(piv)
    lus, pivs, trans = factor
    rhs = b if left else xp.swapaxes(b, -1, -2)  # X a = b  <=>  a^T X^T = b^T
    trans = trans if left else 1 - trans
    getrs = lapack.routine("getrs", a.dtype)
    if rhs.ndim == 2:  # one system: getrs' own result
        out = getrs(lus[0], pivs[0], rhs, trans=trans)[0]
    else:
        flat = rhs.reshape(-1, *rhs.shape[-2:])
        out = host.empty(flat.shape, dtype=a.dtype)
        for i in range(len(flat)):
            out[i] = getrs(lus[i], pivs[i], flat[i], trans=trans)[0]
        out = out.reshape(rhs.shape)
    return (out if left else xp.swapaxes(out, -1, -2)), factor


def _transposed(factor: Any) -> Any:
    """_solve's factor of a as the factor of a^T: the same LU, the other trans."""
    return None if factor is None else (*factor[:2], 1 - factor[2])
