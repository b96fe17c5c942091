"""The array module and dtypes: the only place that imports NumPy.

Everything else asks this module for arrays and dtypes, so a GPU array module can be
swapped in here alone. The engine, ops, Tensor, nn and optim compute with ``xp`` and never
reach host memory unawares: arrays come in through :func:`to_array` and :func:`from_host`
and go out through :func:`to_host`, and random numbers are drawn on the host (NumPy's
Generator, so every array module gives NumPy's numbers) and moved with :func:`from_host`.

``CHAINRULE_ARRAY_BACKEND=strict``, set before chainrule is imported, makes ``xp`` the
strict stand-in of chainrule.strict (NumPy with CuPy's refusals), which tests use to show
that nothing converts to the host implicitly.
"""

from __future__ import annotations

import os
from typing import Any

import ml_dtypes
import numpy as np

from .devices import cpu_device, device

ARRAY_BACKEND = os.environ.get("CHAINRULE_ARRAY_BACKEND", "numpy")
xp: Any  # the array module every op computes with
if ARRAY_BACKEND == "numpy":
    xp = np
elif ARRAY_BACKEND == "strict":
    from . import strict

    xp = strict.module
else:
    raise ImportError(
        f"chainrule: CHAINRULE_ARRAY_BACKEND must be 'numpy' or 'strict'; got {ARRAY_BACKEND!r}"
    )

float32 = np.dtype("float32")
float64 = np.dtype("float64")
float16 = np.dtype("float16")
# bfloat16 is ml_dtypes' NumPy dtype: a storage dtype (cast to and from, saved, printed);
# NumPy files it under kind "V", so it is never taken for a float that gradients flow in
bfloat16 = np.dtype(ml_dtypes.bfloat16)
int64 = np.dtype("int64")
int32 = np.dtype("int32")
int16 = np.dtype("int16")
int8 = np.dtype("int8")
uint8 = np.dtype("uint8")
bool_ = np.dtype("bool")
default_float = float32  # set_default_dtype changes it; read it as backend.default_float

ndarray = xp.ndarray  # the array type of xp: what a tensor holds
host = np  # the host's array module, for work that belongs there (printing) on to_host's arrays
# What a tensor's index or value given as a NumPy array must be moved from (from_host): the
# NumPy array type where xp is another module; under NumPy no type, so that
# isinstance(x, moved_types) costs nothing on the way of every index.
moved_types: Any = () if xp is np else np.ndarray

# NumPy's floating-point error control (``with errstate(divide="ignore"): ...``) around a
# computation that makes inf or NaN on purpose. CuPy has none, since it never warns: with
# CuPy as xp this is the place for a context that does nothing. The strict module computes
# with NumPy, so it keeps NumPy's.
errstate = np.errstate


def _writeable(arr: Any) -> bool:
    return arr.flags.writeable


def _make_read_only(arr: Any) -> None:
    arr.flags.writeable = False


# writeable(arr): whether an array may be written in place; NumPy's flag, False for a
# broadcast view (several elements share one memory location) or an array made read-only
# with make_read_only(arr) (a cached constant). CuPy's arrays have no such flag (every one
# can be written), so an array module without it answers from the strides (a zero stride
# over more than one element) and leaves make_read_only to do nothing; the strict module
# has no writeable flag either, and keeps NumPy's underneath.
writeable: Any = _writeable if xp is np else strict.writeable
make_read_only: Any = _make_read_only if xp is np else strict.make_read_only


def from_host(arr: Any) -> Any:
    """A host (NumPy) array, or a number, as an array of ``xp``: itself under NumPy, an
    explicit copy to the device otherwise."""
    return arr if xp is np else xp.asarray(arr)


# An op's result as an array of xp (NumPy scalars and numbers become 0-d arrays). Under the
# strict module a NumPy array here is refused: a host array reaching a tensor unmoved is the
# mistake it exists to find (moving is from_host's, explicitly).
array_of = xp.asarray if xp is np else strict.result


def to_host(arr: Any) -> np.ndarray:
    """An array of ``xp`` as a NumPy array: itself under NumPy (no copy), an explicit copy
    from the device otherwise (CuPy's ``asnumpy``)."""
    return arr if xp is np else xp.asnumpy(arr)


DTYPE_NAMES: dict[str, np.dtype] = {
    "float32": float32,
    "float": float32,
    "float64": float64,
    "double": float64,
    "float16": float16,
    "half": float16,
    "bfloat16": bfloat16,
    "int64": int64,
    "long": int64,
    "int32": int32,
    "int": int64,
    "int16": int16,
    "short": int16,
    "int8": int8,
    "uint8": uint8,
    "bool": bool_,
}


def as_dtype(dtype: Any) -> np.dtype | None:
    """Normalise a dtype given as a NumPy dtype, a type or a name; None stays None."""
    if dtype is None:
        return None
    if isinstance(dtype, str):
        if dtype not in DTYPE_NAMES:
            raise TypeError(
                f"dtype: unknown dtype name {dtype!r}; use one of {sorted(DTYPE_NAMES)}"
            )
        return DTYPE_NAMES[dtype]
    if dtype is float:
        return float32
    if dtype is int:
        return int64
    if dtype is bool:
        return bool_
    return np.dtype(dtype)


def is_floating(dtype: np.dtype) -> bool:
    """float16, float32, float64 or bfloat16 (PyTorch's is_floating_point)."""
    return dtype.kind == "f" or dtype == bfloat16


def set_default_dtype(dtype: Any) -> None:
    """PyTorch's ``torch.set_default_dtype``: the dtype of Python floats made tensors, of
    the float factories (zeros, rand, ...) and of new layers' parameters: float32 or
    float64."""
    global default_float
    d = as_dtype(dtype)
    if d not in (float32, float64):
        raise TypeError(
            f"set_default_dtype: chainrule's default dtype is float32 or float64; got {d}"
        )
    default_float = d


def get_default_dtype() -> np.dtype:
    return default_float


def to_array(data: Any, dtype: Any = None) -> Any:
    """Turn data into an array of ``xp`` with chainrule's dtype rules.

    Python floats (and lists of them) become float32, Python ints int64, bools bool; arrays
    keep their dtype unless one is asked for. Always returns a fresh array (a copy). Data
    from the host is put together there, then moved to ``xp`` once.
    """
    dtype = as_dtype(dtype)
    if isinstance(data, ndarray):  # an array of xp: copied where it lives
        _need_holds(data)
        return xp.array(data, dtype=dtype, copy=True)
    return from_host(_host_array(data, dtype))


def _need_holds(arr: Any) -> None:
    if not holds(arr.dtype):  # complex, object, strings, dates: no tensor of them
        raise TypeError(
            f"tensor: cannot make a tensor of an array of dtype {arr.dtype}; chainrule "
            "holds bool, integer and floating-point numbers"
        )


def _host_array(data: Any, dtype: Any) -> np.ndarray:
    """to_array's work for data on the host: a fresh NumPy array."""
    if isinstance(data, (np.ndarray, np.generic)):
        _need_holds(data)
        return np.array(data, dtype=dtype, copy=True)
    try:
        arr = np.array(data, dtype=dtype)
    except ValueError as e:  # ragged lists ([[1, 2], [3]]) or strings for a float dtype
        msg = str(e).rstrip(". ")
        raise ValueError(f"tensor: cannot make a tensor of {type(data).__name__}; {msg}") from None
    if dtype is None:
        if arr.dtype == np.float64:
            arr = arr.astype(default_float)
        elif arr.dtype.kind in "iu":
            arr = arr.astype(int64)
        elif arr.dtype.kind not in "fb":
            raise TypeError(
                f"tensor: cannot make a tensor of {type(data).__name__} (dtype {arr.dtype})"
            )
    elif not holds(arr.dtype):
        raise TypeError(f"tensor: cannot make a tensor of dtype {arr.dtype}")
    return arr


def holds(dtype: Any) -> bool:
    """Whether a tensor can hold this dtype: bools, integers, floats and the named dtypes."""
    return dtype.kind in "biuf" or dtype in DTYPE_NAMES.values()


def result_dtype(dtypes: Any) -> Any:
    """The dtype several tensors meet in (cat, stack), by PyTorch's rule: the widest
    floating dtype among them if any is floating (float32 with int64 is float32, where
    NumPy says float64), else NumPy's integer or bool result."""
    dtypes = list(dtypes)
    floats = [d for d in dtypes if d.kind == "f"]
    return np.result_type(*floats) if floats else np.result_type(*dtypes)


# One seedable generator for every random draw (cr.manual_seed, init, dropout, shuffles).
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
        cpu_device(device, "Generator")
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

    def get_state(self) -> np.ndarray:
        """The generator's whole state as a uint8 array (PyTorch's ByteTensor of state):
        ``set_state`` of it later makes the same draws from there on, as for resuming."""
        return encode_state(self.rng)

    def set_state(self, new_state: Any) -> Generator:
        decode_state(self.rng, new_state, "Generator.set_state")
        return self

    @property
    def device(self) -> device:
        return cpu_device(None, "Generator")


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
    import json

    text = json.dumps(rng.bit_generator.state, sort_keys=True)
    return np.frombuffer(text.encode("ascii"), dtype=np.uint8).copy()


def decode_state(rng: np.random.Generator, state: Any, op: str) -> None:
    """Put a state that encode_state made (an array or a Tensor of it) back into ``rng``."""
    import json

    arr = to_host(state) if isinstance(state, ndarray) else np.asarray(state)
    try:
        decoded = json.loads(arr.astype(np.uint8).tobytes().decode("ascii"))
        rng.bit_generator.state = decoded
    except (ValueError, TypeError, KeyError, UnicodeDecodeError):
        raise ValueError(
            f"{op}: not a state that get_state or get_rng_state made; got an array of shape "
            f"{arr.shape} and dtype {arr.dtype}"
        ) from None
