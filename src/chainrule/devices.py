"""Devices as PyTorch names them: ``cr.device("cpu")``, ``cr.device("cuda:1")``, and the one
error (with one wording) for a device that cannot be used here.

A script written for PyTorch says ``device = "cuda" if torch.cuda.is_available() else "cpu"``
and passes it around. chainrule computes on the CPU with NumPy and on CUDA GPUs with CuPy
(chainrule.backend chooses); where there is no GPU, ``is_available()`` is False, the CPU is
chosen, and every ``device=``, ``.to(device)`` and ``map_location`` takes it. Naming CUDA
(``cr.device("cuda")``) always works, as in PyTorch, so code can be written for either;
using it without a GPU (a factory's ``device=``, ``.to("cuda")``, ``.cuda()``) is refused by
:func:`no_cuda`, whose message is the same everywhere.

This module imports nothing of chainrule, so the backend, the arguments and every layer can
use it.
"""

from __future__ import annotations

from typing import Any

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
    and CUDA where there is a GPU, can be used (chainrule.backend.resolve_device). An
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
