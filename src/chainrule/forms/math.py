"""The function forms of the elementwise, comparison and matrix-product methods:
``cr.exp(x)`` is ``x.exp()``, ``input`` made a Tensor first."""

from __future__ import annotations

from typing import Any

from ..autograd.node import UNGIVEN_ZERO
from ..linalg._checks import with_out
from ..tensor import Tensor, as_tensor, write_out

__all__ = [
    "abs",
    "exp",
    "log",
    "isnan",
    "isinf",
    "isfinite",
    "isclose",
    "allclose",
    "equal",
    "floor",
    "ceil",
    "trunc",
    "round",
    "clamp_min",
    "clamp_max",
    "dot",
    "mv",
    "addcmul",
    "addcdiv",
    "lerp",
    "log1p",
    "expm1",
    "log2",
    "log10",
    "remainder",
    "floor_divide",
    "rsqrt",
    "outer",
    "mm",
    "bmm",
    "sqrt",
    "sin",
    "cos",
    "tanh",
    "sigmoid",
    "relu",
    "erf",
    "sign",
    "clamp",
    "square",
    "addmm",
    "baddbmm",
    "add",
    "sub",
    "mul",
    "div",
    "neg",
    "pow",
    "clip",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "maximum",
    "minimum",
    "divide",
    "multiply",
    "subtract",
    "true_divide",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "not_equal",
    "negative",
    "absolute",
]


@with_out("", exact=True)
def abs(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.abs (``out=`` as PyTorch's)."""
    return as_tensor(input).abs()


@with_out("")
def exp(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.exp (``out=`` as PyTorch's)."""
    return as_tensor(input).exp()


@with_out("")
def log(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.log (``out=`` as PyTorch's)."""
    return as_tensor(input).log()


def isnan(input: Tensor) -> Tensor:
    """The function form of Tensor.isnan."""
    return as_tensor(input).isnan()


def isinf(input: Tensor) -> Tensor:
    """The function form of Tensor.isinf."""
    return as_tensor(input).isinf()


def isfinite(input: Tensor) -> Tensor:
    """The function form of Tensor.isfinite."""
    return as_tensor(input).isfinite()


def isclose(
    input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Tensor:
    """The function form of Tensor.isclose."""
    return as_tensor(input).isclose(other, rtol, atol, equal_nan)


def allclose(
    input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> bool:
    """The function form of Tensor.allclose."""
    return as_tensor(input).allclose(other, rtol, atol, equal_nan)


def equal(input: Tensor, other: Tensor) -> bool:
    """The function form of Tensor.equal."""
    return as_tensor(input).equal(other)


@with_out("", exact=True)
def floor(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.floor (``out=`` as PyTorch's)."""
    return as_tensor(input).floor()


@with_out("", exact=True)
def ceil(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.ceil (``out=`` as PyTorch's)."""
    return as_tensor(input).ceil()


@with_out("", exact=True)
def trunc(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.trunc (``out=`` as PyTorch's)."""
    return as_tensor(input).trunc()


@with_out("", exact=True)
def round(input: Tensor, *, decimals: int = UNGIVEN_ZERO, out: Any = None) -> Tensor:
    """The function form of Tensor.round (``out=`` as PyTorch's)."""
    return as_tensor(input).round(decimals=decimals)


@with_out("")
def clamp_min(input: Tensor, min: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.clamp_min (``out=`` as PyTorch's)."""
    return as_tensor(input).clamp_min(min)


@with_out("")
def clamp_max(input: Tensor, max: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.clamp_max (``out=`` as PyTorch's)."""
    return as_tensor(input).clamp_max(max)


@with_out("", exact=True)
def dot(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.dot (``out=`` as PyTorch's)."""
    return as_tensor(input).dot(other)


@with_out("", exact=True)
def mv(input: Tensor, vec: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.mv (``out=`` as PyTorch's)."""
    return as_tensor(input).mv(vec)


@with_out("")
def addcmul(
    input: Tensor, tensor1: Any, tensor2: Any, *, value: Any = 1, out: Any = None
) -> Tensor:
    """The function form of Tensor.addcmul (``out=`` as PyTorch's)."""
    return as_tensor(input).addcmul(tensor1, tensor2, value=value)


@with_out("")
def addcdiv(
    input: Tensor, tensor1: Any, tensor2: Any, *, value: Any = 1, out: Any = None
) -> Tensor:
    """The function form of Tensor.addcdiv (``out=`` as PyTorch's)."""
    return as_tensor(input).addcdiv(tensor1, tensor2, value=value)


@with_out("")
def lerp(input: Tensor, end: Any, weight: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.lerp (``out=`` as PyTorch's)."""
    return as_tensor(input).lerp(end, weight)


@with_out("")
def log1p(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.log1p (``out=`` as PyTorch's)."""
    return as_tensor(input).log1p()


@with_out("")
def expm1(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.expm1 (``out=`` as PyTorch's)."""
    return as_tensor(input).expm1()


@with_out("")
def log2(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.log2 (``out=`` as PyTorch's)."""
    return as_tensor(input).log2()


@with_out("")
def log10(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.log10 (``out=`` as PyTorch's)."""
    return as_tensor(input).log10()


@with_out("")
def remainder(input: Any, other: Any, *, out: Any = None) -> Tensor:
    """input % other, with the divisor's sign, as Tensor.remainder (a number on either side)."""
    return input % other if isinstance(other, Tensor) else as_tensor(input) % other


@with_out("")
def floor_divide(input: Any, other: Any, *, out: Any = None) -> Tensor:
    """input // other, rounded toward minus infinity, as Tensor.floor_divide."""
    return input // other if isinstance(other, Tensor) else as_tensor(input) // other


@with_out("")
def rsqrt(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.rsqrt (``out=`` as PyTorch's)."""
    return as_tensor(input).rsqrt()


@with_out("")
def outer(input: Tensor, vec2: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.outer (``out=`` as PyTorch's)."""
    return as_tensor(input).outer(vec2)


@with_out("", exact=True)
def mm(input: Tensor, mat2: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.mm (``out=`` as PyTorch's)."""
    return as_tensor(input).mm(mat2)


@with_out("", exact=True)
def bmm(input: Tensor, mat2: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.bmm (``out=`` as PyTorch's)."""
    return as_tensor(input).bmm(mat2)


@with_out("")
def sqrt(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.sqrt (``out=`` as PyTorch's)."""
    return as_tensor(input).sqrt()


@with_out("")
def sin(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.sin (``out=`` as PyTorch's)."""
    return as_tensor(input).sin()


@with_out("")
def cos(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.cos (``out=`` as PyTorch's)."""
    return as_tensor(input).cos()


@with_out("")
def tanh(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.tanh (``out=`` as PyTorch's)."""
    return as_tensor(input).tanh()


@with_out("")
def sigmoid(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.sigmoid (``out=`` as PyTorch's)."""
    return as_tensor(input).sigmoid()


def relu(input: Tensor) -> Tensor:
    """The function form of Tensor.relu."""
    return as_tensor(input).relu()


@with_out("")
def erf(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.erf (``out=`` as PyTorch's)."""
    return as_tensor(input).erf()


@with_out("", exact=True)
def sign(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.sign (``out=`` as PyTorch's)."""
    return as_tensor(input).sign()


@with_out("")
def clamp(input: Tensor, min: Any = None, max: Any = None, *, out: Any = None) -> Tensor:
    """The function form of Tensor.clamp (``out=`` as PyTorch's)."""
    return as_tensor(input).clamp(min, max)


@with_out("")
def square(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.square (``out=`` as PyTorch's)."""
    return as_tensor(input).square()


@with_out("", exact=True)
def addmm(
    input: Tensor, mat1: Any, mat2: Any, *, beta: float = 1, alpha: float = 1, out: Any = None
) -> Tensor:
    """The function form of Tensor.addmm (``out=`` as PyTorch's)."""
    return as_tensor(input).addmm(mat1, mat2, beta=beta, alpha=alpha)


@with_out("", exact=True)
def baddbmm(
    input: Tensor, batch1: Any, batch2: Any, *, beta: float = 1, alpha: float = 1, out: Any = None
) -> Tensor:
    """The function form of Tensor.baddbmm (``out=`` as PyTorch's)."""
    return as_tensor(input).baddbmm(batch1, batch2, beta=beta, alpha=alpha)


def add(input: Tensor, other: Any, *, alpha: Any = 1, out: Tensor | None = None) -> Tensor:
    """The function form of Tensor.add (``out=`` as PyTorch's)."""
    return write_out(as_tensor(input).add(other, alpha=alpha), out, "add")


@with_out("")
def sub(input: Tensor, other: Any, *, alpha: Any = 1, out: Any = None) -> Tensor:
    """The function form of Tensor.sub (``out=`` as PyTorch's)."""
    return as_tensor(input).sub(other, alpha=alpha)


def mul(input: Tensor, other: Any, *, out: Tensor | None = None) -> Tensor:
    """The function form of Tensor.mul (``out=`` as PyTorch's)."""
    return write_out(as_tensor(input).mul(other), out, "mul")


@with_out("")
def div(input: Tensor, other: Any, *, rounding_mode: str | None = None, out: Any = None) -> Tensor:
    """The function form of Tensor.div (``out=`` as PyTorch's)."""
    return as_tensor(input).div(other, rounding_mode=rounding_mode)


@with_out("", exact=True)
def neg(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.neg (``out=`` as PyTorch's)."""
    return as_tensor(input).neg()


@with_out("")
def pow(input: Tensor, exponent: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.pow (``out=`` as PyTorch's)."""
    return as_tensor(input).pow(exponent)


@with_out("")
def clip(input: Tensor, min: Any = None, max: Any = None, *, out: Any = None) -> Tensor:
    """The function form of Tensor.clip (``out=`` as PyTorch's)."""
    return as_tensor(input).clip(min, max)


@with_out("")
def eq(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.eq (``out=`` as PyTorch's)."""
    return as_tensor(input).eq(other)


@with_out("")
def ne(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.ne (``out=`` as PyTorch's)."""
    return as_tensor(input).ne(other)


@with_out("")
def lt(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.lt (``out=`` as PyTorch's)."""
    return as_tensor(input).lt(other)


@with_out("")
def le(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.le (``out=`` as PyTorch's)."""
    return as_tensor(input).le(other)


@with_out("")
def gt(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.gt (``out=`` as PyTorch's)."""
    return as_tensor(input).gt(other)


@with_out("")
def ge(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.ge (``out=`` as PyTorch's)."""
    return as_tensor(input).ge(other)


@with_out("")
def maximum(input: Any, other: Any, *, out: Any = None) -> Tensor:
    """Elementwise max; a number beside a Tensor takes the tensor's dtype (max is symmetric,
    ties included, so the Tensor's method serves either order)."""
    if not isinstance(input, Tensor) and isinstance(other, Tensor):
        return other.maximum(input)
    return as_tensor(input).maximum(other)


@with_out("")
def minimum(input: Any, other: Any, *, out: Any = None) -> Tensor:
    """Elementwise min, as maximum."""
    if not isinstance(input, Tensor) and isinstance(other, Tensor):
        return other.minimum(input)
    return as_tensor(input).minimum(other)


@with_out("")
def divide(
    input: Tensor, other: Any, *, rounding_mode: str | None = None, out: Any = None
) -> Tensor:
    """The function form of Tensor.divide (``out=`` as PyTorch's)."""
    return as_tensor(input).divide(other, rounding_mode=rounding_mode)


@with_out("")
def multiply(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.multiply (``out=`` as PyTorch's)."""
    return as_tensor(input).multiply(other)


@with_out("")
def subtract(input: Tensor, other: Any, *, alpha: Any = 1, out: Any = None) -> Tensor:
    """The function form of Tensor.subtract (``out=`` as PyTorch's)."""
    return as_tensor(input).subtract(other, alpha=alpha)


@with_out("")
def true_divide(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.true_divide (``out=`` as PyTorch's)."""
    return as_tensor(input).true_divide(other)


@with_out("")
def greater(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.greater (``out=`` as PyTorch's)."""
    return as_tensor(input).greater(other)


@with_out("")
def greater_equal(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.greater_equal (``out=`` as PyTorch's)."""
    return as_tensor(input).greater_equal(other)


@with_out("")
def less(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.less (``out=`` as PyTorch's)."""
    return as_tensor(input).less(other)


@with_out("")
def less_equal(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.less_equal (``out=`` as PyTorch's)."""
    return as_tensor(input).less_equal(other)


@with_out("")
def not_equal(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    """The function form of Tensor.not_equal (``out=`` as PyTorch's)."""
    return as_tensor(input).not_equal(other)


@with_out("", exact=True)
def negative(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.negative (``out=`` as PyTorch's)."""
    return as_tensor(input).negative()


@with_out("", exact=True)
def absolute(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.absolute (``out=`` as PyTorch's)."""
    return as_tensor(input).absolute()
