"""The Tensor class, for the layers below it: tensor/ registers it once, at import, so that
the array layer (a generator's state is handed out as a tensor) and the engine can make
tensors without importing tensor/ (imports flow downward)."""

from __future__ import annotations

from typing import Any

_Tensor: Any = None


def register_tensor_type(cls: type) -> None:
    """Tell the layers below tensor/ which class wraps arrays: tensor/ calls this once."""
    global _Tensor
    _Tensor = cls


def tensor_type() -> Any:
    """The Tensor class (see register_tensor_type)."""
    return _Tensor
