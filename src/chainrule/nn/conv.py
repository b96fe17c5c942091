"""Convolution for users, in one, two and three spatial dims, plain and transposed: the
functional forms (argument checks over one primitive of every rank) and their modules. The
differentiable primitives live in ops/conv.py; pools in pooling.py.
"""

from __future__ import annotations

import math
from typing import Any

from .. import array
from ..arguments import positive_int, resolve_device
from ..autograd.saved import record
from ..functions import pad as pad_fn
from ..ops import conv as conv_ops
from ..tensor import Tensor, as_tensor
from . import init
from .module import Module, Parameter
from .spatial_args import batched, check_fits, check_positive, conv_padding, ntuple

xp = array.xp

# ---------------------------------------------------------------------------------------
# Convolution.


def _conv(
    op: str,
    spatial: int,
    input: Any,
    weight: Any,
    bias: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
) -> Tensor:
    x, unbatched = batched(input, spatial, op)
    weight = as_tensor(weight)
    if weight.ndim != spatial + 2:
        raise ValueError(
            f"{op}: weight must have {spatial + 2} dims (out_channels, in_channels/groups, "
            f"kernel...); got weight shape {weight.shape}"
        )
    if bias is not None:
        bias = as_tensor(bias)
    dtypes = [t.dtype for t in (x, weight, bias) if t is not None]
    if len(set(dtypes)) != 1:
        raise TypeError(f"{op}: input, weight and bias must share one dtype; got {dtypes}")
    stride = ntuple(stride, spatial, op, "stride")
    dilation = ntuple(dilation, spatial, op, "dilation")
    check_positive(stride, op, "stride")
    check_positive(dilation, op, "dilation")
    groups = positive_int(groups, "groups", op)
    c_in, (c_out, c_group), kernel = x.shape[1], weight.shape[:2], weight.shape[2:]
    given = x.shape[1:] if unbatched else x.shape  # the shape the caller passed
    shapes = f"got input shape {given} and weight shape {weight.shape}"
    if c_in % groups or c_out % groups:
        raise ValueError(
            f"{op}: groups={groups} must divide both the input's {c_in} channels and the "
            f"weight's {c_out} output channels; {shapes}"
        )
    if c_group * groups != c_in:
        raise ValueError(
            f"{op}: the input has {c_in} channels but the weight expects {c_group * groups} "
            f"({c_group} per group x {groups} groups); {shapes}"
        )
    if bias is not None and bias.shape != (c_out,):
        raise ValueError(f"{op}: bias must have shape ({c_out},); got bias shape {bias.shape}")
    pad = conv_padding(padding, kernel, stride, dilation, op)
    check_fits(op, x, kernel, dilation, pad, f"input shape {given}, weight shape {weight.shape}")
    if spatial == 3 and max(dilation) > 1 and x._array.dtype in _NO_DILATED_3D:
        raise TypeError(  # PyTorch's dilated 3-D kernel takes floats and int64 only
            f"{op}: a dilated 3-D convolution is not defined for {x.dtype}, as in PyTorch; "
            f"got dilation {dilation}"
        )
    if any(lo != hi for lo, hi in pad):  # 'same' of an even span: the extra after, by a pad
        widths = [w for lo, hi in reversed(pad) for w in (0, hi - lo)]  # the last dim first
        x, pad = pad_fn(x, widths), tuple((lo, lo) for lo, _ in pad)
    out = conv_ops.Convolution.apply(
        x, weight, bias, stride=stride, padding=pad, dilation=dilation, groups=groups
    )
    if padding == "valid":  # PyTorch's node keeps one 0 for each
        out = record(out, padding=(0,), output_padding=(0,))
    return out.squeeze(0) if unbatched else out


_NO_DILATED_3D = (array.int32, array.int16, array.int8, array.uint8)


def conv3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int | tuple[int, int, int] = 1,
    padding: int | tuple[int, int, int] | str = 0,
    dilation: int | tuple[int, int, int] = 1,
    groups: int = 1,
) -> Tensor:
    """3-D cross-correlation of input (N, C, D, H, W) or (C, D, H, W) with weight
    (out, C/groups, kd, kh, kw), plus bias (out,); padding may be 'valid' or 'same'."""
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int | tuple[int, int] = 1,
    padding: int | tuple[int, int] | str = 0,
    dilation: int | tuple[int, int] = 1,
    groups: int = 1,
) -> Tensor:
    """2-D cross-correlation of input (N, C, H, W) or (C, H, W) with weight
    (out, C/groups, kh, kw), plus bias (out,); padding may be 'valid' or 'same'."""
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int | tuple[int] = 1,
    padding: int | tuple[int] | str = 0,
    dilation: int | tuple[int] = 1,
    groups: int = 1,
) -> Tensor:
    """1-D cross-correlation of input (N, C, L) or (C, L) with weight (out, C/groups, k)."""
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def _output_padding(op: str, given: Any, stride: tuple, dilation: tuple, n: int) -> tuple[int, ...]:
    extra = ntuple(given, n, op, "output_padding")
    bad = [e for e, s, d in zip(extra, stride, dilation, strict=True) if e < 0 or e >= max(s, d)]
    if bad:
        raise ValueError(
            f"{op}: output_padding must be non-negative and smaller than stride or dilation; "
            f"got output_padding {extra}, stride {stride} and dilation {dilation}"
        )
    return extra


def _conv_transpose(
    op: str,
    spatial: int,
    input: Any,
    weight: Any,
    bias: Any,
    stride: Any,
    padding: Any,
    output_padding: Any,
    groups: int,
    dilation: Any,
) -> Tensor:
    x, unbatched = batched(input, spatial, op)
    weight = as_tensor(weight)
    if weight.ndim != spatial + 2:
        raise ValueError(
            f"{op}: weight must have {spatial + 2} dims (in_channels, out_channels/groups, "
            f"kernel...); got weight shape {weight.shape}"
        )
    bias = None if bias is None else as_tensor(bias)
    dtypes = [t.dtype for t in (x, weight, bias) if t is not None]
    if len(set(dtypes)) != 1:
        raise TypeError(f"{op}: input, weight and bias must share one dtype; got {dtypes}")
    strides = ntuple(stride, spatial, op, "stride")
    dilations = ntuple(dilation, spatial, op, "dilation")
    check_positive(strides, op, "stride")
    check_positive(dilations, op, "dilation")
    if isinstance(padding, str):
        raise ValueError(
            f"{op}: padding must be an int or a tuple of {spatial} ints; got {padding!r}"
        )
    pad = conv_padding(padding, weight.shape[2:], strides, dilations, op)
    extra = _output_padding(op, output_padding, strides, dilations, spatial)
    groups = positive_int(groups, "groups", op)
    c_in, c_group, kernel = weight.shape[0], weight.shape[1], weight.shape[2:]
    shapes = f"got input shape {tuple(input.shape)} and weight shape {weight.shape}"
    if x.shape[1] != c_in or c_in % groups:
        raise ValueError(
            f"{op}: the input's channels must equal the weight's first dim and be divisible "
            f"by groups={groups}; {shapes}"
        )
    if bias is not None and bias.shape != (c_group * groups,):
        raise ValueError(
            f"{op}: bias must have shape ({c_group * groups},); got bias shape {bias.shape}"
        )
    size = tuple(
        (n - 1) * s - 2 * p + d * (k - 1) + e + 1
        for n, s, (p, _), d, k, e in zip(
            x.shape[2:], strides, pad, dilations, kernel, extra, strict=True
        )
    )
    if any(n <= 0 for n in size):
        raise ValueError(f"{op}: the output would be {size}, which is empty; {shapes}")
    out = conv_ops.ConvTranspose.apply(
        x, weight, bias, size=size, stride=strides, padding=pad, dilation=dilations, groups=groups
    )
    out = record(out, output_padding=tuple(extra))  # as PyTorch's node keeps it
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int | tuple[int] = 1,
    padding: int | tuple[int] = 0,
    output_padding: int | tuple[int] = 0,
    groups: int = 1,
    dilation: int | tuple[int] = 1,
) -> Tensor:
    """The transpose of conv1d (its gradient in the input) of input (N, C, L) or (C, L) with
    weight (C, out/groups, k), plus bias (out,)."""
    return _conv_transpose("conv_transpose1d", 1, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)  # fmt: skip


def conv_transpose2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int | tuple[int, ...] = 1,
    padding: int | tuple[int, ...] = 0,
    output_padding: int | tuple[int, ...] = 0,
    groups: int = 1,
    dilation: int | tuple[int, ...] = 1,
) -> Tensor:
    """The transpose of conv2d (its gradient in the input) of input (N, C, H, W) or
    (C, H, W) with weight (C, out/groups, kh, kw), plus bias (out,): each output is
    (H - 1) * stride - 2 * padding + dilation * (kh - 1) + output_padding + 1 high."""
    return _conv_transpose("conv_transpose2d", 2, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)  # fmt: skip


def conv_transpose3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int | tuple[int, int, int] = 1,
    padding: int | tuple[int, int, int] = 0,
    output_padding: int | tuple[int, int, int] = 0,
    groups: int = 1,
    dilation: int | tuple[int, int, int] = 1,
) -> Tensor:
    """The transpose of conv3d (its gradient in the input) of input (N, C, D, H, W) or
    (C, D, H, W) with weight (C, out/groups, kd, kh, kw), plus bias (out,)."""
    return _conv_transpose("conv_transpose3d", 3, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)  # fmt: skip


# ---------------------------------------------------------------------------------------
# Modules.


_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    """What Conv1d and Conv2d share: PyTorch's attributes, parameter shapes, initialisation
    and repr."""

    _spatial = 0
    _op = ""
    _transposed = False  # the weight is (in, out/groups, ...) and the op conv_transpose

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int, ...],
        stride: int | tuple[int, ...] = 1,
        padding: int | tuple[int, ...] | str = 0,
        dilation: int | tuple[int, ...] = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        name, n = type(self).__name__, self._spatial
        on = array.like(resolve_device(device, name))
        if padding_mode not in _PADDING_MODES:
            modes = ", ".join(map(repr, _PADDING_MODES))
            raise ValueError(f"{name}: padding_mode must be one of {modes}; got {padding_mode!r}")
        self.padding_mode = padding_mode
        in_channels = positive_int(in_channels, "in_channels", name)
        out_channels = positive_int(out_channels, "out_channels", name)
        groups = positive_int(groups, "groups", name)
        if in_channels % groups or out_channels % groups:
            raise ValueError(
                f"{name}: groups={groups} must divide both in_channels ({in_channels}) and "
                f"out_channels ({out_channels})"
            )
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = ntuple(kernel_size, n, name, "kernel_size")
        self.stride = ntuple(stride, n, name, "stride")
        self.dilation = ntuple(dilation, n, name, "dilation")
        for what, v in (
            ("kernel_size", self.kernel_size),
            ("stride", self.stride),
            ("dilation", self.dilation),
        ):
            check_positive(v, name, what)
        # checked now, kept as given: a tuple, or 'same' / 'valid' as PyTorch keeps it
        conv_padding(padding, self.kernel_size, self.stride, self.dilation, name)
        self.padding = padding if isinstance(padding, str) else ntuple(padding, n, name, "padding")
        dtype = array.as_dtype(dtype) or array.get_default_dtype()
        channels = (in_channels, out_channels) if self._transposed else (out_channels, in_channels)
        shape = (channels[0], channels[1] // groups, *self.kernel_size)
        self.weight = Parameter(xp.empty(shape, dtype=dtype, like=on))
        self.bias = Parameter(xp.empty(out_channels, dtype=dtype, like=on)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's default: weight kaiming_uniform_(a=sqrt(5)), i.e. uniform in
        +-1/sqrt(fan_in), and bias uniform in +-1/sqrt(fan_in), fan_in = in/groups * kernel."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1] * math.prod(self.kernel_size)
            bound = 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        padding: Any = self.padding
        if self.padding_mode != "zeros":  # pad the input itself (see pad), then no padding
            pairs = conv_padding(padding, self.kernel_size, self.stride, self.dilation, self._op)
            widths = [w for pair in reversed(pairs) for w in pair]  # the last dim first
            input, padding = pad_fn(as_tensor(input), widths, mode=self.padding_mode), 0
        return _conv(
            self._op,
            self._spatial,
            input,
            self.weight,
            self.bias,
            self.stride,
            padding,
            self.dilation,
            self.groups,
        )

    def extra_repr(self) -> str:
        n = self._spatial
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
        s += f"stride={self.stride}"
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        extra = getattr(self, "output_padding", (0,) * n)  # a transposed convolution's
        if extra != (0,) * n:
            s += f", output_padding={extra}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    """1-D convolution layer: (N, in_channels, L) -> (N, out_channels, Lo); weight
    (out_channels, in_channels/groups, k), bias (out_channels,)."""

    _spatial = 1
    _op = "Conv1d"


class Conv2d(_ConvNd):
    """2-D convolution layer: (N, in_channels, H, W) -> (N, out_channels, Ho, Wo); weight
    (out_channels, in_channels/groups, kh, kw), bias (out_channels,)."""

    _spatial = 2
    _op = "Conv2d"


class Conv3d(_ConvNd):
    """3-D convolution layer: (N, in_channels, D, H, W) -> (N, out_channels, Do, Ho, Wo);
    weight (out_channels, in_channels/groups, kd, kh, kw), bias (out_channels,)."""

    _spatial = 3
    _op = "Conv3d"


class _ConvTransposeNd(_ConvNd):
    """A transposed convolution layer (the gradient of a convolution in its input):
    each output size is (n - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding
    + 1; weight (in_channels, out_channels/groups, *kernel), bias (out_channels,).
    ``forward(input, output_size)`` picks output_padding to reach ``output_size``, as
    PyTorch's."""

    _transposed = True
    _fn: Any = None

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int, ...],
        stride: int | tuple[int, ...] = 1,
        padding: int | tuple[int, ...] = 0,
        output_padding: int | tuple[int, ...] = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: int | tuple[int, ...] = 1,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        name, n = type(self).__name__, self._spatial
        if padding_mode != "zeros":
            raise ValueError(
                f"{name}: only padding_mode 'zeros' is supported; got {padding_mode!r}"
            )
        if isinstance(padding, str):
            raise ValueError(
                f"{name}: padding must be an int or a tuple of {n} ints; got {padding!r}"
            )
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype)  # fmt: skip
        self.output_padding = _output_padding(name, output_padding, self.stride, self.dilation, n)

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        extra = self.output_padding
        if output_size is not None:
            extra = self._padding_for(as_tensor(input), list(output_size))
        padding: Any = self.padding  # a tuple: the constructor refuses 'same' and 'valid'
        return type(self)._fn(input, self.weight, self.bias, self.stride, padding, extra,
                              self.groups, self.dilation)  # fmt: skip

    def _padding_for(self, x: Tensor, wanted: list) -> tuple[int, ...]:
        """The output_padding that makes the output ``wanted`` (its last sizes)."""
        n = self._spatial
        wanted = [int(v) for v in wanted[-n:]]
        padding: Any = self.padding
        least = [
            (size - 1) * s - 2 * p + d * (k - 1) + 1
            for size, s, p, d, k in zip(x.shape[-n:], self.stride, padding, self.dilation,
                                        self.kernel_size, strict=True)
        ]  # fmt: skip
        extra = tuple(w - m for w, m in zip(wanted, least, strict=True))
        if any(
            e < 0 or e >= max(s, d)
            for e, s, d in zip(extra, self.stride, self.dilation, strict=True)
        ):
            top = [
                m + max(s, d) - 1 for m, s, d in zip(least, self.stride, self.dilation, strict=True)
            ]
            raise ValueError(
                f"{type(self).__name__}: output_size {tuple(wanted)} is out of reach for input "
                f"shape {x.shape}: each size must be from {tuple(least)} to {tuple(top)}"
            )
        return extra


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution layer: (N, in_channels, L) -> (N, out_channels, Lo)."""

    _spatial, _op, _fn = 1, "ConvTranspose1d", staticmethod(conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution layer: (N, in_channels, H, W) -> (N, out_channels, Ho, Wo),
    Ho = (H - 1) * stride - 2 * padding + dilation * (kh - 1) + output_padding + 1."""

    _spatial, _op, _fn = 2, "ConvTranspose2d", staticmethod(conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution layer: (N, in_channels, D, H, W) -> (N, out_channels, Do,
    Ho, Wo)."""

    _spatial, _op, _fn = 3, "ConvTranspose3d", staticmethod(conv_transpose3d)


__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "ConvTranspose3d",
]
