"""How a Tensor's elements lie in memory, read from its array's strides and address, in
elements, as PyTorch's: stride, storage_offset, contiguity in a memory format, data_ptr.
Making a copy in another layout is clone's and to's (core.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import array
from ..arguments import normalize_dim
from ..constants import contiguous_format, laid_out, layout, memory_order, preserve_format, strided
from ..ops import elementwise, movement
from .core import Core

if TYPE_CHECKING:  # Tensor in annotations alone (core.py says why)
    from . import Tensor
    from .core import TensorSelf


class Layout(Core):
    __slots__ = ()

    @property
    def layout(self: TensorSelf) -> layout:
        """How the elements are kept: ``cr.strided``, a dense array (a sparse tensor says
        ``cr.sparse_coo``)."""
        return strided

    @property
    def is_sparse(self: TensorSelf) -> bool:
        """False: a dense tensor (a sparse tensor says True)."""
        return False

    def to_dense(self: TensorSelf, dtype: Any = None) -> Tensor:
        """A dense tensor is its own dense form (in ``dtype`` where one is given)."""
        return self if dtype is None else self.to(dtype)

    def contiguous(self: TensorSelf, memory_format: Any = None) -> Tensor:
        """The tensor itself where it is contiguous (in memory_format's layout: C order by
        default), else a copy so laid out (differentiable, new memory)."""
        if self.is_contiguous(memory_format):
            return self
        if memory_format not in (None, contiguous_format, preserve_format):
            return self.clone(memory_format=memory_format)
        # One copy: NumPy's reshape copies, in C order, what it cannot view as 1-D; a 1-D
        # view it can make is a strided one, which a copy (in its K order) makes contiguous.
        flat = movement.Reshape.apply(self, shape=(self._array.size,))
        if not flat.is_contiguous():
            flat = elementwise.Cast.apply(flat, dtype=self.dtype)
        return movement.Reshape.apply(flat, shape=self._array.shape)  # a view of the copy

    def is_contiguous(self: TensorSelf, memory_format: Any = None) -> bool:
        """Whether the elements lie in C order (or memory_format's) without gaps (PyTorch's
        definition: dims of size 1 and empty tensors do not count against it)."""
        order = memory_order(memory_format, self.ndim, "is_contiguous")
        if order is None or order == tuple(range(self.ndim)):
            return bool(self._array.flags.c_contiguous)
        return laid_out(self._array, order)

    def stride(self: TensorSelf, dim: Any = None) -> Any:
        """The step in elements between neighbours along each dim (a tuple), or along dim.
        Where the array's step says nothing, PyTorch's: a dim of size 1 that NumPy steps by
        0 (an axis indexing inserted) steps as unsqueeze's, over the dim after it; an empty
        tensor (NumPy steps by 0 along every dim) steps as a new one, in C order."""
        arr = self._array
        shape, item = arr.shape, arr.itemsize
        steps = [s // item for s in arr.strides]
        if 0 in steps and (1 in shape or not arr.size):
            after = 1  # the span of the dims after d, as PyTorch's unsqueeze reads it
            for d in reversed(range(arr.ndim)):
                if not arr.size or shape[d] == 1 and steps[d] == 0:
                    steps[d] = after
                after = steps[d] * max(shape[d], 1)
        return tuple(steps) if dim is None else steps[normalize_dim(dim, arr.ndim, "stride", shape)]

    def storage_offset(self: TensorSelf) -> int:
        """Where the first element lies, in elements from the first element of the tensor
        this one is a view of (0 for a tensor that is no view: its memory is its own, as a
        tensor from_numpy makes of a slice of an array starts its own, in PyTorch too)."""
        if self._base is None:
            return 0
        arr, root = self._array, self._base._array
        start = array.data_ptr(root)  # the memory's first element: last along a flipped dim
        for s, n in zip(root.strides, root.shape, strict=True):  # a loop: sum() costs more
            if s < 0 < n:
                start += s * (n - 1)
        return (array.data_ptr(arr) - start) // arr.itemsize

    def element_size(self: TensorSelf) -> int:
        """Bytes per element."""
        return int(self._array.itemsize)

    def data_ptr(self: TensorSelf) -> int:
        """The address of the first element of the tensor's array (in the GPU's memory for a
        CUDA tensor)."""
        return array.data_ptr(self._array)
