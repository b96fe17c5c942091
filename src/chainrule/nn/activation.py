"""Activations, as functions and as modules: relu, leaky_relu, tanh, sigmoid, gelu, silu,
mish, softplus, softmax, log_softmax, elu, selu, celu, hardtanh, relu6, softsign, glu, softmin,
prelu, threshold. Each is composed from Tensor ops; the primitives are in ops/.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from .. import array, batching
from ..arguments import need_float, need_number, normalize_dim, resolve_device
from ..autograd.mode import no_grad
from ..autograd.node import named
from ..factories import full
from ..ops import elementwise, smooth, special
from ..ops import glu as glu_ops
from ..ops import prelu as prelu_ops
from ..tensor import Tensor, as_tensor
from .module import Module, Parameter

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0); relu'(0) = 0. With ``inplace``, written into the input (``relu_``)."""
    x = as_tensor(input)
    return x.relu_() if inplace else x.relu()


def maybe_inplace(
    x: Tensor, inplace: bool, op: str, compute: Callable[[Tensor], Tensor], **call: Any
) -> Tensor:
    """``compute(x)``; with ``inplace``, written into x and x returned, as PyTorch's ``op_``:
    x's version bumped, and x taking the result's node (Tensor._write records it). Where
    PyTorch's ``op_`` has a node of its own (``LeakyReluBackward1``, saving its result where
    the out-of-place node saves its input), the node takes that name, and keeps ``call``: the
    arguments that node saves as given (elu_'s alpha)."""
    if not inplace:
        return compute(x)
    name = INPLACE_NODES.get(op)
    if name is None:
        return x._write(op + "_", compute)
    return x._write(op + "_", lambda t: _in_place_node(compute(t), name, call))


# The activations whose in-place form PyTorch records as a node of its own
INPLACE_NODES = {
    "leaky_relu": "LeakyReluBackward1", "elu": "EluBackward1", "selu": "EluBackward1",
    "celu": "CeluBackward1", "threshold": "ThresholdBackward1",
}  # fmt: skip


def _in_place_node(out: Tensor, name: str, call: dict[str, Any]) -> Tensor:
    """out, its node (where one was recorded) named ``name``, keeping the call's arguments
    and the result, which PyTorch's in-place node saves (but threshold_'s): written in place
    again, backward and ``_saved_result`` refuse it, as PyTorch's."""
    fn = out.grad_fn
    if fn is None:
        return out
    # PyTorch's rule reads the result (threshold_'s, the input): a later write is refused
    fn.saves_out = name != "ThresholdBackward1"
    return named(out, name, **getattr(fn, "call", {}), **call, result=out._array)


def _floating(input: Any, op: str) -> Tensor:
    """The input of an activation PyTorch defines for floating tensors only."""
    x = as_tensor(input)
    need_float(x, op)
    return x


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x where x > 0, else negative_slope * x; the slope at 0 is negative_slope (as PyTorch)."""
    return maybe_inplace(
        _floating(input, "leaky_relu"),
        inplace,
        "leaky_relu",
        lambda x: elementwise.Piecewise.apply(
            x, mask=x._array > 0, slope=negative_slope, other=0.0, leaky=True
        ),
        negative_slope=negative_slope,
    )


def tanh(input: Tensor) -> Tensor:
    return as_tensor(input).tanh()


def sigmoid(input: Tensor) -> Tensor:
    return as_tensor(input).sigmoid()


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x * Phi(x), Phi the standard normal CDF: exact with 'none' (0.5 (1 + erf(x/sqrt 2))),
    or with 'tanh': 0.5 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh'; got {approximate!r}")
    return special.Gelu.apply(_floating(input, "gelu"), approximate=approximate)


def softplus(input: Tensor, beta: float = 1, threshold: float = 20) -> Tensor:
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold, as PyTorch's."""
    return smooth.Softplus.apply(_floating(input, "softplus"), beta=beta, threshold=threshold)


def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x)), with no exp overflowing for logits of any size, as PyTorch's."""
    return smooth.LogSigmoid.apply(_floating(input, "logsigmoid"))


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x) (the swish)."""
    return maybe_inplace(_floating(input, "silu"), inplace, "silu", smooth.Silu.apply)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x))."""
    return maybe_inplace(_floating(input, "mish"), inplace, "mish", smooth.Mish.apply)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x where x > 0, else alpha (exp(x) - 1), as PyTorch."""
    return maybe_inplace(
        _floating(input, "elu"),
        inplace,
        "elu",
        lambda x: smooth.Elu.apply(x, alpha=alpha, scale=1.0, input_scale=1.0),
        alpha=alpha, scale=1, input_scale=1,
    )  # fmt: skip


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * elu(x, alpha) with the self-normalising constants."""
    return maybe_inplace(
        _floating(input, "selu"),
        inplace,
        "selu",
        lambda x: smooth.Elu.apply(x, alpha=SELU_ALPHA, scale=SELU_SCALE, input_scale=1.0),
        alpha=SELU_ALPHA, scale=SELU_SCALE, input_scale=1,
    )  # fmt: skip


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x where x > 0, else alpha (exp(x / alpha) - 1)."""
    return maybe_inplace(
        _floating(input, "celu"),
        inplace,
        "celu",
        lambda x: smooth.Celu.apply(x, alpha=alpha),
        alpha=alpha,
    )


def hardtanh(
    input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:
    """x clamped to [min_val, max_val]; the gradient is 1 strictly inside, 0 at the bounds
    and beyond, as PyTorch's (clamp's is 1 at the bounds too)."""
    return _hardtanh(as_tensor(input), min_val, max_val, inplace, "hardtanh")


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return _hardtanh(as_tensor(input), 0, 6, inplace, "relu6")  # ints, as PyTorch's node keeps


def _hardtanh(x: Tensor, min_val: float, max_val: float, inplace: bool, op: str) -> Tensor:
    need_number(x, op)
    if x._array.dtype.kind == "u" and min(min_val, max_val) < 0:  # PyTorch casts the bounds
        raise ValueError(
            f"{op}: the bounds must fit the input's dtype, as in PyTorch; got min_val "
            f"{min_val} and max_val {max_val} for dtype {x.dtype}"
        )
    return maybe_inplace(x, inplace, op, lambda t: _clip(t, min_val, max_val))


def _clip(x: Tensor, min_val: float, max_val: float) -> Tensor:
    a = x._array
    inside = (a > min_val) & (a < max_val)
    clipped = array.xp.clip(a, min_val, max_val)  # a itself inside: nothing to select
    out = elementwise.Piecewise.apply(x, mask=inside, slope=0.0, other=clipped, whole=True)
    return named(out, "HardtanhBackward0", min_val=min_val, max_val=max_val)


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|)."""
    x = as_tensor(input)
    need_number(x, "softsign")
    return x / (x.abs() + 1.0)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b), a and b the two halves of dim (whose size must be even)."""
    x = _floating(input, "glu")
    if x.ndim == 0:
        raise ValueError(f"glu: a 0-d tensor has no dim {dim} to halve; got shape {x.shape}")
    d = normalize_dim(dim, x.ndim, "glu", x.shape)
    if x.shape[d] % 2:
        raise ValueError(f"glu: dim {dim} must have an even size; got shape {x.shape}")
    return named(glu_ops.Glu.apply(x, dim=d), "GluBackward0", dim=dim)  # dim as given


def _glu_batched(cls: Any, args: dict, batched: dict, size: int) -> Tensor:
    """vmap's rule: the whole batch in one call, the halved dim one further on (glu's only
    input is the batched one)."""
    return batching.call(cls, {**args, "dim": args["dim"] + 1})


batching.register({"Glu": _glu_batched})


def softmin(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    """softmax(-x); with dtype, -x cast to it first, as PyTorch."""
    x = as_tensor(input)
    need_number(x, "softmin")  # PyTorch negates first, which a bool refuses
    dim = _softmax_dim(dim, x.ndim, "softmin", _stacklevel)
    return _floating(_cast(-x, dtype), "softmin").softmax(dim)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """x where x > 0, else weight * x; weight holds one slope, or one per channel (dim 1;
    an input of under 2 dims has one channel), as PyTorch."""
    x = _floating(input, "prelu")
    if weight.dtype != x.dtype:  # as PyTorch: no silent cast of the input to the weight's
        raise TypeError(
            f"prelu: input and weight must have the same dtype; got {x.dtype} and {weight.dtype}"
        )
    channels = x.shape[1] if x.ndim > 1 else 1
    if weight.ndim > 1 or weight.numel() not in (1, channels):
        raise ValueError(
            f"prelu: weight must hold one slope or one per channel (dim 1 of the input, 1 for "
            f"an input of under 2 dims); got input shape {x.shape} and weight shape "
            f"{weight.shape}"
        )
    return prelu_ops.PreluKernel.apply(x, weight)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """value where x <= threshold, else x: a NaN is kept, as PyTorch's."""
    x = as_tensor(input)
    need_number(x, "threshold")
    return maybe_inplace(
        x,
        inplace,
        "threshold",
        lambda t: named(
            elementwise.Piecewise.apply(t, mask=_kept(t._array, threshold), slope=0.0, other=value),
            "ThresholdBackward0",
            threshold=threshold,
        ),
    )


def _kept(a: Any, threshold: float) -> Any:
    """Where threshold keeps x: not x <= threshold, which NaN is not (x > threshold drops it)."""
    kept = a <= threshold
    return array.xp.logical_not(kept, out=kept if kept.ndim else None)  # 0-d: a NumPy bool


def _softmax_dim(dim: int | None, ndim: int, op: str, stacklevel: int) -> int:
    if dim is not None:
        return dim
    # PyTorch's legacy rule when no dim is given (and its warning, at the caller's
    # ``_stacklevel`` frames up from the function)
    warnings.warn(
        f"{op}: implicit dimension choice is deprecated; pass dim",
        UserWarning,
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def _cast(x: Tensor, dtype: Any) -> Tensor:
    """The softmax family's ``dtype``: the input cast to it before the op."""
    return x if dtype is None else x.to(dtype)


def softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    """exp(x) / sum(exp(x)) along dim; with dtype, x cast to it first."""
    x = as_tensor(input)
    if dim is None:  # PyTorch's legacy choice (x.ndim is a property: read only here)
        dim = _softmax_dim(dim, x.ndim, "softmax", _stacklevel)
    return x.softmax(dim, dtype)


def log_softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    """x - logsumexp(x) along dim; with dtype, x cast to it first."""
    x = as_tensor(input)
    if dim is None:  # PyTorch's legacy choice (x.ndim is a property: read only here)
        dim = _softmax_dim(dim, x.ndim, "log_softmax", _stacklevel)
    return x.log_softmax(dim, dtype)


class ReLU(Module):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return relu(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input: Tensor) -> Tensor:
        return leaky_relu(input, self.negative_slope, self.inplace)

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
        return silu(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Mish(Module):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return mish(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LogSigmoid(Module):
    def forward(self, input: Tensor) -> Tensor:
        return logsigmoid(input)


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


def _inplace(inplace: bool) -> str:
    return ", inplace=True" if inplace else ""


class ELU(Module):
    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:
        return elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + _inplace(self.inplace)


class SELU(Module):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return selu(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class CELU(Module):
    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:
        return celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + _inplace(self.inplace)


class Hardtanh(Module):
    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        if max_val <= min_val:
            raise ValueError(f"Hardtanh: max_val must be above min_val; got {min_val}, {max_val}")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input: Tensor) -> Tensor:
        return hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + _inplace(self.inplace)


class ReLU6(Hardtanh):  # Hardtanh's forward: float bounds, which PyTorch's node keeps
    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Softsign(Module):
    def forward(self, input: Tensor) -> Tensor:
        return softsign(input)


class GLU(Module):
    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmin(Module):
    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return softmin(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class PReLU(Module):
    """prelu with learned slopes: one, or num_parameters (one per channel), each init."""

    def __init__(
        self, num_parameters: int = 1, init: float = 0.25, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__()
        device = resolve_device(device, "PReLU")
        self.num_parameters, self.init = num_parameters, init
        dtype = array.get_default_dtype() if dtype is None else dtype
        self.weight = Parameter(full((num_parameters,), init, dtype=dtype, device=device))

    def reset_parameters(self) -> None:
        with no_grad():
            self.weight.fill_(self.init)

    def forward(self, input: Tensor) -> Tensor:
        return prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Threshold(Module):
    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input: Tensor) -> Tensor:
        return threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" + _inplace(self.inplace)
