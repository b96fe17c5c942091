"""Strided views, the diagonal's embedding and block matrices: diagonal, unfold and
as_strided read their input's memory with new strides (views PyTorch shares memory with);
diag_embed writes a diagonal, block_diag blocks down one. The other selections compose
movement.py's primitives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import array, fastpath
from ..array import xp
from ..array.positions import view_positions
from ..autograd.primitive import Function
from .movement import GetItem, IndexAdd, strided_grad

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor


def strided(a: Any, shape: tuple[int, ...], strides: tuple[int, ...], offset: int = 0) -> Any:
    """A writable view of a's memory (where a is writable): shape, strides in bytes, the
    first element ``offset`` bytes past a's first (in memory), bounds already checked."""
    host = array.host
    if fastpath.enabled() and type(a) is host.ndarray and a.flags.c_contiguous and a.size:
        # NumPy's array constructor over a's buffer (shape, dtype, buffer, offset, strides):
        # a fifth of as_strided's time, which builds an object with an __array_interface__
        # for each view
        return host.ndarray(shape, a.dtype, a, offset, strides)
    else:
        if offset:  # a 1-D view of the memory from a's first element, cut at the offset
            start = offset // a.itemsize
            a = xp.lib.stride_tricks.as_strided(a, (start + 1,), (a.itemsize,))[start:]
        return xp.lib.stride_tricks.as_strided(a, shape, strides)


class Diagonal(Function):
    """out = the diagonal of a over dims dim1 and dim2, offset above the main one (below
    for a negative offset), as a's last dim, a view;  grad_a = zeros like a with grad on
    that diagonal."""

    rule = "grad_a = zeros like a, with grad on the diagonal"
    view = True
    saves_inputs = False

    def keep(self, a: Any, view: Any) -> Any:
        """The view, its base kept for backward."""
        self.base, self.view_array = a, view
        return view

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (strided_grad(grad, self.base, self.view_array),)

    def forward(self, a: Any, offset: int, dim1: int, dim2: int) -> Any:
        self.offset, self.dim1, self.dim2 = offset, dim1, dim2
        out = a.diagonal(offset, dim1, dim2)  # (other dims, diagonal), read-only
        if getattr(a.flags, "writeable", False):  # writable where a is, as PyTorch's view
            out.flags.writeable = True
        return self.keep(a, out)


class DiagonalScatter(Function):
    """out = a with src written on the diagonal that a.diagonal(offset, dim1, dim2) reads, a
    copy;  grad_a = grad with zeros on that diagonal, grad_src = grad's diagonal."""

    rule = "grad_a = grad with zeros on the diagonal, grad_src = grad.diagonal(offset, dim1, dim2)"
    saves_inputs = False

    def forward(self, a: Any, src: Any, offset: int, dim1: int, dim2: int) -> Any:
        self.offset, self.dim1, self.dim2 = offset, dim1, dim2
        out = a.copy()
        diagonal = out.diagonal(offset, dim1, dim2)  # read-only: written through its flags
        diagonal.flags.writeable = True
        diagonal[...] = src
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        where = dict(offset=self.offset, dim1=self.dim1, dim2=self.dim2)
        need_a, need_src = self.needs_input_grad
        ga = DiagonalScatter.apply(grad, 0.0, **where) if need_a else None
        return ga, Diagonal.apply(grad, **where) if need_src else None


class Unfold(Diagonal):
    """out = the windows of ``size`` values, ``step`` apart, along ``dim`` of a: dim becomes
    the number of windows and a last dim of size ``size`` is added, a view;
    grad_a = zeros like a with each window's grad added back (overlaps add up).

    Diagonal's kind: a strided view, whose gradient strided_grad gives."""

    rule = "grad_a = zeros like a, with each window's grad added where it was read"

    def forward(self, a: Any, dim: int, size: int, step: int) -> Any:
        self.dim, self.size, self.step = dim, size, step
        if not a.ndim:  # a 0-d tensor unfolds as one of shape (1,), into shape (size,)
            return self.keep(a, strided(a, (size,), (a.itemsize,)))
        shape, strides = a.shape, a.strides  # strides in bytes, as strided takes them
        windows = (shape[dim] - size) // step + 1
        shape = shape[:dim] + (windows,) + shape[dim + 1 :] + (size,)  # (..., windows, ..., size)
        # a window starts step values after the one before; its values are a's along dim
        strides = strides[:dim] + (strides[dim] * step,) + strides[dim + 1 :] + (strides[dim],)
        return self.keep(a, strided(a, shape, strides))

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        if not self.base.ndim:
            return (grad.reshape(()),)
        return super().backward(grad, out)


class AsStridedView(Function):
    """out = a's memory read with the given size, stride (in elements) and storage
    offset (from the first element of the memory a views), a view;  grad_a = zeros like
    the memory with grad added at each element the view reads (twice where it reads one
    twice), read back at a's elements (PyTorch's: what the view reads beyond a is lost)."""

    rule = "grad_a = zeros like the memory, grad added at the view's elements, read at a's"
    view = True
    saves_inputs = False

    def forward(
        self, a: Any, memory: Any, size: tuple[int, ...], stride: tuple[int, ...], start: int
    ) -> Any:
        self.base, self.memory = a, memory
        item = memory.itemsize
        self.view_array = strided(memory, size, tuple([s * item for s in stride]), start * item)
        return self.view_array

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        memory, like = self.memory, grad._array
        read = (array.from_host(view_positions(memory, self.view_array), like),)
        flat = IndexAdd.apply(grad, shape=(memory.size,), index=read)
        mine = (array.from_host(view_positions(memory, self.base), like),)  # a's shape
        return GetItem.apply(flat, index=mine), None


class DiagEmbed(Function):
    """out = zeros of a's shape with a's last dim as the diagonal (offset) over dims dim1
    and dim2 of the result, which has one dim more;  grad_a = grad's diagonal there."""

    rule = "grad_a = grad.diagonal(offset, dim1, dim2)"
    saves_inputs = False

    def forward(self, a: Any, offset: int, dim1: int, dim2: int, shape: tuple[int, ...]) -> Any:
        self.offset, self.dim1, self.dim2 = offset, dim1, dim2
        out = xp.zeros(shape, dtype=a.dtype, like=a)
        Diagonal().forward(out, offset, dim1, dim2)[...] = a
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (Diagonal.apply(grad, offset=self.offset, dim1=self.dim1, dim2=self.dim2),)


class BlockDiag(Function):
    """out = the 2-D inputs as blocks down the diagonal of one matrix, zeros elsewhere;
    grad_i = the block of grad that input i filled."""

    rule = "grad_i = the block of grad that input i filled"
    saves_inputs = False

    def forward(self, *blocks: Any) -> Any:
        rows, cols = (sum(b.shape[k] for b in blocks) for k in (0, 1))
        out = xp.zeros((rows, cols), dtype=blocks[0].dtype, like=blocks[0])
        self.spans, r, c = [], 0, 0
        for b in blocks:  # each block's rows and columns in out
            self.spans.append((slice(r, r + b.shape[0]), slice(c, c + b.shape[1])))
            out[self.spans[-1]] = b
            r, c = r + b.shape[0], c + b.shape[1]
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        needs = self.needs_input_grad
        return tuple(
            grad[span] if need else None for span, need in zip(self.spans, needs, strict=True)
        )
