"""``torch.random``'s names, for scripts that spell them so (``torch.random.manual_seed``):
the global generator's seed and state, and ``fork_rng``, which gives a block of code draws
of its own and puts the global state back after it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from .array import default_generator, initial_seed, manual_seed, resolve_device, seed
from .functions import get_rng_state, set_rng_state

__all__ = [
    "default_generator",
    "fork_rng",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "seed",
    "set_rng_state",
]


@contextlib.contextmanager
def fork_rng(
    devices: Any = None,
    enabled: bool = True,
    _caller: str = "fork_rng",
    _devices_kw: str = "devices",
    device_type: str = "cuda",
) -> Iterator[None]:
    """Within the block, draw as usual; after it, the global generator is where it was
    before (even if the block raised). ``devices`` names accelerator devices to fork too:
    every draw chainrule makes (for CUDA tensors too) comes from the one global generator,
    so forking it forks them all; without a GPU, naming one is the CUDA error.
    ``enabled=False`` forks nothing."""
    if devices:
        for d in devices:
            resolve_device(d if not isinstance(d, int) else f"{device_type}:{d}", _caller)
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
