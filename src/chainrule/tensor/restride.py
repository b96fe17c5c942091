"""Tensor's in-place shape methods (t_, transpose_, squeeze_, unsqueeze_, as_strided_,
resize_, detach_): the tensor itself takes another shape or strides over the same memory,
its version bumped, with PyTorch's refusals and, in a graph, the view op's gradient under
PyTorch's node name (``x.t_()`` is ``TBackward1``). The views are shape.py's and
indexing.py's; writes of values, inplace.py's."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .. import array
from ..arguments import size_arg
from ..autograd import forward_ad
from ..autograd.mode import is_grad_enabled
from ..autograd.node import named
from ..autograd.versions import bump
from ..constants import memory_order
from . import views
from .core import Core

if TYPE_CHECKING:  # Tensor in annotations alone (core.py says why)
    from . import Tensor
    from .core import TensorSelf


class InPlaceShape(Core):
    """The in-place methods that change a tensor's shape or strides, not its values."""

    __slots__ = ()

    def t_(self: TensorSelf) -> Tensor:
        return self._restrided("t_", lambda t: t.t(), "TBackward1")

    def transpose_(self: TensorSelf, dim0: int, dim1: int) -> Tensor:
        return self._restrided(
            "transpose_", lambda t: t.transpose(dim0, dim1), "TransposeBackward1"
        )

    def swapdims_(self: TensorSelf, dim0: int, dim1: int) -> Tensor:
        return self._restrided("swapdims_", lambda t: t.transpose(dim0, dim1), "TransposeBackward1")

    def swapaxes_(self: TensorSelf, axis0: int, axis1: int) -> Tensor:
        return self._restrided(
            "swapaxes_", lambda t: t.transpose(axis0, axis1), "TransposeBackward1"
        )

    def squeeze_(self: TensorSelf, dim: Any = None) -> Tensor:
        """squeeze in place: every size-1 dim, or those of dim (an int or a tuple)."""
        if dim is None:
            return self._restrided("squeeze_", lambda t: t.squeeze(), "SqueezeBackward3")
        name = "SqueezeBackward5" if isinstance(dim, (tuple, list)) else "SqueezeBackward4"
        return self._restrided("squeeze_", lambda t: t.squeeze(dim), name)

    def unsqueeze_(self: TensorSelf, dim: int) -> Tensor:
        return self._restrided("unsqueeze_", lambda t: t.unsqueeze(dim), "UnsqueezeBackward1")

    def as_strided_(
        self: TensorSelf, size: Any, stride: Any, storage_offset: int | None = None
    ) -> Tensor:
        return self._restrided(
            "as_strided_",
            lambda t: t.as_strided(size, stride, storage_offset),
            "AsStridedBackward1",
        )

    def resize_(self: TensorSelf, *sizes: Any, memory_format: Any = None) -> Tensor:
        """This tensor with shape ``sizes``, contiguous, in place: its first elements kept
        (in memory order), the rest, where it grows, uninitialised, as PyTorch's. Refused for
        a tensor that requires grad, in grad mode or not, as PyTorch refuses it."""
        shape = size_arg(sizes, "resize_")
        if self.requires_grad:
            raise RuntimeError(
                f"resize_: cannot resize variables that require grad; got shape {self.shape}; "
                "resize a detach()ed tensor, or use reshape"
            )
        order = memory_order(memory_format, len(shape), "resize_")
        if order is not None and order != tuple(range(len(shape))):
            raise ValueError(
                f"resize_: only the contiguous memory format is supported; got {memory_format}"
            )
        arr = self._array
        if shape == arr.shape:
            return self
        n = math.prod(shape)
        xp = array.module_of(arr)
        if arr.flags.c_contiguous and n <= arr.size:  # within its memory: a view of it
            self._array = arr.reshape(-1)[:n].reshape(shape)
        elif arr.flags.c_contiguous or arr.size <= 1:
            grown = xp.empty(n, dtype=arr.dtype)
            grown[: arr.size] = arr.reshape(-1)
            self._array = grown.reshape(shape)
        else:
            raise RuntimeError(
                f"resize_: a tensor whose elements are not in memory order (strides "
                f"{self.stride()}) resized to another shape is not supported; got shape "
                f"{self.shape} to {shape}; clone() it first"
            )
        bump(self)
        return self

    def resize_as_(self: TensorSelf, the_template: Any, memory_format: Any = None) -> Tensor:
        return self.resize_(*the_template.shape, memory_format=memory_format)

    def detach_(self: TensorSelf) -> Tensor:
        """This tensor cut from the graph, in place: no node, no gradient wanted. A view is
        refused, as PyTorch refuses it (its base would still reach the graph)."""
        if self._base is not None:
            raise RuntimeError(
                f"detach_: Can't detach views in-place; got a view of shape {self.shape}; "
                "use detach() instead"
            )
        self.grad_fn, self.requires_grad = None, False
        return self

    def _restrided(self: TensorSelf, op: str, view: Any, name: str) -> Tensor:
        """Make this tensor ``view(self)`` (a view of its memory) in place, its version
        bumped; in a graph, it takes the view's node, named ``name``, over a stand-in for
        its old self (so nodes recorded before reach that), with _write's refusals."""
        grad = is_grad_enabled()
        views.refuse_write(self, op, grad)
        carried = forward_ad.tangent_of(self) if forward_ad.active[0] else None
        old = views.stand_in(self) if grad and self.requires_grad else self
        new = view(old)
        if carried is not None:  # forward mode: the tangent turns as the tensor does
            forward_ad.set_tangent(self, view(carried))
        if new is old:  # nothing to turn (squeeze_ of no size-1 dim): a view all the same
            new = old[...]
        self._array = new._array
        bump(self)
        if new.grad_fn is not None:
            named(new, name)
            views.rebase(self, old, new.grad_fn)
        return self
