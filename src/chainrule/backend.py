"""The array modules and dtypes: the only place that imports NumPy.

Everything else asks this module for arrays and dtypes. A tensor's array is NumPy's on the
CPU and the accelerator module's (CuPy's) on a CUDA device; the device of a tensor is the
type of its array (:func:`device_of`). The engine, ops, Tensor, nn and optim compute with
``xp``, which is NumPy's namespace: an array of another module given to its functions goes
to that module through NumPy's protocols (``__array_ufunc__``, ``__array_function__``), so
``xp.exp(a)`` runs where ``a`` lives, and arrays made from nothing are made beside an array
given as ``like=`` (NEP 35) or on a device named to :func:`from_host`. Nothing reaches host
memory unawares: arrays go out through :func:`to_host` and between devices through
:func:`to_device`; random numbers are drawn on the host (NumPy's Generator, so every device
gives NumPy's numbers) and moved.

The accelerator is chosen when chainrule is imported, by ``CHAINRULE_ARRAY_BACKEND``:

- ``auto`` (the default): CuPy, where it is installed (``pip install chainrule[cuda]``) and
  finds a GPU; otherwise none, and CUDA is the clear error of chainrule.devices.
- ``cupy``: CuPy, and an ImportError naming what is missing where it cannot be had.
- ``numpy``: none, without looking for CuPy.
- ``strict``: the strict stand-in of chainrule.strict (NumPy with CuPy's refusals) as the
  CUDA device, so that tests on a machine without a GPU show that nothing converts to the
  host implicitly and that CPU and CUDA tensors are kept apart as PyTorch keeps them.

Arrays made beside a CUDA array are made on CuPy's current device: a process computes on
one GPU, its current one (``cr.cuda.set_device(N)``), as data-parallel jobs run one GPU per
process; tensors move between GPUs with ``to("cuda:N")``.
"""

from __future__ import annotations

import importlib.util
import os
import warnings
from typing import Any

import ml_dtypes
import numpy as np

from .devices import CPU, device, no_cuda

ARRAY_BACKEND = os.environ.get("CHAINRULE_ARRAY_BACKEND", "auto")
_CHOICES = ("auto", "cupy", "numpy", "strict")
if ARRAY_BACKEND not in _CHOICES:
    raise ImportError(
        f"chainrule: CHAINRULE_ARRAY_BACKEND must be one of {', '.join(_CHOICES)}; got "
        f"{ARRAY_BACKEND!r}"
    )


def _find_cupy(required: bool) -> Any:
    """CuPy if it imports and sees a GPU; None (or, if required, an ImportError)."""
    why = "CuPy is not installed (pip install chainrule[cuda])"
    if importlib.util.find_spec("cupy") is not None:
        try:
            import cupy

            if cupy.cuda.runtime.getDeviceCount() > 0:
                return cupy
            why = "CuPy finds no GPU"
        except Exception as e:  # no driver, no libraries: CuPy's own errors
            why = f"CuPy cannot reach a GPU ({type(e).__name__}: {e})"
    if required:
        raise ImportError(f"chainrule: CHAINRULE_ARRAY_BACKEND=cupy, but {why}")
    return None


xp: Any = np  # the namespace every op computes with (arrays of other modules dispatch)
host = np  # the host's array module, for work that belongs there (printing, IO)
accelerator: Any = None  # the array module of CUDA tensors, or None
if ARRAY_BACKEND == "strict":
    from . import strict

    accelerator = strict.module
elif ARRAY_BACKEND in ("auto", "cupy"):
    accelerator = _find_cupy(required=ARRAY_BACKEND == "cupy")
# Whether tensors may live on two devices in this process: every check of devices (an
# op's inputs, a copy between tensors) is skipped where there is only the CPU.
ACCELERATED = accelerator is not None

# What a tensor holds, for isinstance: NumPy's array type, and the accelerator's.
ndarray: tuple = (np.ndarray,) if accelerator is None else (np.ndarray, accelerator.ndarray)
# What must be moved to a CUDA tensor's device when given as its index or value: NumPy
# arrays where there is an accelerator; under NumPy alone no type, so that
# isinstance(x, moved_types) costs nothing on the way of every index.
moved_types: Any = () if accelerator is None else np.ndarray

# NumPy's floating-point error control (``with errstate(divide="ignore"): ...``) around a
# computation that makes inf or NaN on purpose. CuPy has none (it never warns), and NumPy's
# does nothing to CuPy's kernels, so this one context serves every device.
errstate = np.errstate

# NumPy warns where a float op makes inf or NaN (log(0), 1/0, exp overflow); PyTorch makes
# the same values silently, and so do chainrule's ops: the RuntimeWarnings raised from its
# own modules are ignored. The filter is appended, so one the user gives first
# (python -W error::RuntimeWarning, to find where a NaN starts) still applies; NumPy code of
# the user's own keeps its warnings.
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"chainrule(\.|$)", append=True)

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
default_device = CPU  # set_default_device changes it; read it as backend.default_device


# -- devices --------------------------------------------------------------------------------


def device_of(arr: Any) -> device:
    """The device an array lives on: the CPU for NumPy's, ``cuda:N`` for the accelerator's."""
    if type(arr) is np.ndarray or accelerator is None:
        return CPU
    return device("cuda", int(arr.device.id))


def cuda_count() -> int:
    """How many CUDA devices the accelerator sees (0 without one)."""
    if accelerator is None:
        return 0
    if ARRAY_BACKEND == "strict":
        return 1
    return int(accelerator.cuda.runtime.getDeviceCount())


def resolve_device(dev: Any, op: str) -> device:
    """A ``device=`` argument checked: None is the default device; 'cpu', 'cuda', 'cuda:N',
    a ``cr.device`` or an int N (CUDA device N, as in PyTorch). A CUDA device needs the
    accelerator and an index it has; every other device type is refused."""
    if dev is None:
        return default_device
    if isinstance(dev, int) and not isinstance(dev, bool):
        dev = device("cuda", dev) if dev >= 0 else device(dev)
    elif isinstance(dev, str):
        dev = device(dev)
    elif not isinstance(dev, device):
        raise TypeError(f"{op}: device must be a string, a cr.device or None; got {dev!r}")
    if dev.type == "cpu":
        return CPU
    if dev.type != "cuda" or accelerator is None:
        no_cuda(op, f"device {str(dev)!r}", accelerator is not None)
    index = 0 if dev.index is None else dev.index
    if index >= cuda_count():
        no_cuda(op, f"device 'cuda:{index}' (CUDA devices here: cuda:0 to "
                f"cuda:{cuda_count() - 1})", True)  # fmt: skip
    return device("cuda", index)


def cuda_device(dev: Any, op: str) -> device:
    """The GPU a ``.cuda(device)`` call names: the first by default, an index, 'cuda:N' or
    a cr.device; any other type of device is refused."""
    if dev is None or (isinstance(dev, int) and not isinstance(dev, bool)):
        dev = "cuda" if dev is None else f"cuda:{dev}"
    found = resolve_device(dev, op)
    if found.type != "cuda":
        raise ValueError(f"{op}: expected a CUDA device; got {str(found)!r}")
    return found


def no_pinning(pin_memory: bool, op: str) -> None:
    """A factory's ``pin_memory``: pinned memory serves copies to a CUDA device, so without
    one it is the CUDA error; with one, host arrays are copied as they are (CuPy uploads
    from ordinary memory), and the flag asks for nothing more."""
    if pin_memory and accelerator is None:
        no_cuda(op, "pin_memory=True (pinned memory serves copies to a CUDA device)")


def set_default_device(dev: Any) -> None:
    """PyTorch's ``torch.set_default_device``: where factories (tensor, zeros, rand, ...)
    and new layers' parameters are made when no device is given; None is the CPU."""
    global default_device
    default_device = CPU if dev is None else resolve_device(dev, "set_default_device")


def get_default_device() -> device:
    return default_device


def module_of(arr: Any) -> Any:
    """The array module an array belongs to: NumPy, or the accelerator's."""
    return np if type(arr) is np.ndarray else accelerator


def _on(dev: device) -> Any:
    """The context that makes ``dev`` CuPy's current device, for allocations there."""
    if dev.index and ARRAY_BACKEND != "strict":
        return accelerator.cuda.Device(dev.index)
    return _NOTHING


class _Nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


_NOTHING = _Nothing()


_likes: dict[device, Any] = {}


def like(dev: device) -> Any:
    """An empty array on ``dev``, to make arrays beside it with NumPy's ``like=`` (NEP 35):
    ``xp.zeros(shape, like=like(dev))`` is CuPy's zeros on a GPU, NumPy's on the CPU."""
    arr = _likes.get(dev)
    if arr is None:
        arr = _likes[dev] = from_host(np.empty(0), dev)
    return arr


def to_device(arr: Any, dev: device) -> Any:
    """An array on ``dev``: itself if it is there, else an explicit copy (an upload, a
    download, or a copy between GPUs)."""
    if dev.type == "cpu":
        return to_host(arr)
    if type(arr) is not np.ndarray and device_of(arr) == dev:
        return arr
    with _on(dev):
        if type(arr) is np.ndarray:
            return accelerator.asarray(arr)
        return accelerator.array(arr, copy=True)  # from another GPU


def from_host(arr: Any, to: Any = None) -> Any:
    """A host (NumPy) array, or a number, as an array on a device: ``to`` is a device, or an
    array whose device it is; None is the default device. On the CPU an array is itself
    (no copy); on CUDA it is an explicit upload."""
    if to is None:
        dev = default_device
    elif isinstance(to, device):
        dev = to
    elif type(to) is np.ndarray:
        dev = CPU
    else:
        dev = device_of(to)
    if dev.type == "cpu":
        return arr if type(arr) is np.ndarray else np.asarray(arr)
    with _on(dev):
        return accelerator.asarray(arr)


def array_like(x: Any, ref: Any, dtype: Any = None) -> Any:
    """An argument given as data (an array, a list, a number) as an array on ``ref``'s
    device: itself if it is there already; a host array or a list moved there (as PyTorch
    moves a CPU index or mask to a CUDA tensor's device)."""
    if type(x) is type(ref):
        return x if dtype is None else x.astype(dtype, copy=False)
    if isinstance(x, ndarray):  # an array of the other device
        return to_device(x if dtype is None else x.astype(dtype), device_of(ref))
    return from_host(np.asarray(x, dtype=dtype), ref)


def array_of(x: Any) -> Any:
    """An op's result as an array: an array as it is; a NumPy scalar or a number as a 0-d
    NumPy array (CuPy's reductions give 0-d arrays already)."""
    return x if isinstance(x, ndarray) else np.asarray(x)


def to_host(arr: Any) -> np.ndarray:
    """An array as a NumPy array: itself on the CPU (no copy), an explicit copy from the
    device otherwise (CuPy's ``asnumpy``)."""
    return arr if type(arr) is np.ndarray else accelerator.asnumpy(arr)


def writeable(arr: Any) -> bool:
    """Whether an array may be written in place: NumPy's flag, False for a broadcast view
    (several elements share one memory location) or an array made read-only with
    :func:`make_read_only` (a cached constant). CuPy's arrays have no such flag (every one
    can be written), so for them the answer comes from the strides (a zero stride over more
    than one element); the strict stand-in keeps NumPy's flag underneath."""
    if type(arr) is np.ndarray:
        return arr.flags.writeable
    if ARRAY_BACKEND == "strict":
        return strict.writeable(arr)
    return all(s != 0 or n < 2 for s, n in zip(arr.strides, arr.shape, strict=True))


def data_ptr(arr: Any) -> int:
    """The address of an array's first element: in host memory for NumPy's, in the GPU's
    for CuPy's (the stand-in's, its NumPy array's)."""
    if type(arr) is np.ndarray:
        return int(arr.__array_interface__["data"][0])
    if ARRAY_BACKEND == "strict":
        return int(arr._a.__array_interface__["data"][0])
    return int(arr.data.ptr)


def strided_view(arr: Any, shape: tuple, strides: tuple) -> Any:
    """A read-only view of ``arr`` with the given shape and strides (windows over it), by
    the array's own module (NumPy's as_strided dispatches on nothing); read-only where the
    module can say so."""
    if type(arr) is np.ndarray:
        return np.lib.stride_tricks.as_strided(arr, shape, strides, writeable=False)
    view = accelerator.lib.stride_tricks.as_strided(arr, shape, strides)
    make_read_only(view)
    return view


def make_read_only(arr: Any) -> None:
    """Mark a cached constant read-only where the array module can (NumPy, the stand-in);
    CuPy cannot, and its constants are never handed out to be written."""
    if type(arr) is np.ndarray:
        arr.flags.writeable = False
    elif ARRAY_BACKEND == "strict":
        strict.make_read_only(arr)


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


def to_array(data: Any, dtype: Any = None, to: Any = None) -> Any:
    """Turn data into an array with chainrule's dtype rules.

    Python floats (and lists of them) become float32, Python ints int64, bools bool; arrays
    keep their dtype unless one is asked for. Always returns a fresh array (a copy). An
    array stays on its device; data from the host is put together there, then moved once
    to ``to`` (a device; None is the default device).
    """
    dtype = as_dtype(dtype)
    if accelerator is not None and isinstance(data, accelerator.ndarray):
        _need_holds(data)  # a device array: copied where it lives, or to ``to``
        arr = data.astype(data.dtype if dtype is None else dtype, copy=True)
        return arr if to is None else to_device(arr, to)
    return from_host(_host_array(data, dtype), to)


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
        from .tensor import Tensor  # a tensor of the state (backend is below tensor/)

        return Tensor._make(encode_state(self.rng))

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
    import json

    text = json.dumps(rng.bit_generator.state, sort_keys=True)
    return np.frombuffer(text.encode("ascii"), dtype=np.uint8).copy()


def decode_state(rng: np.random.Generator, state: Any, op: str) -> None:
    """Put a state that encode_state made (an array or a Tensor of it) back into ``rng``."""
    import json

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
