"""Shape and indexing primitives: reshape, permute, expand, indexing and its scatter, cat,
pad, gather, scatter. Most forwards are NumPy views; no op copies unless NumPy must.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from .. import array, fastpath
from ..array import errstate, is_floating, ndarray, xp
from ..array.positions import view_positions
from ..autograd.primitive import Function
from ..constants import channels_last_order
from .elementwise import Where

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor

_HOST = array.host.ndarray  # a CPU array's type


class ToDevice(Function):
    """out = a copied to another device (Tensor.to, .cuda, .cpu)"""

    rule = "grad_a = grad copied back to a's device"
    saves_inputs = False

    def forward(self, a: Any, device: Any) -> Any:
        self.source = array.device_of(a)
        return array.to_device(a, device)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad.to(self.source),)


class Reshape(Function):
    """out = a viewed with a new shape;  grad_a = g reshaped back."""

    rule = "grad_a = grad reshaped to a's shape"
    saves_inputs = False
    view = True

    def forward(self, a: Any, shape: tuple[int, ...]) -> Any:
        return a.reshape(shape)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad.reshape(self.inputs[0].shape),)


class Permute(Function):
    """out = a with its dims reordered;  grad_a = g permuted by the inverse order."""

    rule = "grad_a = grad permuted back by the inverse order"
    saves_inputs = False
    view = True

    def forward(self, a: Any, dims: tuple[int, ...]) -> Any:
        self.dims = dims
        return a.transpose(dims)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        inverse = tuple(sorted(range(len(self.dims)), key=self.dims.__getitem__))
        return (grad.permute(inverse),)


class Expand(Function):
    """out = a broadcast to a larger shape (a read-only view);  grad_a = g, which the engine
    sums back over the broadcast dims."""

    rule = "grad_a = grad (the engine sums it over the expanded dims)"
    saves_inputs = False
    view = True

    def forward(self, a: Any, shape: tuple[int, ...]) -> Any:
        if fastpath.enabled() and type(a) is _HOST and a.flags.c_contiguous and a.size:
            # NumPy's array constructor over a's buffer, a step of 0 along each dim grown:
            # broadcast_to's read-only view without its iterator (3.5 against 2.1 us)
            have, steps = a.shape, a.strides
            lead = len(shape) - len(have)
            strides = [0] * lead  # a loop, not zip() and a comprehension: a third cheaper
            for i, m in enumerate(have):
                strides.append(steps[i] if m == shape[lead + i] else 0)
            out = _HOST(shape, a.dtype, buffer=a, strides=strides)
            out.setflags(write=False)
            return out
        return xp.broadcast_to(a, shape)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad,)


def viewed(op: type[Function], t: Tensor, *arrays: Any, **options: Any) -> Tensor:
    """``op.apply(t, *arrays, **options)`` for a view op of one Tensor (reshape, permute,
    expand, a slice; ``arrays``: arrays it reads besides, as_strided's memory); with the switch
    on, the view made directly where no node would be recorded."""
    if fastpath.enabled():
        out = fastpath.view_made(op, t, options, arrays)
        if out is not None:
            return out
    return op.apply(t, *arrays, **options)


def sliced(op: type[Function], t: Tensor, indexes: list[tuple]) -> list[Tensor]:
    """``[op.apply(t, index=i) for i in indexes]`` for op GetItem or Unbind and basic indexes
    (the pieces of split, chunk, unbind); with the switch on, the views made directly where
    no node would be recorded."""
    if fastpath.enabled():
        out = fastpath.slices_made(t, indexes)
        if out is not None:
            return out
    return [op.apply(t, index=i) for i in indexes]


def _has_array(index: tuple) -> bool:
    for i in index:  # a loop, not any() over a generator: on every x[i]'s way
        if isinstance(i, ndarray):
            return True
    return False


def _has_int_array(index: tuple) -> bool:
    return any(isinstance(i, ndarray) and i.dtype.kind in "iu" for i in index)


class Repeat(Function):
    """out = a tiled sizes[i] times along each dim (1s put before a's shape where sizes is
    longer), a copy;  grad_a = grad split into its tiles, which are summed.

    With a's shape (n0, n1, ...) seen as (1, n0, 1, n1, ...) and broadcast to (r0, n0, r1,
    n1, ...), out is that merged to (r0 * n0, r1 * n1, ...); grad, split back the same way,
    summed over the r dims."""

    rule = "grad_a = grad viewed as (r0, n0, r1, n1, ...), summed over each r"
    saves_inputs = False

    def forward(self, a: Any, sizes: tuple[int, ...]) -> Any:
        self.sizes = sizes
        shape = (1,) * (len(sizes) - a.ndim) + a.shape
        ones: list[int] = []
        tiled: list[int] = []
        merged: list[int] = []
        for r, n in zip(sizes, shape, strict=True):
            ones += (1, n)  # (1, n0, 1, n1, ...)
            tiled += (r, n)  # (r0, n0, r1, n1, ...)
            merged.append(r * n)  # (r0 * n0, r1 * n1, ...)
        out = xp.empty(merged, dtype=a.dtype, like=a)
        out.reshape(tiled)[...] = a.reshape(ones)  # one copy, broadcast into the tiles
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        sizes, have = self.sizes, self.inputs[0].shape
        shape = (1,) * (len(sizes) - len(have)) + tuple(have)
        tiled = tuple(v for r, n in zip(sizes, shape, strict=True) for v in (r, n))
        summed = grad.reshape(tiled).sum(tuple(range(0, len(tiled), 2)))  # (n0, n1, ...)
        return (summed.reshape(have),)


class GetItem(Function):
    """out = a[index];  grad_a = zeros like a with g added at index (repeats accumulate)."""

    rule = "grad_a = zeros like a, with grad added at index"
    saves_inputs = False
    view = True

    def forward(self, a: Any, index: tuple) -> Any:
        self.index = index
        if not _has_array(index):  # a view; of an element, PyTorch's 0-d one (NumPy's a copy)
            return a[index] if Ellipsis in index else a[index + (Ellipsis,)]
        if _picks_slices(index):
            # (a small a is ruled out first, by its size, before the switch is asked)
            if a.size >= ROWS_MIN and fastpath.enabled() and _few_columns(a, index):
                return _columns_copied(a, index[-1])
            # one take along the dim, in C order (a[index] lays the picked dim out first)
            return xp.take(a, index[-1], axis=len(index) - 1)
        out = a[index]
        if not out.flags.c_contiguous:
            out = out.copy(order="C")  # laid out in C order, as PyTorch's
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (IndexAdd.apply(grad, shape=self.inputs[0].shape, index=self.index),)


class Unbind(GetItem):
    """out = a's slice at one index along a dim, that dim removed: one of unbind's pieces,
    each its own node (as PyTorch names them, UnbindBackward0);  grad_a as GetItem's."""

    rule = "grad_a = zeros like a, with grad at the piece's index"


class IndexAdd(Function):
    """out = zeros(shape) with g added at index;  grad_g = out_grad[index].

    The backward of indexing; repeated integer indices accumulate (np.add.at, or the fast
    path's ``add_rows`` for whole rows, Embedding's lookup), other indexes take a plain
    assignment, which is much faster.
    """

    rule = "grad_g = grad[index]"
    saves_inputs = False

    def forward(self, g: Any, shape: Any, index: Any) -> Any:
        self.index = index
        out = xp.zeros(shape, dtype=g.dtype, like=g)
        if _has_int_array(index):
            if not fastpath.add_at_rows(out, index, g):
                xp.add.at(out, index, g)
        else:
            out[index] = g
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad[self.index],)


class CopySlices(Function):
    """base = base with a view's elements replaced by value: a write through a view,
    recorded (PyTorch's CopySlices);  grad_base = grad with zeros at the view's elements;
    grad_value = grad at them.

    Forward computes nothing: the write went into base's memory through the view already.
    The view's elements are found from the two arrays' layouts when backward needs them.
    """

    rule = "grad_base = grad with zeros at the view's elements; grad_value = grad at them"
    saves_inputs = False

    def forward(self, base: Any, value: Any, view: Any) -> Any:
        self.base, self.view_array = base, view
        return base

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        flat = grad.reshape(-1)
        at = (array.from_host(view_positions(self.base, self.view_array), grad._array),)
        needs = self.needs_input_grad
        ga = IndexPut.apply(flat, 0.0, index=at).reshape(grad.shape) if needs[0] else None
        gv = GetItem.apply(flat, index=at) if needs[1] else None
        return ga, gv, None


class AsStrided(Function):
    """out = a view's elements of a (a view re-pointed at its base's new node by a write
    that joined the graph);  grad_a = zeros like a with grad added at those elements."""

    rule = "grad_a = zeros like a, with grad added at the view's elements"
    saves_inputs = False

    def forward(self, a: Any, view: Any) -> Any:
        self.base, self.view_array = a, view
        return view

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return strided_grad(grad, self.base, self.view_array), None


def strided_grad(grad: Tensor, base: Any, view: Any) -> Tensor:
    """The gradient of the array ``base`` for that of ``view``, a strided view into it: zeros
    like base with grad added at each element the view reads (AsStrided's rule, and the other
    strided views')."""
    at = (array.from_host(view_positions(base, view), grad._array),)
    return IndexAdd.apply(grad, shape=(base.size,), index=at).reshape(base.shape)


class IndexPut(Function):
    """out = a with v written at index (t[index] = v, recorded);  grad_a = g with zeros at
    index;  grad_v = g[index] (which the engine sums back to v's shape).

    What an assignment into a tensor records when the tensor or the value is part of a
    graph (PyTorch's CopySlices). With repeated indices the last write wins, as NumPy's.
    """

    rule = "grad_a = grad with zeros at index; grad_v = grad[index]"
    saves_inputs = False

    def forward(self, a: Any, v: Any, index: Any) -> Any:
        self.index = index
        out = a.copy()
        out[index] = v
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        ga = IndexPut.apply(grad, 0.0, index=self.index) if self.needs_input_grad[0] else None
        gv = GetItem.apply(grad, index=self.index) if self.needs_input_grad[1] else None
        return ga, gv


def _joined_out(arrays: tuple, dim: int, size: int) -> Any:
    """cat's result laid out as PyTorch's: channels last where every input is (by its
    steps), row-major otherwise (NumPy would follow the inputs' order)."""
    first = arrays[0]
    shape = (*first.shape[:dim], size, *first.shape[dim + 1 :])
    dtype = xp.result_type(*arrays)
    orders = {channels_last_order(a) for a in arrays}
    order = orders.pop() if len(orders) == 1 else None
    if order is None:
        return xp.empty(shape, dtype=dtype, like=first)
    made = xp.empty(tuple(shape[d] for d in order), dtype=dtype, like=first)
    return made.transpose(tuple(order.index(d) for d in range(len(order))))


class Cat(Function):
    """out = the inputs joined along dim, each read with the shape ``shapes`` gives it where
    given (hstack's, vstack's, dstack's and column_stack's inputs of fewer dims);
    grad_i = the slice of g that input i filled, in input i's shape."""

    rule = "grad_i = the slice of grad that input i filled"
    saves_inputs = False

    def forward(self, *arrays: Any, dim: int, shapes: tuple | None = None) -> Any:
        self.dim, self.shapes = dim, shapes
        if shapes is not None:  # views: a reshape of fewer dims copies nothing
            arrays = tuple(a.reshape(s) for a, s in zip(arrays, shapes, strict=True))
        self.bounds = bounds = [0]  # where each input starts along dim, then the end
        contiguous = True
        for a in arrays:  # one loop: all() over a generator is a call of its own
            bounds.append(bounds[-1] + a.shape[dim])
            contiguous = contiguous and a.flags.c_contiguous
        if contiguous:
            return xp.concatenate(arrays, axis=dim)  # row-major, as PyTorch's
        return xp.concatenate(arrays, axis=dim, out=_joined_out(arrays, dim, bounds[-1]))

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        lead = (slice(None),) * self.dim
        spans = zip(self.bounds[:-1], self.bounds[1:], self.needs_input_grad, strict=True)
        grads = [
            grad[lead + (slice(int(lo), int(hi)),)] if need else None for lo, hi, need in spans
        ]
        if self.shapes is not None:  # each back in its input's own shape
            grads = [
                g if g is None else g.reshape(x.shape)
                for g, x in zip(grads, self.inputs, strict=True)
            ]
        return tuple(grads)


class Put(Function):
    """out = a with source's values written (with accumulate, added) at the positions index
    names in the flattened a (negative ones from the end);  grad_a = grad with zeros at those
    positions (with accumulate, grad), grad_source = grad's values there, in source's shape.

    Repeated positions add up with accumulate; without, the last write wins, as NumPy's.
    """

    rule = "grad_a = grad with zeros at index (accumulate: grad), grad_source = grad at index"
    saves_inputs = False  # the rule reads the shapes alone

    def forward(self, a: Any, source: Any, index: Any, accumulate: Any) -> Any:
        self.index, self.accumulate = index, accumulate  # as given: PyTorch's _saved_index
        out = a.copy()  # C order: its flat view is out's memory
        flat, at = out.reshape(-1), index.reshape(-1) % max(a.size, 1)
        values = source.reshape(-1) if isinstance(source, ndarray) else source
        if accumulate:
            xp.add.at(flat, at, values)
        else:
            flat[at] = values
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        need_a, need_source = self.needs_input_grad
        ga = gs = None
        if need_a:
            ga = (
                grad
                if self.accumulate
                else Put.apply(grad, 0.0, index=self.index, accumulate=False)
            )
        if need_source:
            at = self.index.reshape(-1) % max(grad._array.size, 1)
            gs = grad.reshape(-1)[at].reshape(self.inputs[1].shape)
        return ga, gs


class Stack(Function):
    """out = the inputs stacked along a new dim;  grad_i = g's slice i along that dim."""

    rule = "grad_i = grad selected at i along dim"
    saves_inputs = False

    def forward(self, *arrays: Any, dim: int) -> Any:
        self.dim = dim
        first = arrays[0]
        shape = first.shape[:dim] + (len(arrays),) + first.shape[dim:]
        # one copy of each input into the result, which np.stack makes with a Python loop
        # of reshapes and a concatenate (3-4x the time on small inputs)
        out = xp.empty(shape, dtype=first.dtype, like=first)
        lead = (slice(None),) * dim
        for i, a in enumerate(arrays):
            out[lead + (i,)] = a
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        lead = (slice(None),) * self.dim
        need = self.needs_input_grad
        return tuple(grad[lead + (i,)] if n else None for i, n in enumerate(need))

    backward_arrays = backward  # indexing only: the same rule serves arrays


class Pad(Function):
    """out = a with constant padding;  grad_a = the middle part of g.

    ``widths`` is NumPy's ((before, after), ...) for every dim.
    """

    rule = "grad_a = grad with the padding cut off"
    saves_inputs = False

    def forward(self, a: Any, widths: Any, value: Any = 0.0) -> Any:
        self.widths = widths
        # a fresh array written by slices: the middle, then each dim's two borders (np.pad's
        # way, without its argument parsing, which costs more than the copy on small arrays)
        shape = tuple(n + lo + hi for n, (lo, hi) in zip(a.shape, widths, strict=True))
        out = xp.empty(shape, dtype=a.dtype, like=a)
        middle = tuple(slice(lo, lo + n) for n, (lo, _) in zip(a.shape, widths, strict=True))
        out[middle] = a
        fill = xp.asarray(value, like=a)  # cast as NumPy's assignment casts (2.7 is 2 in uint8)
        for d, (lo, hi) in enumerate(widths):
            before = (slice(None),) * d
            if lo:
                out[before + (slice(0, lo),)] = fill
            if hi:
                out[before + (slice(shape[d] - hi, None),)] = fill
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        pairs = zip(self.widths, grad.shape, strict=True)
        index = tuple(slice(lo, n - hi) for (lo, hi), n in pairs)  # the unpadded middle
        return (grad[index],)


def along_dim(index: Any, dim: int, ndim: int) -> tuple:
    """A full index that picks index[..] along dim and every position on the other dims:
    NumPy's open grid, each dim's positions an arange shaped to broadcast along it."""
    mod, shape = array.module_of(index), index.shape
    n = min(ndim, len(shape))
    if fastpath.enabled() and mod is array.host and index.size <= GRID_MAX:  # once a shape
        grid = list(_host_grid(shape[:n], len(shape)))
        if dim < n:
            grid[dim] = index
        return tuple(grid)
    grid = []
    for d in range(n):
        if d == dim:
            grid.append(index)
        else:  # (1, .., n, .., 1): n positions along d
            grid.append(
                mod.arange(shape[d]).reshape((1,) * d + (-1,) + (1,) * (len(shape) - d - 1))
            )
    return tuple(grid)


GRID_MAX = 4096  # the largest index whose positions are kept: past it a gather costs more


@functools.lru_cache(maxsize=256)
def _host_grid(lead: tuple[int, ...], k: int) -> tuple:
    """along_dim's positions along the dims ``lead`` of a k-dim host index, kept read-only."""
    grid = []
    for d, m in enumerate(lead):  # (1, .., m, .., 1): m positions along d
        positions = array.host.arange(m).reshape((1,) * d + (-1,) + (1,) * (k - d - 1))
        positions.flags.writeable = False
        grid.append(positions)
    return tuple(grid)


def _grid_shape(index: tuple) -> tuple[int, ...]:
    """The shape the arrays of a NumPy index broadcast to (they do: the index was checked):
    along each dim, from the last, the size that is not 1. NumPy's broadcast_shapes, without
    the arrays it makes to find it."""
    n = max([i.ndim for i in index])
    shape = [1] * n
    for i in index:
        for k, m in enumerate(i.shape, n - i.ndim):
            if m != 1:
                shape[k] = m
    return tuple(shape)


class Gather(Function):
    """out[i][j] = a[i][index[i][j]] along dim (torch.gather / take_along_dim), in index's
    shape (no larger than a's but along dim: nothing is broadcast);
    grad_a = zeros like a with g added at the gathered places.

    A 0-d a or index is read as one of shape (1,), and an empty index of any dims as one of
    a's dims, as PyTorch's."""

    rule = "grad_a = zeros like a, with grad added where the values were gathered"

    def forward(self, a: Any, index: Any, dim: Any) -> Any:
        self.dim = dim
        if a.ndim and index.ndim == a.ndim and index.size:
            self.index = index
            return a[along_dim(index, dim, a.ndim)]
        a = _lifted(a)
        self.index = index.reshape((0,) * a.ndim) if not index.size else _lifted(index)
        return a[along_dim(self.index, dim, a.ndim)].reshape(index.shape)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        shape = self.inputs[0].shape
        if grad.shape != self.index.shape:  # a 0-d or empty index, read as PyTorch reads it
            grad = grad.reshape(self.index.shape)
        where = along_dim(self.index, self.dim, grad.ndim)
        grad_a = IndexAdd.apply(grad, shape=shape or (1,), index=where)
        return (grad_a if shape else grad_a.reshape(()), None)


def _lifted(a: Any) -> Any:
    """A 0-d array as one of shape (1,), as PyTorch reads gather's and scatter's; any other
    as it is."""
    return a.reshape(1) if not a.ndim else a


def _unlifted(g: Tensor, shape: tuple[int, ...]) -> Tensor:
    """A gradient of a lifted 0-d input back in its shape ()."""
    return g if shape else g.reshape(())


class Scatter(Function):
    """out = a with src written at index along dim (torch.scatter; for dim 1,
    out[i][index[i][j]] = src[i][j]), src a tensor at least index's size or a number;
    grad_a = g with zeros where src was written; grad_src = g gathered at index (zeros where
    src reaches past index).

    A repeated position keeps the last value written, as NumPy's assignment does. A number
    src may come as an option (``src=``): then a is the one input, as PyTorch's scatter.value.
    A 0-d a, index or src is read as one of shape (1,), as PyTorch's.
    """

    rule = "grad_a = grad with zeros where src was written, grad_src = grad gathered at index"
    saves_inputs = False  # the rule reads their shapes only, as PyTorch's

    def forward(self, a: Any, src: Any, index: Any, dim: Any) -> Any:
        self.index, self.dim = index, dim
        shape, a, index = a.shape, _lifted(a), _lifted(index)
        self.where = along_dim(index, dim, a.ndim)
        self.written = xp.zeros(a.shape, dtype=bool, like=a)
        self.written[self.where] = True
        out = a.copy()
        out[self.where] = src[tuple(slice(n) for n in index.shape)] if xp.ndim(src) else src
        return out.reshape(shape)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        need = self.needs_input_grad  # one input where src is a number given as an option
        shape = self.written.shape
        if grad.shape != shape:  # a 0-d a, read as of shape (1,)
            grad = grad.reshape(shape)
        grad_a = Where.apply(self.written, 0.0, grad) if need[0] else None
        grad_a = grad_a if grad_a is None else _unlifted(grad_a, self.inputs[0].shape)
        if len(need) == 1:
            return (grad_a,)
        if not need[1]:
            return grad_a, None
        src = self.inputs[1]
        picked = grad[self.where]  # index's shape
        size = src.shape or (1,)
        widths = tuple((0, n - m) for n, m in zip(size, picked.shape, strict=True))
        grad_src = Pad.apply(picked, widths=widths) if any(w for _, w in widths) else picked
        return grad_a, _unlifted(grad_src, src.shape)


class ScatterReduce(Function):
    """out = a with src's values reduced into the places index names along dim
    (torch.scatter_reduce; for dim 1, out[i][index[i][j]] = reduce(out[i][index[i][j]],
    src[i][j])), reduce one of sum, prod, mean, amax, amin, over a's own value too unless
    include_self is False (then over the src values alone where any was written).

    The gradients are PyTorch's: for sum grad_a = g and grad_src = g gathered at index; for
    mean both are divided by the count at their place; for prod grad_a = g * out / a and
    grad_src = (g * out) gathered / src, where a value is 0 the product of the others
    instead; for amax and amin g is shared equally among the values equal to out there.
    Without include_self, grad_a is 0 where src was written. A 0-d a, index or src is read
    as one of shape (1,), as PyTorch's.
    """

    rule = (
        "sum: grad_a = grad, grad_src = grad[index]; mean: each / the count at its place; "
        "prod: grad * out / a, (grad * out)[index] / src; amax, amin: grad shared among the "
        "values equal to out; grad_a = 0 where src was written unless include_self"
    )
    saves_out = True

    def forward(
        self, a: Any, src: Any, index: Any, dim: Any, reduce: Any, include_self: Any
    ) -> Any:
        self.dim, self.reduce, self.include_self = dim, reduce, include_self
        self.index, self.at = index, _lifted(index)  # as given, and as read
        shape, a, src, index = a.shape, _lifted(a), _lifted(src), self.at
        self.where, self.lifted_shape = along_dim(index, dim, a.ndim), a.shape
        s = src  # the corner of src as large as index
        if src.shape != index.shape:
            s = src[tuple([slice(n) for n in index.shape])]
        out = a.copy()
        vector = None
        if fastpath.enabled() and s.size >= SLICE_MIN * index.shape[dim]:
            vector = _index_vector(index, dim, a)
        if vector is not None:  # index_reduce's: whole slices, one ufunc call each
            lead = (slice(None),) * dim
            if not include_self:
                out[lead + (vector,)] = _identity(reduce, a.dtype)
            _into_slices(_UFUNCS[reduce], out, lead, vector, s)
        else:
            if not include_self:
                out[self.where] = _identity(reduce, a.dtype)
            _UFUNCS[reduce].at(out, self.where, s)
        if reduce == "mean":
            count = self._count(a.dtype if is_floating(a.dtype) else xp.int64)
            # an integer mean floors, in a's dtype (int64's count would widen it), as PyTorch
            out = out / count if is_floating(a.dtype) else (out // count).astype(a.dtype)
        return out.reshape(shape)

    def _count(self, dtype: Any) -> Any:
        """How many values each place of out averages (1 where none: it keeps a)."""
        shape, keeps = self.lifted_shape, int(self.include_self)
        count = xp.full(shape, keeps, dtype=dtype, like=self.at)  # on a's device, as index
        xp.add.at(count, self.where, 1)
        count[count == 0] = 1
        return count

    def _written(self) -> Any:
        """Where src was written: True at each place index names (made for backward alone,
        which few calls run)."""
        written = xp.zeros(self.lifted_shape, dtype=bool, like=self.at)
        written[self.where] = True
        return written

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        a_shape, src_shape = (x.shape for x in self.inputs)
        a, src = (x if x.ndim else x.reshape(1) for x in self.inputs)  # 0-d ones as (1,)
        if grad.shape != a.shape:
            grad, out = grad.reshape(a.shape), out.reshape(a.shape)
        corner = tuple(slice(n) for n in self.at.shape)
        s = src[corner]  # index's shape
        reduce = self.reduce
        if reduce == "sum":
            grad_a, grad_s = grad, grad[self.where]
        elif reduce == "mean":
            count = self._count(grad.dtype)
            grad_a, grad_s = grad / count, grad[self.where] / count[self.where]
        elif reduce == "prod":
            grad_a, grad_s = self._prod_grads(grad, out, a, s)
        else:  # amax, amin: shared among the values that reached the result
            a_is = (a._array == out._array).astype(grad.dtype)
            s_is = (s._array == out._array[self.where]).astype(grad.dtype)
            ties = a_is.copy()
            xp.add.at(ties, self.where, s_is)
            with errstate(invalid="ignore", divide="ignore"):
                shared = grad / ties
            grad_a, grad_s = shared * a_is, shared[self.where] * s_is
        if not self.include_self:
            grad_a = Where.apply(self._written(), 0.0, grad_a)
        widths = tuple((0, n - m) for n, m in zip(src.shape, self.at.shape, strict=True))
        if any(w for _, w in widths):  # src past index gets no gradient
            grad_s = Pad.apply(grad_s, widths=widths)
        need_a, need_src = self.needs_input_grad
        grad_a, grad_s = _unlifted(grad_a, a_shape), _unlifted(grad_s, src_shape)
        return (grad_a if need_a else None, grad_s if need_src else None)

    def _prod_grads(self, grad: Any, out: Any, a: Any, s: Any) -> Any:
        """prod's gradients, exact where a value is 0: the product of the others, formed by
        reducing again with that value replaced by 1 (PyTorch's way)."""
        options = dict(index=self.at, dim=self.dim, reduce="prod")
        a_nonzero = Where.apply(a._array == 0, 1.0, a)
        others = ScatterReduce.apply(a_nonzero, s, include_self=self.include_self, **options)
        grad_a = grad * others / a_nonzero
        s_zero = s._array == 0
        zeros_here = xp.zeros(a.shape, dtype=xp.int64, like=s_zero)
        xp.add.at(zeros_here, self.where, s_zero)
        single = s_zero & (zeros_here[self.where] == 1)  # the only 0 reduced into its place
        s_one = Where.apply(single, 1.0, s)
        without = ScatterReduce.apply(a, s_one, include_self=self.include_self, **options)
        grad_s = Where.apply(
            single,
            (grad * without)[self.where],
            (grad * out)[self.where] / Where.apply(s_zero, 1.0, s),
        )
        return grad_a, grad_s


class ScatterAdd(Function):
    """out = a with alpha * src added at index, a NumPy index of a (repeated places add up):
    scatter_add's (along_dim's grid of an index, src's corner as large as it) and
    index_add's (whole slices along a dim);  grad_a = g;  grad_src = alpha * g[index] (zeros
    where src reaches past index). A 0-d a or src is read as one of shape (1,)."""

    rule = "grad_a = grad, grad_src = alpha * grad[index]"
    saves_inputs = False  # the rule reads their shapes only

    def forward(self, a: Any, src: Any, index: tuple, alpha: Any) -> Any:
        self.index, self.alpha = index, alpha
        out, part = _lifted(a).copy(), _lifted(src)
        if all([isinstance(i, ndarray) for i in index]):  # a grid: src's corner as large as it
            corner = _grid_shape(index)
            if part.shape != corner:
                part = part[tuple([slice(n) for n in corner])]
        if alpha != 1:
            part = part * alpha
        if fastpath.enabled() and _long_slices(index, part):  # index_add's whole slices
            _into_slices(xp.add, out, index[:-1], index[-1], part)
        elif not fastpath.add_at_rows(out, index, part):
            xp.add.at(out, index, part)
        return out.reshape(a.shape)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        need_a, need_src = self.needs_input_grad
        a, src = self.inputs
        grad = grad if grad.ndim else grad.reshape(1)  # a 0-d a, read as of shape (1,)
        grad_src = None
        if need_src:
            grad_src = GetItem.apply(grad, index=self.index)
            pairs = zip(src.shape or (1,), grad_src.shape, strict=True)
            widths = tuple((0, n - m) for n, m in pairs)
            if any(w for _, w in widths):  # src past index gets no gradient
                grad_src = Pad.apply(grad_src, widths=widths)
            grad_src = _unlifted(grad_src if self.alpha == 1 else grad_src * self.alpha, src.shape)
        return (_unlifted(grad, a.shape) if need_a else None, grad_src)


SLICE_MIN = 256  # the elements of a slice from which one add a slice beats np.add.at


def _into_slices(ufunc: Any, out: Any, lead: tuple, vector: Any, part: Any) -> None:
    """Each slice k of part along the dim after ``lead`` (whole slices) combined by ufunc into
    out's slice vector[k], in place, one call a slice in vector's order: ufunc.at's order,
    so the same values, where ufunc.at steps element by element."""
    for k, i in enumerate(vector.tolist()):
        place = out[lead + (i,)]  # a view into out
        ufunc(place, part[lead + (k,)], out=place)


COLUMNS_MAX = 3  # the most columns copied one at a time (of 8, take is 1.4-2.6x the faster)
ROWS_MIN = 1024  # the fewest rows of columns copied one at a time


def _few_columns(a: Any, index: tuple) -> bool:
    """Whether index picks at most COLUMNS_MAX columns of a's last dim (_picks_slices), of
    ROWS_MIN rows or more."""
    few = len(index) == a.ndim and len(index[-1]) <= COLUMNS_MAX
    return few and a.size >= ROWS_MIN * max(a.shape[-1], 1)


def _columns_copied(a: Any, vector: Any) -> Any:
    """``xp.take(a, vector, axis=-1)``: column vector[k] of a copied into column k of the
    result, one strided copy a column, where take copies element by element."""
    out = xp.empty(a.shape[:-1] + (len(vector),), dtype=a.dtype, like=a)  # (..., K)
    for k, i in enumerate(vector.tolist()):
        out[..., k] = a[..., i]
    return out


def _long_slices(index: tuple, part: Any) -> bool:
    """Whether index is index_add's (_picks_slices), each slice of part it adds SLICE_MIN
    elements or more."""
    return _picks_slices(index) and part.size >= SLICE_MIN * max(len(index[-1]), 1)


def _picks_slices(index: tuple) -> bool:
    """Whether index is whole slices then one 1-D integer array (index_select's and
    index_add's): the slices it names along one dim."""
    *lead, last = index
    if not (isinstance(last, ndarray) and last.ndim == 1 and last.dtype.kind in "iu"):
        return False
    whole = [s for s in lead if type(s) is slice and s == slice(None)]
    return len(whole) == len(lead)


def _index_vector(index: Any, dim: int, a: Any) -> Any:
    """The 1-D index along dim where index is index_reduce's, one index vector spread over
    the whole of a's other dims (strides of 0 there); None where it is not."""
    if index.ndim != a.ndim:
        return None
    for d, (n, m, stride) in enumerate(zip(index.shape, a.shape, index.strides, strict=True)):
        if d != dim and (n != m or stride):
            return None
    return index[(0,) * dim + (slice(None),) + (0,) * (a.ndim - dim - 1)]  # (K,)


_UFUNCS = {
    "sum": xp.add,
    "mean": xp.add,
    "prod": xp.multiply,
    "amax": xp.maximum,
    "amin": xp.minimum,
}


def _identity(reduce: str, dtype: Any) -> Any:
    """The value that leaves a reduction unchanged: where include_self=False starts from."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if is_floating(dtype):
        return -xp.inf if reduce == "amax" else xp.inf
    if dtype.kind == "b":
        return reduce == "amin"
    info = xp.iinfo(dtype)
    return info.min if reduce == "amax" else info.max
