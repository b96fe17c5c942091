"""Normalisation primitives: layer normalisation over the last dims, group and batch norm.

One node where the formula in Tensor ops would be nine (two means, a subtraction, a
square, a power, three products and a sum), each keeping an array for its backward: the
node keeps two numbers per row (the mean and 1/std, as PyTorch's kernel does) and
normalises its input again in backward, where the input is kept anyway.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any

from .. import array, fastpath
from ..array import host, xp
from ..autograd.primitive import Function
from ..fastpath.rowsums import row_sums

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor

_VECDOT = getattr(xp, "vecdot", None)  # NumPy 2's row dot product, a ufunc


def _row_dots(a: Any, b: Any) -> Any:
    """(M, 1) dot products of the rows of two (M, n) arrays, in one pass (NumPy 1: einsum)."""
    if _VECDOT is None:
        return xp.einsum("ij,ij->i", a, b)[:, None]
    return _VECDOT(a, b)[:, None]


def _rstd(squares: Any, n: int, eps: float) -> Any:
    """1 / sqrt(squares / n + eps) of the (M, 1) sums of squares, as sqrt(n) / sqrt(squares +
    n eps): three NumPy calls where the plain order is four (not in place: NumPy's in-place
    call on one element, a single row's, costs twice its plain one)."""
    return math.sqrt(n) / xp.sqrt(squares + n * eps)


@functools.lru_cache(maxsize=64)
def _mean_column(n: int, char: str) -> Any:
    """An (n, 1) column of 1 / n of dtype ``char``, read-only: made once for each, shared by
    the calls (a row's mean is its product with it)."""
    column = host.full((n, 1), 1.0 / n, dtype=char)
    column.flags.writeable = False
    return column


class LayerNorm(Function):
    """out = (x - mean) / sqrt(var + eps) * weight + bias over x's last ``k`` dims (the
    variance biased, as PyTorch's), weight and bias of those dims' shape, or None;
    grad_x = rstd (gh - mean(gh) - xhat mean(gh xhat)) with gh = grad * weight,
    grad_weight = sum(grad xhat), grad_bias = sum(grad) over the leading dims.

    Float32 and float64 compute in their own precision, narrower floats in float32 (as
    PyTorch's CPU kernels do), the output in x's dtype. Under create_graph the rule runs in
    Tensor ops from x, so it differentiates again.
    """

    rule = (
        "grad_x = rstd * (gh - mean(gh) - xhat * mean(gh * xhat)), gh = grad * weight; "
        "grad_weight = sum(grad * xhat), grad_bias = sum(grad), over the rows"
    )

    def forward(self, x: Any, weight: Any, bias: Any, k: int, eps: float) -> Any:
        self.k, self.eps = k, eps
        n = math.prod(x.shape[x.ndim - k :])
        if n == 0:  # nothing to normalise: an empty result; PyTorch's statistics, 0 and NaN
            m, work = math.prod(x.shape[: x.ndim - k]), x.dtype if x.dtype.itemsize >= 4 else "f"
            self.mean = xp.zeros((m, 1), dtype=work, like=x)
            self.rstd = xp.full((m, 1), xp.nan, dtype=work, like=x)
            return x.copy()
        rows = x.reshape(-1, n)  # (M, n), the half types in float32
        rows = rows if x.dtype.itemsize >= 4 else rows.astype(xp.float32)
        fast = fastpath.enabled()
        if fast:  # the means as one product: (M, n) @ (n, 1)
            mean = rows.dot(array.from_host(_mean_column(n, rows.dtype.char), rows))
        else:
            mean = row_sums(rows) / n  # not in place, as _rstd
        xhat = rows - mean
        if fast:  # the sum of squares in one pass, the rest in place
            rstd = _rstd(_row_dots(xhat, xhat), n, eps)  # (M, 1)
            out = xhat  # fresh and not kept
            out *= rstd
            if weight is not None:
                out *= weight.reshape(-1)
            if bias is not None:
                out += bias.reshape(-1)
        else:
            rstd = 1.0 / xp.sqrt((xhat * xhat).mean(axis=-1, keepdims=True) + eps)  # (M, 1)
            out = xhat * rstd
            if weight is not None:
                out = out * weight.reshape(-1)
            if bias is not None:
                out = out + bias.reshape(-1)
        self.mean, self.rstd = mean, rstd
        out = out.reshape(x.shape)
        return out if out.dtype == x.dtype else out.astype(x.dtype)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        x, weight, bias = self.inputs
        need_x, need_w, need_b = self.needs_input_grad
        n = math.prod(x.shape[x.ndim - self.k :])
        if n == 0:  # every input empty: so is each gradient
            wanted = zip(self.inputs, self.needs_input_grad, strict=True)
            return tuple(xp.zeros_like(t._array) if need else None for t, need in wanted)
        xhat = x._array.reshape(-1, n).astype(self.mean.dtype, copy=False) - self.mean
        xhat *= self.rstd  # as forward made it: the same operations, the same values
        g = grad.reshape(-1, n).astype(xhat.dtype, copy=False)
        gx = gw = gb = None
        if need_w:
            gw = xp.einsum("ij,ij->j", g, xhat).reshape(weight.shape).astype(weight.dtype)
        if need_b:  # the column sums: g^T's row sums
            gb = row_sums(g.T).reshape(bias.shape).astype(bias.dtype)
        if need_x:
            gh = g * weight._array.reshape(-1) if weight is not None else g.copy()
            dot = _row_dots(gh, xhat) / n  # mean(gh * xhat) per row, not in place (_rstd)
            gh -= row_sums(gh) / n
            xhat *= dot  # not needed after: in place, no temporary
            gh -= xhat
            gh *= self.rstd
            gx = gh.reshape(x.shape).astype(x.dtype, copy=False)
        return gx, gw, gb

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x, weight, bias = self.inputs
        need_x, need_w, need_b = self.needs_input_grad
        if x.shape[x.ndim - self.k :].numel() == 0:  # every input empty: so is each gradient
            wanted = zip(self.inputs, self.needs_input_grad, strict=True)
            return tuple(t * 0 if need else None for t, need in wanted)
        dims = tuple(range(x.ndim - self.k, x.ndim))
        lead = tuple(range(x.ndim - self.k))
        centred = x - x.mean(dims, keepdim=True)
        rstd = ((centred * centred).mean(dims, keepdim=True) + self.eps) ** -0.5
        xhat = centred * rstd
        gx = gw = gb = None
        if need_w:
            gw = (grad * xhat).sum(lead) if lead else grad * xhat
        if need_b:
            gb = grad.sum(lead) if lead else grad
        if need_x:
            gh = grad * weight if weight is not None else grad
            mean_gh = gh.mean(dims, keepdim=True)
            mean_ghx = (gh * xhat).mean(dims, keepdim=True)
            gx = rstd * (gh - mean_gh - xhat * mean_ghx)
        return gx, gw, gb


class NativeGroupNorm(Function):
    """out = (x - mean) / sqrt(var + eps) * weight + bias, the mean and (biased) variance of
    each of ``groups`` groups of channels of x (N, C, *) over the group's channels and
    positions, weight and bias (C,) or None;
    grad_x = rstd (gh - mean(gh) - xhat mean(gh xhat)) over each group, gh = grad * weight,
    grad_weight = sum(grad xhat), grad_bias = sum(grad), over every dim but the channels'.

    Float32 and float64 compute in their own precision, narrower floats in float32, the
    output in x's dtype. The rule runs in Tensor ops from x, so it differentiates again.
    """

    rule = (
        "grad_x = rstd * (gh - mean(gh) - xhat * mean(gh * xhat)) per group, gh = grad * w; "
        "grad_weight = sum(grad * xhat), grad_bias = sum(grad), per channel"
    )

    def forward(self, x: Any, weight: Any, bias: Any, *, groups: int, eps: float) -> Any:
        self.groups, self.eps = groups, eps
        n, c = x.shape[:2]
        work = x.dtype if x.dtype in (xp.float32, xp.float64) else xp.dtype(xp.float32)
        if not x.size:  # nothing to normalise: an empty result, as PyTorch's
            self.mean = self.rstd = xp.zeros((n * groups, 1), dtype=work, like=x)
            return x.copy()
        rows = x.reshape(n * groups, -1).astype(work, copy=False)  # (N G, C/G * ...)
        m = rows.shape[1]
        mean = row_sums(rows)
        mean /= m
        out = rows - mean
        rstd = _rstd(_row_dots(out, out), m, eps)  # (N G, 1)
        out *= rstd
        out = out.reshape(n, c, -1)  # (N, C, *)
        if weight is not None:
            out *= weight.reshape(c, 1)
        if bias is not None:
            out += bias.reshape(c, 1)
        self.mean, self.rstd = mean, rstd  # PyTorch's result1 and result2
        return out.reshape(x.shape).astype(x.dtype, copy=False)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x, weight, bias = self.inputs
        need_x, need_w, need_b = self.needs_input_grad
        n, c = x.shape[:2]
        per_channel = [0, *range(2, x.ndim)]  # every dim but the channels'
        if not x.numel():  # an empty x: its gradient empty, the weight's and bias's 0
            zeros = grad.sum(per_channel)
            return grad if need_x else None, zeros if need_w else None, zeros if need_b else None
        xg = x.reshape(n, self.groups, -1)  # (N, G, C/G * ...)
        centred = xg - xg.mean(2, keepdim=True)
        rstd = ((centred * centred).mean(2, keepdim=True) + self.eps) ** -0.5
        xhat = centred * rstd
        gx = gw = gb = None
        if need_w:
            gw = (grad * xhat.reshape(x.shape)).sum(per_channel)
        if need_b:
            gb = grad.sum(per_channel)
        if need_x:
            gh = grad * weight.reshape((1, c) + (1,) * (x.ndim - 2)) if weight is not None else grad
            gh = gh.reshape(n, self.groups, -1)
            mean_gh = gh.mean(2, keepdim=True)
            mean_ghx = (gh * xhat).mean(2, keepdim=True)
            gx = (rstd * (gh - mean_gh - xhat * mean_ghx)).reshape(x.shape)
        return gx, gw, gb


def _mean(a: Any, dims: tuple, n: int) -> Any:
    """a.mean(axis=dims) (n the count it averages) as NumPy's mean makes it, a half summed in
    float32, without the method's Python wrapper (2 of a small mean's 3 us)."""
    total = xp.add.reduce(a, axis=dims, dtype=xp.float32 if a.dtype == xp.float16 else None)
    return (total / n).astype(a.dtype, copy=False)  # not in place: slower on one channel


class NativeBatchNorm(Function):
    """out = (x - mean) rstd * weight + bias per channel (dim 1) of x (N, C, *), rstd =
    1 / sqrt(var + eps): the batch's mean and biased variance when training, the running
    statistics' otherwise; weight and bias (C,) or None;
    training: grad_x = rstd (gh - mean(gh) - xhat mean(gh xhat)) over each channel, else
    grad_x = rstd gh, with gh = grad * weight; grad_weight = sum(grad xhat), grad_bias =
    sum(grad), over every dim but the channels'. The running statistics take no gradient.
    """

    rule = (
        "grad_x = rstd * (gh - mean(gh) - xhat * mean(gh * xhat)) per channel (rstd * gh "
        "when not training), gh = grad * w; grad_weight = sum(grad * xhat), grad_bias = sum(grad)"
    )

    def forward(self, x: Any, weight: Any, bias: Any, mean: Any, var: Any, **options: Any) -> Any:
        self.training, self.eps = options["training"], options["eps"]
        eps, momentum = self.eps, options["momentum"]
        dims = (0, *range(2, x.ndim))
        shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)  # a (C,) vector over (N, C, *)
        if self.training:  # the batch's statistics; the running ones (given) move towards
            # them in place, by momentum, towards the unbiased variance, as PyTorch's kernel
            n = x.size // x.shape[1]
            kept_mean, kept_var, mean = mean, var, _mean(x, dims, n)
            out = x - mean.reshape(shape)
            var = _mean(out * out, dims, n)  # biased: what normalises
            if kept_mean is not None:
                kept_mean *= 1.0 - momentum
                kept_mean += momentum * mean
            if kept_var is not None:
                kept_var *= 1.0 - momentum
                kept_var += momentum * (var * (n / (n - 1)))
        else:
            out = x - mean.reshape(shape)
        rstd = 1.0 / xp.sqrt(var + eps)  # (C,)
        self.mean, self.var, self.rstd = mean, var, rstd  # PyTorch's result1, and result2
        out *= (rstd if weight is None else rstd * weight).reshape(shape)
        if bias is not None:
            out += bias.reshape(shape)
        return out.astype(x.dtype, copy=False)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x, weight, _, mean, var = self.inputs
        need_x, need_w, need_b = self.needs_input_grad[:3]
        dims = [0, *range(2, x.ndim)]
        shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
        if self.training:  # from x again, so that it differentiates again
            centred = x - x.mean(dims, keepdim=True)
            rstd = ((centred * centred).mean(dims, keepdim=True) + self.eps) ** -0.5
        else:
            centred = x - mean.reshape(shape)
            rstd = ((var + self.eps) ** -0.5).reshape(shape)
        xhat = centred * rstd
        gx = gw = gb = None
        if need_w:
            gw = (grad * xhat).sum(dims)
        if need_b:
            gb = grad.sum(dims)
        if need_x:
            gh = grad * weight.reshape(shape) if weight is not None else grad
            if self.training:
                mean_gh = gh.mean(dims, keepdim=True)
                gh = gh - mean_gh - xhat * (gh * xhat).mean(dims, keepdim=True)
            gx = rstd * gh
        return gx, gw, gb, None, None
