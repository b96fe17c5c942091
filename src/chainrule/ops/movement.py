"""Shape and indexing primitives: reshape, permute, expand, indexing and its scatter, cat,
pad, gather. Most forwards are NumPy views; no op copies unless NumPy must.
"""

from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..backend import xp


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


def _along(index: Any, dim: int, ndim: int) -> tuple:
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
        where = _along(self.index, self.dim, grad.ndim)
        return (IndexAdd.apply(grad, shape=self.inputs[0].shape, index=where), None)
