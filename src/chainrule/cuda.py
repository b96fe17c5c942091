"""torch.cuda's names on a machine without CUDA, so a script's checks take the CPU branch.

``is_available()`` is False and ``device_count()`` 0. ``manual_seed`` and
``manual_seed_all`` seed nothing more: there is no CUDA generator, and ``cr.manual_seed``
already seeds every draw chainrule makes. ``empty_cache`` and ``synchronize`` have nothing to
do. Asking for a CUDA device itself (``current_device``, ``set_device``, ``get_device_name``)
is the CPU error of chainrule.devices. ``cr.cuda.amp`` holds PyTorch's deprecated
``torch.cuda.amp.GradScaler`` and ``autocast`` (see chainrule.amp).
"""

from __future__ import annotations

from typing import Any

from . import amp as _amp_module
from .devices import cpu_only


def is_available() -> bool:
    """False: chainrule computes on the CPU."""
    return False


def device_count() -> int:
    return 0


def is_initialized() -> bool:
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False


def manual_seed(seed: int) -> None:
    """Seeds nothing: there is no CUDA generator (``cr.manual_seed`` seeds chainrule's)."""


def manual_seed_all(seed: int) -> None:
    """Seeds nothing, as :func:`manual_seed`."""


def empty_cache() -> None:
    """Nothing to free: there is no CUDA memory."""


def synchronize(device: Any = None) -> None:
    """Nothing to wait for: every op has finished when it returns."""


def current_device() -> int:
    cpu_only("cuda.current_device", "a CUDA device")
    return 0  # unreachable: cpu_only raises


def set_device(device: Any) -> None:
    cpu_only("cuda.set_device", f"device {str(device)!r}")


def get_device_name(device: Any = None) -> str:
    cpu_only("cuda.get_device_name", "a CUDA device")
    return ""  # unreachable


def _cuda_grad_scaler(
    init_scale: float = 2.0**16,
    growth_factor: float = 2.0,
    backoff_factor: float = 0.5,
    growth_interval: int = 2000,
    enabled: bool = True,
) -> _amp_module.GradScaler:
    """``torch.cuda.amp.GradScaler(...)``: ``GradScaler("cuda", ...)``, so disabled here
    (with PyTorch's warning when enabled=True)."""
    return _amp_module.GradScaler(
        "cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled
    )


def _cuda_autocast(
    enabled: bool = True, dtype: Any = None, cache_enabled: bool = True
) -> _amp_module.autocast:
    """``torch.cuda.amp.autocast(...)``: ``autocast("cuda", ...)``; a pass-through when
    enabled=False, else the CPU error."""
    return _amp_module.autocast("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class amp:  # noqa: N801 (torch.cuda.amp, a namespace)
    """``torch.cuda.amp``: ``GradScaler`` and ``autocast`` for the 'cuda' device."""

    GradScaler = staticmethod(_cuda_grad_scaler)
    autocast = staticmethod(_cuda_autocast)
