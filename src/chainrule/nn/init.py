"""Weight initialisation, in place on a tensor's array, drawn from chainrule's global
generator (seeded by cr.manual_seed) or the one given as ``generator=``. Formulas, defaults
and draws are PyTorch's: the same seed gives the same weights.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from .. import array
from ..autograd.mode import no_grad
from ..tensor import Tensor

_LINEAR = (
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "sigmoid",
)


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The factor that keeps activations' variance steady through the nonlinearity:
    1 for linear/conv/sigmoid, 5/3 for tanh, sqrt(2) for relu, sqrt(2/(1+slope^2)) for
    leaky_relu (slope ``param``, default 0.01), 3/4 for selu."""
    if nonlinearity in _LINEAR:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3.0
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"calculate_gain: negative_slope {param!r} is not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4.0
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}")


def _fans(tensor: Tensor, op: str) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight (out, in, *kernel): in/out times the kernel size."""
    if tensor.ndim < 2:
        raise ValueError(
            f"{op}: fan in and fan out need a tensor of at least 2 dims; got shape {tensor.shape}"
        )
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fill(tensor: Tensor, values: Any) -> Tensor:
    with no_grad():  # in place: whoever holds the tensor sees the new values
        return tensor.copy_(values)


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    with no_grad():  # in place: whoever holds the tensor sees the new values
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator: Any = None,
) -> Tensor:
    """Normal(mean, std^2) truncated to [a, b], by rejection as PyTorch's: where [a, b]
    holds more than 30% of the mass, normal draws, those outside drawn again (a whole
    tensor of draws each round); else uniform candidates in [a, b], each kept when
    log(u) of a second uniform u is at most its log density below the peak."""
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(
            "trunc_normal_: mean is more than 2 std from [a, b]; the distribution of values "
            "may be incorrect",
            stacklevel=2,
        )

    def cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    host, t = array.host, tensor.detach()
    dtype = t._array.dtype
    with no_grad():
        if cdf((b - mean) / std) - cdf((a - mean) / std) > 0.3:
            lo, hi = (float(host.asarray(v, dtype)) for v in (a, b))
            result = array.to_host(t.normal_(mean, std, generator=generator)._array).copy()
            while (out := (result < lo) | (result > hi)).any():
                again = array.to_host(t.normal_(mean, std, generator=generator)._array)
                result = host.where(out, again, result)
            return tensor.copy_(array.from_host(result, t._array))
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2

        def draw() -> tuple[Any, Any]:
            """Candidates in [a, b], and where log(u) exceeds their log density."""
            cand = array.to_host(t.uniform_(a, b, generator=generator)._array).copy()
            z = (cand - host.asarray(mean, dtype)) / host.asarray(std, dtype)
            log_pdf = z * z * host.asarray(-0.5, dtype) - host.asarray(log_peak, dtype)
            u = array.to_host(t.uniform_(generator=generator)._array)
            return cand, host.log(u) > log_pdf

        result, pending = draw()
        while pending.any():
            cand, rejected = draw()
            result = host.where(pending, cand, result)
            pending = host.where(pending, rejected, pending)
        return tensor.copy_(array.from_host(result, t._array))


def constant_(tensor: Tensor, val: float) -> Tensor:
    return _fill(tensor, val)


def zeros_(tensor: Tensor) -> Tensor:
    return _fill(tensor, 0)


def ones_(tensor: Tensor) -> Tensor:
    return _fill(tensor, 1)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio)."""
    fan_in, fan_out = _fans(tensor, "xavier_uniform_")
    a = math.sqrt(3.0) * (gain * math.sqrt(2.0 / (fan_in + fan_out)))  # rounded as PyTorch's
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _fans(tensor, "xavier_normal_")
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str, op: str) -> float:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"{op}: mode must be 'fan_in' or 'fan_out'; got {mode!r}")
    fan_in, fan_out = _fans(tensor, op)
    fan = fan_in if mode == "fan_in" else fan_out
    if fan == 0:
        return 0.0  # an empty weight: nothing to draw
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Any = None,
) -> Tensor:
    """U(-bound, bound) with bound = gain * sqrt(3 / fan) (He et al.); ``a`` is the
    leaky_relu slope the gain is computed for."""
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity, "kaiming_uniform_")
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Any = None,
) -> Tensor:
    """N(0, std^2) with std = gain / sqrt(fan)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity, "kaiming_normal_")
    return normal_(tensor, 0.0, std, generator)
