"""The function forms of the methods that write into their input: ``cr.relu_(x)`` is
``x.relu_()``; ``input`` must already be a Tensor."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor, as_tensor

__all__ = [
    "ceil_",
    "floor_",
    "round_",
    "index_put_",
    "fill_",
    "zero_",
    "abs_",
    "clamp_",
    "clip_",
    "cos_",
    "exp_",
    "expm1_",
    "log1p_",
    "log_",
    "neg_",
    "relu_",
    "sigmoid_",
    "sin_",
    "sqrt_",
    "tanh_",
    "tan_",
    "asin_",
    "acos_",
    "atan_",
    "sinh_",
    "cosh_",
    "asinh_",
    "acosh_",
    "atanh_",
    "arcsin_",
    "arccos_",
    "arctan_",
    "arcsinh_",
    "arccosh_",
    "arctanh_",
    "reciprocal_",
    "frac_",
    "gcd_",
    "lcm_",
    "nan_to_num_",
    "ldexp_",
    "xlogy_",
    "exp2_",
    "sinc_",
    "deg2rad_",
    "rad2deg_",
    "logit_",
    "i0_",
    "erf_",
    "erfc_",
    "log2_",
    "log10_",
    "trunc_",
    "fix_",
    "square_",
    "rsqrt_",
    "negative_",
    "clamp_min_",
    "clamp_max_",
    "as_strided_",
    "detach_",
    "resize_as_",
]


def index_put_(input: Tensor, indices: Any, values: Any, accumulate: bool = False) -> Tensor:
    """The function form of Tensor.index_put_."""
    return as_tensor(input).index_put_(indices, values, accumulate)


def fill_(input: Tensor, value: Any) -> Tensor:
    """The function form of Tensor.fill_."""
    return as_tensor(input).fill_(value)


def zero_(input: Tensor) -> Tensor:
    """The function form of Tensor.zero_."""
    return as_tensor(input).zero_()


def as_strided_(input: Tensor, size: Any, stride: Any, storage_offset: int | None = None) -> Tensor:
    """The function form of Tensor.as_strided_: restrides ``input``, which must be a Tensor."""
    return _inplace_target(input, "as_strided_").as_strided_(size, stride, storage_offset)


def detach_(input: Tensor) -> Tensor:
    """The function form of Tensor.detach_: cuts ``input``, which must be a Tensor."""
    return _inplace_target(input, "detach_").detach_()


def resize_as_(input: Tensor, the_template: Any, memory_format: Any = None) -> Tensor:
    """The function form of Tensor.resize_as_: resizes ``input``, which must be a Tensor."""
    return _inplace_target(input, "resize_as_").resize_as_(the_template, memory_format)


def abs_(input: Tensor) -> Tensor:
    """The function form of Tensor.abs_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "abs_").abs_()


def clamp_(input: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """The function form of Tensor.clamp_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "clamp_").clamp_(min, max)


def clip_(input: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """The function form of Tensor.clip_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "clip_").clip_(min, max)


def cos_(input: Tensor) -> Tensor:
    """The function form of Tensor.cos_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "cos_").cos_()


def exp_(input: Tensor) -> Tensor:
    """The function form of Tensor.exp_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "exp_").exp_()


def expm1_(input: Tensor) -> Tensor:
    """The function form of Tensor.expm1_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "expm1_").expm1_()


def log1p_(input: Tensor) -> Tensor:
    """The function form of Tensor.log1p_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "log1p_").log1p_()


def log_(input: Tensor) -> Tensor:
    """The function form of Tensor.log_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "log_").log_()


def neg_(input: Tensor) -> Tensor:
    """The function form of Tensor.neg_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "neg_").neg_()


def relu_(input: Tensor) -> Tensor:
    """The function form of Tensor.relu_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "relu_").relu_()


def sigmoid_(input: Tensor) -> Tensor:
    """The function form of Tensor.sigmoid_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "sigmoid_").sigmoid_()


def sin_(input: Tensor) -> Tensor:
    """The function form of Tensor.sin_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "sin_").sin_()


def sqrt_(input: Tensor) -> Tensor:
    """The function form of Tensor.sqrt_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "sqrt_").sqrt_()


def tanh_(input: Tensor) -> Tensor:
    """The function form of Tensor.tanh_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "tanh_").tanh_()


def tan_(input: Tensor) -> Tensor:
    """The function form of Tensor.tan_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "tan_").tan_()


def asin_(input: Tensor) -> Tensor:
    """The function form of Tensor.asin_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "asin_").asin_()


def acos_(input: Tensor) -> Tensor:
    """The function form of Tensor.acos_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "acos_").acos_()


def atan_(input: Tensor) -> Tensor:
    """The function form of Tensor.atan_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "atan_").atan_()


def sinh_(input: Tensor) -> Tensor:
    """The function form of Tensor.sinh_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "sinh_").sinh_()


def cosh_(input: Tensor) -> Tensor:
    """The function form of Tensor.cosh_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "cosh_").cosh_()


def asinh_(input: Tensor) -> Tensor:
    """The function form of Tensor.asinh_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "asinh_").asinh_()


def acosh_(input: Tensor) -> Tensor:
    """The function form of Tensor.acosh_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "acosh_").acosh_()


def atanh_(input: Tensor) -> Tensor:
    """The function form of Tensor.atanh_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "atanh_").atanh_()


def arcsin_(input: Tensor) -> Tensor:
    """The function form of Tensor.arcsin_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "arcsin_").arcsin_()


def arccos_(input: Tensor) -> Tensor:
    """The function form of Tensor.arccos_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "arccos_").arccos_()


def arctan_(input: Tensor) -> Tensor:
    """The function form of Tensor.arctan_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "arctan_").arctan_()


def arcsinh_(input: Tensor) -> Tensor:
    """The function form of Tensor.arcsinh_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "arcsinh_").arcsinh_()


def arccosh_(input: Tensor) -> Tensor:
    """The function form of Tensor.arccosh_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "arccosh_").arccosh_()


def arctanh_(input: Tensor) -> Tensor:
    """The function form of Tensor.arctanh_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "arctanh_").arctanh_()


def reciprocal_(input: Tensor) -> Tensor:
    """The function form of Tensor.reciprocal_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "reciprocal_").reciprocal_()


def frac_(input: Tensor) -> Tensor:
    """The function form of Tensor.frac_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "frac_").frac_()


def gcd_(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.gcd_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "gcd_").gcd_(other)


def lcm_(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.lcm_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "lcm_").lcm_(other)


def nan_to_num_(
    input: Tensor, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None
) -> Tensor:
    """The function form of Tensor.nan_to_num_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "nan_to_num_").nan_to_num_(nan, posinf, neginf)


def ldexp_(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.ldexp_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "ldexp_").ldexp_(other)


def xlogy_(input: Tensor, other: Any) -> Tensor:
    """The function form of Tensor.xlogy_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "xlogy_").xlogy_(other)


def exp2_(input: Tensor) -> Tensor:
    """The function form of Tensor.exp2_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "exp2_").exp2_()


def sinc_(input: Tensor) -> Tensor:
    """The function form of Tensor.sinc_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "sinc_").sinc_()


def deg2rad_(input: Tensor) -> Tensor:
    """The function form of Tensor.deg2rad_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "deg2rad_").deg2rad_()


def rad2deg_(input: Tensor) -> Tensor:
    """The function form of Tensor.rad2deg_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "rad2deg_").rad2deg_()


def logit_(input: Tensor, eps: float | None = None) -> Tensor:
    """The function form of Tensor.logit_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "logit_").logit_(eps)


def i0_(input: Tensor) -> Tensor:
    """The function form of Tensor.i0_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "i0_").i0_()


def erf_(input: Tensor) -> Tensor:
    """The function form of Tensor.erf_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "erf_").erf_()


def erfc_(input: Tensor) -> Tensor:
    """The function form of Tensor.erfc_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "erfc_").erfc_()


def log2_(input: Tensor) -> Tensor:
    """The function form of Tensor.log2_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "log2_").log2_()


def log10_(input: Tensor) -> Tensor:
    """The function form of Tensor.log10_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "log10_").log10_()


def trunc_(input: Tensor) -> Tensor:
    """The function form of Tensor.trunc_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "trunc_").trunc_()


def fix_(input: Tensor) -> Tensor:
    """The function form of Tensor.fix_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "fix_").fix_()


def square_(input: Tensor) -> Tensor:
    """The function form of Tensor.square_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "square_").square_()


def rsqrt_(input: Tensor) -> Tensor:
    """The function form of Tensor.rsqrt_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "rsqrt_").rsqrt_()


def negative_(input: Tensor) -> Tensor:
    """The function form of Tensor.negative_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "negative_").negative_()


def clamp_min_(input: Tensor, min: Any) -> Tensor:
    """The function form of Tensor.clamp_min_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "clamp_min_").clamp_min_(min)


def clamp_max_(input: Tensor, max: Any) -> Tensor:
    """The function form of Tensor.clamp_max_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "clamp_max_").clamp_max_(max)


def ceil_(input: Tensor) -> Tensor:
    """The function form of Tensor.ceil_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "ceil_").ceil_()


def floor_(input: Tensor) -> Tensor:
    """The function form of Tensor.floor_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "floor_").floor_()


def round_(input: Tensor, *, decimals: int = 0) -> Tensor:
    """The function form of Tensor.round_: writes into ``input``, which must be a Tensor."""
    return _inplace_target(input, "round_").round_(decimals=decimals)


def _inplace_target(input: Any, op: str) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(
            f"{op}: writes in place, so input must be a Tensor; got {type(input).__name__}"
        )
    return input
