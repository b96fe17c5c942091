"""PyTorch's ``torch.accelerator``: the device-neutral way a script asks for a GPU. Here the
accelerator is CUDA where CuPy finds a GPU (see chainrule.cuda), and there is none otherwise."""

from __future__ import annotations

from typing import Any

from . import array, cuda


def is_available() -> bool:
    return cuda.is_available()


def current_accelerator(check_available: bool = False) -> Any:
    """``cr.device("cuda")`` where there is a GPU, else None."""
    return array.device("cuda") if is_available() else None


def device_count() -> int:
    return cuda.device_count() if is_available() else 0


def current_device_index() -> int:
    """The index of the current GPU (``cuda.current_device()``); -1 without one, as PyTorch."""
    return cuda.current_device() if is_available() else -1


def set_device_index(device: Any) -> None:
    """Make a GPU the current one (``cuda.set_device``)."""
    cuda.set_device(device)


def synchronize(device: Any = None) -> None:
    """Wait for the GPU's queued work (nothing to wait for on the CPU)."""
    if is_available():
        cuda.synchronize(device)


__all__ = ["current_accelerator", "current_device_index", "device_count", "is_available",
           "set_device_index", "synchronize"]  # fmt: skip
