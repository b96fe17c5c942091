"""torch.backends' switches and ``cr.compile``: accepted as the no-ops they are on a CPU.

``cr.backends.cudnn.benchmark``, ``.deterministic``, ``.allow_tf32`` and
``cr.backends.cuda.matmul.allow_tf32`` can be read and set, as scripts do before training;
nothing reads them, as there is no cuDNN or CUDA. ``cr.backends.mps.is_available()`` and
``cr.backends.cudnn.is_available()`` are False. ``cr.set_float32_matmul_precision`` keeps
the setting (``get_float32_matmul_precision`` returns it); NumPy's matmul is float32 in any
case. ``cr.compile(model)`` returns the model unchanged: chainrule runs eagerly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = [
    "compile",
    "cuda",
    "cudnn",
    "get_float32_matmul_precision",
    "mps",
    "set_float32_matmul_precision",
]


class _Cudnn:
    """``torch.backends.cudnn``: flags a script may set; there is no cuDNN to read them."""

    def __init__(self) -> None:
        self.enabled = True
        self.benchmark = False
        self.deterministic = False
        self.allow_tf32 = True

    def is_available(self) -> bool:
        return False

    def version(self) -> None:
        return None


class _Matmul:
    def __init__(self) -> None:
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True


class _Cuda:
    """``torch.backends.cuda``: ``matmul.allow_tf32`` and friends, set and never read."""

    def __init__(self) -> None:
        self.matmul = _Matmul()

    def is_built(self) -> bool:
        return False


class _Mps:
    """``torch.backends.mps``: no MPS here."""

    def is_available(self) -> bool:
        return False

    def is_built(self) -> bool:
        return False


cudnn = _Cudnn()
cuda = _Cuda()
mps = _Mps()

_PRECISIONS = ("highest", "high", "medium")
_precision = "highest"


def set_float32_matmul_precision(precision: str) -> None:
    """PyTorch's switch for TF32 and bfloat16 matmuls: kept, read by nothing (NumPy's
    float32 matmul is full float32)."""
    global _precision
    if precision not in _PRECISIONS:
        raise ValueError(
            f"set_float32_matmul_precision: expected one of {', '.join(_PRECISIONS)}; got "
            f"{precision!r}"
        )
    _precision = precision


def get_float32_matmul_precision() -> str:
    return _precision


def compile(model: Callable | None = None, **options: Any) -> Any:  # noqa: A001 (torch's name)
    """``torch.compile``: returns ``model`` unchanged (chainrule runs eagerly, and its
    options, ``mode``, ``fullgraph``, ``backend`` and the rest, change nothing). Without a
    model, a decorator that does the same."""
    if model is None:
        return lambda fn: fn
    return model
