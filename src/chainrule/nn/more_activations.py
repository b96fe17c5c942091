"""The hard and shrinking activations (hardswish, hardsigmoid, softshrink, hardshrink,
tanhshrink), the randomized leaky relu (rrelu), as functions and modules, and PyTorch's
functional in-place forms (relu_, elu_, ...); activation.py holds the common activations.
"""

from __future__ import annotations

from typing import Any

from .. import array, batching
from ..arguments import need_float, need_number
from ..autograd.node import named
from ..ops import elementwise, hard
from ..tensor import Tensor, as_tensor, where
from .activation import celu, elu, hardtanh, leaky_relu, maybe_inplace, relu, selu
from .activation import threshold as _threshold
from .module import Module


def _floating(input: Any, op: str) -> Tensor:
    x = as_tensor(input)
    need_float(x, op)
    return x


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * min(max(x + 3, 0), 6) / 6; the gradient is 0 up to -3, (2x + 3) / 6 strictly
    inside (-3, 3) and 1 from 3 on, as PyTorch's (the primitive ops/hard.py)."""
    return maybe_inplace(
        _floating(input, "hardswish"), inplace, "hardswish", lambda x: hard.Hardswish.apply(x)
    )


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(x + 3, 0), 6) / 6; the gradient is 1/6 (rounded to float32, as PyTorch's
    kernel has it) strictly inside (-3, 3), else 0."""
    return maybe_inplace(
        _floating(input, "hardsigmoid"),
        inplace,
        "hardsigmoid",
        lambda x: hard.Hardsigmoid.apply(x),
    )


def _check_lambd(lambd: float, op: str) -> None:
    if not lambd >= 0:
        raise ValueError(f"{op}: lambd must be at least 0; got {lambd}")


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x - lambd above lambd, x + lambd below -lambd, else 0; the gradient is 1 where
    |x| > lambd, else 0."""
    x = _floating(input, "softshrink")
    _check_lambd(lambd, "softshrink")
    return hard.Softshrink.apply(x, lambd=lambd)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x where |x| > lambd, else 0 (the gradient 1 there, else 0)."""
    return hard.Hardshrink.apply(_floating(input, "hardshrink"), lambd=lambd)


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x)."""
    x = as_tensor(input)
    need_number(x, "tanhshrink")
    return x - x.tanh()


def rrelu(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    inplace: bool = False,
) -> Tensor:
    """x where x > 0, else a * x: a drawn uniform in [lower, upper) for each element when
    training (tensor.uniform_ over the input's shape), else (lower + upper) / 2."""
    x = _floating(input, "rrelu")
    if lower > upper:
        raise ValueError(f"rrelu: lower must not exceed upper; got lower={lower} and upper={upper}")
    # either way one node, named and saving as PyTorch's rrelu_with_noise (in eval its noise
    # is memory it never writes: zeros here, made by _rrelu only for a node)
    call = dict(lower=lower, upper=upper, training=training, inplace=inplace)
    if not training:
        mean = (lower + upper) / 2
        return maybe_inplace(x, inplace, "rrelu", lambda t: _rrelu(leaky_relu(t, mean), call))
    if x._array.dtype == array.float16:  # PyTorch's CPU kernel has no float16 draws
        raise TypeError("rrelu: not implemented for float16 when training, as in PyTorch")
    slopes = _slopes(x, lower, upper)
    call["noise"] = slopes._array
    if batching.active():  # slopes batched as its draws are
        return maybe_inplace(x, inplace, "rrelu", lambda t: _rrelu(t * slopes, call))
    # x * noise (1 where x > 0), the noise a constant of the node: PyTorch's one edge, and
    # its gradient's node RreluWithNoiseBackwardBackward0, the gradient's leaky_relu's
    return maybe_inplace(x, inplace, "rrelu", lambda t: _rrelu(_times_noise(t, call), call))


def _times_noise(x: Tensor, call: dict) -> Tensor:
    """x * noise, one multiplication, as Piecewise's whole result (mask None: the noise is
    the slope everywhere, 1 where x > 0)."""
    noise = call["noise"]
    return elementwise.Piecewise.apply(
        x, mask=None, slope=noise, other=x._array * noise, whole=True, leaky=True
    )


def _slopes(x: Tensor, lower: float, upper: float) -> Tensor:
    """rrelu's noise as PyTorch's CPU kernel draws it: for each element x <= 0 in memory
    order (NaN is not one) a double uniform in [lower, upper), the bounds first rounded to
    the dtype's compute type and the draw then to the dtype, u * (upper - lower) + lower
    unfused; 1 elsewhere. Inside vmap, uniform_ over the shape, batched as its draws are."""
    if batching.active():
        noise = x.detach().new_empty(x.shape).uniform_(lower, upper)
        return where(x._array > 0, 1.0, noise)
    arr = x._array
    below = arr <= 0
    wide = array.host.float64 if arr.dtype == array.float64 else array.host.float32
    lo, hi = float(wide(lower)), float(wide(upper))
    drawn = array.generator(None, "rrelu").uniform(int(below.sum()), array.host.float64)
    drawn *= hi - lo
    drawn += lo
    slopes = array.xp.ones_like(arr)
    slopes[below] = array.from_host(drawn.astype(arr.dtype), arr)
    return Tensor._make(slopes)


def _rrelu(out: Tensor, call: dict) -> Tensor:
    """out, its node PyTorch's rrelu_with_noise's: rrelu_'s (in place) saving its result; in
    eval its noise, zeros, is made only where a node keeps it."""
    inplace = call.pop("inplace")
    fn = out.grad_fn
    if fn is not None and "noise" not in call:
        call["noise"] = array.xp.zeros_like(out._array)
    if inplace:
        if fn is not None:  # its rule reads the result, PyTorch's: a later write is refused
            fn.saves_out = True
        return named(out, "RreluWithNoiseBackward1", result=out._array, **call)
    return named(out, "RreluWithNoiseBackward0", **call)


# -- PyTorch's functional in-place forms ---------------------------------------------------


def relu_(input: Tensor) -> Tensor:
    return relu(input, inplace=True)


def elu_(input: Tensor, alpha: float = 1) -> Tensor:  # an int, as PyTorch's node keeps it
    return elu(input, alpha, inplace=True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input: Tensor, min_val: float = -1, max_val: float = 1) -> Tensor:  # ints, as
    return hardtanh(input, min_val, max_val, inplace=True)  # PyTorch's node keeps them


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return _threshold(input, threshold, value, inplace=True)


def rrelu_(
    input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False
) -> Tensor:
    return rrelu(input, lower, upper, training, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return celu(input, alpha, inplace=True)


def selu_(input: Tensor) -> Tensor:
    return selu(input, inplace=True)


# -- modules -------------------------------------------------------------------------------


def _inplace(inplace: bool) -> str:
    return "inplace=True" if inplace else ""


class Hardswish(Module):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return hardswish(input, self.inplace)

    def extra_repr(self) -> str:
        return _inplace(self.inplace)


class Hardsigmoid(Module):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return hardsigmoid(input, self.inplace)

    def extra_repr(self) -> str:
        return _inplace(self.inplace)


class Softshrink(Module):
    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Hardshrink(Module):
    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Tanhshrink(Module):
    def forward(self, input: Tensor) -> Tensor:
        return tanhshrink(input)


class RReLU(Module):
    """rrelu: random slopes in [lower, upper) when training, their mean in evaluation."""

    def __init__(
        self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False
    ) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Tensor) -> Tensor:
        return rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (
            ", inplace=True" if self.inplace else ""
        )
