"""The function forms of tensor/pointwise.py's methods: ``cr.f(x, ...)`` is ``x.f(...)``,
``input`` made a Tensor first."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..tensor import Tensor, as_tensor

if TYPE_CHECKING:
    from ..tensor.pointwise import MantissaExponent

__all__ = [
    "nextafter",
    "isposinf",
    "isneginf",
    "isreal",
    "mvlgamma",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "asinh",
    "acosh",
    "atanh",
    "arcsin",
    "arccos",
    "arctan",
    "arcsinh",
    "arccosh",
    "arctanh",
    "atan2",
    "arctan2",
    "deg2rad",
    "rad2deg",
    "reciprocal",
    "exp2",
    "hypot",
    "logaddexp",
    "logaddexp2",
    "xlogy",
    "ldexp",
    "float_power",
    "frexp",
    "erfc",
    "erfinv",
    "lgamma",
    "digamma",
    "polygamma",
    "i0",
    "sinc",
    "logit",
    "frac",
    "fix",
    "sgn",
    "signbit",
    "copysign",
    "fmod",
    "fmax",
    "fmin",
    "nan_to_num",
    "heaviside",
    "positive",
    "gcd",
    "lcm",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_not",
    "bitwise_left_shift",
    "bitwise_right_shift",
    "logical_and",
    "logical_or",
    "logical_xor",
    "logical_not",
]


def tan(input: Tensor) -> Tensor:
    """The function form of Tensor.tan."""
    return as_tensor(input).tan()


def asin(input: Tensor) -> Tensor:
    """The function form of Tensor.asin."""
    return as_tensor(input).asin()


def acos(input: Tensor) -> Tensor:
    """The function form of Tensor.acos."""
    return as_tensor(input).acos()


def atan(input: Tensor) -> Tensor:
    """The function form of Tensor.atan."""
    return as_tensor(input).atan()


def sinh(input: Tensor) -> Tensor:
    """The function form of Tensor.sinh."""
    return as_tensor(input).sinh()


def cosh(input: Tensor) -> Tensor:
    """The function form of Tensor.cosh."""
    return as_tensor(input).cosh()


def asinh(input: Tensor) -> Tensor:
    """The function form of Tensor.asinh."""
    return as_tensor(input).asinh()


def acosh(input: Tensor) -> Tensor:
    """The function form of Tensor.acosh."""
    return as_tensor(input).acosh()


def atanh(input: Tensor) -> Tensor:
    """The function form of Tensor.atanh."""
    return as_tensor(input).atanh()


def arcsin(input: Tensor) -> Tensor:
    """The function form of Tensor.arcsin."""
    return as_tensor(input).arcsin()


def arccos(input: Tensor) -> Tensor:
    """The function form of Tensor.arccos."""
    return as_tensor(input).arccos()


def arctan(input: Tensor) -> Tensor:
    """The function form of Tensor.arctan."""
    return as_tensor(input).arctan()


def arcsinh(input: Tensor) -> Tensor:
    """The function form of Tensor.arcsinh."""
    return as_tensor(input).arcsinh()


def arccosh(input: Tensor) -> Tensor:
    """The function form of Tensor.arccosh."""
    return as_tensor(input).arccosh()


def arctanh(input: Tensor) -> Tensor:
    """The function form of Tensor.arctanh."""
    return as_tensor(input).arctanh()


def atan2(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.atan2."""
    return as_tensor(input).atan2(other)


def arctan2(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.arctan2."""
    return as_tensor(input).arctan2(other)


def deg2rad(input: Tensor) -> Tensor:
    """The function form of Tensor.deg2rad."""
    return as_tensor(input).deg2rad()


def rad2deg(input: Tensor) -> Tensor:
    """The function form of Tensor.rad2deg."""
    return as_tensor(input).rad2deg()


def reciprocal(input: Tensor) -> Tensor:
    """The function form of Tensor.reciprocal."""
    return as_tensor(input).reciprocal()


def exp2(input: Tensor) -> Tensor:
    """The function form of Tensor.exp2."""
    return as_tensor(input).exp2()


def hypot(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.hypot."""
    return as_tensor(input).hypot(other)


def logaddexp(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.logaddexp."""
    return as_tensor(input).logaddexp(other)


def logaddexp2(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.logaddexp2."""
    return as_tensor(input).logaddexp2(other)


def xlogy(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.xlogy."""
    return as_tensor(input).xlogy(other)


def ldexp(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.ldexp."""
    return as_tensor(input).ldexp(other)


def float_power(input: Tensor, exponent: Any) -> Tensor:
    """The function form of Tensor.float_power."""
    return as_tensor(input).float_power(exponent)


def frexp(input: Tensor) -> MantissaExponent:
    """The function form of Tensor.frexp."""
    return as_tensor(input).frexp()


def erfc(input: Tensor) -> Tensor:
    """The function form of Tensor.erfc."""
    return as_tensor(input).erfc()


def erfinv(input: Tensor) -> Tensor:
    """The function form of Tensor.erfinv."""
    return as_tensor(input).erfinv()


def lgamma(input: Tensor) -> Tensor:
    """The function form of Tensor.lgamma."""
    return as_tensor(input).lgamma()


def digamma(input: Tensor) -> Tensor:
    """The function form of Tensor.digamma."""
    return as_tensor(input).digamma()


def polygamma(input: Tensor, n: int) -> Tensor:
    """The function form of Tensor.polygamma. PyTorch's function takes n first,
    ``torch.polygamma(n, input)``, and so does this one: an int first and a Tensor second
    are read in that order."""
    if isinstance(n, Tensor) and isinstance(input, int):
        input, n = n, input
    return as_tensor(input).polygamma(n)


def i0(input: Tensor) -> Tensor:
    """The function form of Tensor.i0."""
    return as_tensor(input).i0()


def sinc(input: Tensor) -> Tensor:
    """The function form of Tensor.sinc."""
    return as_tensor(input).sinc()


def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """The function form of Tensor.logit."""
    return as_tensor(input).logit(eps)


def frac(input: Tensor) -> Tensor:
    """The function form of Tensor.frac."""
    return as_tensor(input).frac()


def fix(input: Tensor) -> Tensor:
    """The function form of Tensor.fix."""
    return as_tensor(input).fix()


def sgn(input: Tensor) -> Tensor:
    """The function form of Tensor.sgn."""
    return as_tensor(input).sgn()


def signbit(input: Tensor) -> Tensor:
    """The function form of Tensor.signbit."""
    return as_tensor(input).signbit()


def copysign(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.copysign."""
    return as_tensor(input).copysign(other)


def fmod(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.fmod."""
    return as_tensor(input).fmod(other)


def fmax(input: Tensor, other: Tensor) -> Tensor:
    """The function form of Tensor.fmax."""
    return as_tensor(input).fmax(other)


def fmin(input: Tensor, other: Tensor) -> Tensor:
    """The function form of Tensor.fmin."""
    return as_tensor(input).fmin(other)


def nan_to_num(
    input: Tensor, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None
) -> Tensor:
    """The function form of Tensor.nan_to_num."""
    return as_tensor(input).nan_to_num(nan, posinf, neginf)


def heaviside(input: Tensor, values: Tensor) -> Tensor:
    """The function form of Tensor.heaviside."""
    return as_tensor(input).heaviside(values)


def positive(input: Tensor) -> Tensor:
    """The function form of Tensor.positive."""
    return as_tensor(input).positive()


def gcd(input: Tensor, other: Tensor) -> Tensor:
    """The function form of Tensor.gcd."""
    return as_tensor(input).gcd(other)


def lcm(input: Tensor, other: Tensor) -> Tensor:
    """The function form of Tensor.lcm."""
    return as_tensor(input).lcm(other)


def bitwise_and(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.bitwise_and."""
    return as_tensor(input).bitwise_and(other)


def bitwise_or(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.bitwise_or."""
    return as_tensor(input).bitwise_or(other)


def bitwise_xor(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.bitwise_xor."""
    return as_tensor(input).bitwise_xor(other)


def bitwise_not(input: Tensor) -> Tensor:
    """The function form of Tensor.bitwise_not."""
    return as_tensor(input).bitwise_not()


def bitwise_left_shift(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.bitwise_left_shift."""
    return as_tensor(input).bitwise_left_shift(other)


def bitwise_right_shift(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.bitwise_right_shift."""
    return as_tensor(input).bitwise_right_shift(other)


def logical_and(input: Tensor, other: Tensor) -> Tensor:
    """The function form of Tensor.logical_and."""
    return as_tensor(input).logical_and(other)


def logical_or(input: Tensor, other: Tensor) -> Tensor:
    """The function form of Tensor.logical_or."""
    return as_tensor(input).logical_or(other)


def logical_xor(input: Tensor, other: Tensor) -> Tensor:
    """The function form of Tensor.logical_xor."""
    return as_tensor(input).logical_xor(other)


def logical_not(input: Tensor) -> Tensor:
    """The function form of Tensor.logical_not."""
    return as_tensor(input).logical_not()


def nextafter(input: Tensor, other: Tensor) -> Tensor:
    """The function form of Tensor.nextafter."""
    return as_tensor(input).nextafter(other)


def isposinf(input: Tensor) -> Tensor:
    """The function form of Tensor.isposinf."""
    return as_tensor(input).isposinf()


def isneginf(input: Tensor) -> Tensor:
    """The function form of Tensor.isneginf."""
    return as_tensor(input).isneginf()


def isreal(input: Tensor) -> Tensor:
    """The function form of Tensor.isreal."""
    return as_tensor(input).isreal()


def mvlgamma(input: Tensor, p: int) -> Tensor:
    """The function form of Tensor.mvlgamma."""
    return as_tensor(input).mvlgamma(p)
