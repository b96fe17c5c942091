"""Activations, as functions and as modules: relu, leaky_relu, tanh, sigmoid, gelu, silu,
mish, softplus, softmax, log_softmax. Each is composed from Tensor ops; the primitives are in ops/.
"""

from __future__ import annotations

import warnings

from ..ops import elementwise
from ..tensor import Tensor, as_tensor, where
from .module import Module


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0); relu'(0) = 0. ``inplace`` is accepted for PyTorch's signature; the
    result is always a new tensor."""
    return as_tensor(input).relu()


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x where x > 0, else negative_slope * x; the slope at 0 is negative_slope (as PyTorch)."""
    x = as_tensor(input)
    return where(x._array > 0, x, x * negative_slope)


def tanh(input: Tensor) -> Tensor:
    return as_tensor(input).tanh()


def sigmoid(input: Tensor) -> Tensor:
    return as_tensor(input).sigmoid()


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x * Phi(x), Phi the standard normal CDF: exact with 'none' (0.5 (1 + erf(x/sqrt 2))),
    or with 'tanh': 0.5 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh'; got {approximate!r}")
    return elementwise.Gelu.apply(as_tensor(input), approximate=approximate)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold, as PyTorch's."""
    x = as_tensor(input)
    bx = x * beta if beta != 1 else x
    linear = bx._array > threshold
    safe = where(linear, 0.0, bx)  # the branch not taken stays finite, so does its gradient
    soft = (safe.exp() + 1.0).log()
    if beta != 1:
        soft = soft * (1.0 / beta)
    return where(linear, x, soft)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x) (the swish). ``inplace`` is accepted for PyTorch's signature."""
    x = as_tensor(input)
    return x * x.sigmoid()


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x)). ``inplace`` is accepted for PyTorch's signature."""
    x = as_tensor(input)
    return x * softplus(x).tanh()


def _softmax_dim(dim: int | None, ndim: int, op: str) -> int:
    if dim is not None:
        return dim
    # PyTorch's legacy rule when no dim is given (and its warning)
    warnings.warn(
        f"{op}: implicit dimension choice is deprecated; pass dim", UserWarning, stacklevel=3
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None) -> Tensor:
    x = as_tensor(input)
    return x.softmax(_softmax_dim(dim, x.ndim, "softmax"))


def log_softmax(input: Tensor, dim: int | None = None) -> Tensor:
    x = as_tensor(input)
    return x.log_softmax(_softmax_dim(dim, x.ndim, "log_softmax"))


class ReLU(Module):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return relu(input)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input: Tensor) -> Tensor:
        return leaky_relu(input, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class Tanh(Module):
    def forward(self, input: Tensor) -> Tensor:
        return tanh(input)


class Sigmoid(Module):
    def forward(self, input: Tensor) -> Tensor:
        return sigmoid(input)


class GELU(Module):
    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh'; got {approximate!r}")
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return gelu(input, self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return silu(input)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Mish(Module):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return mish(input)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Softplus(Module):
    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Tensor) -> Tensor:
        return softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softmax(Module):
    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return log_softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"
