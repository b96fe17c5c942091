"""torch.cuda's names: CUDA through CuPy where it finds a GPU, and the CPU branch elsewhere.

``is_available()`` is True when the backend has a CUDA array module (CuPy with a GPU, or the
strict stand-in that tests use in its place); ``device_count()`` counts its GPUs.
``manual_seed`` and ``manual_seed_all`` seed nothing more: every draw chainrule makes, for
CUDA tensors too, is taken on the host from the one generator ``cr.manual_seed`` seeds, then
moved. ``synchronize`` waits for the GPU's queued work; ``empty_cache`` hands CuPy's pooled
memory back. Asking for a CUDA device without one (``current_device``, ``set_device``,
``get_device_name``) is the CUDA error of chainrule.array.devices. ``cr.cuda.amp`` holds PyTorch's
deprecated ``torch.cuda.amp.GradScaler`` and ``autocast`` (see chainrule.amp).
"""

from __future__ import annotations

from typing import Any

from . import amp as _amp_module
from . import array
from .array import no_cuda


def _cupy() -> Any:
    """CuPy itself where it is the accelerator (None for the stand-in or no GPU)."""
    return array.accelerator if array.ARRAY_BACKEND != "strict" else None


def is_available() -> bool:
    """Whether CUDA tensors can be made: CuPy found a GPU (or the stand-in is in use)."""
    return array.accelerator is not None


def device_count() -> int:
    return array.cuda_count()


def is_initialized() -> bool:
    return array.accelerator is not None


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False  # chainrule computes in its inputs' dtypes, with no bfloat16 arithmetic


def manual_seed(seed: int) -> None:
    """Seeds nothing more: CUDA tensors' draws come from the generator ``cr.manual_seed``
    seeds."""


def manual_seed_all(seed: int) -> None:
    """Seeds nothing more, as :func:`manual_seed`."""


def empty_cache() -> None:
    """Hand CuPy's pooled GPU memory back to the driver (nothing to do without CuPy)."""
    cupy = _cupy()
    if cupy is not None:
        cupy.get_default_memory_pool().free_all_blocks()


def synchronize(device: Any = None) -> None:
    """Wait until the GPU has finished its queued work (without one, every op has finished
    when it returns)."""
    cupy = _cupy()
    if cupy is not None:
        cupy.cuda.Device(_index(device, "cuda.synchronize")).synchronize()


def _index(device: Any, op: str) -> int:
    if device is None:
        return current_device()
    return int(array.cuda_device(device, op).index or 0)


def current_device() -> int:
    if array.accelerator is None:
        no_cuda("cuda.current_device", "a CUDA device")
    cupy = _cupy()
    return 0 if cupy is None else int(cupy.cuda.runtime.getDevice())


def set_device(device: Any) -> None:
    """Make a GPU the current one: where CUDA arrays are made when no index is named."""
    index = _index(device, "cuda.set_device")
    cupy = _cupy()
    if cupy is not None:
        cupy.cuda.runtime.setDevice(index)


def get_device_name(device: Any = None) -> str:
    index = _index(device, "cuda.get_device_name")
    cupy = _cupy()
    if cupy is None:
        return "chainrule strict stand-in"
    name = cupy.cuda.runtime.getDeviceProperties(index)["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


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
