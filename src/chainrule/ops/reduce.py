"""Reductions: sum, mean, amax/amin, logsumexp, and the softmax family.

``dims`` is always a normalised tuple of non-negative dims (or None for all); the Tensor
methods normalise. Backward expands the gradient back with keepdim-shaped views.
"""

from __future__ import annotations

import math
import os
import sys
import warnings
from typing import TYPE_CHECKING, Any

from .. import fastpath
from ..array import errstate, is_floating, xp
from ..autograd.mode import state
from ..autograd.primitive import Function
from ..fastpath import exps, passes, rowsums
from .elementwise import Where
from .movement import Cat

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor


def _reduced(shape: tuple, dims: Any, keepdim: bool) -> tuple:
    """The shape a reduction over ``dims`` leaves."""
    if dims is None:
        return tuple(1 for _ in shape) if keepdim else ()
    if keepdim:
        return tuple(1 if d in dims else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in dims)


def _keep(grad: Any, in_shape: tuple, dims: Any, keepdim: bool) -> Any:
    """Reshape a reduced gradient so it broadcasts against the input (dims kept as 1)."""
    if keepdim or dims is None and grad.ndim == 0:
        return grad
    shape = list(in_shape)
    for d in range(len(in_shape)) if dims is None else dims:
        shape[d] = 1
    return grad.reshape(tuple(shape))  # (.., 1, ..) at each reduced dim


def _filled(kept: Any, grad: Any, fn: Any) -> Any:
    """The kept-dims gradient ``kept`` written out to the shape of ``fn``'s input, in
    ``grad``'s dtype and an array of its own (which a leaf's .grad takes as it is; a broadcast
    view costs more to make for a small tensor, and is copied there anyway)."""
    out = xp.empty(fn.inputs[0].shape, dtype=grad.dtype, like=grad)
    out[...] = kept
    return out


def _count(a: Any, dims: Any) -> int:
    """How many elements of a each result of a reduction over ``dims`` (None: all) covers."""
    if dims is None:
        return a.size
    n, shape = 1, a.shape
    for d in dims:  # a loop: math.prod of a list is a call more
        n *= shape[d]
    return n


def _column_major(a: Any, dims: Any) -> Any:
    """a, or with the fast path on a copy of it with its last axis outermost in memory (a
    2-D array's column-major copy), where a C-ordered array of at least 32 rows (the product
    of the other dims) is reduced over its last axis of at most 16 elements; a as it is laid
    out with the fast path off."""
    if getattr(a, "size", 0) < 32:  # fewer elements than the 32 rows it takes: nothing more
        return a
    last = a.ndim - 1
    if (
        last >= 1
        and (dims == last or dims == (last,))
        and a.shape[-1] <= 16
        and math.prod(a.shape[:-1]) >= 32
        and a.flags.c_contiguous
        and fastpath.enabled()
    ):
        # the axes by transpose's tuple, not moveaxis (a Python function: 7 of 8 us at (64, 10))
        outermost = a.transpose((last, *range(last))).copy()  # (last, *rest): columns contiguous
        return outermost.transpose((*range(1, last + 1), 0))  # a's shape, the last axis outermost
    return a


def _as_laid_out(out: Any, given: Any) -> Any:
    """out in C order where the input ``given`` was (as PyTorch's result is laid out like its
    input): _column_major's copy must not leak into the result's strides."""
    if given.flags.c_contiguous and not out.flags.c_contiguous:
        return out.copy(order="C")
    return out


def _shift(a: Any, dims: Any) -> Any:
    """The max over dims (kept as 1s), subtracted before exp so it cannot overflow; 0 for an
    empty array, which has no max (its logsumexp over an empty dim is log 0 = -inf)."""
    if not a.size:
        return xp.zeros((), dtype=a.dtype, like=a)
    return passes.reduce(xp.maximum, a, dims, True)  # the ufunc: no Python wrapper


def _reduce(ufunc: Any, a: Any, dims: Any, keepdim: bool) -> Any:
    """``ufunc.reduce(a, axis=dims, keepdims=keepdim)``: a sum over the last axis of a
    C-ordered float array past rowsums.BLAS_MIN elements by BLAS row sums; else passes.reduce
    of a as it is where it takes steps, of a as _column_major lays it out where not."""
    if a.size > rowsums.BLAS_MIN:  # (a small array asks nothing more)
        last = a.ndim - 1
        if (
            ufunc is xp.add
            and last >= 1
            and dims in (last, (last,))
            and a.dtype.char in "fd"
            and a.flags.c_contiguous
        ):
            rows = a.reshape(-1, a.shape[-1])  # (M, n): one row per result
            return rowsums.row_sums(rows).reshape(_reduced(a.shape, dims, keepdim))
        out = passes.stepped(ufunc, a, dims, keepdim)
        if out is not None:
            return out
    return passes.reduce(ufunc, _column_major(a, dims), dims, keepdim)


class Sum(Function):
    """out = sum of a over dims"""

    rule = "grad_a = grad expanded back to a's shape"
    saves_inputs = False

    def forward(self, a: Any, dims: Any = None, keepdim: bool = False) -> Any:
        self.dims, self.keepdim = dims, keepdim
        return _reduce(xp.add, a, dims, keepdim)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x = self.inputs[0]
        return (_keep(grad, x.shape, self.dims, self.keepdim).expand(x.shape),)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        return (_filled(_keep(grad, self.inputs[0].shape, self.dims, self.keepdim), grad, self),)


class Mean(Function):
    """out = mean of a over dims"""

    rule = "grad_a = grad / n expanded back to a's shape (n = number of values averaged)"
    saves_inputs = False

    def forward(self, a: Any, dims: Any = None, keepdim: bool = False) -> Any:
        self.dims, self.keepdim = dims, keepdim
        self.n = _count(a, dims)
        if a.dtype.itemsize < 4 or not self.n:
            # NumPy's mean: halves summed in float32, and the NaN of nothing with its warning
            return _column_major(a, dims).mean(axis=dims, keepdims=keepdim)
        # mean's own sum and division, without its Python wrapper (2 of a small mean's 3 us)
        return _reduce(xp.add, a, dims, keepdim) / self.n

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x = self.inputs[0]
        return ((_keep(grad, x.shape, self.dims, self.keepdim) / self.n).expand(x.shape),)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        kept = _keep(grad, self.inputs[0].shape, self.dims, self.keepdim) / self.n
        return (_filled(kept, grad, self),)


def _passes_add(a: Any, axis: Any, keepdims: bool) -> Any:
    """passes.reduce of a sum, called as the ufunc's reduce is (the spread's sums)."""
    return passes.reduce(xp.add, a, axis, keepdims)


class _Spread(Function):
    """The variance's forward and rule, which var, std, var_mean and std_mean share."""

    def forward(
        self, a: Any, dims: Any = None, correction: Any = 1, keepdim: bool = False, op: str = "var"
    ) -> Any:
        self.dims, self.keepdim = dims, keepdim
        self.count = n = _count(a, dims)
        self.dof = n - correction
        a = _column_major(a, dims)
        if self.dof > 0:
            return self._spread(a, n, keepdim) / self.dof
        warnings.warn(  # ``op``: var or std, whichever the user called
            f"{op}: degrees of freedom is <= 0 ({n} elements reduced, correction "
            f"{correction}); the result is inf or NaN",
            UserWarning,
            stacklevel=_caller_level(),
        )
        with errstate(divide="ignore", invalid="ignore"):  # no degrees of freedom: inf/NaN
            return self._spread(a, n, keepdim) / 0.0

    def _spread(self, a: Any, n: int, keepdim: bool) -> Any:
        """The sum of squares about the mean over dims; the mean (.., 1, ..) kept for
        backward and var_mean. Sums by the ufunc's reduce: no Python wrapper."""
        dims = self.dims
        # the ufunc's own reduce where passes.reduce would call it (a small array): no call
        add = xp.add.reduce if a.size < passes.SIZE_MIN else _passes_add
        if a.dtype.itemsize < 4 or not n:  # NumPy's mean: halves summed in float32, and
            self.mean = a.mean(axis=dims, keepdims=True)  # the NaN of nothing
        else:  # mean's own sum and division
            self.mean = add(a, axis=dims, keepdims=True) / n
        centred = a - self.mean
        centred *= centred
        return add(centred, axis=dims, keepdims=keepdim)

    def _grad(self, g: Any, a: Any, mean: Any) -> Any:
        """The rule on g and a, both Tensors or both arrays; ``mean`` (on arrays) is the one
        forward computed; for Tensors it is a Tensor op on a, since it depends on it."""
        if self.dof <= 0 and self.dims is None:  # PyTorch's case; a constant factor, no node
            at_mean = self.inputs[0]._array == self.mean
            return g * xp.where(at_mean, xp.nan, xp.inf).astype(a.dtype)
        if mean is None:
            mean = a.mean(dim=self.dims, keepdim=True)
        scale = 2.0 / self.dof if self.dof else math.inf
        return (scale * g) * (a - mean)


class Var(_Spread):
    """out = sum over dims of (a - mean)^2 / max(n - correction, 0), n the count reduced (inf,
    or NaN where every element equals the mean, when that is 0, as PyTorch);
    grad_a = 2 / (n - correction) * g * (a - mean), PyTorch's formula as written: with dims
    given, n - correction <= 0 makes that scale inf or negative; over all dims, the gradient
    there is g * (NaN where a equals the mean, else inf).

    A primitive rather than its composition (mean, sub, mul, sum, div): one node instead of
    five, and PyTorch's gradients where n <= correction, where the composition's centring
    turns inf into NaN.
    """

    rule = "grad_a = 2 / (n - correction) * grad * (a - mean)"

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x = self.inputs[0]
        return (self._grad(_keep(grad, x.shape, self.dims, self.keepdim), x, None),)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        x = self.inputs[0]._array
        return (self._grad(_keep(grad, x.shape, self.dims, self.keepdim), x, self.mean),)


class Std(Var):
    """out = sqrt(var(a)), var's over dims with its correction;
    grad_a = var's rule on grad / (2 out), that 0 where out = 0, as PyTorch's std_backward
    (a constant a then has gradient 0, not the NaN of sqrt's slope there)."""

    rule = "grad_a = var's rule on (grad / (2 * out), 0 where out = 0)"
    saves_out = True

    def forward(
        self, a: Any, dims: Any = None, correction: Any = 1, keepdim: bool = False, op: str = "std"
    ) -> Any:
        return xp.sqrt(super().forward(a, dims, correction, keepdim, op))

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return super().backward(_halved(grad, out), out)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        with errstate(divide="ignore", invalid="ignore"):
            g = xp.where(out == 0, 0.0, grad / (2.0 * out)).astype(grad.dtype, copy=False)
        return super().backward_arrays(g, out)


def _halved(grad: Any, out: Any) -> Any:
    """grad / (2 out), 0 where out = 0: std's gradient as var's."""
    with errstate(divide="ignore", invalid="ignore"):
        return Where.apply(out._array == 0, 0.0, grad / (out * 2.0))


class VarMean(_Spread):
    """out = (var, mean) of a over dims, stacked: out[0] var's, out[1] the mean (var_mean's two
    outputs, which share this node: autograd/outputs.py);
    grad_a = var's rule on grad[0] + grad[1] / n expanded back, each where that output took
    a gradient, as PyTorch's var_mean_backward."""

    rule = "grad_a = var's rule on grad[0] + grad[1] / n expanded back to a's shape"
    root = False  # std_mean: out[0] = sqrt(var)
    outputs_read: tuple[int, ...] = ()  # the outputs the rule reads (their writes are checked)

    def forward(
        self, a: Any, dims: Any = None, correction: Any = 1, keepdim: bool = False, op: str = "var"
    ) -> Any:
        first, mean = self.parts(a, dims, correction, keepdim, op)
        out = xp.empty((2, *first.shape), dtype=first.dtype, like=a)  # (2, *reduced)
        out[0], out[1] = first, mean
        return out

    def parts(self, a: Any, dims: Any, correction: Any, keepdim: bool, op: str) -> tuple:
        """The two outputs forward stacks, each its own array: (var or std, the mean)."""
        spread = super().forward(a, dims, correction, keepdim, op)
        mean = self.mean if keepdim else self.mean.reshape(spread.shape)
        return xp.sqrt(spread) if self.root else spread, mean

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x = self.inputs[0]
        got = _arrived(self)
        total = None
        if 0 in got:
            g = _halved(grad[0], out[0]) if self.root else grad[0]
            total = self._grad(_keep(g, x.shape, self.dims, self.keepdim), x, None)
        if 1 in got:
            g = (_keep(grad[1], x.shape, self.dims, self.keepdim) / self.count).expand(x.shape)
            total = g if total is None else total + g
        return (total,)


class StdMean(VarMean):
    """out = (std, mean) of a over dims, stacked, as VarMean's;
    grad_a = std's rule on grad[0] + grad[1] / n expanded back, as PyTorch's."""

    rule = "grad_a = std's rule on grad[0] + grad[1] / n expanded back to a's shape"
    root = True
    saves_out = True
    outputs_read = (0,)  # std, PyTorch's _saved_result0


def _arrived(node: Any) -> Any:
    """Which of the node's two outputs took a gradient in this pass (autograd/outputs.py):
    both where none came through the node they share (a second derivative reaches the
    stacked output itself, each part of it)."""
    return node.arrived() or (0, 1)


def _caller_level() -> int:
    """The ``stacklevel`` that makes a warning raised in the calling function name the first
    line outside chainrule: the user's call, however many of chainrule's frames lie between
    (Tensor.var, std, the functional form, apply)."""
    frame: Any = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Amax(Function):
    """out = max of a over dims. Where out is NaN, amax's gradient is NaN (no element equals
    it), and that of max() over all dims (``nan_ties``) is shared among the NaNs, both as
    PyTorch's."""

    rule = "grad_a = grad at the maxima (shared equally among ties), 0 elsewhere"
    saves_out = True

    ufunc = xp.maximum  # amax's, reduced without its Python wrapper

    def forward(
        self, a: Any, dims: Any = None, keepdim: bool = False, nan_ties: bool = False
    ) -> Any:
        self.dims, self.keepdim, self.nan_ties = dims, keepdim, nan_ties
        return _reduce(self.ufunc, a, dims, keepdim)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        # The ties are found here, not in forward, which then costs nothing extra under
        # no_grad and saves no mask.
        x = self.inputs[0]
        best = _keep(out, x.shape, self.dims, self.keepdim)._array  # (.., 1, ..) at reduced dims
        mask = x._array == best  # (x.shape) True at every extreme
        if self.nan_ties:
            mask |= xp.isnan(x._array) & xp.isnan(best)
        with errstate(invalid="ignore"):  # 0/0 where out is NaN and no element equals it
            w = mask / mask.sum(axis=self.dims, keepdims=True).astype(grad.dtype)
        return (_keep(grad, x.shape, self.dims, self.keepdim) * w,)


class Amin(Amax):
    """out = min of a over dims"""

    rule = "grad_a = grad at the minima (shared equally among ties), 0 elsewhere"

    ufunc = xp.minimum


class Aminmax(Function):
    """out = (amin, amax) of a over dims, stacked: out[0] the least, out[1] the largest
    (aminmax's two outputs, which share this node: autograd/outputs.py);
    grad_a = amin's rule on grad[0] + amax's on grad[1], each where that output took a
    gradient: shared equally among ties, NaN along a line holding a NaN, as PyTorch's."""

    rule = "grad_a = grad[0] at the minima + grad[1] at the maxima, each shared among ties"
    saves_out = True
    outputs_read = (0, 1)  # PyTorch's _saved_min and _saved_max

    def forward(self, a: Any, dims: Any = None, keepdim: bool = False) -> Any:
        self.dims, self.keepdim = dims, keepdim
        a = _column_major(a, dims)
        if a.size < passes.SIZE_MIN:  # the ufuncs' own reduce, as passes.reduce calls it there
            least = xp.minimum.reduce(a, axis=dims, keepdims=keepdim)  # amin without its wrapper
            most = xp.maximum.reduce(a, axis=dims, keepdims=keepdim)
        else:
            least = passes.reduce(xp.minimum, a, dims, keepdim)
            most = passes.reduce(xp.maximum, a, dims, keepdim)
        out = xp.empty((2, *least.shape), dtype=a.dtype, like=a)  # (2, *reduced)
        out[0] = least
        out[1] = most
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x = self.inputs[0]
        total = None
        for k in sorted(_arrived(self)):
            best = _keep(out._array[k], x.shape, self.dims, self.keepdim)  # (.., 1, ..)
            mask = x._array == best  # (x.shape) True at every extreme
            with errstate(invalid="ignore"):  # 0/0 along a line holding a NaN: NaN
                w = mask / mask.sum(axis=self.dims, keepdims=True).astype(grad.dtype)
            g = _keep(grad[k], x.shape, self.dims, self.keepdim) * w
            total = g if total is None else total + g
        return (total,)


class LogSumExp(Function):
    """out = log(sum(exp(a))) over dims, shifted by the max so it never overflows"""

    rule = "grad_a = grad * softmax(a) = grad * exp(a - out)"
    saves_out = True

    def forward(self, a: Any, dims: Any = None, keepdim: bool = False) -> Any:
        self.dims, self.keepdim = dims, keepdim
        a = _column_major(a, dims)
        m = _shift(a, dims)
        m = xp.where(xp.isfinite(m), m, 0)
        out = xp.log(passes.reduce(xp.add, xp.exp(a - m), dims, True)) + m
        return out.reshape(_reduced(a.shape, dims, keepdim))

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x = self.inputs[0]
        g = _keep(grad, x.shape, self.dims, self.keepdim)
        lse = _keep(out, x.shape, self.dims, self.keepdim)
        return (g * (x - lse).exp(),)


def _along(ufunc: Any, a: Any, dim: int) -> Any:
    """``ufunc.reduce(a, axis=dim, keepdims=True)`` along one dim: in steps where it is short
    and its lines many (passes.stepped, in the ufunc's order along the dim), else by the ufunc
    itself, as on a small array's way, which asks nothing more."""
    out = passes.stepped(ufunc, a, (dim,), True) if a.size >= passes.SIZE_MIN else None
    return ufunc.reduce(a, axis=dim, keepdims=True) if out is None else out


class Softmax(Function):
    """out = exp(a - max) / sum(exp(a - max)) along dim"""

    rule = "grad_a = out * (grad - sum(grad * out, dim))"
    saves_inputs = False
    saves_out = True

    def forward(self, a: Any, dim: Any) -> Any:
        self.dim = dim
        if _small(a):  # most calls: the ufuncs alone, as _minus_max and _along call them there
            e = xp.subtract(a, xp.maximum.reduce(a, dim, None, None, True))  # keepdims
            xp.exp(e, out=e)
            e /= xp.add.reduce(e, dim, None, None, True)
            return e
        made = exps.unshifted(a, dim)  # large rows: exp(a) alone where it is safe
        if made is not None:
            e, sums = made
            e /= sums
            return e
        e, given = _minus_max(a, dim), a
        xp.exp(e, out=e)
        e /= _along(xp.add, e, dim)
        return e if e.ndim != 2 else _as_laid_out(e, given)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (out * (grad - (grad * out).sum(dim=(self.dim,), keepdim=True)),)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        d = self.dim
        small = 0 < grad.ndim and grad.size < passes.SIZE_MIN
        if _VECDOT is not None and (d == grad.ndim - 1 or small):
            total = _VECDOT(grad, out, axis=d, keepdims=True)  # sum(grad * out, d): one pass
        elif grad.size >= passes.SIZE_MIN:  # along another dim of a large one, Sum's passes:
            total = _reduce(xp.add, grad * out, (d,), True)  # vecdot walks it line by line
        else:
            total = _along(xp.add, _column_major(grad * out, d), d)
        g_a = grad - total
        g_a *= out
        return (g_a,)


_VECDOT = getattr(xp, "vecdot", None)  # NumPy 2's row dot product, a ufunc


def _small(a: Any) -> bool:
    """Whether a is taken as it is laid out by _minus_max and _along (a small, non-empty
    array of a dim or more, not a 2-D one of 32 rows or more: see _column_major)."""
    return 0 < a.size < passes.SIZE_MIN and (a.ndim > 2 or a.ndim and a.shape[0] < 32)


def _minus_max(a: Any, dim: int) -> Any:
    """a - max(a, dim) in an array of its own, laid out as _column_major lays a out (the
    max of an empty array, which has none, is 0; a 0-d a gives a 0-d array)."""
    if a.ndim == 2 and a.shape[0] >= 32 or not a.size or not a.ndim:  # the rare cases
        a = _column_major(a, dim)
        return xp.subtract(a, _shift(a, (dim,) if a.ndim else None), out=xp.empty_like(a))
    # Along the last dim fmax: its reduce over rows of 64 takes 0.6 the time of maximum's (over
    # a leading dim, 1.3 times). A row holding a NaN is all NaN either way, as PyTorch's: the
    # NaN itself, less the max, spreads through the row's sum.
    top = xp.fmax if dim == a.ndim - 1 else xp.maximum
    return xp.subtract(a, _along(top, a, dim))  # 2 NumPy calls


def _log_softmax(a: Any, dim: int) -> Any:
    """a - logsumexp(a, dim), each row shifted by its max first."""
    shifted = _minus_max(a, dim)
    shifted -= xp.log(_along(xp.add, xp.exp(shifted), dim))
    return shifted if shifted.ndim != 2 else _as_laid_out(shifted, a)


class LogSoftmax(Function):
    """out = a - logsumexp(a, dim);  a primitive for stability (logits of +-1000 are fine)"""

    rule = "grad_a = grad - exp(out) * sum(grad, dim)"
    saves_inputs = False
    saves_out = True

    def forward(self, a: Any, dim: Any) -> Any:
        self.dim = dim
        if _small(a):  # most calls: the ufuncs alone, as _log_softmax calls them there
            shifted = xp.subtract(a, xp.maximum.reduce(a, dim, None, None, True))  # keepdims
            shifted -= xp.log(xp.add.reduce(xp.exp(shifted), dim, None, None, True))
            return shifted
        return _log_softmax(a, dim)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad - out.exp() * grad.sum(dim=(self.dim,), keepdim=True),)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        total = _along(xp.add, _column_major(grad, self.dim), self.dim)
        e = xp.exp(out)
        e *= total
        return (grad - e,)


class Cumsum(Function):
    """out[..., k, ...] = sum of a[..., :k+1, ...] along dim (integers and bools sum in int64,
    as PyTorch, if ``widen``: no dtype was asked for);  grad_a = the sums of g from the end:
    flip(cumsum(flip(g)))."""

    rule = "grad_a = grad summed from the end along dim: flip(cumsum(flip(grad)))"
    saves_inputs = False

    def forward(self, a: Any, dim: Any, widen: bool = True) -> Any:
        self.dim = dim
        dtype = a.dtype if is_floating(a.dtype) or not widen else xp.int64
        if not a.ndim:  # one element: its own sum
            return a.astype(dtype)
        return passes.accumulate(xp.add, a, dim, dtype)  # cumsum without its Python wrapper

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        if grad.ndim == 0:  # one element: its own sum
            return (grad,)
        return (grad.flip(self.dim).cumsum(self.dim).flip(self.dim),)


class Cumprod(Function):
    """out[..., k, ...] = product of a[..., :k+1, ...] along dim (integers and bools in int64
    if ``widen``, as Cumsum);
    grad_a[i] = sum over k >= i of g[k] * (the product of a[j] for j <= k, j != i).

    Where no a along dim is 0 that sum is flip(cumsum(flip(g * out))) / a. Where one is, the
    products that leave one factor out are formed, an n x n square per line along dim, so the
    gradient at zeros is exact (and differentiable again), as PyTorch's.
    """

    rule = (
        "grad_a = flip(cumsum(flip(grad * out))) / a; with a 0 along dim, "
        "grad_a[i] = sum over k >= i of grad[k] * prod(a[j] for j <= k, j != i)"
    )
    saves_out = True

    def forward(self, a: Any, dim: Any, widen: bool = True) -> Any:
        self.dim = dim
        dtype = a.dtype if is_floating(a.dtype) or not widen else xp.int64
        if not a.ndim:  # one element: its own product
            return a.astype(dtype)
        return passes.accumulate(xp.multiply, a, dim, dtype)  # cumprod, without its wrapper

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        a, d = self.inputs[0], self.dim
        if a.ndim == 0:  # one element: its own product
            return (grad,)
        if not (a._array == 0).any():
            return ((grad * out).flip(d).cumsum(d).flip(d) / a,)
        x, g = a.transpose(d, -1), grad.transpose(d, -1)  # (..., n): dim d moved last
        n = x.shape[-1]
        one = xp.eye(n, dtype=bool, like=x._array)  # (i, j): a[i] replaced by 1 in row i
        left_out = Where.apply(one, 1.0, x.unsqueeze(-2)).cumprod(-1)  # (..., i, k)
        after = ~xp.tri(n, n, k=-1, dtype=bool, like=x._array)  # (i, k): k >= i
        terms = Where.apply(after, left_out * g.unsqueeze(-2), 0.0)  # (..., i, k)
        return (terms.sum(-1).transpose(d, -1),)


class Prod(Function):
    """out = the product of a over dims (None: every dim; else one dim, PyTorch's other
    overload);  grad_a = grad * out / a where no a along the product is 0; where one is, the
    product of the others: the products before each element times those after it (two
    cumprods), exact at zeros and differentiable again, as PyTorch's prod_backward."""

    rule = (
        "grad_a = grad * out / a; with a 0 in the product, grad * (product of the elements "
        "before a) * (product of those after)"
    )
    saves_out = True

    def forward(self, a: Any, dims: Any = None, keepdim: bool = False) -> Any:
        self.dims, self.keepdim = dims, keepdim
        dims = dims if a.ndim else None
        if a.dtype.char in "fd":  # passes keep a float's dtype; an integer's is kept below
            return passes.reduce(xp.multiply, a, dims, keepdim)
        return a.prod(axis=dims, dtype=a.dtype, keepdims=keepdim)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x = self.inputs[0]
        if x.ndim == 0:
            return (grad,)
        if not self.keepdim:
            shape = _reduced(x.shape, self.dims, True)
            grad, out = grad.reshape(shape), out.reshape(shape)  # (.., 1, ..) at dims
        zeros = x._array == 0
        if not zeros.any():
            return (grad * (out / x),)
        if self.dims is None:  # the elements in a line: the product of the others
            if zeros.sum() > 1 and not state.grad_enabled:  # every product holds a 0
                return (x * 0.0,)
            return (grad * _left_out(x.reshape(-1), 0).reshape(x.shape),)
        return (grad * _left_out(x, self.dims[0]),)


def _left_out(x: Tensor, d: int) -> Tensor:
    """For each element of x, the product of the others along dim d: the product of those
    before it times that of those after it, each a cumprod of x shifted by one (a 1 first)."""
    n = x.shape[d]
    a = x._array
    ones = type(x)._make(xp.ones(_reduced(a.shape, (d,), True), dtype=a.dtype, like=a))
    before = Cat.apply(ones, x.narrow(d, 0, n - 1), dim=d).cumprod(d)
    after = Cat.apply(ones, x.narrow(d, 1, n - 1).flip(d), dim=d).cumprod(d).flip(d)
    return before * after


class NLLLoss(Function):
    """out = -sum_i w_i logp[i, t_i] / D  ('mean': D = sum_i w_i; 'sum': D = 1; 'none': no sum,
    one loss per target), t_i the target class of row i along ``class_dim``

    A primitive rather than gather + neg + mean for a measured speed win: one node instead
    of four on the hot path of every classifier, and a dense one-hot gradient instead of a
    scatter with repeated-index handling.
    """

    rule = "grad_logp = grad * M, M[i, t_i] = -w_i / D and 0 elsewhere (a one-hot constant)"

    def forward(self, logp: Any, target: Any, weight: Any, class_dim: Any, reduction: Any) -> Any:
        # The target positions: with the fast path on, (rows, classes) index arrays for the
        # common (N, C) case; else an index along the class dim, for take/put_along_axis.
        if logp.ndim == 2 and class_dim == 1 and fastpath.enabled():
            self.at = (xp.arange(logp.shape[0], like=logp), target)
            picked = logp[self.at]  # (N,)
        else:
            self.at = xp.expand_dims(target, class_dim)  # (N, 1, d1, ...)
            picked = xp.take_along_axis(logp, self.at, axis=class_dim).squeeze(class_dim)
        if weight is not None:
            picked *= weight
        self.weight, self.class_dim, self.reduction = weight, class_dim, reduction
        self.denom = 1
        if reduction == "none":
            return -picked
        # the sum by the ufunc, without sum's Python wrapper, negated as a number: 0 - sum,
        # which is the sum of the negated terms, +0 too where they are all 0
        loss = 0.0 - xp.add.reduce(picked, axis=None)
        if reduction == "mean":
            self.denom = picked.size if weight is None else xp.add.reduce(weight, axis=None)
            return loss / self.denom
        return loss

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        onehot = self._onehot(self.inputs[0]._array, -1.0)
        if self.reduction == "none":
            grad = grad.unsqueeze(self.class_dim)  # (N, 1, d1, ...) against (N, C, d1, ...)
        return grad * onehot, None, None

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        onehot = self._onehot(self.inputs[0]._array, -1.0)
        if self.reduction == "none":
            grad = xp.expand_dims(grad, self.class_dim)  # (N, 1, d1, ...)
        onehot *= grad  # onehot is ours: scaled in place, no second array
        return onehot, None, None

    def _share(self) -> Any:
        """Each target's share w_i / D of the loss: a number, or an array of the targets'
        shape (N, d1, ...) with weights. With nothing counted (D = 0) there is no division,
        so the gradient is 0, as PyTorch's, not 0/0."""
        w = 1.0 if self.weight is None else self.weight
        return w / self.denom if self.reduction == "mean" and self.denom else w

    def _onehot(self, like: Any, sign: Any) -> Any:
        """An array of like's shape and memory order (log_softmax's may be column-major, for
        its sum): sign * w_i / D at each target, 0 elsewhere; with sign -1, the loss's
        gradient for an incoming 1."""
        flags = like.flags
        order = "F" if flags.f_contiguous and not flags.c_contiguous else "C"
        onehot = xp.zeros(like.shape, dtype=like.dtype, order=order, like=like)
        w = sign * self._share()
        if isinstance(self.at, tuple):
            onehot[self.at] = w
        else:
            xp.put_along_axis(onehot, self.at, self._column(w), axis=self.class_dim)
        return onehot

    def _column(self, v: Any) -> Any:
        """v, a number or an array of the targets' shape (N, d1, ...), made to broadcast
        against the input's (N, C, d1, ...): a dim of 1 put in at the class dim."""
        return xp.expand_dims(v, self.class_dim) if xp.ndim(v) else v


class CrossEntropy(NLLLoss):
    """out = nll_loss(log_softmax(x, class_dim), target): F.cross_entropy with class
    indices, as one node (LogSoftmax's gradient of NLLLoss's).

    One node instead of two on the hot path of every classifier, and on arrays a gradient
    made as a classifier's step by hand makes it: softmax, less the row's share at its
    target, scaled by it (four small ops where the two nodes make eleven).
    """

    rule = (
        "grad_a = grad * w_t / D * (softmax(a) - onehot(t)), t each row's target class, w_t "
        "its weight (1 if none), D the counted weights' sum for 'mean' (else 1)"
    )

    def forward(self, x: Any, target: Any, weight: Any, class_dim: Any, reduction: Any) -> Any:
        self.logp = _log_softmax(x, class_dim)
        return super().forward(self.logp, target, weight, class_dim, reduction)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        d = self.class_dim
        if self.reduction == "none":
            grad = grad.unsqueeze(d)
        softmax = self.inputs[0].softmax(d)  # Tensor ops on x: the gradient has its own graph
        column = self._column(self._share())
        return (softmax * column - self._onehot(self.logp, 1.0)) * grad, None, None

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        d = self.class_dim
        c = self._share() * grad  # each target's share of the incoming gradient
        column = self._column(c)
        p = xp.exp(self.logp)  # softmax(x), a new array of our own
        p *= column
        if isinstance(self.at, tuple):
            p[self.at] -= c
        else:
            less = xp.take_along_axis(p, self.at, axis=d) - column
            xp.put_along_axis(p, self.at, less, axis=d)
        return p, None, None
