"""The function forms of the elementwise, comparison and matrix-product methods:
``cr.exp(x)`` is ``x.exp()``, ``input`` made a Tensor first."""

from __future__ import annotations

from typing import Any

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


def abs(input: Tensor) -> Tensor:
    """The function form of Tensor.abs."""
    return as_tensor(input).abs()


def exp(input: Tensor) -> Tensor:
    """The function form of Tensor.exp."""
    return as_tensor(input).exp()


def log(input: Tensor) -> Tensor:
    """The function form of Tensor.log."""
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


def floor(input: Tensor) -> Tensor:
    """The function form of Tensor.floor."""
    return as_tensor(input).floor()


def ceil(input: Tensor) -> Tensor:
    """The function form of Tensor.ceil."""
    return as_tensor(input).ceil()


def trunc(input: Tensor) -> Tensor:
    """The function form of Tensor.trunc."""
    return as_tensor(input).trunc()


def round(input: Tensor, *, decimals: int = 0) -> Tensor:
    """The function form of Tensor.round."""
    return as_tensor(input).round(decimals=decimals)


def clamp_min(input: Tensor, min: Any) -> Tensor:
    """The function form of Tensor.clamp_min."""
    return as_tensor(input).clamp_min(min)


def clamp_max(input: Tensor, max: Any) -> Tensor:
    """The function form of Tensor.clamp_max."""
    return as_tensor(input).clamp_max(max)


def dot(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.dot."""
    return as_tensor(input).dot(other)


def mv(input: Tensor, vec: Any) -> Tensor:
    """The function form of Tensor.mv."""
    return as_tensor(input).mv(vec)


def addcmul(input: Tensor, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:
    """The function form of Tensor.addcmul."""
    return as_tensor(input).addcmul(tensor1, tensor2, value=value)


def addcdiv(input: Tensor, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:
    """The function form of Tensor.addcdiv."""
    return as_tensor(input).addcdiv(tensor1, tensor2, value=value)


def lerp(input: Tensor, end: Any, weight: Any) -> Tensor:
    """The function form of Tensor.lerp."""
    return as_tensor(input).lerp(end, weight)


def log1p(input: Tensor) -> Tensor:
    """The function form of Tensor.log1p."""
    return as_tensor(input).log1p()


def expm1(input: Tensor) -> Tensor:
    """The function form of Tensor.expm1."""
    return as_tensor(input).expm1()


def log2(input: Tensor) -> Tensor:
    """The function form of Tensor.log2."""
    return as_tensor(input).log2()


def log10(input: Tensor) -> Tensor:
    """The function form of Tensor.log10."""
    return as_tensor(input).log10()


def remainder(input: Any, other: Any) -> Tensor:
    """input % other, with the divisor's sign, as Tensor.remainder (a number on either side)."""
    return input % other if isinstance(other, Tensor) else as_tensor(input) % other


def floor_divide(input: Any, other: Any) -> Tensor:
    """input // other, rounded toward minus infinity, as Tensor.floor_divide."""
    return input // other if isinstance(other, Tensor) else as_tensor(input) // other


def rsqrt(input: Tensor) -> Tensor:
    """The function form of Tensor.rsqrt."""
    return as_tensor(input).rsqrt()


def outer(input: Tensor, vec2: Any) -> Tensor:
    """The function form of Tensor.outer."""
    return as_tensor(input).outer(vec2)


def mm(input: Tensor, mat2: Any) -> Tensor:
    """The function form of Tensor.mm."""
    return as_tensor(input).mm(mat2)


def bmm(input: Tensor, mat2: Any) -> Tensor:
    """The function form of Tensor.bmm."""
    return as_tensor(input).bmm(mat2)


def sqrt(input: Tensor) -> Tensor:
    """The function form of Tensor.sqrt."""
    return as_tensor(input).sqrt()


def sin(input: Tensor) -> Tensor:
    """The function form of Tensor.sin."""
    return as_tensor(input).sin()


def cos(input: Tensor) -> Tensor:
    """The function form of Tensor.cos."""
    return as_tensor(input).cos()


def tanh(input: Tensor) -> Tensor:
    """The function form of Tensor.tanh."""
    return as_tensor(input).tanh()


def sigmoid(input: Tensor) -> Tensor:
    """The function form of Tensor.sigmoid."""
    return as_tensor(input).sigmoid()


def relu(input: Tensor) -> Tensor:
    """The function form of Tensor.relu."""
    return as_tensor(input).relu()


def erf(input: Tensor) -> Tensor:
    """The function form of Tensor.erf."""
    return as_tensor(input).erf()


def sign(input: Tensor) -> Tensor:
    """The function form of Tensor.sign."""
    return as_tensor(input).sign()


def clamp(input: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """The function form of Tensor.clamp."""
    return as_tensor(input).clamp(min, max)


def square(input: Tensor) -> Tensor:
    """The function form of Tensor.square."""
    return as_tensor(input).square()


def addmm(input: Tensor, mat1: Any, mat2: Any, *, beta: float = 1, alpha: float = 1) -> Tensor:
    """The function form of Tensor.addmm."""
    return as_tensor(input).addmm(mat1, mat2, beta=beta, alpha=alpha)


def baddbmm(
    input: Tensor, batch1: Any, batch2: Any, *, beta: float = 1, alpha: float = 1
) -> Tensor:
    """The function form of Tensor.baddbmm."""
    return as_tensor(input).baddbmm(batch1, batch2, beta=beta, alpha=alpha)


def add(input: Tensor, other: Any, *, alpha: Any = 1, out: Tensor | None = None) -> Tensor:
    """The function form of Tensor.add (``out=`` as PyTorch's)."""
    return write_out(as_tensor(input).add(other, alpha=alpha), out, "add")


def sub(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """The function form of Tensor.sub."""
    return as_tensor(input).sub(other, alpha=alpha)


def mul(input: Tensor, other: Any, *, out: Tensor | None = None) -> Tensor:
    """The function form of Tensor.mul (``out=`` as PyTorch's)."""
    return write_out(as_tensor(input).mul(other), out, "mul")


def div(input: Tensor, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    """The function form of Tensor.div."""
    return as_tensor(input).div(other, rounding_mode=rounding_mode)


def neg(input: Tensor) -> Tensor:
    """The function form of Tensor.neg."""
    return as_tensor(input).neg()


def pow(input: Tensor, exponent: Any) -> Tensor:
    """The function form of Tensor.pow."""
    return as_tensor(input).pow(exponent)


def clip(input: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """The function form of Tensor.clip."""
    return as_tensor(input).clip(min, max)


def eq(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.eq."""
    return as_tensor(input).eq(other)


def ne(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.ne."""
    return as_tensor(input).ne(other)


def lt(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.lt."""
    return as_tensor(input).lt(other)


def le(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.le."""
    return as_tensor(input).le(other)


def gt(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.gt."""
    return as_tensor(input).gt(other)


def ge(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.ge."""
    return as_tensor(input).ge(other)


def maximum(input: Any, other: Any) -> Tensor:
    """Elementwise max; a number beside a Tensor takes the tensor's dtype (max is symmetric,
    ties included, so the Tensor's method serves either order)."""
    if not isinstance(input, Tensor) and isinstance(other, Tensor):
        return other.maximum(input)
    return as_tensor(input).maximum(other)


def minimum(input: Any, other: Any) -> Tensor:
    """Elementwise min, as maximum."""
    if not isinstance(input, Tensor) and isinstance(other, Tensor):
        return other.minimum(input)
    return as_tensor(input).minimum(other)


def divide(input: Tensor, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    """The function form of Tensor.divide."""
    return as_tensor(input).divide(other, rounding_mode=rounding_mode)


def multiply(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.multiply."""
    return as_tensor(input).multiply(other)


def subtract(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """The function form of Tensor.subtract."""
    return as_tensor(input).subtract(other, alpha=alpha)


def true_divide(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.true_divide."""
    return as_tensor(input).true_divide(other)


def greater(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.greater."""
    return as_tensor(input).greater(other)


def greater_equal(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.greater_equal."""
    return as_tensor(input).greater_equal(other)


def less(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.less."""
    return as_tensor(input).less(other)


def less_equal(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.less_equal."""
    return as_tensor(input).less_equal(other)


def not_equal(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.not_equal."""
    return as_tensor(input).not_equal(other)


def negative(input: Tensor) -> Tensor:
    """The function form of Tensor.negative."""
    return as_tensor(input).negative()


def absolute(input: Tensor) -> Tensor:
    """The function form of Tensor.absolute."""
    return as_tensor(input).absolute()
