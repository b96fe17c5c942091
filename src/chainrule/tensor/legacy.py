"""PyTorch's legacy constructor rules, for ``cr.Tensor(...)``: sizes (two or more ints, or one
Size) make an uninitialised tensor, one other argument is data, none an empty tensor."""

from __future__ import annotations

from typing import Any

from .. import array
from ..arguments import resolve_device, size_arg
from ..array.tensor_type import tensor_type
from .size import Size


def legacy_array(args: tuple, dtype: Any, device: Any, op: str) -> Any:
    """The array of ``op(*args, dtype=, device=)``: ``op()`` empty, ``op(2, 3)`` or
    ``op(size)`` (a Size, as ``t.shape``) uninitialised (of dtype, or the default float
    dtype), ``op(data)`` a copy of data (a list, tuple, array, number or tensor) in dtype, or
    the dtype data has (as ``cr.tensor``'s).

    Two differences from PyTorch's ``torch.Tensor``, where chainrule's code and programs
    rely on ``Tensor(x)`` copying x as ``cr.tensor`` does: one int is data (``Tensor(3)`` is
    a 0-d int64 tensor, PyTorch's a size), and data keeps its dtype (PyTorch's is cast to
    the default float dtype)."""
    dev = array.get_default_device() if device is None else resolve_device(device, op)
    if len(args) == 1 and not isinstance(args[0], Size):
        data = args[0]
        if isinstance(data, tensor_type()):
            data = data._array
        return array.to_array(data, dtype, dev)
    sizes = args[0] if len(args) == 1 and isinstance(args[0], Size) else args
    if not all(isinstance(n, int) for n in sizes):
        raise TypeError(f"{op}: expected sizes (ints) or one sequence of data; got {args!r}")
    shape = size_arg(sizes, op) or (0,)  # no sizes: PyTorch's empty tensor is (0,)
    kind = array.as_dtype(dtype) or array.get_default_dtype()
    return array.xp.empty(shape, dtype=kind, like=array.like(dev))
