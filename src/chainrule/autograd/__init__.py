"""The autograd engine: grad modes (mode.py), the primitives' contract (primitive.py), the
backward pass (reference.py to read first, engine.py the real one), and PyTorch's custom
Function for users (function.py, where PyTorch has torch.autograd.function:
``cr.autograd.Function``, ``FunctionCtx``); the speed tricks live in fastpath/, the ops in
ops/. ``gradcheck`` and ``gradgradcheck`` (chainrule.testing's, above the Tensor) are named
here by the package's __init__, as PyTorch names them under torch.autograd."""

from collections.abc import Callable

from .. import fastpath
from . import forward_ad, functional
from .engine import Observer, backward, grad, sum_to_shape, toposort
from .function import Function, FunctionCtx, Variable, once_differentiable
from .mode import (
    detect_anomaly,
    enable_grad,
    inference_mode,
    is_anomaly_enabled,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_detect_anomaly,
    set_grad_enabled,
)

# chainrule.testing's, set by the package's __init__ (testing sits above the Tensor)
gradcheck: Callable[..., bool]
gradgradcheck: Callable[..., bool]

__all__ = [
    "Function",
    "FunctionCtx",
    "Observer",
    "Variable",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "fastpath",
    "forward_ad",
    "functional",
    "grad",
    "inference_mode",
    "is_anomaly_enabled",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "once_differentiable",
    "set_detect_anomaly",
    "set_grad_enabled",
    "sum_to_shape",
    "toposort",
]
