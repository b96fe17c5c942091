"""Arithmetic that PyTorch computes as one op, each one node: the fused products and
quotients (addcmul, addcdiv), lerp, the logarithms of other bases and remainder. Each is
also a composition of other ops; as a primitive its node is PyTorch's one node (its name,
its ``_saved_*``), and its forward one pass of NumPy.

Each op returns gradients in the output's broadcast shape; the engine unbroadcasts.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .. import fastpath
from ..array import host, is_floating, ndarray, xp
from ..autograd.primitive import Function
from ..fastpath import division, select

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor


class Addcmul(Function):
    """out = a + value * t1 * t2"""

    rule = "grad_a = grad, grad_t1 = grad * value * t2, grad_t2 = grad * value * t1"
    saves_inputs = (1, 2)  # t1 and t2 only, each for the other's gradient

    def forward(self, a: Any, t1: Any, t2: Any, value: Any = 1) -> Any:
        self.value = value
        if spreads(a, t1, t2):
            return spread(xp.add, a, spread(xp.multiply, value * t1, t2))
        return a + value * t1 * t2

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        _, t1, t2 = self.inputs
        _, need_t1, need_t2 = self.needs_input_grad
        scaled = grad if self.value == 1 else grad * self.value
        return grad, scaled * t2 if need_t1 else None, scaled * t1 if need_t2 else None


class Addcdiv(Function):
    """out = a + value * t1 / t2"""

    rule = "grad_a = grad, grad_t1 = grad * value / t2, grad_t2 = -grad * value * t1 / t2**2"
    saves_inputs = (1, 2)  # not a (addcdiv_ writes it); t2 read for its own gradient too

    def forward(self, a: Any, t1: Any, t2: Any, value: Any = 1) -> Any:
        self.value = value
        if spreads(a, t1, t2):
            return spread(xp.add, a, spread(xp.true_divide, value * t1, t2))
        return a + value * t1 / t2

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        _, t1, t2 = self.inputs
        _, need_t1, need_t2 = self.needs_input_grad
        scaled = grad if self.value == 1 else grad * self.value
        return (
            grad,
            scaled / t2 if need_t1 else None,
            -scaled * t1 / (t2 * t2) if need_t2 else None,
        )


# A result of at most COLUMNS_MAX elements a row over ROWS_MIN rows or more, made of arrays
# of different shapes, is made a column at a time: NumPy's loop over such a result runs once
# a row, a few elements each (at 8 a row the two cost alike).
COLUMNS_MAX = 4
ROWS_MIN = 1024


def spreads(a: Any, b: Any, c: Any) -> bool:
    """Whether the fast path is on and a, b and c (the host's arrays, not all of one shape)
    broadcast to a result of short rows, which spread then makes a column at a time
    (fastpath/table.py): (n, 3), (3,) and (n, 1), say. The quick refusal of small ones first."""
    if getattr(a, "size", 0) * getattr(b, "size", 0) * getattr(c, "size", 0) < ROWS_MIN:
        return False
    arrays = (a, b, c)
    if any(type(x) is not host.ndarray for x in arrays) or a.shape == b.shape == c.shape:
        return False
    if not fastpath.enabled():
        return False
    shape = xp.broadcast_shapes(a.shape, b.shape, c.shape)
    return len(shape) > 1 and shape[-1] <= COLUMNS_MAX and math.prod(shape[:-1]) >= ROWS_MIN


def spread(ufunc: Any, x: Any, y: Any) -> Any:
    """``ufunc(x, y)``, a column at a time where x and y are arrays of different shapes, each
    column one call over every row (where spreads says it pays)."""
    if type(x) is not host.ndarray or type(y) is not host.ndarray or x.shape == y.shape:
        return ufunc(x, y)
    shape = xp.broadcast_shapes(x.shape, y.shape)
    out = xp.empty(shape, xp.result_type(x, y))
    x, y = xp.broadcast_to(x, shape), xp.broadcast_to(y, shape)
    for j in range(shape[-1]):
        ufunc(x[..., j], y[..., j], out=out[..., j])  # (..., n), strided by the row's length
    return out


class Lerp(Function):
    """out = a + w * (b - a), computed from b's side where |w| >= 0.5 (b - (b - a) * (1 - w)),
    as PyTorch's, so that w = 1 gives b exactly; w a number or a tensor. A tensor w takes
    PyTorch's vectorised form of the two, (w - big) * (b - a) + (b where big, else a) with
    big = |w| >= 0.5: w - 1 is -(1 - w) exactly, so the values are the same (and zero's sign
    PyTorch's where w is 1), in fewer passes."""

    rule = "grad_a = grad * (1 - w), grad_b = grad * w, grad_w = grad * (b - a)"
    saves_inputs: bool | str = "others"  # w for a's and b's gradients, a and b for w's

    def forward(self, a: Any, b: Any, w: Any) -> Any:
        diff = b - a
        if not isinstance(w, ndarray):
            self.saves_inputs = False  # a number w: the rule reads no input's value
            return a + w * diff if abs(w) < 0.5 else b - diff * (1 - w)
        big = xp.abs(w) >= 0.5
        coeff = xp.subtract(w, big)  # w, or w - 1 where big
        into = coeff if coeff.ndim and coeff.shape == diff.shape else None  # 0-d: a scalar
        out = xp.multiply(coeff, diff, out=into)
        end = b if b.shape == out.shape else xp.broadcast_to(b, out.shape)
        out += select(big, end, a)
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        a, b, w = self.inputs
        need_a, need_b, need_w = self.needs_input_grad
        return (
            grad * (1 - w) if need_a else None,
            grad * w if need_b else None,
            grad * (b - a) if need_w else None,
        )


class Log2(Function):
    """out = log(a) / log(2) (PyTorch's own log2 rounds as this does, not as NumPy's log2)"""

    rule = "grad_a = grad / (a * log(2))"

    def forward(self, a: Any) -> Any:
        if a.dtype.itemsize < 4:  # the half types in float32, rounded once, as PyTorch's
            return (xp.log(a.astype(xp.float32)) / math.log(2)).astype(a.dtype)
        return xp.log(a) / math.log(2)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad / (self.inputs[0] * math.log(2)),)


class Log10(Function):
    """out = log(a) / log(10) (PyTorch's own log10 rounds as this does, not as NumPy's)"""

    rule = "grad_a = grad / (a * log(10))"

    def forward(self, a: Any) -> Any:
        if a.dtype.itemsize < 4:  # the half types in float32, rounded once, as PyTorch's
            return (xp.log(a.astype(xp.float32)) / math.log(10)).astype(a.dtype)
        return xp.log(a) / math.log(10)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad / (self.inputs[0] * math.log(10)),)


class Remainder(Function):
    """out = a - floor(a / b) * b: a % b with b's sign, as Python's (C's fmod takes a's),
    a zero with a's sign, as PyTorch's (fmod, then + b where the signs differ); b a tensor
    or a number"""

    rule = "grad_a = grad, grad_b = -grad * floor(a / b)"
    saves_inputs = "others"  # a for b's gradient (remainder_ writes a); b for its own too

    def forward(self, a: Any, b: Any) -> Any:
        out = division.remainder(a, b, _remainder)  # float32: floor's passes (fastpath)
        return _remainder(a, b) if out is None else out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        a, b = self.inputs
        if not self.needs_input_grad[1]:
            return grad, None
        return grad, -grad * a.div(b, rounding_mode="floor")


def _remainder(a: Any, b: Any) -> Any:
    """NumPy's remainder, which is PyTorch's (fmod, then + b where it is not 0 and its sign
    is not b's) but for a zero's sign: b's, where PyTorch's is fmod's, a's."""
    out = xp.remainder(a, b)  # float a % 0 is NaN, its warning ignored (array/modules.py)
    zero = out == 0
    if is_floating(out.dtype) and zero.any():
        out = xp.where(zero, xp.copysign(out, a), out)
    return out


class Rounded(Function):
    """out = a rounded to a whole number: ``how`` floor, ceil, trunc or rint (to the nearest,
    halves to even); rint with ``decimals`` d as PyTorch computes it, in a's dtype:
    rint(a * 10^d) / 10^d (d > 0), rint(a / 10^-d) * 10^-d (d < 0)"""

    rule = "grad_a = 0: a step function, as PyTorch's"
    saves_inputs = False

    def forward(self, a: Any, how: str, decimals: int = 0) -> Any:
        step = getattr(xp, how)
        if not decimals:
            return step(a)
        scale = a.dtype.type(10.0 ** abs(decimals))
        return step(a * scale) / scale if decimals > 0 else step(a / scale) * scale

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad.new_zeros(grad.shape),)
