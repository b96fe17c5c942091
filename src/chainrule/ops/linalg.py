"""Matrix products: matmul for every 1-D and batched combination, einsum; and the singular value
decomposition, for the nuclear norm."""

from __future__ import annotations

import functools
import math
import re
from typing import TYPE_CHECKING, Any

from .. import array, fastpath
from ..array import xp
from ..autograd.primitive import Function, arrays_of
from ..fastpath import passes
from . import lapack

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor


def rounded(out: Any, a: Any, b: Any) -> Any:
    """A product in its operands' one dtype: NumPy's matmul of bfloat16 (ml_dtypes) gives
    float32, which PyTorch's rounds to bfloat16 once."""
    return out if out.dtype == a.dtype or a.dtype != b.dtype else out.astype(a.dtype)


class MatMul(Function):
    """out = a @ b (NumPy's matmul rules: 1-D operands get a dim added then removed, batch
    dims broadcast). The engine sums batch-broadcast gradients back to each input's shape.
    """

    rule = "grad_a = grad @ b.T, grad_b = a.T @ grad"
    saves_inputs = "others"  # each input's value only for the others' gradients

    def forward(self, a: Any, b: Any) -> Any:
        return rounded(xp.matmul(a, b), a, b)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        a, b = self.inputs
        need_a, need_b = self.needs_input_grad
        ga = gb = None
        if a.ndim == 1 and b.ndim == 1:  # inner product: out is a scalar
            return (grad * b if need_a else None), (grad * a if need_b else None)
        if a.ndim == 1:  # (k,) @ (..., k, n) -> (..., n)
            g = grad.unsqueeze(-2)  # (..., 1, n)
            if need_a:
                ga = (g @ b.mT).squeeze(-2)  # (..., k)
            if need_b:
                gb = a.unsqueeze(-1) @ g  # (..., k, n)
            return ga, gb
        if b.ndim == 1:  # (..., m, k) @ (k,) -> (..., m)
            g = grad.unsqueeze(-1)  # (..., m, 1)
            if need_a:
                ga = g @ b.unsqueeze(-2)  # (..., m, k)
            if need_b:
                gb = (a.mT @ g).squeeze(-1)  # (..., k)
            return ga, gb
        if need_a:
            ga = grad @ b.mT  # (..., m, k)
        if need_b:
            if b.ndim == 2 and a.ndim > 2:
                # A batch against one matrix: fold the batch into rows, one product, no sum.
                k, n = b.shape
                rows = math.prod(a.shape[:-1])  # not -1: a may have no elements (k = 0)
                gb = a.reshape(rows, k).mT @ grad.reshape(rows, n)  # (k, n)
            else:
                gb = a.mT @ grad  # (..., k, n)
        return ga, gb

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        """The same rule on arrays: a 1-D a is the matrix of one row it was in forward, a
        1-D b the matrix of one column, and their gradients drop that dim again."""
        a, b = arrays_of(self.inputs)
        need_a, need_b = self.needs_input_grad
        if a.ndim == 1 and b.ndim == 1:  # inner product: out is a scalar
            return (grad * b if need_a else None), (grad * a if need_b else None)
        if a.ndim == 1:
            a, grad = a[None], xp.expand_dims(grad, -2)  # (1, k), (..., 1, n)
        elif b.ndim == 1:
            b, grad = b[:, None], xp.expand_dims(grad, -1)  # (k, 1), (..., m, 1)
        ga = gb = None
        if need_a:
            ga = xp.matmul(grad, xp.swapaxes(b, -1, -2))  # (..., m, k)
            ga = ga[..., 0, :] if self.inputs[0].ndim == 1 else ga
        if need_b:
            if b.ndim == 2 and a.ndim > 2:  # a batch against one matrix: one product
                k, n = b.shape
                rows = math.prod(a.shape[:-1])
                gb = a.reshape(rows, k).T @ grad.reshape(rows, n)  # (k, n)
            else:
                gb = xp.matmul(xp.swapaxes(a, -1, -2), grad)  # (..., k, n)
            gb = gb[..., 0] if self.inputs[1].ndim == 1 else gb
        return ga, gb


# Component i's partners in a cross product: i + 1 and i + 2 (mod 3)
_NEXT, _AFTER = xp.array([1, 2, 0]), xp.array([2, 0, 1])


class LinalgCross(Function):
    """out_i = a_(i+1) * b_(i+2) - a_(i+2) * b_(i+1) along dim (indices mod 3), a and b of one
    rank, both of size 3 along dim, broadcast over the other dims;
    grad_a = b x grad, grad_b = grad x a."""

    rule = "grad_a = cross(b, grad), grad_b = cross(grad, a)"
    saves_inputs = "others"  # each input's value only for the other's gradient

    def forward(self, a: Any, b: Any, dim: int) -> Any:
        self.dim = dim
        nxt, after = _NEXT, _AFTER
        if type(a) is not array.host.ndarray:  # the partners on a's device
            nxt, after = array.from_host(nxt, a), array.from_host(after, a)
        # four gathers of whole components and three ufuncs (np.cross: ten times the time)
        out = a.take(nxt, dim) * b.take(after, dim)
        out -= a.take(after, dim) * b.take(nxt, dim)
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        a, b = self.inputs
        need_a, need_b = self.needs_input_grad
        ga = LinalgCross.apply(b, grad, dim=self.dim) if need_a else None
        gb = LinalgCross.apply(grad, a, dim=self.dim) if need_b else None
        return ga, gb


class Addmm(Function):
    """out = beta * t + alpha * (a @ b), t broadcast to the product's shape, beta = 0 reading
    no value of t (NaN included);  grad_t = beta * grad, grad_a = alpha * grad @ b^T,
    grad_b = alpha * a^T @ grad.

    One node and one product, as PyTorch's: the scaling and the sum happen in the product's
    own buffer. Addmm multiplies (n, m) by (m, p); the other add-products below differ only
    in the product and its two gradients.
    """

    rule = "grad_t = beta * grad, grad_a = alpha * grad @ b^T, grad_b = alpha * a^T @ grad"
    saves_inputs = (1, 2)  # a and b, each for the other's gradient; t's value is never read

    def forward(self, t: Any, a: Any, b: Any, beta: Any, alpha: Any) -> Any:
        self.beta, self.alpha = beta, alpha
        out = self.product(a, b)  # a fresh array: scaled and summed in place
        if alpha != 1:
            out *= alpha
        if beta != 0:  # beta 0 ignores t, NaN and inf included, as PyTorch's
            out += t if beta == 1 else t * beta
        return out if out.dtype == t.dtype else out.astype(t.dtype)

    def product(self, a: Any, b: Any) -> Any:
        return xp.matmul(a, b)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        _, a, b = self.inputs
        need_t, need_a, need_b = self.needs_input_grad
        alpha, beta = self.alpha, self.beta
        scaled = grad if alpha == 1 else grad * alpha
        ga, gb = self.product_grads(scaled, a, b, need_a, need_b)
        return (grad if beta == 1 else grad * beta) if need_t else None, ga, gb

    def product_grads(self, g: Tensor, a: Tensor, b: Tensor, need_a: bool, need_b: bool) -> Grads:
        """The product's gradients for its gradient g."""
        ga = MatMul.apply(g, b.mT) if need_a else None
        gb = MatMul.apply(a.mT, g) if need_b else None
        return ga, gb


class Baddbmm(Addmm):
    """out = beta * t + alpha * (a @ b), a (B, n, m) and b (B, m, p) batch by batch, t
    broadcast;  the gradients as Addmm's, batch by batch."""

    rule = "grad_t = beta * grad, grad_a = alpha * grad @ b^T, grad_b = alpha * a^T @ grad"


class Addmv(Addmm):
    """out = beta * t + alpha * (a @ v), a (n, m) and v (m,);  grad_t = beta * grad,
    grad_a = alpha * outer(grad, v), grad_v = alpha * a^T @ grad."""

    rule = "grad_t = beta * grad, grad_a = alpha * outer(grad, v), grad_v = alpha * a^T @ grad"

    def product_grads(self, g: Tensor, a: Tensor, v: Tensor, need_a: bool, need_v: bool) -> Grads:
        ga = g.unsqueeze(1) * v if need_a else None  # (n, 1) * (m,) -> (n, m)
        gv = MatMul.apply(a.mT, g) if need_v else None
        return ga, gv


class Addr(Addmm):
    """out = beta * t + alpha * outer(u, v), u (n,) and v (m,);  grad_t = beta * grad,
    grad_u = alpha * grad @ v, grad_v = alpha * grad^T @ u."""

    rule = "grad_t = beta * grad, grad_u = alpha * grad @ v, grad_v = alpha * grad^T @ u"

    def product(self, u: Any, v: Any) -> Any:
        return xp.multiply.outer(u, v)

    def product_grads(self, g: Tensor, u: Tensor, v: Tensor, need_u: bool, need_v: bool) -> Grads:
        gu = MatMul.apply(g, v) if need_u else None
        gv = MatMul.apply(g.mT, u) if need_v else None
        return gu, gv


class Addbmm(Addmm):
    """out = beta * t + alpha * sum_i a[i] @ b[i], a (B, n, m) and b (B, m, p);
    grad_t = beta * grad, grad_a[i] = alpha * grad @ b[i]^T, grad_b[i] = alpha * a[i]^T @ grad.
    """

    rule = (
        "grad_t = beta * grad, grad_a[i] = alpha * grad @ b[i]^T, grad_b[i] = alpha * a[i]^T @ grad"
    )

    def product(self, a: Any, b: Any) -> Any:
        batch, n, m = a.shape
        # (n, B * m) @ (B * m, p): the sum over the batch as one product
        return xp.matmul(a.transpose(1, 0, 2).reshape(n, batch * m), b.reshape(batch * m, -1))

    def product_grads(self, g: Tensor, a: Tensor, b: Tensor, need_a: bool, need_b: bool) -> Grads:
        ga = MatMul.apply(g, b.mT) if need_a else None  # (n, p) @ (B, p, m) -> (B, n, m)
        gb = MatMul.apply(a.mT, g) if need_b else None  # (B, m, n) @ (n, p) -> (B, m, p)
        return ga, gb


class Trace(Function):
    """out = sum_i a[i, i], the main diagonal of a matrix summed (integers and bools in
    int64, as PyTorch);  grad_a = zeros like a with grad on the main diagonal."""

    rule = "grad_a = zeros like a, with grad on the main diagonal"
    saves_inputs = False  # the rule reads a's shape alone

    def forward(self, a: Any) -> Any:
        wide = array.int64 if a.dtype.kind in "biu" else None
        return xp.asarray(a.trace(dtype=wide), like=a)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        m, n = self.inputs[0].shape
        eye = xp.eye(m, n, dtype=grad._array.dtype, like=grad._array)  # on grad's device
        return (grad * type(grad)._make(eye),)


_EINSUM = re.compile(r"^([a-zA-Z]*(?:,[a-zA-Z]*)*)->([a-zA-Z]*)$")


def parse_einsum(equation: str, shapes: list[tuple[int, ...]]) -> tuple[list[str], str]:
    """Check an explicit einsum equation against the operand shapes."""
    ins, out = _parsed(equation, tuple(shapes))
    return list(ins), out


@functools.lru_cache(maxsize=256)
def _parsed(equation: str, shapes: tuple[tuple[int, ...], ...]) -> tuple[tuple[str, ...], str]:
    """parse_einsum's work, done once for each equation and shapes."""
    eq = equation.replace(" ", "")
    m = _EINSUM.match(eq)
    if not m:
        raise ValueError(
            f"einsum: only the explicit form 'ij,jk->ik' of letters is supported (no '...', "
            f"no implicit output); got {equation!r}"
        )
    ins, out = m.group(1).split(","), m.group(2)
    if len(ins) != len(shapes):
        raise ValueError(f"einsum: {equation!r} names {len(ins)} operands; got {len(shapes)}")
    sizes: dict[str, int] = {}
    for spec, shape in zip(ins, shapes, strict=True):
        if len(spec) != len(shape) or len(set(spec)) != len(spec):
            raise ValueError(
                f"einsum: operand {spec!r} does not fit shape {shape} (one letter a dim)"
            )
        for c, n in zip(spec, shape, strict=True):
            if sizes.setdefault(c, n) != n:
                raise ValueError(
                    f"einsum: dim {c!r} has sizes {sizes[c]} and {n}; got shapes {list(shapes)}"
                )
    if len(set(out)) != len(out) or any(c not in sizes for c in out):
        raise ValueError(
            f"einsum: output {out!r} repeats a letter or names one no input has; got {equation!r}"
        )
    return tuple(ins), out


def sums_alone(equation: str, shapes: list[tuple[int, ...]]) -> bool:
    """Whether PyTorch's einsum sums some letter the output lacks on its own, by ``sum``
    (which widens integers and bools to int64): with one operand, any such letter; with
    several, one that a single operand holds, at a size other than 1."""
    ins, out = parse_einsum(equation, shapes)
    axes, _ = _alone(tuple(ins), out)  # with one operand: every letter the output lacks
    if len(ins) == 1:
        return bool(axes[0])
    return any(shape[d] != 1 for ax, shape in zip(axes, shapes, strict=True) for d in ax)


@functools.lru_cache(maxsize=256)
def _alone(ins: tuple[str, ...], out: str) -> tuple[tuple[tuple[int, ...], ...], str | None]:
    """The dims of each operand whose letter no other operand nor the output has (summed
    out of it alone), and the equation on what is left; None where there are none."""
    axes, specs = [], []
    for i, spec in enumerate(ins):
        others = set(out).union(*(s for j, s in enumerate(ins) if j != i))
        axes.append(tuple(d for d, c in enumerate(spec) if c not in others))
        specs.append("".join(c for c in spec if c in others))
    if not any(axes):
        return tuple(axes), None
    return tuple(axes), ",".join(specs) + "->" + out


@functools.lru_cache(maxsize=256)
def _greedy_path(equation: str, shapes: tuple[tuple[int, ...], ...]) -> list[Any]:
    """NumPy's greedy contraction path for operands of these shapes: its search costs
    more than the contraction of small operands, and the path depends on the shapes alone
    (found over zero-stride stand-ins)."""
    host = array.host
    stand_ins = [host.broadcast_to(host.float64(0), shape) for shape in shapes]
    return host.einsum_path(equation, *stand_ins, optimize="greedy")[0]


class Einsum(Function):
    """out = einsum(equation, *operands)  (letters only operand i has are broadcast back to
    it by expand)"""

    rule = "grad_i = einsum of grad with the other operands, onto operand i's letters"
    saves_inputs = "others"  # each input's value only for the others' gradients

    def forward(self, *arrays: Any, equation: Any) -> Any:
        if any(a.dtype == array.bfloat16 for a in arrays):  # NumPy's einsum has no loop
            wide = self.forward(*[a.astype(xp.float32) for a in arrays], equation=equation)
            return wide.astype(array.bfloat16)  # rounded at the end (PyTorch: each pair)
        self.ins, self.out = parse_einsum(equation, [a.shape for a in arrays])
        if len(arrays) > 2:  # in pairs, in the order of NumPy's greedy path (CuPy takes it)
            path = _greedy_path(equation, tuple([a.shape for a in arrays]))
            return xp.einsum(equation, *arrays, optimize=path)
        axes, rest = _alone(tuple(self.ins), self.out)
        if rest is None or not all(a.dtype in (xp.float32, xp.float64) for a in arrays):
            return xp.einsum(equation, *arrays)
        # summed first, as PyTorch's einsum sums them: ij,k->i costs i*j + k, not i*j*k
        summed = [
            passes.reduce(xp.add, a, ax, False) if ax else a
            for a, ax in zip(arrays, axes, strict=True)
        ]
        return xp.einsum(rest, *summed)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        grads: list[Tensor | None] = []
        for i, (spec, need) in enumerate(zip(self.ins, self.needs_input_grad, strict=True)):
            if not need:
                grads.append(None)
                continue
            others = [t for j, t in enumerate(self.inputs) if j != i]
            specs = [s for j, s in enumerate(self.ins) if j != i]
            present = set(self.out).union(*specs)
            kept = "".join(c for c in spec if c in present)
            g = Einsum.apply(grad, *others, equation=",".join([self.out, *specs]) + "->" + kept)
            x = self.inputs[i]
            if kept != spec:  # letters summed away in forward come back by broadcasting
                shape = tuple(x.shape[spec.index(c)] if c in kept else 1 for c in spec)
                g = g.reshape(shape).expand(x.shape)
            grads.append(g)
        return tuple(grads)


def kept_apart(part: Any) -> Any:
    """A copy of one part of a decomposition that the node keeps whole for its backward (in
    its own layout): writes into the output cannot reach what backward reads, O(n^2) beside
    the O(n^3) decomposition."""
    return part.copy(order="K")


class LinalgSvd(Function):
    """out = one part (``part``: "U", "S" or "Vh") of a = U diag(S) Vh, the reduced SVD of
    the matrices in a's last two dims (m x n, k = min(m, n) singular values, descending).

    With gU, gS, gVh the gradient of one part (the others 0), E[i, j] = S[j]^2 - S[i]^2 (1 on
    the diagonal) and skew(X) = X - X^T, PyTorch's rule:
    gA = U (diag(gS) + (skew(U^T gU) / E) S[None, :] + S[:, None] (skew(Vh gVh^T) / E)) Vh,
    plus (I - U U^T) gU / S[None, :] Vh where m > n, and U gVh / S[:, None] (I - Vh^T Vh)
    where m < n. U, S and Vh there are this op's own parts of a, so the rule is
    differentiable again; each is the same in every call (LAPACK's signs are fixed).
    """

    rule = (
        "grad_a = U diag(gS) Vh for S; for U and Vh the terms skew(U^T gU) / E and "
        "skew(Vh gVh^T) / E, E[i, j] = S[j]^2 - S[i]^2, and their parts off U's and Vh's span"
    )

    def forward(self, a: Any, part: Any, *, result: Any = None) -> Any:
        self.part = part
        if result is None:
            result = lapack.svd(a, full_matrices=False)
        self.result = result  # for backward's U, S and Vh, which need no second SVD
        return kept_apart(dict(zip(("U", "S", "Vh"), result, strict=True))[part])

    def reduced(self) -> tuple[Any, Any, Any]:
        """The reduced SVD (U, S, Vh) forward found (U and Vh None where only S was)."""
        return self.result  # type: ignore[no-any-return]

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        a = self.inputs[0]
        m, n = a.shape[-2:]
        found = self.reduced()
        if found[0] is None:  # svdvals kept S alone
            found = lapack.svd(a._array, full_matrices=False)
        U, S, Vh = (LinalgSvd.apply(a, part=p, result=found) for p in ("U", "S", "Vh"))
        if self.part == "S":
            return (U @ (grad.unsqueeze(-1) * Vh) if m >= n else (U * grad.unsqueeze(-2)) @ Vh,)
        S2 = S * S
        eye = xp.eye(S.shape[-1], dtype=S._array.dtype, like=S._array)
        E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + eye  # (..., k, k)
        if self.part == "U":
            X = U.mT @ grad
            g = (X - X.mT) / E * S.unsqueeze(-2)  # (..., k, k)
            if m > n:
                over_s = grad / S.unsqueeze(-2)  # (..., m, k)
                return ((U @ g + over_s - U @ (U.mT @ over_s)) @ Vh,)
            return (U @ g @ Vh,)
        X = Vh @ grad.mT
        g = S.unsqueeze(-1) * ((X - X.mT) / E)  # (..., k, k)
        if m < n:
            over_s = grad / S.unsqueeze(-1)  # (..., k, n)
            return (U @ (g @ Vh + over_s - (over_s @ Vh.mT) @ Vh),)
        return (U @ g @ Vh,)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        U, S, Vh = self.reduced()  # svdvals keeps U and Vh where a gradient is wanted
        return (svd_rule(self.part, grad, U, S, Vh),)


def svd_rule(part: str, grad: Any, U: Any, S: Any, Vh: Any) -> Any:
    """LinalgSvd's rule on arrays, for the gradient of one part of the reduced SVD."""
    m, n = U.shape[-2], Vh.shape[-1]
    if part == "S":
        return U @ (grad[..., None] * Vh) if m >= n else (U * grad[..., None, :]) @ Vh
    S2 = S * S
    E = S2[..., None, :] - S2[..., None] + xp.eye(S.shape[-1], dtype=S.dtype, like=S)  # (..., k, k)
    if part == "U":
        Ut = xp.swapaxes(U, -1, -2)
        X = Ut @ grad
        g = (X - xp.swapaxes(X, -1, -2)) / E * S[..., None, :]  # (..., k, k)
        if m > n:
            over_s = grad / S[..., None, :]  # (..., m, k)
            return (U @ g + over_s - U @ (Ut @ over_s)) @ Vh
        return U @ g @ Vh
    X = Vh @ xp.swapaxes(grad, -1, -2)
    g = S[..., None] * ((X - xp.swapaxes(X, -1, -2)) / E)  # (..., k, k)
    if m < n:
        over_s = grad / S[..., None]  # (..., k, n)
        return U @ (g @ Vh + over_s - (over_s @ xp.swapaxes(Vh, -1, -2)) @ Vh)
    return U @ g @ Vh


class Linear(Function):
    """out = x @ W^T + b  (x (..., in), W (out, in), b (out,) or None)

    One node instead of matmul + transpose + add, and grad_W comes out contiguous in W's
    (out, in) layout.

    With the fast path on, x of more than two dims is multiplied as one (rows, in) matrix,
    and a 2-D batch of fewer rows than out_features is computed transposed,
    out = (W @ x^T)^T, copied into row-major order (PyTorch's layout) as the bias is added;
    grad_x comes out in x's own order, (W^T @ g^T)^T for a column-major x. With it off,
    out = x @ W^T (NumPy's matmul broadcasting W^T over any leading dims) and grad_x = g @ W.
    """

    rule = "grad_x = grad @ W, grad_W = grad.T @ x, grad_b = grad summed over rows"
    saves_inputs = "others"  # each input's value only for the others' gradients

    def forward(self, x: Any, weight: Any, bias: Any = None) -> Any:
        if x.ndim == 2 and weight.shape[0] > x.shape[0] and fastpath.enabled():
            product = xp.matmul(weight, x.T).T  # the longer side first: column-major
            out = xp.empty_like(product, order="C")  # row-major out, as PyTorch's
            if bias is None:
                out[...] = product
            else:  # the copy into row-major order adds the bias on the way
                xp.add(product, bias, out=out)
            return rounded(out, x, weight)
        elif x.ndim > 2 and fastpath.enabled():  # one product, not one per leading index
            rows = math.prod(x.shape[:-1])  # (B, T, in) -> (B*T, in)
            out = xp.matmul(x.reshape(rows, x.shape[-1]), weight.T)
            out = out.reshape(*x.shape[:-1], weight.shape[0])
        else:
            out = xp.matmul(x, weight.T)
        if bias is not None:
            out += bias  # out is fresh: add in place, no second buffer
        return rounded(out, x, weight)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x, weight, _ = self.inputs
        return self._grads(grad, x, weight, x._array)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        x, weight, _ = arrays_of(self.inputs)
        return self._grads(grad, x, weight, x)

    def _grads(self, grad: Any, x: Any, weight: Any, xd: Any) -> tuple[Any, ...]:
        """The rule on Tensors (backward) or on arrays (backward_arrays) alike: both read
        ``.T``, ``@``, ``reshape`` and ``sum`` the same; xd is x's array, for its layout.
        The common 2-D case calls nothing more than it must."""
        need_x, need_w, need_b = self.needs_input_grad
        g2, x2 = grad, x  # as matrices
        if xd.ndim != 2:
            n_out, n_in = weight.shape
            rows = math.prod(xd.shape[:-1])  # not -1: x or grad may have no elements
            g2, x2 = grad.reshape(rows, n_out), x.reshape(rows, n_in)
        gx = gw = None
        if need_x:
            if xd.ndim > 2:  # as one matrix, as forward
                gx = (g2 @ weight).reshape(xd.shape)
            elif xd.ndim == 2 and not xd.flags.c_contiguous and fastpath.enabled():
                gx = (weight.T @ grad.T).T  # in x's order, for a column-major x
            else:
                gx = grad @ weight
        if need_w:
            gw = g2.T @ x2  # (out, in)
        return gx, gw, g2.sum(0) if need_b else None  # (out,) for the bias
