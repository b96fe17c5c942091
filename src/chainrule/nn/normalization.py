"""Normalisation layers and their functional forms: LayerNorm, BatchNorm1d/2d/3d (and
SyncBatchNorm), GroupNorm, InstanceNorm1d/2d/3d, RMSNorm, LocalResponseNorm. Layer
normalisation is one primitive (ops/norm.py), which group normalisation reuses; batch,
instance, RMS and local response normalisation are composed from Tensor ops, so their
gradients (and gradients of gradients) come free.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from .. import array, batching
from .. import distributed as dist
from ..arguments import need_float, need_number, positive_int, resolve_device
from ..autograd.saved import record
from ..functions import pad
from ..ops import movement, norm
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
    k, given = len(shape), x._array.shape  # the array's shape: a tuple, no Size to make
    if k == 0 or given[len(given) - k :] != shape or len(given) < k:
        raise ValueError(
            f"layer_norm: expected input with trailing shape {shape} (normalized_shape); got "
            f"shape {x.shape}"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and _array(t).shape != shape:
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
    given = x._array.shape  # the array's shape: a tuple, no Size to make
    if len(given) < 2 and given != (0,):
        raise ValueError(f"batch_norm: expected input of shape (N, C, *); got shape {x.shape}")
    c = given[1] if len(given) > 1 else 0
    for name, t in (
        ("weight", weight),
        ("bias", bias),
        ("running_mean", running_mean),
        ("running_var", running_var),
    ):
        if t is not None and _array(t).shape != (c,):
            raise ValueError(
                f"batch_norm: expected {name} of shape ({c},) for input of shape {x.shape}; "
                f"got {tuple(_array(t).shape)}"
            )
    if not training and (running_mean is None or running_var is None):
        raise ValueError("batch_norm: running_mean and running_var are needed when not training")
    size = x._array.size
    if size == 0:
        return x.clone()
    if training and size // c <= 1:
        raise ValueError(
            f"batch_norm: expected more than 1 value per channel when training; got input "
            f"of shape {x.shape}"
        )
    mean = None if running_mean is None else as_tensor(running_mean)
    var = None if running_var is None else as_tensor(running_var)
    training = bool(training)
    out = norm.NativeBatchNorm.apply(
        x, weight, bias, mean, var, training=training, momentum=momentum, eps=eps
    )
    return record(out, eps=eps, training=training)


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


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of (N, C, D, H, W) input, per channel C."""

    _shapes = (5,)
    _layout = "(N, C, D, H, W)"


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation of (N, C, *) input whose statistics would span the batches of
    every process of a group. With no process group of more than one process (chainrule's
    own case on one machine without distributed), it is BatchNorm over this batch, as
    PyTorch's; training in a group of several processes is refused, since its statistics
    and their gradients need collectives that chainrule's distributed does not run inside a
    layer."""

    _shapes = tuple(range(2, 65))  # any (N, C, *)
    _layout = "(N, C, *)"

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        process_group: Any = None,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias
        )
        self.process_group = process_group

    def forward(self, input: Tensor) -> Tensor:
        if self.training and dist.is_initialized():
            size = dist.get_world_size(self.process_group)
            if size > 1:
                raise RuntimeError(
                    f"SyncBatchNorm: statistics synchronised across processes are not "
                    f"supported; got a process group of {size} processes in training; use "
                    "BatchNorm (each process's own batch statistics) or train on one process"
                )
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """``module`` with every BatchNorm layer in it (not InstanceNorm) replaced by a
        SyncBatchNorm holding the same parameters and running statistics, as PyTorch's."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, _InstanceNorm):
            out = cls(
                module.num_features, module.eps, module.momentum, module.affine,
                module.track_running_stats, process_group, bias=module.bias is not None,
            )  # fmt: skip
            for name in ("weight", "bias", "running_mean", "running_var", "num_batches_tracked"):
                setattr(out, name, getattr(module, name))
            out.training = module.training

        def convert(value: Any) -> Any:
            if isinstance(value, Module):
                return cls.convert_sync_batchnorm(value, process_group)
            if isinstance(value, list):
                value[:] = [convert(v) for v in value]
            elif isinstance(value, dict):
                value.update({k: convert(v) for k, v in value.items()})
            return value

        for name, value in list(vars(out).items()):
            if isinstance(value, (Module, list, dict)) and name not in ("_buffers", "_empty"):
                setattr(out, name, convert(value))
        return out


# -- group, instance, RMS and local response normalisation ----------------------------------


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalises each of num_groups groups of channels (dim 1) of (N, C, *) input over the
    group's channels and positions (the biased variance), then scales by weight and shifts
    by bias (each (C,)): layer normalisation of the (N, G, C/G * ...) view."""
    x = as_tensor(input)
    need_float(x, "group_norm")
    given = x._array.shape  # the array's shape: a tuple, no Size to make
    if len(given) < 2:
        raise ValueError(f"group_norm: expected input of shape (N, C, *); got shape {x.shape}")
    n, c, hxw = given[0], given[1], math.prod(given[2:])
    if num_groups <= 0 or c % num_groups:
        raise ValueError(
            f"group_norm: the channels (dim 1) must divide into num_groups; got shape {x.shape} "
            f"and num_groups {num_groups}"
        )
    if n * c // num_groups * hxw == 1:  # PyTorch's _verify_batch_size
        raise ValueError(
            f"group_norm: expected more than 1 value per group; got shape {x.shape} and "
            f"num_groups {num_groups}"
        )
    _per_channel_shapes(x, "group_norm", weight=weight, bias=bias)
    out = norm.NativeGroupNorm.apply(x, weight, bias, groups=num_groups, eps=eps)
    return record(out, C=c, HxW=hxw, N=n, eps=eps, group=num_groups)


def _per_channel_shapes(x: Tensor, op: str, **vectors: Any) -> None:
    c = x._array.shape[1]
    for name, t in vectors.items():
        if t is not None and _array(t).shape != (c,):
            raise ValueError(
                f"{op}: expected {name} of shape ({c},) (one per channel) for input of shape "
                f"{x.shape}; got {tuple(_array(t).shape)}"
            )


def _end_to_end(v: Any, n: int) -> Any:
    """n copies of the vector v end to end, as tile(v, n): (1, C) repeated to (n, C), then
    flat (a fifth of tile's Python wrapper's time on a few channels)."""
    return v[None].repeat(n, 0).reshape(-1)  # (n C,)


def instance_norm(
    input: Tensor,
    running_mean: Any = None,
    running_var: Any = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalises each (sample, channel) of (N, C, *) input over its positions, as PyTorch:
    batch_norm of the (1, N C, *) view. With use_input_stats the running statistics (C,),
    if given, move by momentum towards the mean over the samples of each instance's
    statistics; without, they normalise."""
    x = as_tensor(input)
    need_float(x, "instance_norm")
    if x.ndim < 2:
        raise ValueError(f"instance_norm: expected input of shape (N, C, *); got shape {x.shape}")
    n, c = x.shape[:2]
    if use_input_stats and math.prod(x.shape[2:]) <= 1:
        raise ValueError(
            f"instance_norm: expected more than 1 spatial element when training; got shape "
            f"{x.shape}"
        )
    _per_channel_shapes(
        x, "instance_norm", weight=weight, bias=bias, running_mean=running_mean,
        running_var=running_var,
    )  # fmt: skip
    if use_input_stats and running_mean is None and running_var is None and x.numel():
        # each (sample, channel) its own group: group_norm with C groups, in one node, read
        # through a view as PyTorch's composite ends (ViewBackward0)
        y = norm.NativeGroupNorm.apply(x, weight, bias, groups=c, eps=eps)
        return movement.Reshape.apply(y, shape=x.shape)
    rm = None if running_mean is None else _end_to_end(_array(running_mean), n)  # (N C,)
    rv = None if running_var is None else _end_to_end(_array(running_var), n)
    w = None if weight is None else weight.repeat(n)
    b = None if bias is None else bias.repeat(n)
    flat = x.reshape((1, n * c) + x.shape[2:])  # (1, N C, *): one channel per instance
    y = batch_norm(flat, rm, rv, w, b, use_input_stats, momentum, eps).reshape(x.shape)
    if use_input_stats and x.numel():  # each running statistic: its mean over the samples
        for given, moved in ((running_mean, rm), (running_var, rv)):
            if given is not None and moved is not None:
                _array(given)[...] = moved.reshape(n, c).mean(axis=0)
    return y


def rms_norm(
    input: Tensor,
    normalized_shape: int | tuple[int, ...],
    weight: Tensor | None = None,
    eps: float | None = None,
) -> Tensor:
    """x / sqrt(mean(x^2) + eps) * weight over the last len(normalized_shape) dims; eps None
    is the machine epsilon of the dtype computed in: the input's, float32 for half
    precision (as PyTorch)."""
    x = as_tensor(input)
    need_float(x, "rms_norm")
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if x.shape[x.ndim - k :] != shape or x.ndim < k:
        raise ValueError(
            f"rms_norm: expected input with trailing shape {shape} (normalized_shape); got "
            f"shape {x.shape}"
        )
    if weight is not None and tuple(weight.shape) != shape:
        raise ValueError(
            f"rms_norm: weight must have the normalized shape {shape}; got shape "
            f"{tuple(weight.shape)}"
        )
    work = x if x._array.dtype.itemsize >= 4 else x.float()  # PyTorch's opmath for halves
    if eps is None:
        eps = float(xp.finfo(work._array.dtype).eps)
    dims = tuple(range(x.ndim - k, x.ndim))
    y = work * ((work * work).mean(dims, keepdim=True) + eps).rsqrt() if dims else work
    if weight is not None:
        y = y * weight
    return y.to(x.dtype)


def local_response_norm(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """x / (k + alpha * mean of x^2 over a window of ``size`` channels)^beta, the window
    centred on each channel (size // 2 before, (size - 1) // 2 after, zeros past the ends),
    as PyTorch's (an average pool over the padded squares)."""
    x = as_tensor(input)
    need_number(x, "local_response_norm")
    if not x.is_floating_point() and x._array.dtype != xp.int64:  # PyTorch's average pools
        raise TypeError(
            f"local_response_norm: integers other than int64 are not implemented, as in "
            f"PyTorch; got dtype {x.dtype}"
        )
    if x.ndim < 3:
        raise ValueError(
            f"local_response_norm: expected input of 3 or more dims (N, C, *); got shape {x.shape}"
        )
    if x.numel() == 0:
        return x
    c = x.shape[1]
    padded = pad(x * x, (0, 0) * (x.ndim - 2) + (size // 2, (size - 1) // 2))  # (N, C+size-1, *)
    window = padded[:, 0:c]
    for j in range(1, size):
        window = window + padded[:, j : j + c]  # (N, C, *): the sum of size channels
    if x.is_floating_point():
        mean = window * (1.0 / size)
    else:  # PyTorch's average pool of integers truncates
        mean = window // size
    return x / (mean * alpha + k) ** beta


class GroupNorm(Module):
    """group_norm with learned per-channel weight (ones) and bias (zeros) when affine."""

    weight: Parameter | None
    bias: Parameter | None

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        on = array.like(resolve_device(device, "GroupNorm"))
        if num_groups <= 0 or num_channels % num_groups:
            raise ValueError(
                f"GroupNorm: num_channels must divide into num_groups; got num_channels "
                f"{num_channels} and num_groups {num_groups}"
            )
        self.num_groups, self.num_channels, self.eps, self.affine = (
            num_groups, num_channels, eps, affine,
        )  # fmt: skip
        dtype = array.as_dtype(dtype) or array.get_default_dtype()
        c = num_channels
        self.register_parameter(
            "weight", Parameter(xp.ones(c, dtype=dtype, like=on)) if affine else None
        )
        self.register_parameter(
            "bias", Parameter(xp.zeros(c, dtype=dtype, like=on)) if affine and bias else None
        )

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
            f"bias={self.bias is not None}"
        )


class RMSNorm(Module):
    """rms_norm over the last dims (normalized_shape), scaled by a learned weight (ones)."""

    weight: Parameter | None

    def __init__(
        self,
        normalized_shape: int | tuple[int, ...],
        eps: float | None = None,
        elementwise_affine: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        on = array.like(resolve_device(device, "RMSNorm"))
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        dtype = array.as_dtype(dtype) or array.get_default_dtype()
        self.register_parameter(
            "weight",
            Parameter(xp.ones(self.normalized_shape, dtype=dtype, like=on))
            if elementwise_affine
            else None,
        )

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, input: Tensor) -> Tensor:
        return rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )


class _InstanceNorm(_BatchNorm):
    """instance_norm with BatchNorm's parameters and buffers (PyTorch's _NormBase), off by
    default; an input without its batch dim is taken as one sample."""

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = False,
        track_running_stats: bool = False,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias
        )

    def forward(self, input: Tensor) -> Tensor:
        name = type(self).__name__
        if input.ndim not in self._shapes:
            raise ValueError(
                f"{name}: expected input of shape {self._layout}; got shape {input.shape}"
            )
        unbatched = input.ndim == self._shapes[0]
        channel_dim = 0 if unbatched else 1
        if input.shape[channel_dim] != self.num_features:
            message = (
                f"{name}: expected input with {self.num_features} channels (num_features) in "
                f"dim {channel_dim}; got shape {input.shape}"
            )
            if self.affine:
                raise ValueError(message)
            warnings.warn(message + "; num_features is not used without affine", stacklevel=2)
        x = input.unsqueeze(0) if unbatched else input
        y = instance_norm(
            x,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            self.training or not self.track_running_stats,
            0.0 if self.momentum is None else self.momentum,
            self.eps,
        )
        return y.squeeze(0) if unbatched else y


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of (N, C, L) or (C, L) input."""

    _shapes = (2, 3)
    _layout = "(N, C, L) or (C, L)"


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of (N, C, H, W) or (C, H, W) input."""

    _shapes = (3, 4)
    _layout = "(N, C, H, W) or (C, H, W)"


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of (N, C, D, H, W) or (C, D, H, W) input."""

    _shapes = (4, 5)
    _layout = "(N, C, D, H, W) or (C, D, H, W)"


class LocalResponseNorm(Module):
    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


# -- vmap's rules for the two primitives (batching.py holds the other ops') -----------------


def _batched(cls: Any, args: dict, batched: dict, size: int) -> Tensor:
    """LayerNorm and NativeGroupNorm on a batch of B examples in one call: layer norm over
    the last dims with the batch leading, group norm of (B*N, C, *) with the batch folded
    into the samples; per-example weight and bias (as vmap over grad makes them) scale and
    shift the unweighted result, on the batch."""
    x, w, b = args["x"], args["weight"], args["bias"]
    x = x if batched["x"] else x.unsqueeze(0).expand(size, *x.shape)  # (B, *example), a view
    group = "groups" in args
    given = {**args, "x": x.reshape(-1, *x.shape[2:]) if group else x}  # (B*N, C, *) for group
    if not batched["weight"] and not batched["bias"]:
        return batching.call(cls, given).reshape(x.shape)
    out = batching.call(cls, {**given, "weight": None, "bias": None}).reshape(x.shape)
    if group:  # (B or 1, 1, C, 1, ...)
        per = (-1, 1, x.shape[2]) + (1,) * (x.ndim - 3)
    else:  # (B or 1, 1, ..., *normalized_shape)
        k = args["k"]
        per = (-1,) + (1,) * (x.ndim - 1 - k) + tuple(x.shape[x.ndim - k :])
    if w is not None:
        out = out * w.reshape(per)
    if b is not None:
        out = out + b.reshape(per)
    return out


batching.register({"LayerNorm": _batched, "NativeGroupNorm": _batched})
