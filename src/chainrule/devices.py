"""Devices as PyTorch names them: ``cr.device("cpu")``, and the one check (with one wording)
that refuses every other device, since chainrule computes on the CPU only.

A script written for PyTorch says ``device = "cuda" if torch.cuda.is_available() else "cpu"``
and passes it around; with chainrule the test is False (chainrule.cuda), so the CPU is
chosen, and every ``device=``, ``.to(device)`` and ``map_location`` takes it. Naming CUDA
(``cr.device("cuda")``) works, as in PyTorch, so code can be written for either; using it
(a factory's ``device=``, ``.to("cuda")``, ``.cuda()``, ``pin_memory=True``) is refused by
:func:`cpu_only`, whose message is the same everywhere.

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


def cpu_only(op: str, what: str) -> None:
    """Raise the one error for anything that needs an accelerator: ``what`` names it
    ("device 'cuda'", "pin_memory=True", ".cuda()")."""
    raise ValueError(
        f"{op}: chainrule computes on the CPU; got {what} (there is no CUDA, MPS or other "
        "accelerator here: use device 'cpu', or leave the device out)"
    )


class device:  # noqa: N801 (PyTorch's name: torch.device)
    """PyTorch's ``torch.device``: a type ('cpu', 'cuda', ...) and an optional index.

    ``device("cpu")``, ``device("cpu:0")``, ``device("cpu", 0)`` and ``device(other)`` as in
    PyTorch, with its str, repr, equality and hash (a device never equals a string:
    ``t.device.type == "cpu"`` is the test). Any type PyTorch knows can be named; only the
    CPU can be used (see :func:`cpu_device`). An integer alone means a CUDA device in
    PyTorch, so ``device(0)`` is refused at once.
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
            cpu_only("device", f"device {type} (an integer names a CUDA device)")
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


def cpu_device(dev: Any, op: str) -> device:
    """A ``device=`` argument checked: None or the CPU ('cpu', 'cpu:0', ``device('cpu')``)
    gives ``device('cpu')``; anything else (CUDA, MPS, an integer index) is refused by
    :func:`cpu_only`."""
    if dev is None:
        return CPU
    if isinstance(dev, device):
        if dev.type == "cpu":
            return CPU
        cpu_only(op, f"device {str(dev)!r}")
    if isinstance(dev, str):
        if dev.partition(":")[0] == "cpu":
            device(dev)  # a malformed index ('cpu:x') is an error, as in PyTorch
            return CPU
        cpu_only(op, f"device {dev!r}")
    if isinstance(dev, int) and not isinstance(dev, bool):
        cpu_only(op, f"device {dev} (an integer names a CUDA device)")
    raise TypeError(f"{op}: device must be a string, a cr.device or None; got {dev!r}")


def no_pinning(pin_memory: bool, op: str) -> None:
    """A factory's ``pin_memory``: pinned memory is for copies to a CUDA device."""
    if pin_memory:
        cpu_only(op, "pin_memory=True (pinned memory serves copies to a CUDA device)")
