"""Weight initialisation, in place on a tensor's array, drawn from chainrule's global
generator (seeded by cr.manual_seed) or the one given as ``generator=``. Formulas and
defaults are PyTorch's.
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
    values = array.generator(generator, "uniform_").uniform(a, b, tensor.shape)
    return _fill(tensor, array.from_host(values, tensor._array))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    values = array.generator(generator, "normal_").normal(mean, std, tensor.shape)
    return _fill(tensor, array.from_host(values, tensor._array))


def _erfinv(y: Any) -> Any:
    """The inverse of erf on (-1, 1), in float64: Giles' approximation ("Approximating the
    erfinv function", 2010), then two Newton steps on erf (the Erf op's), which take it to
    float64's precision."""
    xp = array.xp
    y = y.astype(array.float64)
    with array.errstate(divide="ignore"):
        w = -xp.log((1.0 - y) * (1.0 + y))
    central, tail = w - 2.5, xp.sqrt(w) - 3.0
    p_c = xp.full_like(y, 2.81022636e-08)
    for c in (
        3.43273939e-07,
        -3.5233877e-06,
        -4.39150654e-06,
        0.00021858087,
        -0.00125372503,
        -0.00417768164,
        0.246640727,
        1.50140941,
    ):
        p_c = c + p_c * central
    p_t = xp.full_like(y, -0.000200214257)
    for c in (
        0.000100950558,
        0.00134934322,
        -0.00367342844,
        0.00573950773,
        -0.0076224613,
        0.00943887047,
        1.00167406,
        2.83297682,
    ):
        p_t = c + p_t * tail
    x = xp.where(w < 5.0, p_c, p_t) * y
    inside = xp.abs(y) < 1  # erfinv(+-1) is +-inf, and NaN stays NaN: no Newton step there
    xi, yi = x[inside], y[inside]
    for _ in range(2):
        err = Tensor._make(xi).erf()._array - yi
        xi = xi - err / (2.0 / math.sqrt(math.pi) * xp.exp(-xi * xi))
    x[inside] = xi
    return x


def trunc_normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator: Any = None,
) -> Tensor:
    """Normal(mean, std^2) truncated to [a, b], as PyTorch's: a uniform draw between the
    CDF's values at a and b, through the inverse CDF (erfinv), clamped to [a, b]."""
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(
            "trunc_normal_: mean is more than 2 std from [a, b]; the distribution of values "
            "may be incorrect",
            stacklevel=2,
        )

    def cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    lo, hi = cdf((a - mean) / std), cdf((b - mean) / std)
    u = array.generator(generator, "trunc_normal_").uniform(2 * lo - 1, 2 * hi - 1, tensor.shape)
    u = u.astype(tensor.dtype).astype(array.float64)  # drawn in the tensor's dtype, as PyTorch
    u = array.from_host(u, tensor._array)
    values = _erfinv(u) * (std * math.sqrt(2.0)) + mean
    return _fill(tensor, array.xp.clip(values, a, b))


def constant_(tensor: Tensor, val: float) -> Tensor:
    return _fill(tensor, val)


def zeros_(tensor: Tensor) -> Tensor:
    return _fill(tensor, 0)


def ones_(tensor: Tensor) -> Tensor:
    return _fill(tensor, 1)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio)."""
    fan_in, fan_out = _fans(tensor, "xavier_uniform_")
    a = gain * math.sqrt(6.0 / (fan_in + fan_out))
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
