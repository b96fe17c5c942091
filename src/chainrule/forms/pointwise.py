"""The function forms of tensor/pointwise.py's methods: ``cr.f(x, ...)`` is ``x.f(...)``,
``input`` made a Tensor first."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..linalg._checks import with_out
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


@with_out("")
def tan(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.tan (``out=`` as PyTorch's)."""
    return as_tensor(input).tan()


@with_out("")
def asin(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.asin (``out=`` as PyTorch's)."""
    return as_tensor(input).asin()


@with_out("")
def acos(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.acos (``out=`` as PyTorch's)."""
    return as_tensor(input).acos()


@with_out("")
def atan(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.atan (``out=`` as PyTorch's)."""
    return as_tensor(input).atan()


@with_out("")
def sinh(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.sinh (``out=`` as PyTorch's)."""
    return as_tensor(input).sinh()


@with_out("")
def cosh(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.cosh (``out=`` as PyTorch's)."""
    return as_tensor(input).cosh()


@with_out("")
def asinh(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.asinh (``out=`` as PyTorch's)."""
    return as_tensor(input).asinh()


@with_out("")
def acosh(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.acosh (``out=`` as PyTorch's)."""
    return as_tensor(input).acosh()


@with_out("")
def atanh(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.atanh (``out=`` as PyTorch's)."""
    return as_tensor(input).atanh()


@with_out("")
def arcsin(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.arcsin (``out=`` as PyTorch's)."""
    return as_tensor(input).arcsin()


@with_out("")
def arccos(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.arccos (``out=`` as PyTorch's)."""
    return as_tensor(input).arccos()


@with_out("")
def arctan(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.arctan (``out=`` as PyTorch's)."""
    return as_tensor(input).arctan()


@with_out("")
def arcsinh(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.arcsinh (``out=`` as PyTorch's)."""
    return as_tensor(input).arcsinh()


@with_out("")
def arccosh(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.arccosh (``out=`` as PyTorch's)."""
    return as_tensor(input).arccosh()


@with_out("")
def arctanh(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.arctanh (``out=`` as PyTorch's)."""
    return as_tensor(input).arctanh()


@with_out("")
def atan2(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.atan2 (``out=`` as PyTorch's)."""
    return as_tensor(input).atan2(other)


@with_out("")
def arctan2(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.arctan2 (``out=`` as PyTorch's)."""
    return as_tensor(input).arctan2(other)


@with_out("")
def deg2rad(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.deg2rad (``out=`` as PyTorch's)."""
    return as_tensor(input).deg2rad()


@with_out("")
def rad2deg(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.rad2deg (``out=`` as PyTorch's)."""
    return as_tensor(input).rad2deg()


@with_out("")
def reciprocal(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.reciprocal (``out=`` as PyTorch's)."""
    return as_tensor(input).reciprocal()


@with_out("")
def exp2(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.exp2 (``out=`` as PyTorch's)."""
    return as_tensor(input).exp2()


@with_out("")
def hypot(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.hypot (``out=`` as PyTorch's)."""
    return as_tensor(input).hypot(other)


@with_out("")
def logaddexp(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.logaddexp (``out=`` as PyTorch's)."""
    return as_tensor(input).logaddexp(other)


@with_out("")
def logaddexp2(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.logaddexp2 (``out=`` as PyTorch's)."""
    return as_tensor(input).logaddexp2(other)


@with_out("")
def xlogy(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.xlogy (``out=`` as PyTorch's)."""
    return as_tensor(input).xlogy(other)


@with_out("")
def ldexp(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.ldexp (``out=`` as PyTorch's)."""
    return as_tensor(input).ldexp(other)


@with_out("", exact=True)
def float_power(input: Tensor, exponent: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.float_power (``out=`` as PyTorch's)."""
    return as_tensor(input).float_power(exponent)


@with_out("")
def frexp(input: Tensor, *, out: Any = None) -> MantissaExponent:
    """The function form of Tensor.frexp (``out=`` as PyTorch's)."""
    return as_tensor(input).frexp()


@with_out("")
def erfc(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.erfc (``out=`` as PyTorch's)."""
    return as_tensor(input).erfc()


@with_out("")
def erfinv(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.erfinv (``out=`` as PyTorch's)."""
    return as_tensor(input).erfinv()


@with_out("")
def lgamma(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.lgamma (``out=`` as PyTorch's)."""
    return as_tensor(input).lgamma()


@with_out("")
def digamma(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.digamma (``out=`` as PyTorch's)."""
    return as_tensor(input).digamma()


@with_out("")
def polygamma(input: Tensor, n: int, *, out: Any = None) -> Tensor:
    """The function form of Tensor.polygamma. PyTorch's function takes n first,
    ``torch.polygamma(n, input)``, and so does this one: an int first and a Tensor second
    are read in that order."""
    if isinstance(n, Tensor) and isinstance(input, int):
        input, n = n, input
    return as_tensor(input).polygamma(n)


@with_out("")
def i0(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.i0 (``out=`` as PyTorch's)."""
    return as_tensor(input).i0()


@with_out("")
def sinc(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.sinc (``out=`` as PyTorch's)."""
    return as_tensor(input).sinc()


@with_out("")
def logit(input: Tensor, eps: float | None = None, *, out: Any = None) -> Tensor:
    """The function form of Tensor.logit (``out=`` as PyTorch's)."""
    return as_tensor(input).logit(eps)


@with_out("", exact=True)
def frac(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.frac (``out=`` as PyTorch's)."""
    return as_tensor(input).frac()


@with_out("", exact=True)
def fix(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.fix (``out=`` as PyTorch's)."""
    return as_tensor(input).fix()


@with_out("", exact=True)
def sgn(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.sgn (``out=`` as PyTorch's)."""
    return as_tensor(input).sgn()


@with_out("", exact=True)
def signbit(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.signbit (``out=`` as PyTorch's)."""
    return as_tensor(input).signbit()


@with_out("")
def copysign(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.copysign (``out=`` as PyTorch's)."""
    return as_tensor(input).copysign(other)


@with_out("")
def fmod(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.fmod (``out=`` as PyTorch's)."""
    return as_tensor(input).fmod(other)


@with_out("")
def fmax(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.fmax (``out=`` as PyTorch's)."""
    return as_tensor(input).fmax(other)


@with_out("")
def fmin(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.fmin (``out=`` as PyTorch's)."""
    return as_tensor(input).fmin(other)


@with_out("", exact=True)
def nan_to_num(
    input: Tensor,
    nan: float = 0.0,
    posinf: float | None = None,
    neginf: float | None = None,
    *,
    out: Any = None,
) -> Tensor:
    """The function form of Tensor.nan_to_num (``out=`` as PyTorch's)."""
    return as_tensor(input).nan_to_num(nan, posinf, neginf)


@with_out("", exact=True)
def heaviside(input: Tensor, values: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.heaviside (``out=`` as PyTorch's)."""
    return as_tensor(input).heaviside(values)


def positive(input: Tensor) -> Tensor:
    """The function form of Tensor.positive."""
    return as_tensor(input).positive()


@with_out("")
def gcd(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.gcd (``out=`` as PyTorch's)."""
    return as_tensor(input).gcd(other)


@with_out("")
def lcm(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.lcm (``out=`` as PyTorch's)."""
    return as_tensor(input).lcm(other)


@with_out("")
def bitwise_and(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.bitwise_and (``out=`` as PyTorch's)."""
    return as_tensor(input).bitwise_and(other)


@with_out("")
def bitwise_or(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.bitwise_or (``out=`` as PyTorch's)."""
    return as_tensor(input).bitwise_or(other)


@with_out("")
def bitwise_xor(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.bitwise_xor (``out=`` as PyTorch's)."""
    return as_tensor(input).bitwise_xor(other)


@with_out("", exact=True)
def bitwise_not(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.bitwise_not (``out=`` as PyTorch's)."""
    return as_tensor(input).bitwise_not()


@with_out("")
def bitwise_left_shift(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.bitwise_left_shift (``out=`` as PyTorch's)."""
    return as_tensor(input).bitwise_left_shift(other)


@with_out("")
def bitwise_right_shift(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.bitwise_right_shift (``out=`` as PyTorch's)."""
    return as_tensor(input).bitwise_right_shift(other)


@with_out("")
def logical_and(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.logical_and (``out=`` as PyTorch's)."""
    return as_tensor(input).logical_and(other)


@with_out("")
def logical_or(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.logical_or (``out=`` as PyTorch's)."""
    return as_tensor(input).logical_or(other)


@with_out("")
def logical_xor(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.logical_xor (``out=`` as PyTorch's)."""
    return as_tensor(input).logical_xor(other)


@with_out("")
def logical_not(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.logical_not (``out=`` as PyTorch's)."""
    return as_tensor(input).logical_not()


@with_out("")
def nextafter(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.nextafter (``out=`` as PyTorch's)."""
    return as_tensor(input).nextafter(other)


@with_out("", exact=True)
def isposinf(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.isposinf (``out=`` as PyTorch's)."""
    return as_tensor(input).isposinf()


@with_out("", exact=True)
def isneginf(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.isneginf (``out=`` as PyTorch's)."""
    return as_tensor(input).isneginf()


def isreal(input: Tensor) -> Tensor:
    """The function form of Tensor.isreal."""
    return as_tensor(input).isreal()


@with_out("")
def mvlgamma(input: Tensor, p: int, *, out: Any = None) -> Tensor:
    """The function form of Tensor.mvlgamma (``out=`` as PyTorch's)."""
    return as_tensor(input).mvlgamma(p)
