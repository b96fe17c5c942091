"""Devices as PyTorch names them: ``cr.device("cpu")``, ``cr.device("cuda:1")``, and the one
error (with one wording) for a device that cannot be used here.

A script written for PyTorch says ``device = "cuda" if torch.cuda.is_available() else "cpu"``
and passes it around. chainrule computes on the CPU with NumPy and on CUDA GPUs with CuPy
(``modules.py`` chooses); where there is no GPU, ``is_available()`` is False, the CPU is
chosen, and every ``device=``, ``.to(device)`` and ``map_location`` takes it. Naming CUDA
(``cr.device("cuda")``) always works, as in PyTorch, so code can be written for either;
using it without a GPU (a factory's ``device=``, ``.to("cuda")``, ``.cuda()``) is refused by
:func:`no_cuda`, whose message is the same everywhere.

Besides ``cr.device``, this module moves arrays between devices: every array reaches host
memory through :func:`modules.to_host` and a device through :func:`to_device` or
:func:`from_host`, explicitly.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .modules import ARRAY_BACKEND, accelerator, ndarray, to_host

# The device types PyTorch knows (torch.device("foo") is an error naming them).
TYPES = (
    "cpu", "cuda", "mps", "xpu", "xla", "meta", "hip", "ipu", "mkldnn", "opengl", "opencl",
    "ideep", "ve", "fpga", "maia", "lazy", "vulkan", "hpu", "mtia", "privateuseone",
)  # fmt: skip


def no_cuda(op: str, what: str, cuda_ready: bool = False) -> None:
    """Raise the one error for a device that cannot be used: ``what`` names it ("device
    'cuda'", ".cuda()"). ``cuda_ready`` says that CUDA could be used (the device asked for
    is another type, or a GPU index past the last)."""
    if cuda_ready:
        raise ValueError(f"{op}: chainrule computes on the CPU and on CUDA GPUs; got {what}")
    raise ValueError(
        f"{op}: chainrule computes on the CPU; got {what} (no CUDA GPU was found: CUDA needs "
        "CuPy and an NVIDIA GPU, pip install chainrule[cuda]; otherwise use device 'cpu', or "
        "leave the device out)"
    )


class device:  # noqa: N801 (PyTorch's name: torch.device)
    """PyTorch's ``torch.device``: a type ('cpu', 'cuda', ...) and an optional index.

    ``device("cpu")``, ``device("cpu:0")``, ``device("cpu", 0)`` and ``device(other)`` as in
    PyTorch, with its str, repr, equality and hash (a device never equals a string:
    ``t.device.type == "cpu"`` is the test). Any type PyTorch knows can be named; the CPU,
    and CUDA where there is a GPU, can be used (resolve_device). An
    integer alone names a CUDA device, as in PyTorch: ``device(1)`` is ``cuda:1``.
    """

    __slots__ = ("_type", "_index")
    _type: str
    _index: int | None

    def __init__(self, type: Any, index: int | None = None) -> None:
        if isinstance(type, device):
            if index is not None:
                raise TypeError("device: an index cannot be given with a device")
            self._type, self._index = type._type, type._index
            return
        if isinstance(type, int) and not isinstance(type, bool):
            if index is not None:
                raise TypeError("device: an index cannot be given with an integer device")
            type, index = "cuda", type
        if not isinstance(type, str):
            raise TypeError(f"device: expected a string or a device; got {type!r}")
        name, sep, given = type.partition(":")
        if sep:
            if index is not None:
                raise ValueError(f"device: the string {type!r} has an index, and index= too")
            if not given.isdigit():
                raise ValueError(f"device: invalid device string {type!r}")
            index = int(given)
        if name not in TYPES:
            raise ValueError(
                f"device: expected one of {', '.join(TYPES)} at the start of the device "
                f"string; got {type!r}"
            )
        if index is not None and (
            not isinstance(index, int) or isinstance(index, bool) or index < 0
        ):
            raise ValueError(f"device: the index must be a non-negative int; got {index!r}")
        self._type, self._index = name, index

    @property
    def type(self) -> str:
        return self._type

    @property
    def index(self) -> int | None:
        return self._index

    def __str__(self) -> str:
        return self._type if self._index is None else f"{self._type}:{self._index}"

    def __repr__(self) -> str:
        if self._index is None:
            return f"device(type={self._type!r})"
        return f"device(type={self._type!r}, index={self._index})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, device):
            return NotImplemented
        return (self._type, self._index) == (other._type, other._index)

    def __hash__(self) -> int:
        return hash(("device", self._type, self._index))

    def __reduce__(self) -> tuple:
        return (device, (self._type, self._index))


CPU = device("cpu")
default_device = CPU  # set_default_device changes it; read it with get_default_device()


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


def on_device_of(x: Any, ref: Any, dtype: Any = None) -> Any:
    """An argument given as data (an array, a list, a number) as an array on ``ref``'s
    device: itself if it is there already; a host array or a list moved there (as PyTorch
    moves a CPU index or mask to a CUDA tensor's device)."""
    if type(x) is type(ref):
        return x if dtype is None else x.astype(dtype, copy=False)
    if isinstance(x, ndarray):  # an array of the other device
        return to_device(x if dtype is None else x.astype(dtype), device_of(ref))
    return from_host(np.asarray(x, dtype=dtype), ref)
