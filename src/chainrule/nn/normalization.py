"""Normalisation layers and their functional forms: LayerNorm, BatchNorm1d, BatchNorm2d.
Layer normalisation is one primitive (ops/norm.py); batch normalisation is composed from
Tensor ops, so its gradients (and gradients of gradients) come free.
"""

from __future__ import annotations

from typing import Any

from .. import array
from ..arguments import need_float, positive_int, resolve_device
from ..ops import norm
from ..tensor import Tensor, as_tensor
from . import init
from .module import Module, Parameter

xp = array.xp


def _array(t: Any) -> Any:
    if isinstance(t, Tensor):
        return t._array
    return t if isinstance(t, array.ndarray) else xp.asarray(t)


def layer_norm(
    input: Tensor,
    normalized_shape: int | tuple[int, ...],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """(x - mean) / sqrt(var + eps) * weight + bias over the last len(normalized_shape)
    dims, with the biased variance."""
    x = as_tensor(input)
    need_float(x, "layer_norm")
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if k == 0 or x.shape[x.ndim - k :] != shape or x.ndim < k:
        raise ValueError(
            f"layer_norm: expected input with trailing shape {shape} (normalized_shape); got "
            f"shape {x.shape}"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise ValueError(
                f"layer_norm: {name} must have the normalized shape {shape}; got shape "
                f"{tuple(t.shape)}"
            )
    return norm.LayerNorm.apply(x, weight, bias, k=k, eps=eps)


def batch_norm(
    input: Tensor,
    running_mean: Any,
    running_var: Any,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Per-channel (dim 1) normalisation of (N, C, *) input.

    Training: with the batch's mean and biased variance; the running statistics given (if
    any) move by ``momentum`` towards the batch mean and the *unbiased* batch variance, in
    place. Otherwise: with the running statistics. An empty input comes back as a copy,
    the statistics untouched, as PyTorch's (a 1-D one of no channels too).
    """
    x = as_tensor(input)
    need_float(x, "batch_norm")
    if x.ndim < 2 and x.shape != (0,):
        raise ValueError(f"batch_norm: expected input of shape (N, C, *); got shape {x.shape}")
    c = x.shape[1] if x.ndim > 1 else 0
    per_channel = (1, c) + (1,) * (x.ndim - 2)  # broadcasts a (C,) vector over (N, C, *)
    for name, t in (
        ("weight", weight),
        ("bias", bias),
        ("running_mean", running_mean),
        ("running_var", running_var),
    ):
        if t is not None and tuple(_array(t).shape) != (c,):
            raise ValueError(
                f"batch_norm: expected {name} of shape ({c},) for input of shape {x.shape}; "
                f"got {tuple(_array(t).shape)}"
            )
    if not training and (running_mean is None or running_var is None):
        raise ValueError("batch_norm: running_mean and running_var are needed when not training")
    if x.numel() == 0:
        return x.clone()
    if training:
        dims = (0,) + tuple(range(2, x.ndim))
        n = x.numel() // c if c else 0
        if n <= 1:
            raise ValueError(
                f"batch_norm: expected more than 1 value per channel when training; got input "
                f"of shape {x.shape}"
            )
        mean = x.mean(dims, keepdim=True)  # (1, C, 1, ...)
        centred = x - mean
        var = (centred * centred).mean(dims, keepdim=True)  # biased: used to normalise
        scale = (var + eps) ** -0.5
        if weight is not None:
            scale = scale * weight.reshape(per_channel)
        y = centred * scale
        if running_mean is not None:
            rm = _array(running_mean)
            rm *= 1.0 - momentum
            rm += momentum * mean._array.reshape(c)
        if running_var is not None:
            rv = _array(running_var)
            rv *= 1.0 - momentum
            rv += (momentum * n / (n - 1)) * var._array.reshape(c)  # the unbiased variance
    else:
        # Tensor ops on the running statistics (buffers), so an exported graph reads them
        # by name, as it reads the weight and bias
        inv = 1.0 / (as_tensor(running_var) + eps).sqrt()  # (C,)
        scale = inv if weight is None else weight * inv  # (C,)
        shift = -as_tensor(running_mean) * scale  # (C,)
        y = x * scale.reshape(per_channel) + shift.reshape(per_channel)
    if bias is not None:
        y = y + bias.reshape(per_channel)
    return y


class LayerNorm(Module):
    """Normalises over the last dims (normalized_shape), then scales by weight (ones) and
    shifts by bias (zeros), both of normalized_shape; ``bias=False`` keeps the weight only,
    and ``elementwise_affine=False`` neither (no state_dict keys for what is left out)."""

    weight: Parameter | None
    bias: Parameter | None

    def __init__(
        self,
        normalized_shape: int | tuple[int, ...],
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        on = array.like(resolve_device(device, "LayerNorm"))
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(
            positive_int(n, "normalized_shape", "LayerNorm", zero_ok=True) for n in normalized_shape
        )
        self.eps, self.elementwise_affine = eps, elementwise_affine
        dtype = array.as_dtype(dtype) or array.get_default_dtype()
        shape, affine = self.normalized_shape, elementwise_affine
        # registered even when None: the names take only a Parameter later, as PyTorch's
        self.register_parameter(
            "weight", Parameter(xp.ones(shape, dtype=dtype, like=on)) if affine else None
        )
        self.register_parameter(
            "bias", Parameter(xp.zeros(shape, dtype=dtype, like=on)) if affine and bias else None
        )

    def reset_parameters(self) -> None:
        """weight back to ones and bias to zeros, as made."""
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        shape = self.normalized_shape
        if input.shape[input.ndim - len(shape) :] != shape or input.ndim < len(shape):
            raise ValueError(
                f"LayerNorm: expected input with trailing shape {shape} (normalized_shape); got "
                f"shape {input.shape}"
            )
        return layer_norm(input, shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}"
        )


class _BatchNorm(Module):
    """Shared by BatchNorm1d and BatchNorm2d, which differ in the input dims they accept."""

    _shapes: tuple[int, ...] = ()
    _layout = ""
    weight: Parameter | None
    bias: Parameter | None
    running_mean: Any  # buffers (Tensors, or None without track_running_stats)
    running_var: Any
    num_batches_tracked: Any

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        on = array.like(resolve_device(device, type(self).__name__))
        num_features = positive_int(num_features, "num_features", type(self).__name__, zero_ok=True)
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        dtype = array.as_dtype(dtype) or array.get_default_dtype()
        n = num_features
        # registered even when None: the names take only a Parameter later, as PyTorch's
        self.register_parameter(
            "weight", Parameter(xp.ones(n, dtype=dtype, like=on)) if affine else None
        )
        self.register_parameter(
            "bias", Parameter(xp.zeros(n, dtype=dtype, like=on)) if affine and bias else None
        )
        track = track_running_stats
        self.register_buffer(
            "running_mean", Tensor._make(xp.zeros(n, dtype=dtype, like=on)) if track else None
        )
        self.register_buffer(
            "running_var", Tensor._make(xp.ones(n, dtype=dtype, like=on)) if track else None
        )
        count = Tensor._make(xp.array(0, dtype=array.int64, like=on)) if track else None
        self.register_buffer("num_batches_tracked", count)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean._array[...] = 0
            self.running_var._array[...] = 1
            self.num_batches_tracked._array[...] = 0

    def reset_parameters(self) -> None:
        """The running statistics reset (reset_running_stats), weight back to ones and bias
        to zeros."""
        self.reset_running_stats()
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        name = type(self).__name__
        if input.ndim not in self._shapes:
            raise ValueError(
                f"{name}: expected input of shape {self._layout}; got shape {input.shape}"
            )
        if input.shape[1] != self.num_features:
            raise ValueError(
                f"{name}: expected input with {self.num_features} channels (num_features) in "
                f"dim 1; got shape {input.shape}"
            )
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked._array += 1
            if self.momentum is None:  # a cumulative moving average
                factor = 1.0 / int(self.num_batches_tracked._array)
        batch_stats = self.training or not self.track_running_stats
        return batch_norm(
            input,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            batch_stats,
            factor,
            self.eps,
        )

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) input, per channel C."""

    _shapes = (2, 3)
    _layout = "(N, C) or (N, C, L)"


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) input, per channel C."""

    _shapes = (4,)
    _layout = "(N, C, H, W)"
