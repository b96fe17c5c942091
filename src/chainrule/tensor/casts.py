"""A Tensor in another dtype by PyTorch's older names (``float()``, ``long()``, ``byte()``,
``type()``, ``type_as``) and new tensors of its dtype and device (the ``new_*`` methods).
Every cast is ``to``'s (core.py), which keeps the gradient between floating dtypes."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .. import array
from ..arguments import resolve_device, shape_arg, size_arg, spread_or_keyword
from .core import HOST_ARRAY, Core, make

if TYPE_CHECKING:  # Tensor in annotations alone (core.py says why)
    from . import Tensor
    from .core import TensorSelf

xp = array.xp


class Casts(Core):
    __slots__ = ()

    def type(self: TensorSelf, dtype: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
        """No argument: the type's name as PyTorch's, with chainrule's ('chainrule.FloatTensor').
        With a dtype, a legacy type (cr.LongTensor) or such a name: ``to`` that dtype."""
        if dtype is None:
            return f"chainrule.{_TYPE_NAMES.get(self.dtype.name, 'Tensor')}"
        if isinstance(dtype, str) and dtype.partition(".")[0] in ("torch", "chainrule"):
            names = {v: k for k, v in _TYPE_NAMES.items()}
            name = dtype.partition(".")[2]
            if name not in names:
                raise ValueError(f"type: unknown tensor type {dtype!r}")
            dtype = names[name]
        dtype = getattr(dtype, "dtype", dtype)  # a legacy type such as cr.LongTensor
        return self.to(dtype)

    def type_as(self: TensorSelf, other: Tensor) -> Tensor:
        """This tensor in other's dtype."""
        return self.to(other.dtype)

    def _cast(self: TensorSelf, dtype: Any, memory_format: Any) -> Tensor:
        """float(), half(), ...: to(dtype), a memory format's layout where one is given."""
        if memory_format is None:
            return self.to(dtype)
        return self.to(dtype, memory_format=memory_format)

    def half(self: TensorSelf, memory_format: Any = None) -> Tensor:
        return self._cast(array.float16, memory_format)

    def bfloat16(self: TensorSelf, memory_format: Any = None) -> Tensor:
        """This tensor in bfloat16, a storage dtype (cast, saved, loaded; no leaf of it
        requires grad): the gradient of a cast goes back to this tensor's dtype."""
        return self._cast(array.bfloat16, memory_format)

    def byte(self: TensorSelf, memory_format: Any = None) -> Tensor:
        return self._cast(array.uint8, memory_format)

    def char(self: TensorSelf, memory_format: Any = None) -> Tensor:
        return self._cast(array.int8, memory_format)

    def short(self: TensorSelf, memory_format: Any = None) -> Tensor:
        return self._cast(array.int16, memory_format)

    # -- new tensors of this one's dtype (PyTorch's new_* methods) -------------------------

    def new_tensor(
        self: TensorSelf,
        data: Any,
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool = False,
    ) -> Tensor:
        """A copy of data as a tensor of this one's dtype (or dtype), on this one's device
        (or device)."""
        dev = self.device if device is None else resolve_device(device, "new_tensor")
        data = data._array if isinstance(data, Core) else data
        t = make(array.from_data(data, dtype or self.dtype, dev))
        return t.requires_grad_() if requires_grad else t

    def new_zeros(
        self: TensorSelf, *sizes: Any, size: Any = None, dtype: Any = None, device: Any = None,
        requires_grad: bool = False,
    ) -> Tensor:  # fmt: skip
        sizes = spread_or_keyword(sizes, size, "size", "new_zeros")
        return self._new(xp.zeros, sizes, dtype, device, requires_grad, "new_zeros")

    def new_ones(
        self: TensorSelf, *sizes: Any, size: Any = None, dtype: Any = None, device: Any = None,
        requires_grad: bool = False,
    ) -> Tensor:  # fmt: skip
        sizes = spread_or_keyword(sizes, size, "size", "new_ones")
        return self._new(xp.ones, sizes, dtype, device, requires_grad, "new_ones")

    def new_empty(
        self: TensorSelf, *sizes: Any, size: Any = None, dtype: Any = None, device: Any = None,
        requires_grad: bool = False,
    ) -> Tensor:  # fmt: skip
        sizes = spread_or_keyword(sizes, size, "size", "new_empty")
        return self._new(xp.empty, sizes, dtype, device, requires_grad, "new_empty")

    def new_full(
        self: TensorSelf,
        size: Sequence[int],
        fill_value: Any,
        *,
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool = False,
    ) -> Tensor:
        def fill(shape: Any, dtype: Any, like: Any) -> Any:
            return xp.full(shape, fill_value, dtype=dtype, like=like)

        return self._new(fill, (size,), dtype, device, requires_grad, "new_full")

    def new_empty_strided(
        self: TensorSelf,
        size: Sequence[int],
        stride: Sequence[int],
        *,
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool = False,
    ) -> Tensor:
        """An uninitialised tensor of size whose elements lie stride elements apart along
        each dim (``stride()`` reads them back), on memory of its own just large enough."""
        op = "new_empty_strided"
        shape, steps = size_arg((size,), op), size_arg((stride,), op)
        if len(steps) != len(shape):
            raise ValueError(
                f"{op}: size and stride must have the same length; got size {shape} and "
                f"stride {steps}"
            )
        span = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, steps, strict=True))
        flat = self._new(xp.empty, ((span,),), dtype, device, False, op)._array
        if type(flat) is HOST_ARRAY and math.prod(shape) > 0:
            made = xp.lib.stride_tricks.as_strided(
                flat, shape, tuple(s * flat.itemsize for s in steps)
            )
        else:  # nothing to lay out (or a device array): C order
            made = flat[: math.prod(shape)].reshape(shape)
        t = make(made)
        return t.requires_grad_() if requires_grad else t

    def _new(
        self: TensorSelf,
        factory: Any,
        size: tuple,
        dtype: Any,
        device: Any,
        requires_grad: bool,
        op: str,
    ) -> Tensor:
        like = self._array if device is None else array.like(resolve_device(device, op))
        dtype = array.as_dtype(dtype) or self.dtype
        t = make(factory(shape_arg(size), dtype=dtype, like=like))
        return t.requires_grad_() if requires_grad else t

    # Last in the class: these names shadow the builtins for the rest of its body.

    # with a memory_format, the copy is laid out as it says (see to)
    def float(self: TensorSelf, memory_format: Any = None) -> Tensor:
        return self._cast(array.float32, memory_format)

    def double(self: TensorSelf, memory_format: Any = None) -> Tensor:
        return self._cast(array.float64, memory_format)

    def long(self: TensorSelf, memory_format: Any = None) -> Tensor:
        return self._cast(array.int64, memory_format)

    def int(self: TensorSelf, memory_format: Any = None) -> Tensor:
        return self._cast(array.int32, memory_format)

    def bool(self: TensorSelf, memory_format: Any = None) -> Tensor:
        return self._cast(array.bool_, memory_format)


# dtype names -> PyTorch's legacy type names, for Tensor.type()
_TYPE_NAMES = {
    "float32": "FloatTensor",
    "float64": "DoubleTensor",
    "float16": "HalfTensor",
    "bfloat16": "BFloat16Tensor",
    "int64": "LongTensor",
    "int32": "IntTensor",
    "int16": "ShortTensor",
    "int8": "CharTensor",
    "uint8": "ByteTensor",
    "bool": "BoolTensor",
}
