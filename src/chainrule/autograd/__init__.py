"""The autograd engine: grad modes (mode.py), the Function contract (function.py), the
backward pass (reference.py to read first, engine.py the real one); the speed tricks live in
fastpath/, the ops in ops/."""

from .. import fastpath
from .engine import Observer, backward, grad, sum_to_shape, toposort
from .function import Function
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

__all__ = [
    "Function",
    "Observer",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "fastpath",
    "grad",
    "inference_mode",
    "is_anomaly_enabled",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "set_detect_anomaly",
    "set_grad_enabled",
    "sum_to_shape",
    "toposort",
]
