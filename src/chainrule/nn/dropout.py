"""Channel dropout (dropout1d/2d/3d), alpha dropout and feature alpha dropout, as functions
and modules; the elementwise ``dropout`` is in layers.py. Each mask is drawn as PyTorch's
implementation draws it: ``bernoulli_(1 - p)`` on an empty tensor of the input's shape, or
of (N, C, 1, ...) to drop whole channels, through chainrule's tensor samplers.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from .. import array, random_batching
from ..tensor import Tensor, as_tensor
from .module import Module

ALPHA = 1.7580993408473766  # SELU's -scale * alpha: where alpha dropout sends a dropped unit


def _check_p(p: float, op: str) -> None:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{op}: dropout probability has to be between 0 and 1; got p={p}")


def _dropout(x: Tensor, p: float, training: bool, inplace: bool, op: str, *, feature: bool,
             alpha: bool, batched: bool = True) -> Tensor:  # fmt: skip
    """PyTorch's _dropout_impl: x * noise (+ b for alpha dropout), noise drawn once per
    element, or with ``feature`` once per (sample, channel), or per channel of an input
    without its batch dim (``batched`` False)."""
    if p == 0.0 or not training or x.numel() == 0:
        return x
    if feature and x.ndim + (not batched) < 2:  # counting the batch dim PyTorch adds
        raise ValueError(
            f"{op}: feature dropout needs an input of at least 2 dims (N, C, ...); got shape "
            f"{x.shape}"
        )
    if p == 1.0:  # a zero of x's dtype: integers and bools stay so, as PyTorch's
        zero = x.detach().new_zeros(())
        return x._write(op + "_", lambda t: t * zero) if inplace else x * zero
    if not array.is_floating(x.dtype):
        raise TypeError(f"{op}: needs a floating-point tensor when training; got dtype {x.dtype}")
    if not feature:
        shape = x.shape
    elif batched:
        shape = x.shape[:2] + (1,) * (x.ndim - 2)  # (N, C, 1, ...)
    else:
        shape = x.shape[:1] + (1,) * (x.ndim - 1)  # (C, 1, ...): PyTorch's (1, C, 1, ...)
    noise = random_batching.noise(x.detach(), shape, 1.0 - p, op)
    if alpha:
        a = 1.0 / math.sqrt((ALPHA * ALPHA * p + 1.0) * (1.0 - p))
        b = (noise - 1.0) * (ALPHA * a) + ALPHA * a * p
        scale = noise * a
        return x._write(op + "_", lambda t: t * scale + b) if inplace else x * scale + b
    noise = noise / (1.0 - p)
    return x._write(op + "_", lambda t: t * noise) if inplace else x * noise


def dropout1d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zeroes whole channels of (N, C, L) or (C, L) input with probability p, scaling the
    rest by 1 / (1 - p)."""
    _check_p(p, "dropout1d")
    x = as_tensor(input)
    if x.ndim not in (2, 3):
        raise ValueError(
            f"dropout1d: expected an input of 2 dims (C, L) or 3 dims (N, C, L); got shape "
            f"{x.shape}"
        )
    return _dropout(x, p, training, inplace, "dropout1d", feature=True, alpha=False,
                    batched=x.ndim == 3)  # fmt: skip


def dropout2d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zeroes whole channels of (N, C, H, W) input with probability p, scaling the rest by
    1 / (1 - p). A 3-dim input is read as (N, C, L), with PyTorch's warning."""
    _check_p(p, "dropout2d")
    x = as_tensor(input)
    if x.ndim not in (3, 4):
        warnings.warn(
            f"dropout2d: received a {x.ndim}-D input, which is deprecated; pass a 4-D "
            "(N, C, H, W) input (or 3-D (N, C, L), as PyTorch reads it)",
            UserWarning,
            stacklevel=2,
        )
    if x.ndim == 3:
        warnings.warn(
            "dropout2d: received a 3D input, read as (N, C, L) with one-dim channels dropped, "
            "as PyTorch; use dropout1d for that, or pass (N, C, H, W) input",
            UserWarning,
            stacklevel=2,
        )
    return _dropout(x, p, training, inplace, "dropout2d", feature=True, alpha=False)


def dropout3d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) input with probability p,
    scaling the rest by 1 / (1 - p)."""
    _check_p(p, "dropout3d")
    x = as_tensor(input)
    if x.ndim not in (4, 5):
        warnings.warn(
            f"dropout3d: received a {x.ndim}-D input, which is deprecated; pass a 5-D "
            "(N, C, D, H, W) or 4-D (C, D, H, W) input",
            UserWarning,
            stacklevel=2,
        )
    return _dropout(x, p, training, inplace, "dropout3d", feature=True, alpha=False,
                    batched=x.ndim == 5)  # fmt: skip


def alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """Dropout for SELU networks: each element dropped with probability p is set to
    -scale * alpha, then all are scaled and shifted (a x + b) to keep mean 0 and variance 1."""
    _check_p(p, "alpha_dropout")
    x = as_tensor(input)
    return _dropout(x, p, training, inplace, "alpha_dropout", feature=False, alpha=True)


def feature_alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """alpha_dropout of whole channels (dim 1) of (N, C, ...) input."""
    _check_p(p, "feature_alpha_dropout")
    x = as_tensor(input)
    return _dropout(x, p, training, inplace, "feature_alpha_dropout", feature=True, alpha=True)


class _DropoutNd(Module):
    _fn: Any = None

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        _check_p(p, type(self).__name__)
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    _fn = staticmethod(dropout1d)


class Dropout2d(_DropoutNd):
    _fn = staticmethod(dropout2d)


class Dropout3d(_DropoutNd):
    _fn = staticmethod(dropout3d)


class AlphaDropout(_DropoutNd):
    _fn = staticmethod(alpha_dropout)


class FeatureAlphaDropout(_DropoutNd):
    _fn = staticmethod(feature_alpha_dropout)
