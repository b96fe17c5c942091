"""torch.nn.parameter's kinds of module state: Parameter (defined in module.py, beside the
walker that finds it), Buffer (a tensor that registers itself as a buffer when a module holds
it), and the uninitialized parameter and buffer of the lazy modules (lazy.py), which learn
their shape from the first input.
"""

from __future__ import annotations

from typing import Any

from .. import array
from ..arguments import resolve_device
from ..tensor import Tensor
from .module import Parameter

__all__ = ["Buffer", "Parameter", "UninitializedBuffer", "UninitializedParameter", "is_lazy"]

xp = array.xp


class _BufferKind(type):
    """``isinstance(t, Buffer)`` holds for the tensors Buffer made, as PyTorch's: they are
    plain Tensors marked ``_is_buffer``."""

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)


class Buffer(metaclass=_BufferKind):
    """``self.running = nn.Buffer(t)`` in a module's ``__init__`` registers ``running`` as a
    buffer (state that is not trained), in ``state_dict`` unless ``persistent=False``: the
    attribute form of ``register_buffer``. ``Buffer(t)`` is ``t.detach()`` (sharing its data,
    keeping its requires_grad), marked so."""

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Any:
        if data is None:
            data = Tensor._make(xp.empty(0, dtype=array.get_default_dtype()), False)
        if not isinstance(data, Tensor) or isinstance(data, Parameter):
            raise TypeError(
                f"Buffer: data must be a Tensor (not a Parameter); got {type(data).__name__}"
            )
        t: Any = data.detach().requires_grad_(data.requires_grad)
        t.persistent = bool(persistent)
        t._is_buffer = True
        return t


class _Uninitialized:
    """What UninitializedParameter and UninitializedBuffer share: an empty array that keeps
    the dtype and device the materialized tensor will have."""

    cls_to_become: type = Tensor
    _array: Any
    requires_grad: bool

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Become a ``cls_to_become`` of ``shape`` (uninitialized values), on this one's
        device and with its dtype unless given."""
        like = self._array if device is None else array.like(resolve_device(device, "materialize"))
        dtype = self._array.dtype if dtype is None else array.as_dtype(dtype)
        self._array = xp.empty(tuple(shape), dtype=dtype, like=like)
        self.__class__ = self.cls_to_become  # type: ignore[assignment]

    def detach(self) -> Any:
        """Itself: it holds no data yet (state_dict gives it as it is, as PyTorch's)."""
        return self

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __reduce_ex__(self, protocol: Any) -> Any:
        """Pickled as what it is, uninitialized, with its dtype (as PyTorch's, a load with
        weights_only refuses it unless allowed)."""
        return type(self), (self.requires_grad, None, self._array.dtype)


class UninitializedParameter(_Uninitialized, Parameter):
    """A Parameter whose shape is not known yet (a lazy module's, until its first forward);
    ``materialize(shape)`` makes it a Parameter of that shape, the same object."""

    cls_to_become = Parameter

    def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> None:
        dtype = array.as_dtype(dtype) or array.get_default_dtype()
        super().__init__(xp.empty(0, dtype=dtype, like=array.like(device)), requires_grad)


class UninitializedBuffer(_Uninitialized, Tensor):
    """A buffer whose shape is not known yet; ``materialize(shape)`` makes it a Tensor."""

    cls_to_become = Tensor

    def __init__(self, requires_grad: bool = False, device: Any = None, dtype: Any = None) -> None:
        dtype = array.as_dtype(dtype) or array.get_default_dtype()
        self._array = xp.empty(
            0, dtype=dtype, like=array.like(resolve_device(device, "UninitializedBuffer"))
        )
        self.grad = None
        self.grad_fn = None
        self.requires_grad = requires_grad


def is_lazy(param: Any) -> bool:
    """Whether ``param`` is an UninitializedParameter or UninitializedBuffer."""
    return isinstance(param, _Uninitialized)
