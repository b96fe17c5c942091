"""The random state: PyTorch's CPU ``Generator`` (an mt19937 engine, seeded and saved as
torch's), behind every draw chainrule makes (cr.manual_seed, init, dropout, shuffles), and
the samplers each draw calls as its methods. Numbers are drawn on the host and moved, so a
CUDA tensor gets the CPU generator's numbers. How the words become samples (torch's bits)
is ``torch_streams``."""

from __future__ import annotations

import secrets
from typing import Any

import numpy as np

from . import torch_streams as ts
from .devices import CPU, device, resolve_device
from .modules import ndarray, to_host
from .tensor_type import tensor_type

DEFAULT_SEED = 67280421310721  # what an unseeded PyTorch generator holds
STATE_BYTES = 5056
_N = 624  # mt19937's words of state


def manual_seed(seed: int) -> Generator:
    """Seed chainrule's global generator; returns it (``default_generator``), as
    ``torch.manual_seed`` returns PyTorch's default generator."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed chainrule's global generator from the operating system; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed chainrule's global generator was last seeded with."""
    return default_generator.initial_seed()


def generator(given: Any = None, op: str = "random") -> Generator:
    """The Generator a draw takes its numbers from: chainrule's global one, or ``given`` (a
    chainrule Generator; a NumPy Generator is read as the source of the 32-bit words)."""
    if given is None:
        return default_generator
    if isinstance(given, Generator):
        return given
    if isinstance(given, np.random.Generator):
        return _NumpyWords(given)
    raise TypeError(
        f"{op}: generator must be a numpy.random.Generator or None, or a chainrule Generator; got "
        f"{type(given).__name__}"
    )


class Generator:
    """PyTorch's ``torch.Generator`` on the CPU: mt19937 seeded as torch seeds it, its state
    in torch's byte layout, and the samplers (``uniform``, ``normal``, ``integers``, ...)
    that every draw calls, each drawing the numbers torch draws for the same state."""

    def __init__(self, device: Any = "cpu") -> None:
        # A CUDA generator's numbers are drawn on the host too, as every draw is, then moved
        self._device = resolve_device(device, "Generator")
        self._mt = np.random.MT19937()
        self.manual_seed(DEFAULT_SEED)

    # -- seed and state ----------------------------------------------------------------------

    def manual_seed(self, seed: int) -> Generator:
        """Seed as torch: mt19937's ``init_genrand`` of the low 32 bits; the whole seed (a
        negative one as 2**64 + seed) is what ``initial_seed`` returns. Returns self."""
        seed = int(seed)
        if not -(2**63) <= seed < 2**64:
            raise RuntimeError(
                f"manual_seed: seed must be within [-0x8000_0000_0000_0000, "
                f"0xffff_ffff_ffff_ffff]; got {seed}"
            )
        self._initial = seed % 2**64
        # init_genrand, as torch seeds mt19937: RandomState's own seeding of the engine, in
        # place (a RandomState made to read its words back cost 0.7 ms a seed)
        self._mt._legacy_seeding(self._initial & 0xFFFFFFFF)
        self._fresh = True
        self._normal: float | None = None  # the cached second value of a Box-Muller pair
        self._normal_float: float | None = None
        return self

    def seed(self) -> int:
        """Seed from the operating system; returns the seed."""
        self.manual_seed(secrets.randbits(63))
        return self._initial

    def initial_seed(self) -> int:
        return self._initial

    def get_state(self) -> Any:
        """The generator's whole state as a uint8 CPU tensor of 5056 bytes, torch's layout
        (seed, mt19937's left/seeded/next and 624 words, the cached normal values), so
        ``torch.Generator.set_state`` reads it too; ``set_state`` of it makes the same draws
        from there on, as for resuming."""
        state = self._mt.state["state"]
        pos = int(state["pos"])
        raw = bytearray(STATE_BYTES)
        nxt = 0 if self._fresh else pos
        head = np.array([self._initial], "<u8").tobytes()
        head += np.array([_N + 1 - pos, 1], "<i4").tobytes() + np.array([nxt], "<u8").tobytes()
        raw[:24] = head
        raw[24 : 24 + 8 * _N] = state["key"].astype("<u8").tobytes()
        if self._normal is not None:
            raw[5024:5032] = np.array([self._normal], "<f8").tobytes()
            raw[5040:5044] = np.array([1], "<i4").tobytes()
        if self._normal_float is not None:
            raw[5048:5052] = np.array([self._normal_float], "<f4").tobytes()
            raw[5052] = 1
        return tensor_type()._make(np.frombuffer(bytes(raw), np.uint8).copy())

    def set_state(self, new_state: Any) -> Generator:
        """Put back a state ``get_state`` (or torch's) made."""
        arr = getattr(new_state, "_array", new_state)  # a Tensor's array, on whichever device
        arr = to_host(arr) if isinstance(arr, ndarray) else np.asarray(arr)
        raw = arr.tobytes() if arr.dtype == np.uint8 else b""
        left = int(np.frombuffer(raw[8:12], "<i4")[0]) if len(raw) == STATE_BYTES else 0
        if len(raw) != STATE_BYTES or not 1 <= left <= _N:
            raise ValueError(
                f"Generator.set_state: not a state that get_state or get_rng_state made (uint8, "
                f"{STATE_BYTES} bytes); got shape {tuple(arr.shape)} and dtype {arr.dtype}"
            )
        self._initial = int(np.frombuffer(raw[0:8], "<u8")[0])
        nxt = int(np.frombuffer(raw[16:24], "<u8")[0])
        key = np.frombuffer(raw[24 : 24 + 8 * _N], "<u8").astype(np.uint32)
        self._set_engine(key, _N + 1 - left, fresh=left == 1 and nxt == 0)
        valid = int(np.frombuffer(raw[5040:5044], "<i4")[0])
        self._normal = float(np.frombuffer(raw[5024:5032], "<f8")[0]) if valid else None
        self._normal_float = float(np.frombuffer(raw[5048:5052], "<f4")[0]) if raw[5052] else None
        return self

    def _set_engine(self, key: np.ndarray, pos: int, fresh: bool) -> None:
        self._mt.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}
        self._fresh = fresh  # seeded and not drawn from: torch's ``next`` is 0, not 624

    @property
    def device(self) -> device:
        return getattr(self, "_device", CPU)

    # -- the engine ---------------------------------------------------------------------------

    def words(self, n: int) -> np.ndarray:
        """The next n 32-bit words of mt19937 (as uint64)."""
        if n <= 0:
            return np.empty(0, np.uint64)
        self._fresh = False
        return self._mt.random_raw(n)

    def take_normal(self) -> float | None:
        """The cached second value of the last Box-Muller pair, once."""
        value, self._normal = self._normal, None
        return value

    def keep_normal(self, value: float) -> None:
        self._normal = value

    # -- the samplers (flat arrays, in memory order; torch_streams says how) ------------------

    def uniform(self, n: int, dtype: Any, low: float = 0.0, high: float = 1.0) -> np.ndarray:
        return ts.uniform(self, n, dtype, low, high)

    def normal(
        self, n: int, dtype: Any, mean: float = 0.0, std: float = 1.0, contiguous: bool = True
    ) -> np.ndarray:
        """``normal_``: the block path for 16 or more contiguous elements, else one draw per
        element (which shares a cached value with the next call)."""
        if n >= 16 and contiguous:
            return ts.normal_fill(self, n, dtype, mean, std)
        return ts.normal_serial(self, n, mean, std).astype(dtype)

    def integers(self, low: int, high: int | None = None, n: int | None = None) -> Any:
        """Integers in [low, high) as ``randint``; ``integers(high)`` is one int in [0, high)
        (``random_()`` of an int64 when high is 2**63, as a DataLoader draws its seed)."""
        if high is None:
            low, high = 0, low
        values = ts.integers(self, 1 if n is None else n, low, high)
        return int(values[0]) if n is None else values

    def full_range(self, n: int, dtype: Any) -> np.ndarray:
        return ts.full_range(self, n, dtype)

    def permutation(self, n: int) -> np.ndarray:
        """``randperm(n)``."""
        return ts.randperm(self, n)

    def bernoulli(self, n: int, p: float) -> np.ndarray:
        return ts.bernoulli(self, n, p)

    def bernoulli_probs(self, p: np.ndarray) -> np.ndarray:
        return ts.bernoulli_probs(self, p)

    def exponential(self, n: int, lambd: float = 1.0, dtype: Any = np.float64) -> np.ndarray:
        return ts.exponential(self, n, lambd, dtype)

    def cauchy(self, n: int, median: float, sigma: float) -> np.ndarray:
        return ts.cauchy(self, n, median, sigma)

    def geometric(self, n: int, p: float) -> np.ndarray:
        return ts.geometric(self, n, p)

    def log_normal(self, n: int, mean: float, std: float) -> np.ndarray:
        return ts.log_normal(self, n, mean, std)

    def multinomial(
        self, probs: np.ndarray, n: int, replacement: bool, columns: bool = False
    ) -> np.ndarray:
        return ts.multinomial(self, probs, n, replacement, columns)


class _NumpyWords(Generator):
    """A NumPy Generator given as ``generator=`` (chainrule's own extension): NumPy's draws
    from it (its uniforms, normals, permutations), PyTorch's recipes only where NumPy has
    no such sampler."""

    def __init__(self, rng: np.random.Generator) -> None:
        super().__init__()
        self._rng = rng

    def words(self, n: int) -> np.ndarray:
        return self._rng.integers(0, 2**32, max(n, 0), dtype=np.uint64)

    def uniform(self, n: int, dtype: Any, low: float = 0.0, high: float = 1.0) -> np.ndarray:
        return self._rng.uniform(low, high, n).astype(dtype)

    def normal(
        self, n: int, dtype: Any, mean: float = 0.0, std: float = 1.0, contiguous: bool = True
    ) -> np.ndarray:
        return self._rng.normal(mean, std, n).astype(dtype)

    def integers(self, low: int, high: int | None = None, n: int | None = None) -> Any:
        if high is None:
            low, high = 0, low
        values = self._rng.integers(low, high, 1 if n is None else n)
        return int(values[0]) if n is None else values

    def permutation(self, n: int) -> np.ndarray:
        return self._rng.permutation(n)

    def bernoulli(self, n: int, p: float) -> np.ndarray:
        return self._rng.random(n) < p

    def bernoulli_probs(self, p: np.ndarray) -> np.ndarray:
        return self._rng.random(p.size) < p

    def exponential(self, n: int, lambd: float = 1.0, dtype: Any = np.float64) -> np.ndarray:
        return self._rng.exponential(1.0 / lambd, n).astype(dtype)


default_generator = Generator()


def encode_state(gen: Generator) -> np.ndarray:
    """A generator's state bytes (torch's layout) as a uint8 array."""
    return np.asarray(gen.get_state()._array)


def decode_state(gen: Generator, state: Any, op: str) -> None:
    """Put state bytes (an array or a Tensor of them) back into ``gen``."""
    gen.set_state(state)


def laid_out(flat: np.ndarray, like: Any) -> np.ndarray:
    """Values drawn in memory order (as PyTorch fills a tensor) arranged in the logical
    order of ``like`` (an array, possibly a transposed or strided view)."""
    shape, strides = like.shape, like.strides
    if like.flags.c_contiguous or like.ndim < 2:
        return flat.reshape(shape)
    order = sorted(range(like.ndim), key=lambda d: (-abs(strides[d]), d))
    back = sorted(range(like.ndim), key=lambda d: order[d])
    return flat.reshape([shape[d] for d in order]).transpose(back)
