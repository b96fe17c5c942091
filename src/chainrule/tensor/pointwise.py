"""Tensor's elementwise math beyond the operators: the trigonometric and hyperbolic families,
the special and integer functions, the bitwise and logical ops (arithmetic.py keeps the
operators, exp, log and the comparisons)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from .. import array
from ..arguments import broadcast_shape, need_number
from ..ops import pointwise, special
from .arithmetic import floating, operands
from .core import Core, as_tensor, make

if TYPE_CHECKING:  # Tensor in annotations alone (core.py says why)
    from . import Tensor
    from .core import TensorSelf

xp = array.xp


class MantissaExponent(NamedTuple):
    """What frexp returns, as PyTorch: the mantissa and the (int32) exponent."""

    mantissa: Tensor
    exponent: Tensor


class Pointwise(Core):
    """The elementwise math methods of Tensor beyond the operators."""

    __slots__ = ()

    # -- trigonometric and hyperbolic, and their inverses: integers give the default float --

    def tan(self: TensorSelf) -> Tensor:
        return pointwise.Tan.apply(floating(self))

    def asin(self: TensorSelf) -> Tensor:
        return pointwise.Asin.apply(floating(self))

    def acos(self: TensorSelf) -> Tensor:
        return pointwise.Acos.apply(floating(self))

    def atan(self: TensorSelf) -> Tensor:
        return pointwise.Atan.apply(floating(self))

    def sinh(self: TensorSelf) -> Tensor:
        return pointwise.Sinh.apply(floating(self))

    def cosh(self: TensorSelf) -> Tensor:
        return pointwise.Cosh.apply(floating(self))

    def asinh(self: TensorSelf) -> Tensor:
        return pointwise.Asinh.apply(floating(self))

    def acosh(self: TensorSelf) -> Tensor:
        return pointwise.Acosh.apply(floating(self))

    def atanh(self: TensorSelf) -> Tensor:
        return pointwise.Atanh.apply(floating(self))

    def atan2(self: TensorSelf, other: Any) -> Tensor:
        """The angle of the point (other, self), in (-pi, pi]."""
        return pointwise.Atan2.apply(*_floats(self, other, "atan2"))

    arcsin, arccos, arctan, arctan2 = asin, acos, atan, atan2
    arcsinh, arccosh, arctanh = asinh, acosh, atanh

    def deg2rad(self: TensorSelf) -> Tensor:
        return pointwise.Deg2Rad.apply(floating(self))

    def rad2deg(self: TensorSelf) -> Tensor:
        return pointwise.Rad2Deg.apply(floating(self))

    # -- powers, logarithms and the like ------------------------------------------------------

    def reciprocal(self: TensorSelf) -> Tensor:
        return pointwise.Reciprocal.apply(floating(self))

    def exp2(self: TensorSelf) -> Tensor:
        return pointwise.Exp2.apply(floating(self))

    def hypot(self: TensorSelf, other: Any) -> Tensor:
        """sqrt(self**2 + other**2), of floating tensors (PyTorch refuses integers)."""
        return pointwise.Hypot.apply(*_only_floats(self, other, "hypot"))

    def logaddexp(self: TensorSelf, other: Any) -> Tensor:
        """log(exp(self) + exp(other)), of floating tensors, without overflow."""
        return pointwise.Logaddexp.apply(*_only_floats(self, other, "logaddexp"))

    def logaddexp2(self: TensorSelf, other: Any) -> Tensor:
        """log2(2**self + 2**other), of floating tensors, without overflow."""
        return pointwise.Logaddexp2.apply(*_only_floats(self, other, "logaddexp2"))

    def xlogy(self: TensorSelf, other: Any) -> Tensor:
        """self * log(other), 0 where self is 0 (unless other is NaN)."""
        return special.Xlogy.apply(*_floats(self, other, "xlogy"))

    def ldexp(self: TensorSelf, other: Any) -> Tensor:
        """self * 2**other."""
        if getattr(other, "dtype", None) == array.bool_ and array.is_floating(self.dtype):
            raise TypeError(  # PyTorch's kernel for a floating self takes no bool exponent
                f"ldexp: a bool exponent of a floating tensor is refused, as in PyTorch; got "
                f"shapes {self.shape} and {tuple(other.shape)}, dtypes {self.dtype} and bool"
            )
        return pointwise.Ldexp.apply(*_floats(self, other, "ldexp"))

    def float_power(self: TensorSelf, exponent: Any) -> Tensor:
        """self ** exponent, both in float64 (the result is float64 whatever the inputs)."""
        base = self.to(array.float64)
        if isinstance(exponent, (bool, int, float)):
            return base ** float(exponent)
        return base ** as_tensor(exponent).to(array.float64)

    def frexp(self: TensorSelf) -> MantissaExponent:
        """self as mantissa * 2**exponent, the mantissa in [0.5, 1) in magnitude (0 at 0),
        the exponent int32: of a floating tensor, as PyTorch."""
        if not array.is_floating(self._array.dtype):
            raise TypeError(f"frexp: needs a floating-point tensor; got dtype {self.dtype}")
        exponent = xp.frexp(self._array)[1]
        mantissa = pointwise.Frexp.apply(self, exponent=exponent)
        return MantissaExponent(mantissa, make(array.result_array(exponent)))

    def nextafter(self: TensorSelf, other: Tensor) -> Tensor:
        """The next float after self toward other, of floating tensors (its gradient is
        self's, as PyTorch's)."""
        if not isinstance(other, Core):
            raise TypeError(f"nextafter: other must be a Tensor; got {type(other).__name__}")
        return pointwise.Nextafter.apply(*_only_floats(self, other, "nextafter"))

    def isposinf(self: TensorSelf) -> Tensor:
        return make(array.result_array(self._array == xp.inf))

    def isneginf(self: TensorSelf) -> Tensor:
        return make(array.result_array(self._array == -xp.inf))

    def isreal(self: TensorSelf) -> Tensor:
        """True everywhere: chainrule's tensors are real (PyTorch's is False where a complex
        value's imaginary part is not 0)."""
        return make(xp.ones(self.shape, dtype=bool, like=self._array))

    # -- the special functions (special.py) ---------------------------------------------------

    def mvlgamma(self: TensorSelf, p: int) -> Tensor:
        """The multivariate log-gamma function of dimension p: the sum of
        lgamma(x - i / 2) for i < p, plus p (p - 1) / 4 log(pi), summed as PyTorch sums it."""
        if isinstance(p, bool) or not isinstance(p, int) or p < 1:
            raise ValueError(f"mvlgamma: p must be an integer >= 1; got {p!r}")
        return special.Mvlgamma.apply(floating(self), p=p)

    def erfc(self: TensorSelf) -> Tensor:
        return special.Erfc.apply(floating(self))

    def erfinv(self: TensorSelf) -> Tensor:
        return special.Erfinv.apply(floating(self))

    def lgamma(self: TensorSelf) -> Tensor:
        return special.Lgamma.apply(floating(self))

    def digamma(self: TensorSelf) -> Tensor:
        return special.Digamma.apply(floating(self))

    def polygamma(self: TensorSelf, n: int) -> Tensor:
        """The n-th derivative of digamma (n >= 0), as torch's Tensor.polygamma(n)."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"polygamma: n must be a non-negative integer; got {n!r}")
        return special.Polygamma.apply(floating(self), n=n)

    def i0(self: TensorSelf) -> Tensor:
        return special.I0.apply(floating(self))

    def sinc(self: TensorSelf) -> Tensor:
        """sin(pi x) / (pi x), 1 at 0."""
        return special.Sinc.apply(floating(self))

    def logit(self: TensorSelf, eps: float | None = None) -> Tensor:
        """log(p / (1 - p)), p clamped to [eps, 1 - eps] where eps is given."""
        return special.Logit.apply(floating(self), eps=eps)

    # -- rounding, signs and remainders -------------------------------------------------------

    def frac(self: TensorSelf) -> Tensor:
        """self - trunc(self), of a floating tensor (PyTorch refuses integers)."""
        if not array.is_floating(self._array.dtype):
            raise TypeError(f"frac: needs a floating-point tensor; got dtype {self.dtype}")
        return pointwise.Frac.apply(self)

    def fix(self: TensorSelf) -> Tensor:
        """trunc's other name."""
        return self.trunc()

    def sgn(self: TensorSelf) -> Tensor:
        """sign, for real tensors (PyTorch's sgn is a / |a| for complex ones)."""
        return pointwise.Sgn.apply(self)

    def signbit(self: TensorSelf) -> Tensor:
        """Whether the sign bit is set (-0.0 and NaNs with it too), as a bool tensor."""
        arr = self._array
        if array.is_floating(arr.dtype):
            return make(array.result_array(xp.signbit(arr)))
        if arr.dtype.kind == "i":
            return make(array.result_array(arr < 0))
        return make(xp.zeros(arr.shape, dtype=bool, like=arr))  # bool and unsigned

    def copysign(self: TensorSelf, other: Any) -> Tensor:
        """|self| with other's sign (of -0.0 too); integers give the default float."""
        return pointwise.Copysign.apply(*_floats(self, other, "copysign"))

    def fmod(self: TensorSelf, other: Any) -> Tensor:
        """The remainder of self / other with self's sign (C's fmod; remainder takes other's);
        integers stay integers, and an integer division by zero is an error."""
        x, y = operands(self, other, "fmod")
        need_number(y if isinstance(x, (int, float)) else x, "fmod")  # of two bools
        ya = y._array if isinstance(y, Core) else y
        if not _is_float(x) and not xp.all(ya):
            raise RuntimeError("fmod: integer division by zero (ZeroDivisionError in PyTorch)")
        return pointwise.Fmod.apply(x, y)

    def fmax(self: TensorSelf, other: Tensor) -> Tensor:
        """Elementwise max, the number where the other is NaN."""
        x, y = operands(self, other, "fmax")
        return pointwise.Fmax.apply(x, y)

    def fmin(self: TensorSelf, other: Tensor) -> Tensor:
        """Elementwise min, the number where the other is NaN."""
        x, y = operands(self, other, "fmin")
        return pointwise.Fmin.apply(x, y)

    def nan_to_num(
        self: TensorSelf, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None
    ) -> Tensor:
        """NaN, inf and -inf replaced by nan, posinf and neginf (by default 0 and the dtype's
        largest and lowest finite values); an integer tensor comes back as a copy."""
        if not array.is_floating(self._array.dtype):
            return self.clone()
        return pointwise.NanToNum.apply(self, nan=nan, posinf=posinf, neginf=neginf)

    def heaviside(self: TensorSelf, values: Tensor) -> Tensor:
        """0 where self < 0, values where self == 0, 1 where self > 0 (NaN gives 0, as
        PyTorch's); values a tensor of self's dtype. No gradient, as PyTorch has none."""
        if not isinstance(values, Core) or values.dtype != self.dtype:
            got = values.dtype if isinstance(values, Core) else type(values).__name__
            raise TypeError(
                f"heaviside: values must be a tensor of input's dtype; got {self.dtype} and {got}"
            )
        _shape_of(self, values, "heaviside")
        x = self._array
        out = xp.where(x == 0, values._array, x > 0).astype(x.dtype, copy=False)
        return make(array.result_array(out))

    def positive(self: TensorSelf) -> Tensor:
        """self itself, as +self (PyTorch refuses bool tensors)."""
        if self._array.dtype.kind == "b":
            raise TypeError(
                f"positive: not defined for bool tensors, as in PyTorch; got {self.dtype}"
            )
        return self

    # -- integers: gcd, lcm, bitwise (no gradient) --------------------------------------------

    def gcd(self: TensorSelf, other: Tensor) -> Tensor:
        """The greatest common divisor, of integer tensors (>= 0; gcd(0, 0) = 0)."""
        return _integers(xp.gcd, self, other, "gcd")

    def lcm(self: TensorSelf, other: Tensor) -> Tensor:
        """The least common multiple, of integer tensors (>= 0; 0 where either is 0)."""
        return _integers(xp.lcm, self, other, "lcm")

    def bitwise_and(self: TensorSelf, other: Any) -> Tensor:
        return self & other

    def bitwise_or(self: TensorSelf, other: Any) -> Tensor:
        return self | other

    def bitwise_xor(self: TensorSelf, other: Any) -> Tensor:
        return self ^ other

    def bitwise_not(self: TensorSelf) -> Tensor:
        if self._array.dtype.kind not in "biu":
            raise TypeError(f"bitwise_not: needs a bool or integer tensor; got dtype {self.dtype}")
        return ~self

    def bitwise_left_shift(self: TensorSelf, other: Any) -> Tensor:
        return self << other

    def bitwise_right_shift(self: TensorSelf, other: Any) -> Tensor:
        return self >> other

    # -- logical: any dtype, nonzero is True; bool results, no gradient -----------------------

    def logical_and(self: TensorSelf, other: Tensor) -> Tensor:
        return _logical(xp.logical_and, self, other, "logical_and")

    def logical_or(self: TensorSelf, other: Tensor) -> Tensor:
        return _logical(xp.logical_or, self, other, "logical_or")

    def logical_xor(self: TensorSelf, other: Tensor) -> Tensor:
        return _logical(xp.logical_xor, self, other, "logical_xor")

    def logical_not(self: TensorSelf) -> Tensor:
        return make(array.result_array(xp.logical_not(self._array)))


def _is_float(t: Any) -> bool:
    return isinstance(t, Core) and array.is_floating(t._array.dtype)


def _shape_of(a: Any, b: Any, op: str) -> tuple[int, ...]:
    """The broadcast shape of two operands (a number has none), or op's shape error."""
    return broadcast_shape(op, *(t.shape for t in (a, b) if isinstance(t, Core)))


def _floats(a: Tensor, b: Any, op: str) -> tuple[Any, Any]:
    """The operands of a floating binary op: an integer result the default float."""
    return operands(a, b, op, floats=True)


def _only_floats(a: Tensor, b: Any, op: str) -> tuple[Any, Any]:
    """The operands of a binary op PyTorch defines for floating dtypes only."""
    x, y = operands(a, b, op)
    if not (_is_float(x) or _is_float(y)):
        got = " and ".join(
            str(t.dtype) if isinstance(t, Core) else type(t).__name__ for t in (a, b)
        )
        raise TypeError(f"{op}: needs floating-point tensors, as in PyTorch; got {got}")
    return x, y


def _integers(fn: Any, a: Tensor, b: Any, op: str) -> Tensor:
    """fn of two integer operands (not bool, not floating) in their promoted dtype."""
    x, y = operands(a, b, op)
    kinds = [t._array.dtype.kind if isinstance(t, Core) else "i" for t in (x, y)]
    if any(k not in "iu" for k in kinds) or isinstance(b, (bool, float)):
        got = " and ".join(
            str(t.dtype) if isinstance(t, Core) else type(t).__name__ for t in (a, b)
        )
        raise TypeError(f"{op}: needs integer tensors (not bool or floating); got {got}")
    _shape_of(x, y, op)
    xa, ya = (t._array if isinstance(t, Core) else t for t in (x, y))
    return make(array.result_array(fn(xa, ya)))


def _logical(fn: Any, a: Tensor, b: Any, op: str) -> Tensor:
    """fn of two operands of any dtypes (nonzero is True), a bool tensor."""
    other = b if isinstance(b, Core) else as_tensor(b)
    broadcast_shape(op, a.shape, other.shape)
    return make(array.result_array(fn(a._array, other._array)))
