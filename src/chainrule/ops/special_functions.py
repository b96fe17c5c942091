"""The special functions of chainrule.special that carry a gradient, as primitives on
scipy.special: the scaled and modified Bessel functions, the normal distribution's inverse and
log, erfcx, entropy, xlog1py, Hurwitz's zeta and the regularized incomplete gamma functions.
Each rule is PyTorch's (derivatives.yaml), in Tensor ops. The public functions, and those
without a gradient (the other Bessel functions, the orthogonal polynomials), are in
chainrule/special.py."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..array import xp
from ..autograd.primitive import Function

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor


def scipy_special(op: str) -> Any:
    """scipy.special, imported when first needed."""
    try:
        import scipy.special
    except ImportError:  # pragma: no cover - scipy is in the test environment
        raise ImportError(
            f"{op}: needs SciPy; install it with `pip install chainrule[linalg]`"
        ) from None
    return scipy.special


def call(name: str, *arrays: Any) -> Any:
    """scipy.special's ``name`` on arrays, in the dtype of the first (its float32 loops
    compute in float64 and round)."""
    out = getattr(scipy_special("special." + name), name)(*arrays)
    dtype = xp.result_type(*arrays)
    return (
        out if isinstance(out, xp.ndarray) and out.dtype == dtype else xp.asarray(out, dtype=dtype)
    )


class _Unary(Function):
    """An elementwise function of one tensor, forward by scipy.special's ``scipy_name``."""

    scipy_name = ""

    def forward(self, x: Any) -> Any:
        return call(self.scipy_name, x)


class SpecialI0e(_Unary):
    """out = exp(-|x|) I0(x)

    grad_x = grad (i1e(x) - sgn(x) out).
    """

    rule = "grad_x = grad * (i1e(x) - sgn(x) * out)"
    scipy_name = "i0e"
    saves_out = True

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        (x,) = self.inputs
        return (grad * (SpecialI1e.apply(x) - x.sign() * out),)


def _tiny_safe(x: Any) -> tuple[Any, Any]:
    """(|x| > eps, x with eps where it is not): PyTorch's guard of i1's slope at 0."""
    T = type(x)
    eps = float(xp.finfo(x._array.dtype).eps)
    big = T._make(xp.abs(x._array) > eps)
    return big, x.where(big, eps)


class SpecialI1(_Unary):
    """out = I1(x)

    grad_x = grad (i0(x) - out / x), 1/2 at |x| <= eps.
    """

    rule = "grad_x = grad * (i0(x) - out / x), 0.5 where |x| <= eps"
    scipy_name = "i1"
    saves_out = True

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        (x,) = self.inputs
        big, safe = _tiny_safe(x)
        return (grad * (safe.i0() - out * (1.0 / safe)).where(big, 0.5),)


class SpecialI1e(_Unary):
    """out = exp(-|x|) I1(x)

    grad_x = grad (i0e(x) - out (sgn(x) + 1 / x)), 1/2 at |x| <= eps.
    """

    rule = "grad_x = grad * (i0e(x) - out * (sgn(x) + 1 / x)), 0.5 where |x| <= eps"
    scipy_name = "i1e"
    saves_out = True

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        (x,) = self.inputs
        big, safe = _tiny_safe(x)
        slope = SpecialI0e.apply(safe) - out * (safe.sign() + (1.0 / safe))
        return (grad * slope.where(big, 0.5),)


class SpecialNdtri(_Unary):
    """out = the inverse of the standard normal CDF at x

    grad_x = grad sqrt(2 pi) exp(out^2 / 2).
    """

    rule = "grad_x = grad * sqrt(2 pi) * exp(out^2 / 2)"
    scipy_name = "ndtri"
    saves_inputs = False
    saves_out = True

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad * math.sqrt(2 * math.pi) * (out.square() / 2).exp(),)


class SpecialLogNdtr(_Unary):
    """out = log of the standard normal CDF at x

    grad_x = grad / sqrt(2 pi) exp(-(out + x^2 / 2)).
    """

    rule = "grad_x = grad / sqrt(2 pi) * exp(-(out + x^2 / 2))"
    scipy_name = "log_ndtr"
    saves_out = True

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        (x,) = self.inputs
        return (grad / math.sqrt(2 * math.pi) * (-(out + x.pow(2) / 2)).exp(),)


class SpecialErfcx(_Unary):
    """out = exp(x^2) erfc(x)

    grad_x = grad (2 x out - 2 / sqrt(pi)).
    """

    rule = "grad_x = grad * (2 x out - 2 / sqrt(pi))"
    scipy_name = "erfcx"
    saves_out = True

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        (x,) = self.inputs
        return ((2.0 * x * out - 2.0 / math.sqrt(math.pi)) * grad,)


class SpecialEntr(_Unary):
    """out = -x log x (0 at x = 0, -inf for x < 0)

    grad_x = -grad (1 + log x).
    """

    rule = "grad_x = grad * -(1 + log x)"
    scipy_name = "entr"

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        (x,) = self.inputs
        return (grad * (-(1 + x.log())),)


class SpecialXlog1py(Function):
    """out = x log1p(y) (0 where x = 0, unless y is NaN)

    grad_x = xlog1py(grad, y), 0 where x = 0 and y <= -1; grad_y = grad x / (y + 1).
    """

    rule = "grad_x = xlog1py(grad, y), grad_y = grad * x / (y + 1)"

    def forward(self, x: Any, y: Any) -> Any:
        return call("xlog1py", x, y)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x, y = self.inputs
        T = type(grad)
        gx = gy = None
        if self.needs_input_grad[0]:
            zero = T._make((xp.asarray(_array(x)) == 0) & (xp.asarray(_array(y)) <= -1))
            gx = SpecialXlog1py.apply(grad, y).masked_fill(zero, 0.0)
        if self.needs_input_grad[1]:
            gy = grad * x / (y + 1)
        return gx, gy


def _array(v: Any) -> Any:
    return getattr(v, "_array", v)


def _not_implemented(op: str, what: str) -> RuntimeError:
    return RuntimeError(
        f"{op}: the derivative with respect to {what} is not implemented, as in PyTorch"
    )


class SpecialZeta(Function):
    """out = sum_k (k + q)^-x, Hurwitz's zeta

    grad_q = -grad x zeta(x + 1, q); PyTorch has no gradient with respect to x.
    """

    rule = "grad_q = grad * -x * zeta(x + 1, q); no grad_x (PyTorch has none)"

    def forward(self, x: Any, q: Any) -> Any:
        return call("zeta", x, q)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x, q = self.inputs
        if self.needs_input_grad[0]:
            raise _not_implemented("special.zeta", "x")
        return None, grad * -x * SpecialZeta.apply(x + 1.0, q)


class Igamma(Function):
    """out = P(a, x), the regularized lower incomplete gamma function

    grad_x = grad exp((a - 1) log x - x - lgamma(a)); PyTorch has no gradient with respect
    to a.
    """

    rule = "grad_x = grad * exp((a - 1) log x - x - lgamma(a)); no grad_a (PyTorch has none)"

    def forward(self, a: Any, x: Any) -> Any:
        return call("gammainc", a, x)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        a, x = self.inputs
        if self.needs_input_grad[0]:
            raise _not_implemented("special.gammainc", "the input a")
        return None, grad * ((a - 1) * x.log() - x - _lgamma(a)).exp()


class Igammac(Function):
    """out = Q(a, x) = 1 - P(a, x), the regularized upper incomplete gamma function

    grad_x = -grad exp((a - 1) log x - x - lgamma(a)); no gradient with respect to a.
    """

    rule = "grad_x = -grad * exp((a - 1) log x - x - lgamma(a)); no grad_a (PyTorch has none)"

    def forward(self, a: Any, x: Any) -> Any:
        return call("gammaincc", a, x)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        a, x = self.inputs
        if self.needs_input_grad[0]:
            raise _not_implemented("special.gammaincc", "the input a")
        return None, -grad * ((a - 1) * x.log() - x - _lgamma(a)).exp()


def _lgamma(a: Any) -> Any:
    return a.lgamma() if hasattr(a, "lgamma") else math.lgamma(a)
