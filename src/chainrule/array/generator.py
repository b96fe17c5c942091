"""The random state: one seedable NumPy Generator behind every draw (cr.manual_seed, init,
dropout, shuffles), and PyTorch's ``Generator`` for the draws that take ``generator=``.
Numbers are drawn on the host (NumPy's Generator, so every device gives NumPy's numbers) and
moved."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from .devices import CPU, device, resolve_device
from .modules import ndarray, to_host
from .tensor_type import tensor_type

_rng = np.random.default_rng()


def manual_seed(seed: int) -> Generator:
    """Seed chainrule's global generator; returns it as a Generator (``default_generator``),
    as ``torch.manual_seed`` returns PyTorch's default generator."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed chainrule's global generator from the operating system; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed chainrule's global generator was last seeded with."""
    return default_generator.initial_seed()


def generator(given: Any = None, op: str = "random") -> np.random.Generator:
    """The NumPy Generator a draw takes its numbers from: chainrule's global one, or the one
    behind ``given`` (a chainrule Generator, or a NumPy Generator as it is)."""
    if given is None:
        return _rng
    if isinstance(given, Generator):
        return given.rng
    if isinstance(given, np.random.Generator):
        return given
    raise TypeError(
        f"{op}: generator must be a numpy.random.Generator or None, or a chainrule "
        f"Generator; got {type(given).__name__}"
    )


class Generator:
    """PyTorch's ``torch.Generator``: a random state of its own, for the draws that take
    ``generator=`` (rand, randn, randint, randperm, multinomial, bernoulli, samplers,
    random_split, DataLoader). Seeded from the operating system until ``manual_seed``."""

    rng: np.random.Generator

    def __init__(self, device: Any = "cpu") -> None:
        # A CUDA generator's numbers are drawn on the host too, as every draw is, then moved
        self._device = resolve_device(device, "Generator")
        self.seed()

    def manual_seed(self, seed: int) -> Generator:
        self._initial = int(seed)
        self.rng = np.random.default_rng(self._initial)
        return self

    def seed(self) -> int:
        """Seed from the operating system; returns the seed."""
        self.manual_seed(int(np.random.default_rng().integers(2**63)))  # the OS's entropy
        return self._initial

    def initial_seed(self) -> int:
        return self._initial

    def get_state(self) -> Any:
        """The generator's whole state as a uint8 CPU tensor (PyTorch's ByteTensor of state):
        ``set_state`` of it later makes the same draws from there on, as for resuming."""
        return tensor_type()._make(encode_state(self.rng))

    def set_state(self, new_state: Any) -> Generator:
        decode_state(self.rng, new_state, "Generator.set_state")
        return self

    @property
    def device(self) -> device:
        return getattr(self, "_device", CPU)


class _GlobalGenerator(Generator):
    """The generator behind every draw not given one: its numbers come from the module's
    ``_rng``, which the draws read directly."""

    def manual_seed(self, seed: int) -> Generator:
        global _rng
        self._initial = int(seed)
        _rng = np.random.default_rng(self._initial)
        return self

    @property
    def rng(self) -> np.random.Generator:  # type: ignore[override]
        return _rng


default_generator = _GlobalGenerator()


def encode_state(rng: np.random.Generator) -> np.ndarray:
    """A NumPy Generator's bit-generator state as bytes of JSON in a uint8 array."""
    text = json.dumps(rng.bit_generator.state, sort_keys=True)
    return np.frombuffer(text.encode("ascii"), dtype=np.uint8).copy()


def decode_state(rng: np.random.Generator, state: Any, op: str) -> None:
    """Put a state that encode_state made (an array or a Tensor of it) back into ``rng``."""
    arr = getattr(state, "_array", state)  # a Tensor's array, on whichever device
    arr = to_host(arr) if isinstance(arr, ndarray) else np.asarray(arr)
    try:
        decoded = json.loads(arr.astype(np.uint8).tobytes().decode("ascii"))
        rng.bit_generator.state = decoded
    except (ValueError, TypeError, KeyError, UnicodeDecodeError):
        raise ValueError(
            f"{op}: not a state that get_state or get_rng_state made; got an array of shape "
            f"{arr.shape} and dtype {arr.dtype}"
        ) from None
