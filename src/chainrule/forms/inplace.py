"""The function forms of the methods that write into their input: ``cr.relu_(x)`` is
``x.relu_()``; ``input`` must already be a Tensor."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor, as_tensor

__all__ = [
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


def _inplace_target(input: Any, op: str) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(
            f"{op}: writes in place, so input must be a Tensor; got {type(input).__name__}"
        )
    return input
