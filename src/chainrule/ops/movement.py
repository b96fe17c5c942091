"""Shape and indexing primitives: reshape, permute, expand, indexing and its scatter, cat,
pad, gather, scatter. Most forwards are NumPy views; no op copies unless NumPy must.
"""

from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..backend import xp
from .elementwise import Where


class Reshape(Function):
    """out = a viewed with a new shape;  grad_a = g reshaped back."""

    rule = "grad_a = grad reshaped to a's shape"

    def forward(self, a, shape):
        return a.reshape(shape)

    def backward(self, grad, out):
        return (grad.reshape(self.inputs[0].shape),)


class Permute(Function):
    """out = a with its dims reordered;  grad_a = g permuted by the inverse order."""

    rule = "grad_a = grad permuted back by the inverse order"

    def forward(self, a, dims):
        self.dims = dims
        return a.transpose(dims)

    def backward(self, grad, out):
        inverse = tuple(sorted(range(len(self.dims)), key=self.dims.__getitem__))
        return (grad.permute(*inverse),)


class Expand(Function):
    """out = a broadcast to a larger shape (a read-only view);  grad_a = g, which the engine
    sums back over the broadcast dims."""

    rule = "grad_a = grad (the engine sums it over the expanded dims)"

    def forward(self, a, shape):
        return xp.broadcast_to(a, shape)

    def backward(self, grad, out):
        return (grad,)


def _has_int_array(index: tuple) -> bool:
    return any(isinstance(i, xp.ndarray) and i.dtype.kind in "iu" for i in index)


class GetItem(Function):
    """out = a[index];  grad_a = zeros like a with g added at index (repeats accumulate)."""

    rule = "grad_a = zeros like a, with grad added at index"

    def forward(self, a, index):
        self.index = index
        return a[index]

    def backward(self, grad, out):
        return (IndexAdd.apply(grad, shape=self.inputs[0].shape, index=self.index),)


class IndexAdd(Function):
    """out = zeros(shape) with g added at index;  grad_g = out_grad[index].

    The backward of indexing; repeated integer indices accumulate (np.add.at), other indexes
    take a plain assignment, which is much faster.
    """

    rule = "grad_g = grad[index]"

    def forward(self, g, shape, index):
        self.index = index
        out = xp.zeros(shape, dtype=g.dtype)
        if _has_int_array(index):
            xp.add.at(out, index, g)
        else:
            out[index] = g
        return out

    def backward(self, grad, out):
        return (grad[self.index],)


class Cat(Function):
    """out = the inputs joined along dim;  grad_i = the slice of g that input i filled."""

    rule = "grad_i = the slice of grad that input i filled"

    def forward(self, *arrays, dim):
        self.dim = dim
        self.bounds = list(xp.cumsum([0] + [a.shape[dim] for a in arrays]))
        return xp.concatenate(arrays, axis=dim)

    def backward(self, grad, out):
        lead = (slice(None),) * self.dim
        spans = zip(self.bounds[:-1], self.bounds[1:], self.needs_input_grad, strict=True)
        return tuple(
            grad[lead + (slice(int(lo), int(hi)),)] if need else None for lo, hi, need in spans
        )


class Pad(Function):
    """out = a with constant padding;  grad_a = the middle part of g.

    ``widths`` is NumPy's ((before, after), ...) for every dim.
    """

    rule = "grad_a = grad with the padding cut off"

    def forward(self, a, widths, value=0.0):
        self.widths = widths
        return xp.pad(a, widths, mode="constant", constant_values=value)

    def backward(self, grad, out):
        pairs = zip(self.widths, grad.shape, strict=True)
        index = tuple(slice(lo, n - hi) for (lo, hi), n in pairs)  # the unpadded middle
        return (grad[index],)


def along_dim(index: Any, dim: int, ndim: int) -> tuple:
    """A full index that picks index[..] along dim and every position on the other dims."""
    grid = list(xp.ogrid[tuple(slice(n) for n in index.shape)])
    grid[dim] = index
    return tuple(grid[:ndim])


class Gather(Function):
    """out[i][j] = a[i][index[i][j]] along dim (torch.gather / take_along_dim);
    grad_a = zeros like a with g added at the gathered places."""

    rule = "grad_a = zeros like a, with grad added where the values were gathered"

    def forward(self, a, index, dim):
        self.index, self.dim = index, dim
        return xp.take_along_axis(a, index, axis=dim)

    def backward(self, grad, out):
        where = along_dim(self.index, self.dim, grad.ndim)
        return (IndexAdd.apply(grad, shape=self.inputs[0].shape, index=where), None)


class Scatter(Function):
    """out = a with src written at index along dim (torch.scatter; for dim 1,
    out[i][index[i][j]] = src[i][j]), src a tensor at least index's size or a number;
    grad_a = g with zeros where src was written; grad_src = g gathered at index (zeros where
    src reaches past index).

    A repeated position keeps the last value written, as NumPy's assignment does.
    """

    rule = "grad_a = grad with zeros where src was written, grad_src = grad gathered at index"

    def forward(self, a, src, index, dim):
        self.where = along_dim(index, dim, a.ndim)
        self.written = xp.zeros(a.shape, dtype=bool)
        self.written[self.where] = True
        out = a.copy()
        out[self.where] = src[tuple(slice(n) for n in index.shape)] if xp.ndim(src) else src
        return out

    def backward(self, grad, out):
        a, src = self.inputs
        need_a, need_src = self.needs_input_grad
        grad_a = Where.apply(self.written, 0.0, grad) if need_a else None
        if not need_src:
            return grad_a, None
        picked = grad[self.where]  # index's shape
        widths = tuple((0, n - m) for n, m in zip(src.shape, picked.shape, strict=True))
        return grad_a, Pad.apply(picked, widths=widths) if any(w for _, w in widths) else picked
