"""Convolution and pooling for users: the functional forms (argument checks, 1-D as 2-D,
average pools composed from convolution and matmul) and their modules. The differentiable
primitives live in ops/conv.py.
"""

from __future__ import annotations

import math
from typing import Any

from .. import array
from ..arguments import is_int, need_float, need_number, positive_int, resolve_device
from ..functions import pad
from ..ops import conv as conv_ops
from ..tensor import Tensor, as_tensor, matmul
from . import init
from .module import Module, Parameter

xp = array.xp

# ---------------------------------------------------------------------------------------
# Argument normalisation, shared by the functions and the modules.


def _tuple(value: Any, n: int, op: str, name: str) -> tuple[int, ...]:
    """An int or a length-n sequence of ints, as a tuple of n ints."""
    if is_int(value):
        return (int(value),) * n
    if isinstance(value, (tuple, list)) and len(value) == n and all(map(is_int, value)):
        return tuple(int(v) for v in value)
    raise TypeError(f"{op}: {name} must be an int or a tuple of {n} ints; got {value!r}")


def _positive(values: tuple[int, ...], op: str, name: str) -> None:
    if any(v <= 0 for v in values):
        raise ValueError(f"{op}: {name} must be positive; got {values}")


def _batched(x: Any, spatial: int, op: str) -> tuple[Tensor, bool]:
    """x as a batched tensor (N, C, *spatial) and whether it came unbatched."""
    x = as_tensor(x)
    if x.ndim not in (spatial + 1, spatial + 2):
        raise ValueError(
            f"{op}: expected a {spatial + 1}-D (unbatched) or {spatial + 2}-D (batched) input; "
            f"got shape {x.shape}"
        )
    integers = _INTEGERS.get(op, ())
    if integers == "all" or x.dtype in integers:
        need_number(x, op)
    else:
        need_float(x, op)
    return (x.unsqueeze(0), True) if x.ndim == spatial + 1 else (x, False)


# the integer dtypes PyTorch's CPU kernels take, by op (the others: floating ones only)
_INTEGERS: dict[str, Any] = {"conv1d": "all", "conv2d": "all", "max_pool2d": "all"}
_INTEGERS["conv_transpose2d"] = _INTEGERS["avg_pool2d"] = (array.int64,)


def _conv_padding(
    padding: Any, kernel: tuple, stride: tuple, dilation: tuple, op: str
) -> tuple[tuple[int, int], ...]:
    """(before, after) per spatial axis; 'same' splits odd totals with the extra one after,
    as PyTorch does."""
    if isinstance(padding, str):
        if padding == "valid":
            return tuple((0, 0) for _ in kernel)
        if padding != "same":
            raise ValueError(
                f"{op}: padding must be 'valid', 'same', an int or a tuple; got {padding!r}"
            )
        if any(s != 1 for s in stride):
            raise ValueError(f"{op}: padding='same' needs stride 1; got stride {stride}")
        totals = [d * (k - 1) for k, d in zip(kernel, dilation, strict=True)]
        return tuple((t // 2, t - t // 2) for t in totals)
    pad = _tuple(padding, len(kernel), op, "padding")
    if any(p < 0 for p in pad):
        raise ValueError(f"{op}: padding must be non-negative; got {pad}")
    return tuple((p, p) for p in pad)


def _check_fits(
    op: str, x: Tensor, kernel: tuple, dilation: tuple, padding: tuple, got: str
) -> None:
    """The (dilated) kernel must fit in the padded input; ``got`` names the shapes given."""
    padded = tuple(n + lo + hi for n, (lo, hi) in zip(x.shape[2:], padding, strict=True))
    span = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation, strict=True))
    if any(s > n for s, n in zip(span, padded, strict=True)):
        raise ValueError(
            f"{op}: the kernel {tuple(kernel)} (spanning {span} with dilation) is larger than "
            f"the padded input {padded}; got {got} and padding {padding}"
        )


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
    x, unbatched = _batched(input, spatial, op)
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
    stride = _tuple(stride, spatial, op, "stride")
    dilation = _tuple(dilation, spatial, op, "dilation")
    _positive(stride, op, "stride")
    _positive(dilation, op, "dilation")
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
    pad = _conv_padding(padding, kernel, stride, dilation, op)
    _check_fits(op, x, kernel, dilation, pad, f"input shape {given}, weight shape {weight.shape}")
    if spatial == 1:  # a 1-D convolution is a 2-D one over a height of 1
        n, _, length = x.shape
        x = x.reshape(n, c_in, 1, length)  # (N, C, 1, L)
        weight = weight.reshape(c_out, c_group, 1, kernel[0])  # (O, C/g, 1, k)
        stride, dilation, pad = (1, *stride), (1, *dilation), ((0, 0), *pad)
    out = conv_ops.Conv2d.apply(
        x, weight, bias, stride=stride, padding=pad, dilation=dilation, groups=groups
    )
    if spatial == 1:
        out = out.reshape(out.shape[0], c_out, out.shape[3])  # (N, O, 1, Lo) -> (N, O, Lo)
    return out.squeeze(0) if unbatched else out


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
    extra = _tuple(given, n, op, "output_padding")
    bad = [e for e, s, d in zip(extra, stride, dilation, strict=True) if e < 0 or e >= max(s, d)]
    if bad:
        raise ValueError(
            f"{op}: output_padding must be non-negative and smaller than stride or dilation; "
            f"got output_padding {extra}, stride {stride} and dilation {dilation}"
        )
    return extra


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
    op = "conv_transpose2d"
    x, unbatched = _batched(input, 2, op)
    weight = as_tensor(weight)
    if weight.ndim != 4:
        raise ValueError(
            f"{op}: weight must have 4 dims (in_channels, out_channels/groups, kh, kw); got "
            f"weight shape {weight.shape}"
        )
    bias = None if bias is None else as_tensor(bias)
    dtypes = [t.dtype for t in (x, weight, bias) if t is not None]
    if len(set(dtypes)) != 1:
        raise TypeError(f"{op}: input, weight and bias must share one dtype; got {dtypes}")
    strides, dilations = _tuple(stride, 2, op, "stride"), _tuple(dilation, 2, op, "dilation")
    _positive(strides, op, "stride")
    _positive(dilations, op, "dilation")
    if isinstance(padding, str):
        raise ValueError(f"{op}: padding must be an int or a tuple of 2 ints; got {padding!r}")
    pad = _conv_padding(padding, weight.shape[2:], strides, dilations, op)
    extra = _output_padding(op, output_padding, strides, dilations, 2)
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
    out = conv_ops.ConvTranspose2d.apply(
        x, weight, size=size, stride=strides, padding=pad, dilation=dilations, groups=groups
    )
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1)
    return out.squeeze(0) if unbatched else out


# ---------------------------------------------------------------------------------------
# Pooling.


def _pool_tuple(value: Any, op: str, name: str) -> tuple[int, ...]:
    """A pool's pair of ints: an int, a 1-tuple holding it (as PyTorch's pools take it), or
    a 2-tuple."""
    if isinstance(value, (tuple, list)) and len(value) == 1:
        value = value[0]
    return _tuple(value, 2, op, name)


def _pool_args(
    op: str,
    x: Tensor,
    unbatched: bool,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    dilation: Any = 1,
    ceil_mode: bool = False,
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[tuple[int, int], ...]]:
    """kernel, stride, dilation and the padding ((top, bottom), (left, right)) of a pool.
    With ``ceil_mode`` the bottom and right padding grow so that the windows PyTorch adds
    (rounding the output size up; the last must start inside the input or the left
    padding) fit: the growth holds nothing (-inf for max, 0 and not counted for average)."""
    kernel = _pool_tuple(kernel_size, op, "kernel_size")
    stride = kernel if stride is None or stride in ((), []) else _pool_tuple(stride, op, "stride")
    pad = _pool_tuple(padding, op, "padding")
    dil = _pool_tuple(dilation, op, "dilation")
    _positive(kernel, op, "kernel_size")
    _positive(stride, op, "stride")
    _positive(dil, op, "dilation")
    if any(p < 0 or p > k // 2 for p, k in zip(pad, kernel, strict=True)):  # as PyTorch,
        raise ValueError(  # whatever the dilation
            f"{op}: padding must be between 0 and half the kernel size; got padding {pad} and "
            f"kernel_size {kernel}"
        )
    span = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dil, strict=True))
    padding2 = tuple((p, p) for p in pad)
    _check_fits(op, x, kernel, dil, padding2, f"input shape {x.shape[unbatched:]}")
    if ceil_mode:
        grown = []
        for n, s, p, st in zip(x.shape[2:], span, pad, stride, strict=True):
            out = -(-(n + 2 * p - s) // st) + 1  # rounded up
            if (out - 1) * st >= n + p:  # the last window would start in the right padding
                out -= 1
            grown.append((p, p + max(0, (out - 1) * st + s - (n + 2 * p))))
        padding2 = tuple(grown)
    return kernel, stride, dil, padding2


def max_pool2d(
    input: Tensor,
    kernel_size: int | tuple[int, int],
    stride: int | tuple[int, int] | None = None,
    padding: int | tuple[int, int] = 0,
    dilation: int | tuple[int, int] = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """The max of each kernel_size window (stride defaults to the kernel; dilation spaces the
    window's elements), padding with -inf; the gradient goes to the first maximum of each
    window, as PyTorch's. With ``return_indices``, also that maximum's flat index in its
    input plane (row * W + column), an int64 Tensor of the output's shape."""
    x, unbatched = _batched(input, 2, "max_pool2d")
    kernel, step, dil, pad = _pool_args(
        "max_pool2d", x, unbatched, kernel_size, stride, padding, dilation, ceil_mode
    )
    pooled = conv_ops.MaxPool2d.apply(x, kernel=kernel, stride=step, padding=pad, dilation=dil)
    out = pooled.squeeze(0) if unbatched else pooled
    if not return_indices:
        return out
    node: Any = pooled.grad_fn  # a MaxPool2d; it keeps the winners' offsets only when it records
    if node is not None:
        col_arg, row_arg = node.col_arg, node.row_arg
    else:
        _, col_arg, row_arg = conv_ops.pool_max(x._array, kernel, step, pad, dil)
    idx = conv_ops.pool_indices(col_arg, row_arg, x.shape[2:], step, pad, dil)
    return out, Tensor._make(idx[0] if unbatched else idx)


def avg_pool2d(
    input: Tensor,
    kernel_size: int | tuple[int, int],
    stride: int | tuple[int, int] | None = None,
    padding: int | tuple[int, int] = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """The mean of each kernel_size window: its sum over the window's size, padded zeros
    counted (``count_include_pad``, PyTorch's default) or over the input elements it holds
    only; ``divisor_override`` divides every sum by that number instead. An int64 input's
    sums are divided toward zero, in integers, as PyTorch's.

    Composite: a convolution of every channel alone with a constant kernel (1/(kh*kw) where
    every window has the same divisor, else 1, then divided by each window's divisor).
    """
    op = "avg_pool2d"
    x, unbatched = _batched(input, 2, op)
    kernel, step, _, pad = _pool_args(op, x, unbatched, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None and not (is_int(divisor_override) and divisor_override < 0):
        positive_int(divisor_override, "divisor_override", op)  # a negative one divides too
    n, c, h, w = x.shape
    if not array.is_floating(x.dtype):  # exact sums (an integer product), then divided
        ones = Tensor._make(xp.ones((1, 1, *kernel), dtype=x.dtype, like=x._array))
        sums = conv_ops.Conv2d.apply(
            x.reshape(n * c, 1, h, w), ones, None, stride=step, padding=pad, dilation=(1, 1),
            groups=1,
        )  # fmt: skip
        sums = sums.reshape(n, c, *sums.shape[2:])  # (N*C, 1, Ho, Wo) -> (N, C, Ho, Wo)
        if divisor_override is not None:
            by: Any = divisor_override
        else:
            counts = _avg_divisors(x.shape[2:], kernel, step, pad, count_include_pad)
            by = Tensor._make(array.from_host(counts.astype(x._array.dtype), x._array))
        out = sums.div(by, rounding_mode="trunc")
        return out.squeeze(0) if unbatched else out
    if divisor_override is not None:
        uniform: float | None = float(divisor_override)
    else:
        divisor = _avg_divisors(x.shape[2:], kernel, step, pad, count_include_pad)
        first = divisor.reshape(-1)[0]
        uniform = float(first) if bool((divisor == first).all()) else None
    weight = 1.0 if uniform is None else 1.0 / uniform
    kernel_arr = Tensor._make(xp.full((1, 1, *kernel), weight, dtype=x.dtype, like=x._array))
    planes = x.reshape(n * c, 1, h, w)  # every channel its own image
    out = conv_ops.Conv2d.apply(
        planes, kernel_arr, None, stride=step, padding=pad, dilation=(1, 1), groups=1
    )
    out = out.reshape(n, c, *out.shape[2:])  # (N*C, 1, Ho, Wo) -> (N, C, Ho, Wo)
    if uniform is None:
        out = out * Tensor._make(array.from_host((1.0 / divisor).astype(x.dtype), x._array))
    return out.squeeze(0) if unbatched else out


def _avg_divisors(size: tuple, kernel: tuple, stride: tuple, padding: tuple, with_pad: bool) -> Any:
    """(Ho, Wo): what avg_pool2d divides each window's sum by, PyTorch's rule: the window
    clipped to the padded input (``with_pad``) or to the input itself."""
    counts = []
    n_outs = conv_ops.out_hw(size, kernel, stride, (1, 1), padding)
    for n, k, s, (lo, _), n_out in zip(size, kernel, stride, padding, n_outs, strict=True):
        start = array.host.arange(n_out) * s - lo  # on the host: a constant of the shapes
        end = array.host.minimum(start + k, n + lo)  # grown padding (ceil_mode) never counts
        if not with_pad:
            start, end = array.host.maximum(start, 0), array.host.minimum(end, n)
        counts.append(end - start)
    return array.host.outer(counts[0], counts[1]).astype(float)


def _adaptive_matrix(n_in: int, n_out: int, like: Any) -> Tensor:
    """(n_out, n_in): row i averages input positions floor(i*n_in/n_out) up to
    ceil((i+1)*n_in/n_out), PyTorch's adaptive windows; of like's dtype and device."""
    i = xp.arange(n_out, like=like)
    start = (i * n_in) // n_out
    end = -((-(i + 1) * n_in) // n_out)
    j = xp.arange(n_in, like=like)
    inside = (j >= start[:, None]) & (j < end[:, None])  # (n_out, n_in)
    return Tensor._make((inside / (end - start)[:, None]).astype(like.dtype))


def adaptive_avg_pool2d(input: Tensor, output_size: int | tuple[int | None, int | None]) -> Tensor:
    """Average pooling to a fixed output size (None keeps that axis' input size).

    Composite: a window mean is separable, so out = A_h @ x @ A_w^T with A the averaging
    matrices of each axis; two matmuls, exact gradients of any order.
    """
    x, unbatched = _batched(input, 2, "adaptive_avg_pool2d")
    if 0 in x.shape[2:]:  # a mean over no values: an error, not zeros
        raise ValueError(
            f"adaptive_avg_pool2d: the input's spatial dims must not be empty; got shape "
            f"{input.shape}"
        )
    given: Any = output_size
    if isinstance(given, (tuple, list)) and len(given) == 2:
        given = tuple(n if s is None else s for s, n in zip(given, x.shape[2:], strict=True))
    size = _tuple(given, 2, "adaptive_avg_pool2d", "output_size")
    _positive(size, "adaptive_avg_pool2d", "output_size")
    a_h = _adaptive_matrix(x.shape[2], size[0], x._array)  # (Ho, H)
    a_w = _adaptive_matrix(x.shape[3], size[1], x._array)  # (Wo, W)
    out = matmul(a_h, matmul(x, a_w.mT))  # (N, C, H, Wo) -> (N, C, Ho, Wo)
    return out.squeeze(0) if unbatched else out


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
        self.kernel_size = _tuple(kernel_size, n, name, "kernel_size")
        self.stride = _tuple(stride, n, name, "stride")
        self.dilation = _tuple(dilation, n, name, "dilation")
        for what, v in (
            ("kernel_size", self.kernel_size),
            ("stride", self.stride),
            ("dilation", self.dilation),
        ):
            _positive(v, name, what)
        # checked now, kept as given: a tuple, or 'same' / 'valid' as PyTorch keeps it
        _conv_padding(padding, self.kernel_size, self.stride, self.dilation, name)
        self.padding = padding if isinstance(padding, str) else _tuple(padding, n, name, "padding")
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
            pairs = _conv_padding(padding, self.kernel_size, self.stride, self.dilation, self._op)
            widths = [w for pair in reversed(pairs) for w in pair]  # the last dim first
            input, padding = pad(as_tensor(input), widths, mode=self.padding_mode), 0
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


class ConvTranspose2d(_ConvNd):
    """2-D transposed convolution layer (the gradient of Conv2d in its input):
    (N, in_channels, H, W) -> (N, out_channels, Ho, Wo), Ho = (H - 1) * stride - 2 * padding
    + dilation * (kh - 1) + output_padding + 1; weight (in_channels, out_channels/groups, kh,
    kw), bias (out_channels,). ``forward(input, output_size)`` picks output_padding to reach
    ``output_size``, as PyTorch's."""

    _spatial = 2
    _op = "ConvTranspose2d"
    _transposed = True

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int, int],
        stride: int | tuple[int, int] = 1,
        padding: int | tuple[int, int] = 0,
        output_padding: int | tuple[int, int] = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: int | tuple[int, int] = 1,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if padding_mode != "zeros":
            raise ValueError(
                f"ConvTranspose2d: only padding_mode 'zeros' is supported; got {padding_mode!r}"
            )
        if isinstance(padding, str):
            raise ValueError(
                f"ConvTranspose2d: padding must be an int or a tuple of 2 ints; got {padding!r}"
            )
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype)  # fmt: skip
        self.output_padding = _output_padding(
            "ConvTranspose2d", output_padding, self.stride, self.dilation, 2
        )

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        extra = self.output_padding
        if output_size is not None:
            extra = self._padding_for(as_tensor(input), list(output_size))
        padding: Any = self.padding  # a tuple: the constructor refuses 'same' and 'valid'
        return conv_transpose2d(input, self.weight, self.bias, self.stride, padding, extra,
                                self.groups, self.dilation)  # fmt: skip

    def _padding_for(self, x: Tensor, wanted: list) -> tuple[int, ...]:
        """The output_padding that makes the output ``wanted`` (its last two sizes)."""
        wanted = [int(n) for n in wanted[-2:]]
        padding: Any = self.padding
        least = [
            (n - 1) * s - 2 * p + d * (k - 1) + 1
            for n, s, p, d, k in zip(x.shape[-2:], self.stride, padding, self.dilation,
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
                f"ConvTranspose2d: output_size {tuple(wanted)} is out of reach for input shape "
                f"{x.shape}: each size must be from {tuple(least)} to {tuple(top)}"
            )
        return extra


class _Pool2d(Module):
    def __init__(self, kernel_size: Any, stride: Any, padding: Any) -> None:
        super().__init__()
        layer = type(self).__name__  # checked here, not at the first forward
        _positive(_pool_tuple(kernel_size, layer, "kernel_size"), layer, "kernel_size")
        if stride is not None and stride not in ((), []):  # () is the kernel_size, as None
            _positive(_pool_tuple(stride, layer, "stride"), layer, "stride")
        if any(p < 0 for p in _pool_tuple(padding, layer, "padding")):
            raise ValueError(f"{layer}: padding must be non-negative; got {padding!r}")
        # stored as given (an int stays an int), as PyTorch, so the repr matches
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding = padding

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxPool2d(_Pool2d):
    """The max of each window (see ``max_pool2d``); with ``return_indices``, forward returns
    (output, indices)."""

    def __init__(
        self,
        kernel_size: int | tuple[int, int],
        stride: int | tuple[int, int] | None = None,
        padding: int | tuple[int, int] = 0,
        dilation: int | tuple[int, int] = 1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__(kernel_size, stride, padding)
        self.dilation, self.return_indices, self.ceil_mode = dilation, return_indices, ceil_mode

    def forward(self, input: Tensor) -> Any:
        return max_pool2d(
            input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
            self.return_indices,
        )  # fmt: skip

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, dilation={self.dilation}, ceil_mode={self.ceil_mode}"


class AvgPool2d(_Pool2d):
    """The mean of each window (see ``avg_pool2d``)."""

    def __init__(
        self,
        kernel_size: int | tuple[int, int],
        stride: int | tuple[int, int] | None = None,
        padding: int | tuple[int, int] = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:
        super().__init__(kernel_size, stride, padding)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return avg_pool2d(
            input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
            self.count_include_pad, self.divisor_override,
        )  # fmt: skip


class AdaptiveAvgPool2d(Module):
    """Average pooling to a fixed output size (see ``adaptive_avg_pool2d``)."""

    def __init__(self, output_size: int | tuple[int | None, int | None]) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


__all__ = [
    "conv1d",
    "conv2d",
    "max_pool2d",
    "avg_pool2d",
    "adaptive_avg_pool2d",
    "Conv1d",
    "Conv2d",
    "MaxPool2d",
    "AvgPool2d",
    "AdaptiveAvgPool2d",
]
