"""Elementwise primitives beyond elementwise.py's: the trigonometric and hyperbolic families
and their inverses, and the floating functions of one or two inputs NumPy has as one ufunc
(atan2, hypot, logaddexp, copysign, fmod, fmax, exp2, nan_to_num, ...). The special
functions are special.py's; the integer, bitwise and logical ops have no gradient and no
primitive (tensor/pointwise.py).

Each op returns gradients in the output's broadcast shape; the engine unbroadcasts.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any

from .. import fastpath
from ..array import finfo, ndarray, xp
from ..autograd.primitive import Function, arrays_of
from ..fastpath import division, ulps
from .elementwise import Sign, Where

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor

_LN2 = math.log(2.0)


class Tan(Function):
    """out = tan(a)"""

    rule = "grad_a = grad * (1 + out**2)"
    saves_inputs = False
    saves_out = True

    def forward(self, a: Any) -> Any:
        return xp.tan(a)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad * (out * out + 1.0),)


class Asin(Function):
    """out = asin(a), NaN outside [-1, 1]"""

    rule = "grad_a = grad / sqrt(1 - a**2)"

    def forward(self, a: Any) -> Any:
        return xp.arcsin(a)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x = self.inputs[0]
        return (grad * (1.0 - x * x).rsqrt(),)


class Acos(Function):
    """out = acos(a), NaN outside [-1, 1]"""

    rule = "grad_a = -grad / sqrt(1 - a**2)"

    def forward(self, a: Any) -> Any:
        return xp.arccos(a)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x = self.inputs[0]
        return (-grad * (1.0 - x * x).rsqrt(),)


class Atan(Function):
    """out = atan(a)"""

    rule = "grad_a = grad / (1 + a**2)"

    def forward(self, a: Any) -> Any:
        return xp.arctan(a)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x = self.inputs[0]
        return (grad / (x * x + 1.0),)


class Sinh(Function):
    """out = sinh(a)"""

    rule = "grad_a = grad * cosh(a)"

    def forward(self, a: Any) -> Any:
        return xp.sinh(a)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad * self.inputs[0].cosh(),)


class Cosh(Function):
    """out = cosh(a)"""

    rule = "grad_a = grad * sinh(a)"

    def forward(self, a: Any) -> Any:
        return xp.cosh(a)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad * self.inputs[0].sinh(),)


class Asinh(Function):
    """out = asinh(a)"""

    rule = "grad_a = grad / sqrt(a**2 + 1)"

    def forward(self, a: Any) -> Any:
        return xp.arcsinh(a)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x = self.inputs[0]
        return (grad * (x * x + 1.0).rsqrt(),)


class Acosh(Function):
    """out = acosh(a), NaN below 1"""

    rule = "grad_a = grad / sqrt(a**2 - 1)"

    def forward(self, a: Any) -> Any:
        return xp.arccosh(a)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x = self.inputs[0]
        return (grad * (x * x - 1.0).rsqrt(),)


class Atanh(Function):
    """out = atanh(a), +-inf at +-1, NaN beyond"""

    rule = "grad_a = grad / (1 - a**2)"

    def forward(self, a: Any) -> Any:
        return xp.arctanh(a)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x = self.inputs[0]
        return (grad / (1.0 - x * x),)


class Atan2(Function):
    """out = atan2(a, b), the angle of the point (b, a), in (-pi, pi]"""

    rule = "grad_a = grad * b / (a**2 + b**2), grad_b = -grad * a / (a**2 + b**2)"

    def forward(self, a: Any, b: Any) -> Any:
        return xp.arctan2(a, b)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        a, b = self.inputs
        need_a, need_b = self.needs_input_grad
        recip = (a * a + b * b).reciprocal()
        return grad * b * recip if need_a else None, grad * -a * recip if need_b else None


class Hypot(Function):
    """out = sqrt(a**2 + b**2), without overflow on the way"""

    rule = "grad_a = grad * a / out, grad_b = grad * b / out"
    saves_out = True

    def forward(self, a: Any, b: Any) -> Any:
        return xp.hypot(a, b)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        a, b = self.inputs
        need_a, need_b = self.needs_input_grad
        return grad * a / out if need_a else None, grad * b / out if need_b else None


class Reciprocal(Function):
    """out = 1 / a"""

    rule = "grad_a = -grad * out**2"
    saves_inputs = False
    saves_out = True

    def forward(self, a: Any) -> Any:
        return xp.reciprocal(a)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (-grad * (out * out),)


# Inputs of at most this many values each take NumPy's own logaddexp (logaddexp2) with the
# fast path on: one call, where the passes of _log_add cost more (fastpath/table.py; on
# inputs that broadcast, the result may hold more).
FEW = 192


def _log_add(a: Any, b: Any, exp: Any, scale: float) -> Any:
    """log(exp(a) + exp(b)) (log2 of exp2's with exp2 and scale 1 / log 2) as PyTorch
    computes it, max + log1p(exp(min - max)) * scale, in the inputs' dtype (floats narrower
    than float32 in float32, rounded once): NumPy's own logaddexp calls libm element by
    element, ten times slower than these passes (it serves a few values: see FEW). Equal
    infinities make min - max NaN; fmin takes it to 0, so the sum is that infinity, as
    PyTorch's."""
    top, gap = xp.maximum(a, b), xp.minimum(a, b)
    if top.dtype.itemsize < 4:
        return _log_add(a.astype(xp.float32), b, exp, scale).astype(top.dtype)
    if not top.ndim:  # 0-d inputs make NumPy scalars, which the passes cannot write into
        return _log_add(a[None], b, exp, scale)[0]
    gap -= top
    xp.fmin(gap, 0.0, out=gap)
    exp(gap, out=gap)
    xp.log1p(gap, out=gap)
    if scale != 1.0:
        gap *= top.dtype.type(scale)
    top += gap
    return top


class _LogAdd(Function):
    """The forward logaddexp and logaddexp2 share: the ufunc on a few values, else _log_add
    with ``exp`` and ``scale``."""

    ufunc = staticmethod(xp.logaddexp)
    exp = staticmethod(xp.exp)
    scale = 1.0

    def forward(self, a: Any, b: Any) -> Any:
        if fastpath.enabled() and a.size <= FEW and getattr(b, "size", 1) <= FEW:
            return self.ufunc(a, b)
        return _log_add(a, b, self.exp, self.scale)


class Logaddexp(_LogAdd):
    """out = log(exp(a) + exp(b)), without overflow"""

    rule = "grad_a = grad / (1 + exp(b - a)), grad_b = grad / (1 + exp(a - b))"

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        a, b = self.inputs
        need_a, need_b = self.needs_input_grad
        ga = grad / ((b - a).exp() + 1.0) if need_a else None
        return ga, grad / ((a - b).exp() + 1.0) if need_b else None


class Logaddexp2(_LogAdd):
    """out = log2(2**a + 2**b), without overflow"""

    rule = "grad_a = grad / (1 + 2**(b - a)), grad_b = grad / (1 + 2**(a - b))"

    ufunc = staticmethod(xp.logaddexp2)
    exp = staticmethod(xp.exp2)
    scale = 1.0 / _LN2

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        a, b = self.inputs
        need_a, need_b = self.needs_input_grad
        ga = grad / ((b - a).exp2() + 1.0) if need_a else None
        return ga, grad / ((a - b).exp2() + 1.0) if need_b else None


class Copysign(Function):
    """out = |a| with b's sign (of -0.0 too); b an array or a number"""

    rule = "grad_a = grad * out / a (0 where a == 0), grad_b = 0"
    saves_out = True

    def forward(self, a: Any, b: Any) -> Any:
        self.node_name = "CopysignBackward0" if isinstance(b, ndarray) else "CopysignBackward1"
        return xp.copysign(a, b)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        a, b = self.inputs
        need_a, need_b = self.needs_input_grad
        ga = gb = None
        if need_a:  # +-1 where a is nonzero: the ratio out / a, PyTorch's rule
            zero = a._array == 0
            ga = grad * Where.apply(zero, 0.0, out / Where.apply(zero, 1.0, a))
        if need_b:
            gb = grad * 0.0
        return ga, gb


class Fmod(Function):
    """out = a - trunc(a / b) * b: the remainder with the dividend's sign (C's fmod), b an
    array or a number; NaN for a float divided by 0"""

    rule = "grad_a = grad, grad_b = -grad * trunc(a / b)"

    def forward(self, a: Any, b: Any) -> Any:
        self.node_name = "FmodBackward1" if isinstance(b, ndarray) else "FmodBackward0"
        return division.fmod(a, b)  # NaN for a float % 0, its warning ignored (array/modules.py)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        a, b = self.inputs
        need_a, need_b = self.needs_input_grad
        gb = -grad * a.div(b, rounding_mode="trunc") if need_b else None
        return grad if need_a else None, gb


class Frac(Function):
    """out = a - trunc(a), with a's sign"""

    rule = "grad_a = grad"
    saves_inputs = False

    def forward(self, a: Any) -> Any:
        return frac(a)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad,)

    backward_arrays = backward  # operators only: the same rule serves arrays


def frac(a: Any, out: Any = None) -> Any:
    """a - trunc(a) (inf - inf: NaN, as PyTorch's), written into ``out`` (a itself for
    frac_) or else into trunc's array: two passes and one new array."""
    whole = xp.trunc(a, out=xp.empty_like(a))  # an array for a 0-d a too
    return xp.subtract(a, whole, out=whole if out is None else out)


class Fmax(Function):
    """out = max(a, b), the other where one is NaN (NaN only where both are)

    As PyTorch: a takes the gradient where a >= b (ties too) and b is not NaN, b elsewhere.
    """

    rule = "grad_a = grad where a >= b or b is NaN, grad_b = grad elsewhere"

    pick = staticmethod(xp.fmax)
    keeps = staticmethod(xp.greater_equal)

    def forward(self, a: Any, b: Any) -> Any:
        return self.pick(a, b)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        a, b = arrays_of(self.inputs)
        need_a, need_b = self.needs_input_grad
        first = self.keeps(a, b) | xp.isnan(b)
        return (
            Where.apply(first, grad, 0.0) if need_a else None,
            Where.apply(first, 0.0, grad) if need_b else None,
        )


class Fmin(Fmax):
    """out = min(a, b), the other where one is NaN (NaN only where both are)"""

    rule = "grad_a = grad where a <= b or b is NaN, grad_b = grad elsewhere"

    pick = staticmethod(xp.fmin)
    keeps = staticmethod(xp.less_equal)


class Nextafter(Function):
    """out = the next float after a toward b (a itself where they are equal)"""

    rule = "grad_a = grad, grad_b = 0 (as PyTorch's)"
    saves_inputs = False

    def forward(self, a: Any, b: Any) -> Any:
        return ulps.nextafter(a, b)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        need_a, need_b = self.needs_input_grad
        return grad if need_a else None, grad * 0.0 if need_b else None


class Exp2(Function):
    """out = 2**a"""

    rule = "grad_a = grad * out * log(2)"
    saves_inputs = False
    saves_out = True

    def forward(self, a: Any) -> Any:
        return xp.exp2(a)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad * out * _LN2,)


class Deg2Rad(Function):
    """out = a * pi / 180"""

    rule = "grad_a = grad * pi / 180"
    saves_inputs = False
    scale = math.pi / 180.0

    def forward(self, a: Any) -> Any:
        return a * self.scale

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad * self.scale,)


class Rad2Deg(Deg2Rad):
    """out = a * 180 / pi"""

    rule = "grad_a = grad * 180 / pi"
    scale = 180.0 / math.pi


@functools.cache
def _finite_range(dtype: Any) -> tuple[float, float]:
    """The lowest and the largest finite value of a floating dtype."""
    info = finfo(dtype)
    return info.min, info.max


class NanToNum(Function):
    """out = a with NaN, inf and -inf replaced by numbers (by default 0 and the dtype's
    largest and lowest finite values)"""

    rule = "grad_a = grad where a is finite, else 0"

    def forward(self, a: Any, *, nan: Any, posinf: Any, neginf: Any) -> Any:
        out = xp.empty_like(a)  # an array for a 0-d a too
        return nan_to_num(a, nan, posinf, neginf, out=out)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (Where.apply(xp.isfinite(self.inputs[0]._array), grad, 0.0),)


def nan_to_num(a: Any, nan: Any, posinf: Any, neginf: Any, out: Any) -> Any:
    """NanToNum's values written into ``out`` (a itself for nan_to_num_): NumPy's nan_to_num
    in its fewest passes. Clipping to the finite range makes the infinities the default
    numbers (no finite value is moved), and a given number replaces its infinity after;
    bfloat16 too, which NumPy's leaves as it is."""
    low, high = _finite_range(a.dtype)
    a.clip(low if neginf is None else -math.inf, high if posinf is None else math.inf, out=out)
    # every mask made before any replacement: a NaN made inf stays inf, as PyTorch's
    big = out == math.inf if posinf is not None else None
    small = out == -math.inf if neginf is not None else None
    xp.copyto(out, nan, where=xp.isnan(out))
    if big is not None:
        xp.copyto(out, posinf, where=big)
    if small is not None:
        xp.copyto(out, neginf, where=small)
    return out


class Ldexp(Function):
    """out = a * 2**b"""

    rule = "grad_a = grad * 2**b, grad_b = grad * out * log(2)"
    saves_out = True

    def forward(self, a: Any, b: Any) -> Any:
        if not isinstance(b, ndarray):  # a number: 2**b in a's dtype, not NumPy's float64
            b = xp.asarray(b, dtype=a.dtype)
        return a * xp.exp2(b)  # inf past the dtype's range, its warning ignored

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        a, b = self.inputs
        need_a, need_b = self.needs_input_grad
        ga = grad * (b.exp2() if hasattr(b, "exp2") else 2.0**b) if need_a else None
        return ga, grad * out * _LN2 if need_b else None


class Frexp(Function):
    """out = a / 2**exponent, the mantissa in [0.5, 1) (in magnitude; 0 at 0), exponent the
    integer frexp gives (computed by the caller, which returns it beside the mantissa)"""

    rule = "grad_a = grad / 2**exponent"
    saves_inputs = False

    def forward(self, a: Any, *, exponent: Any) -> Any:
        self.exponent = exponent
        return xp.ldexp(a, -exponent)  # exact: a power of two

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad / xp.exp2(self.exponent.astype(grad._array.dtype)),)


class Sgn(Sign):
    """out = sign(a): sgn is sign for real numbers (a / |a| for complex ones), PyTorch's
    node SgnBackward0"""

    rule = "grad_a = 0 (everywhere it exists)"
