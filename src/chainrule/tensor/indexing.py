"""Tensor's selections and combinations by index: diagonals, strided views (unfold,
as_strided), moved dims, splits by sections, take and put, masked and index copies, runs of
equal values, and the products of vectors and matrices that combine them (kron, cross, trace,
addmv, addr, addbmm, vdot). shape.py keeps the reshapes, getitem and setitem, gather and
scatter."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from .. import array, fastpath
from ..arguments import (
    broadcasts_to,
    index_vector,
    is_int,
    need_dims,
    need_number,
    normalize_dim,
)
from ..autograd import forward_ad
from ..autograd.node import named
from ..autograd.saved import record
from ..constants import contiguous_format
from ..ops import linalg, masked, movement, reorder, selection
from ..ops.movement import viewed
from .arithmetic import matmul, scalar_for
from .core import Core, as_tensor, make

if TYPE_CHECKING:  # Tensor in annotations alone (core.py says why)
    from . import Tensor
    from .core import TensorSelf

xp = array.xp


class Indexing(Core):
    """The selection, strided-view and combining methods of Tensor."""

    __slots__ = ()

    # -- views -----------------------------------------------------------------------------

    @property
    def H(self: TensorSelf) -> Tensor:
        """The conjugate transpose of a matrix (the transpose, for real values)."""
        if self.ndim not in (0, 2):
            raise ValueError(
                f"H: tensor.H is only supported on matrices (2-D tensors); got shape "
                f"{self.shape}; for batches of matrices use tensor.mH"
            )
        return self.transpose(0, 1) if self.ndim else self  # PyTorch's TransposeBackward0

    @property
    def mH(self: TensorSelf) -> Tensor:
        """The conjugate transpose of the last two dims (mT, for real values)."""
        if self._array.ndim < 2:
            need_dims(self, 2, "mH")  # raises
        return self.mT

    def adjoint(self: TensorSelf) -> Tensor:
        """mH, as a method."""
        need_dims(self, 2, "adjoint")
        return self.transpose(-2, -1)

    def _is_view(self: TensorSelf) -> bool:
        """Whether this tensor shares the memory of another (its base), as a view does."""
        return self._base is not None

    def movedim(self: TensorSelf, source: Any, destination: Any) -> Tensor:
        """The dims in source moved to the places in destination, the others keeping their
        order: a view (permute)."""
        shape = self._array.shape
        n = len(shape)
        if type(source) is int and type(destination) is int and n:  # one dim moved
            order = list(range(n))
            order.insert(
                normalize_dim(destination, n, "movedim", shape),
                order.pop(normalize_dim(source, n, "movedim", shape)),
            )
            return self._permuted(tuple(order))
        src = (source,) if is_int(source) else tuple(source)
        dst = (destination,) if is_int(destination) else tuple(destination)
        if len(src) != len(dst):
            raise ValueError(
                f"movedim: source {src} and destination {dst} must have the same length; got "
                f"shape {self.shape}"
            )
        s = [normalize_dim(d, n, "movedim", shape) for d in src]
        e = [normalize_dim(d, n, "movedim", shape) for d in dst]
        if len(set(s)) != len(s) or len(set(e)) != len(e):
            raise ValueError(f"movedim: repeated dim in source {src} or destination {dst}")
        if not n:  # a 0-d tensor: only dim 0 (or -1) moves onto itself
            return self.reshape(())
        order = [d for d in range(n) if d not in s]  # the dims that stay, in their order
        for b, a in sorted(zip(e, s, strict=True)):  # each moved dim to its place, from the left
            order.insert(b, a)
        return self._permuted(tuple(order))

    moveaxis = movedim

    def diagonal(self: TensorSelf, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
        """The diagonal over dim1 and dim2 (offset > 0 above the main one, < 0 below), as
        the last dim, the others kept in order: a view, as PyTorch's."""
        shape = self._array.shape
        if len(shape) < 2:
            need_dims(self, 2, "diagonal")  # raises
        a = normalize_dim(dim1, len(shape), "diagonal", shape)
        b = normalize_dim(dim2, len(shape), "diagonal", shape)
        if a == b:
            raise ValueError(f"diagonal: dim1 and dim2 must differ; got {dim1} and {dim2}")
        out = viewed(selection.Diagonal, self, offset=int(offset), dim1=a, dim2=b)
        return record(out, dim1=dim1, dim2=dim2)  # the dims as given, for _saved_dim1

    def diag_embed(self: TensorSelf, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
        """A tensor of one dim more, zero but on its diagonal over dim1 and dim2 (offset as
        diagonal's), which holds the last dim's values: diagonal's inverse."""
        need_dims(self, 1, "diag_embed")
        n = self.ndim + 1
        a = normalize_dim(dim1, n, "diag_embed", self.shape)
        b = normalize_dim(dim2, n, "diag_embed", self.shape)
        if a == b:
            raise ValueError(f"diag_embed: dim1 and dim2 must differ; got {dim1} and {dim2}")
        side = self.shape[-1] + abs(int(offset))
        shape = list(self.shape[:-1])
        for d in sorted((a, b)):
            shape.insert(d, side)  # (..., side, ..., side, ...)
        options = dict(offset=int(offset), dim1=a, dim2=b, shape=tuple(shape))
        out = selection.DiagEmbed.apply(self, **options)
        return record(out, dim1=dim1, dim2=dim2)  # the dims as given, for _saved_dim1

    def diagonal_scatter(
        self: TensorSelf, src: Any, offset: int = 0, dim1: int = 0, dim2: int = 1
    ) -> Tensor:
        """self with src written on the diagonal that diagonal(offset, dim1, dim2) reads."""
        src = as_tensor(src)
        need_dims(self, 2, "diagonal_scatter")
        options = _embed_options(self, offset, dim1, dim2)
        del options["shape"]
        if options["dim1"] == options["dim2"]:
            raise ValueError(f"diagonal_scatter: dim1 and dim2 must differ; got {dim1} and {dim2}")
        expected = self._array.diagonal(*options.values()).shape  # offset, dim1, dim2
        if src._array.shape != expected:
            raise ValueError(
                f"diagonal_scatter: src must have the diagonal's shape {expected}; got "
                f"{src.shape} for self {self.shape}"
            )
        if src._array.dtype != self._array.dtype:
            src = src.to(self.dtype)  # written in self's dtype
        return selection.DiagonalScatter.apply(self, src, **options)

    def select(self: TensorSelf, dim: int, index: int) -> Tensor:
        """The slice at index along dim, that dim removed: a view."""
        shape = self._array.shape
        if not shape:
            raise IndexError("select: cannot be applied to a 0-d tensor")
        d = normalize_dim(dim, len(shape), "select", shape)
        n = shape[d]
        i = int(index)
        if not -n <= i < n:
            raise IndexError(
                f"select: index {i} is out of range for dim {d} of size {n}; got shape {shape}"
            )
        # slices and an int: the index is NumPy's as it stands (self[...] would parse it again)
        out = movement.GetItem.apply(self, index=(slice(None),) * d + (i,))
        return record(out, dim=dim)  # as given, for _saved_dim

    def ravel(self: TensorSelf) -> Tensor:
        """The values as one dim: a view where the layout allows, else a copy."""
        out = self.reshape(-1)  # a copy is PyTorch's contiguous(), then its view
        return out if out is self else named(out, "ViewBackward0")

    def reshape_as(self: TensorSelf, other: Tensor) -> Tensor:
        return self.reshape(other.shape)

    def unfold(self: TensorSelf, dimension: int, size: int, step: int) -> Tensor:
        """The windows of size values, step apart, along dimension: that dim becomes the
        number of windows, and a last dim of size size holds each window. A view."""
        shape = self._array.shape
        d = normalize_dim(dimension, len(shape), "unfold", shape)
        n = shape[d] if shape else 1
        if not ((type(size) is int or is_int(size)) and 0 <= size <= n):
            raise ValueError(
                f"unfold: size must be in [0, {n}] (the size of dim {d}); got {size} for shape "
                f"{self.shape}"
            )
        if not ((type(step) is int or is_int(step)) and step > 0):
            raise ValueError(f"unfold: step must be positive; got {step}")
        return viewed(selection.Unfold, self, dim=d, size=int(size), step=int(step))

    def as_strided(
        self: TensorSelf, size: Any, stride: Any, storage_offset: int | None = None
    ) -> Tensor:
        """A view of the memory this tensor views, read with size, stride (in elements) and
        storage_offset (from that memory's first element; this tensor's own by default)."""
        size, stride = tuple(map(int, size)), tuple(map(int, stride))
        start = 0 if storage_offset is None else int(storage_offset)
        if len(size) != len(stride) or min(size + stride + (start,)) < 0:
            start = self.storage_offset() if storage_offset is None else start
            raise ValueError(
                "as_strided: size and stride must have one entry a dim, none negative, and the "
                f"offset must not be negative; got size {size}, stride {stride} and offset {start}"
            )
        last = 0  # the last element the view reads, from its first
        for n, s in zip(size, stride, strict=True):  # a loop: sum() over a generator costs more
            last += (n - 1) * s
        own = self._array  # a view that reads only within this tensor's own (contiguous)
        # elements is made of its array, without reading two pointers to find where it starts
        if storage_offset is None and fastpath.enabled() and own.flags.c_contiguous:
            if last < own.size or 0 in size:
                out = viewed(selection.AsStridedView, self, own, size=size, stride=stride, start=0)
                return named(
                    out, "AsStridedBackward0", size=size, stride=stride, storage_offset=None
                )
        root = self._base if self._base is not None else self
        memory = root._array
        start = self.storage_offset() if storage_offset is None else start
        span = memory.size  # the elements the memory spans: its own, where it is contiguous
        if not memory.flags.c_contiguous and span:
            steps = [s // memory.itemsize for s in memory.strides]
            if min(steps) < 0:
                memory = memory.copy()  # a layout PyTorch has no storage for
            else:
                span = 1 + sum([(n - 1) * s for n, s in zip(memory.shape, steps, strict=True)])
        reach = start + last + 1  # one past the last element the view reads
        if 0 in size:
            start = 0
        elif reach > span:
            raise ValueError(
                f"as_strided: size {size}, stride {stride} and offset {start} reach element "
                f"{reach - 1} of a memory of {span} elements (shape {root.shape})"
            )
        out = viewed(selection.AsStridedView, self, memory, size=size, stride=stride, start=start)
        return named(
            out, "AsStridedBackward0", size=size, stride=stride, storage_offset=storage_offset
        )

    def diagflat(self: TensorSelf, offset: int = 0) -> Tensor:
        """The flattened values on the diagonal (offset) of a square matrix, zeros elsewhere."""
        flat = self.reshape(-1)  # (n,)
        side = flat._array.shape[0] + abs(int(offset))  # diag_embed(offset, 0, 1)'s, directly
        options = dict(offset=int(offset), dim1=0, dim2=1, shape=(side, side))
        return selection.DiagEmbed.apply(flat, **options)

    def select_scatter(self: TensorSelf, src: Any, dim: int, index: int) -> Tensor:
        """self with src written where select(dim, index) reads."""
        picked = self.select(dim, index)  # checks dim and index
        d = normalize_dim(dim, self.ndim, "select_scatter", self.shape)
        where_ = (slice(None),) * d + (int(index) % self.shape[d],)
        out = _scatter_into(self, src, where_, picked.shape, "select_scatter", _SELECT_SCATTER)
        return record(out, dim=dim, index=index)  # as given, as PyTorch's node keeps them

    def slice_scatter(
        self: TensorSelf,
        src: Any,
        dim: int = 0,
        start: int | None = None,
        end: int | None = None,
        step: int = 1,
    ) -> Tensor:
        """self with src written where the slice start:end:step along dim reads."""
        d = normalize_dim(dim, self.ndim, "slice_scatter", self.shape)
        if step <= 0:
            raise ValueError(f"slice_scatter: step must be positive; got {step}")
        where_ = (slice(None),) * d + (slice(start, end, step),)
        shape = self._array[where_].shape
        out = _scatter_into(self, src, where_, shape, "slice_scatter", _SLICE_SCATTER)
        return record(out, dim=dim, start=start, end=end, step=step)  # as given

    def narrow_copy(self: TensorSelf, dim: int, start: Any, length: int) -> Tensor:
        """narrow, as a new tensor (C order): one node, PyTorch's NarrowCopyBackward0."""
        out = copy_of_view(self, self.narrow(dim, start, length), "NarrowCopyBackward0")
        given = dict(dim=dim, start=int(start), length=length)  # as given, as PyTorch saves
        return named(out, "NarrowCopyBackward0", **given)

    # -- splits and flips ------------------------------------------------------------------

    def tensor_split(
        self: TensorSelf, indices_or_sections: Any, dim: int = 0
    ) -> tuple[Tensor, ...]:
        """Views along dim: an int n gives n parts, the first (size % n) one longer; a list of
        indices, the parts between them (clipped to the dim's size)."""
        shape = self._array.shape
        if not shape:
            raise ValueError("tensor_split: expects a tensor of at least 1 dim; got a 0-d one")
        d = normalize_dim(dim, len(shape), "tensor_split", shape)
        n = shape[d]
        cut = indices_or_sections
        if isinstance(cut, Core):
            if cut.dtype.kind not in "iu" or cut.ndim > 1:
                raise ValueError(
                    "tensor_split: a tensor of indices or sections must be an integer tensor of "
                    f"0 or 1 dims; got dtype {cut.dtype} and shape {cut.shape}"
                )
            cut = cut.item() if not cut.ndim else cut.tolist()
        if type(cut) is int or is_int(cut):
            if cut <= 0:
                raise ValueError(
                    f"tensor_split: the number of sections must be positive; got {cut}"
                )
            size, extra = divmod(n, int(cut))
            bounds = [k * size + min(k, extra) for k in range(int(cut) + 1)]
        else:
            bounds = [0] + [min(max(int(i) + n if int(i) < 0 else int(i), 0), n) for i in cut] + [n]
        lead = (slice(None),) * d
        pairs = zip(bounds[:-1], bounds[1:], strict=True)  # basic slices: GetItem itself
        indexes = [lead + (slice(lo, max(lo, hi)),) for lo, hi in pairs]
        return tuple(movement.sliced(movement.GetItem, self, indexes))

    def split_with_sizes(self: TensorSelf, split_sizes: Any, dim: int = 0) -> tuple[Tensor, ...]:
        """split into parts of the given sizes."""
        return self.split(list(split_sizes), dim)

    def unsafe_split(self: TensorSelf, split_size: Any, dim: int = 0) -> tuple[Tensor, ...]:
        """split (PyTorch's version that leaves its outputs' views unchecked)."""
        return _unsafe(self.split(split_size, dim))

    def unsafe_chunk(self: TensorSelf, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
        """chunk (PyTorch's version that leaves its outputs' views unchecked)."""
        return _unsafe(self.chunk(chunks, dim))

    def sum_to_size(self: TensorSelf, *size: Any) -> Tensor:
        """Summed down to size, a shape self broadcasts from: over its leading dims and the
        dims where size has 1."""
        shape = tuple(size[0]) if len(size) == 1 and not is_int(size[0]) else tuple(size)
        if not shape:  # all summed, as PyTorch's (integers widened to int64)
            _summed_dims(shape, self._array.shape)  # checked
            return self.sum()
        dims = _summed_dims(shape, self._array.shape)
        return self.sum(dims, keepdim=True)._reshaped(shape) if dims else self

    def hsplit(self: TensorSelf, sections: Any) -> tuple[Tensor, ...]:
        """tensor_split along dim 1 (dim 0 for a 1-D tensor), an int dividing it evenly."""
        return _even_split(self, sections, 1 if self.ndim > 1 else 0, 1, "hsplit")

    def vsplit(self: TensorSelf, sections: Any) -> tuple[Tensor, ...]:
        """tensor_split along dim 0, an int dividing it evenly."""
        return _even_split(self, sections, 0, 2, "vsplit")

    def dsplit(self: TensorSelf, sections: Any) -> tuple[Tensor, ...]:
        """tensor_split along dim 2, an int dividing it evenly."""
        return _even_split(self, sections, 2, 3, "dsplit")

    def fliplr(self: TensorSelf) -> Tensor:
        """The order reversed along dim 1 (the columns)."""
        need_dims(self, 2, "fliplr")
        return self.flip(1)

    def flipud(self: TensorSelf) -> Tensor:
        """The order reversed along dim 0 (the rows)."""
        need_dims(self, 1, "flipud")
        return self.flip(0)

    def rot90(self: TensorSelf, k: int = 1, dims: Any = (0, 1)) -> Tensor:
        """Rotated k quarter turns in the plane of dims, from the first dim toward the second."""
        dims = tuple(dims)
        if len(dims) != 2 or self.ndim < 2:
            raise ValueError(
                f"rot90: expects two dims of a tensor of at least 2 dims; got dims {dims} for "
                f"shape {self.shape}"
            )
        a = normalize_dim(dims[0], self.ndim, "rot90", self.shape)
        b = normalize_dim(dims[1], self.ndim, "rot90", self.shape)
        if a == b:
            raise ValueError(f"rot90: the two dims must differ; got {dims}")
        return reorder.Rot90.apply(self, k=int(k), dims=dims)

    # -- take and put ----------------------------------------------------------------------

    def take(self: TensorSelf, index: Any) -> Tensor:
        """The values at index in the flattened tensor (negative from the end), in index's
        shape."""
        idx = _flat_index(self, index, "take")
        a = self._array
        if fastpath.off_graph(self) and a.flags.c_contiguous:  # no node: read from the flat array
            return make(a.take(idx))  # in index's shape (negative from the end)
        at = idx % max(a.size, 1)
        if not self.ndim:
            return named(self.reshape(-1)[at], "TakeBackward0", index=idx)
        # self itself indexed by the positions along each dim: one node, on self, as
        # PyTorch's; GetItem itself, with no index to parse
        out = movement.GetItem.apply(self, index=xp.unravel_index(at, self.shape))
        return named(out, "TakeBackward0", index=idx)

    def put(self: TensorSelf, index: Any, source: Any, accumulate: bool = False) -> Tensor:
        """self with source's values written (or with accumulate, added) at index in the
        flattened tensor."""
        idx = _flat_index(self, index, "put")
        source = as_tensor(source)
        if source.numel() != idx.size:
            raise ValueError(
                f"put: source and index must have as many elements; got shapes {source.shape} "
                f"and {idx.shape}"
            )
        if source._array.dtype != self._array.dtype:
            raise TypeError(
                f"put: source must have self's dtype; got {self.dtype} and {source.dtype}"
            )
        return movement.Put.apply(self, source, index=idx, accumulate=bool(accumulate))

    def put_(self: TensorSelf, index: Any, source: Any, accumulate: bool = False) -> Tensor:
        return self._write("put_", lambda t: t.put(index, source, accumulate))

    def masked_scatter(self: TensorSelf, mask: Any, source: Any) -> Tensor:
        """self (broadcast with mask) with source's values, in order, where mask is True."""
        m = array.on_device_of(mask._array if isinstance(mask, Core) else mask, self._array)
        source = as_tensor(source)
        if m.dtype != array.bool_:
            raise TypeError(f"masked_scatter: mask must be a bool tensor; got dtype {m.dtype}")
        if source.dtype != self.dtype:
            raise TypeError(
                f"masked_scatter: source must have self's dtype; got {self.dtype} and "
                f"{source.dtype}"
            )
        given, m = m, xp.broadcast_to(m, xp.broadcast_shapes(self.shape, m.shape))
        # each of the given mask's values is broadcast to as many places: counted once
        taken = int(xp.count_nonzero(given)) * (m.size // max(given.size, 1))
        if taken > source.numel():
            raise ValueError(
                f"masked_scatter: mask selects {taken} places but source has {source.numel()} "
                f"elements; got shapes {self.shape}, {m.shape} and {source.shape}"
            )
        return record(masked.MaskedScatter.apply(self, source, mask=m), mask=given)

    def masked_scatter_(self: TensorSelf, mask: Any, source: Any) -> Tensor:
        return self._write("masked_scatter_", lambda t: t.masked_scatter(mask, source))

    def index_copy(self: TensorSelf, dim: int, index: Any, source: Any) -> Tensor:
        """self with source's slice k written at index[k] along dim."""
        d = normalize_dim(dim, self.ndim, "index_copy", self.shape)
        idx = index_vector(index, d, self, "index_copy")
        source = as_tensor(source)
        expected = self.shape[:d] + (len(idx),) + self.shape[d + 1 :]  # a 0-d self's: (1,)
        if source.shape != expected and not (source.ndim == 0 and expected == (1,)):
            raise ValueError(
                f"index_copy: source must have shape {expected} (self's, with dim {d} as long as "
                f"index); got self {self.shape}, index {idx.shape} and source {source.shape}"
            )
        if source.dtype != self.dtype:
            raise TypeError(
                f"index_copy: source must have self's dtype; got {self.dtype} and {source.dtype}"
            )
        if not self.ndim:  # read as of shape (1,): its one value written
            at: tuple = (Ellipsis,)
        elif source.shape != expected:  # a 0-d source, written at index's one place
            at = (slice(None),) * d + (idx[0],)
        else:
            at = (slice(None),) * d + (idx,)
        return record(_INDEX_COPY.apply(self, source, index=at), dim=dim, index=idx)

    def index_copy_(self: TensorSelf, dim: int, index: Any, source: Any) -> Tensor:
        return self._write("index_copy_", lambda t: t.index_copy(dim, index, source))

    def index_reduce(
        self: TensorSelf,
        dim: int,
        index: Any,
        source: Any,
        reduce: str,
        *,
        include_self: bool = True,
    ) -> Tensor:
        """self with source's slice k reduced into the slice index[k] along dim: reduce
        'prod', 'mean', 'amax' or 'amin', over self's value too unless include_self is False
        (scatter_reduce with index spread along the other dims)."""
        if reduce not in ("prod", "mean", "amax", "amin"):
            raise ValueError(
                f"index_reduce: reduce must be 'prod', 'mean', 'amax' or 'amin'; got {reduce!r}"
            )
        if reduce == "mean":  # PyTorch's mean has no bool loop
            need_number(self, "index_reduce")
        shape = self._array.shape  # the arrays' shapes: plain tuples, as numpy gives them
        d = normalize_dim(dim, len(shape), "index_reduce", shape)
        idx = index_vector(index, d, self, "index_reduce")
        source = as_tensor(source)
        got = source._array.shape
        expected = shape[:d] + (len(idx),) + shape[d + 1 :]
        if got != expected and not (not got and expected == (1,)):
            raise ValueError(
                f"index_reduce: source must have shape {expected} (self's, with dim {d} as long "
                f"as index); got self {shape}, index {idx.shape} and source {got}"
            )
        spread = xp.broadcast_to(  # ScatterReduce reads a 0-d self and source as of shape (1,)
            idx.reshape((1,) * d + (-1,) + (1,) * (len(shape) - d - 1)), expected
        )
        if source._array.dtype != self._array.dtype:  # refused, in scatter_reduce's words
            return self.scatter_reduce(d, spread, source, reduce, include_self=include_self)
        options = dict(index=spread, dim=d, reduce=reduce, include_self=bool(include_self))
        return record(_INDEX_REDUCE.apply(self, source, **options), index=idx)

    def index_reduce_(
        self: TensorSelf,
        dim: int,
        index: Any,
        source: Any,
        reduce: str,
        *,
        include_self: bool = True,
    ) -> Tensor:
        return self._write(
            "index_reduce_",
            lambda t: t.index_reduce(dim, index, source, reduce, include_self=include_self),
        )

    def scatter_add_(self: TensorSelf, dim: int, index: Any, src: Any) -> Tensor:
        return self._write("scatter_add_", lambda t: t.scatter_add(dim, index, src))

    def scatter_reduce_(
        self: TensorSelf, dim: int, index: Any, src: Any, reduce: str, *, include_self: bool = True
    ) -> Tensor:
        return self._write(
            "scatter_reduce_",
            lambda t: t.scatter_reduce(dim, index, src, reduce, include_self=include_self),
        )

    def argwhere(self: TensorSelf) -> Tensor:
        """The indices of the nonzero elements, one row each: nonzero()."""
        return self.nonzero()

    def unique_consecutive(
        self: TensorSelf,
        return_inverse: bool = False,
        return_counts: bool = False,
        dim: int | None = None,
    ) -> Any:
        """Each run of equal values (slices along dim, when given) kept once, and as asked
        each element's run index (input's shape, or dim's length) and each run's length."""
        x = self._array
        if dim is None:
            flat = x.reshape(-1)
            starts = xp.concatenate([flat[:1] == flat[:1], flat[1:] != flat[:-1]])  # (n,)
            values = flat[starts]
            inverse_shape = self.shape
        else:
            d = normalize_dim(dim, self.ndim, "unique_consecutive", self.shape)
            if 0 in x.shape[:d] + x.shape[d + 1 :]:
                raise ValueError(
                    "unique_consecutive: dims of size 0 that are not dim cannot be compared; got "
                    f"shape {self.shape} and dim {dim}"
                )
            n, rest = (x.shape[d], x.size // x.shape[d]) if x.shape[d] else (0, 1)
            rows = xp.moveaxis(x, d, 0).reshape(n, rest)  # (n, the rest)
            changed = (rows[1:] != rows[:-1]).any(axis=1) if rows.shape[1] else rows[1:, 0:0].any(1)
            starts = xp.concatenate([xp.ones(min(len(rows), 1), dtype=bool), changed])
            values = xp.compress(starts, x, axis=d)
            inverse_shape = (len(rows),)
        out = [make(values)]
        if return_inverse:
            inverse = (xp.cumsum(starts) - 1).astype(array.int64)
            out.append(make(inverse.reshape(inverse_shape)))
        if return_counts:
            edges = xp.concatenate([xp.flatnonzero(starts), [len(starts)]])
            out.append(make(xp.diff(edges).astype(array.int64)))
        return out[0] if len(out) == 1 else tuple(out)

    # -- products --------------------------------------------------------------------------

    def trace(self: TensorSelf) -> Tensor:
        """The sum of a matrix's main diagonal."""
        if self._array.ndim != 2:
            raise ValueError(f"trace: expects a matrix; got shape {self.shape}")
        need_number(self, "trace")
        return linalg.Trace.apply(self)

    def kron(self: TensorSelf, other: Any) -> Tensor:
        """The Kronecker product: each value of self times the whole of other, in blocks."""
        b = as_tensor(other)
        spread_a, spread_b, out = _kron_shapes(self._array.shape, b._array.shape)
        x, y = self._array, b._array
        made = fastpath.off_graph(self) and fastpath.off_graph(b)
        if made and x.dtype == y.dtype and x.dtype.char in "fd":
            # no node to record: the product of the spread arrays, a tensor of its own
            return make((x.reshape(spread_a) * y.reshape(spread_b)).reshape(out))
        # shapes of the same sizes: reshape's parsing skipped; PyTorch's unsafe views
        left = named(self._reshaped(spread_a), "UnsafeViewBackward0")  # (a0, 1, a1, 1, ...)
        right = named(b._reshaped(spread_b), "UnsafeViewBackward0")  # (1, b0, 1, b1, ...)
        product = left * right
        kron = product._reshaped(out)  # (a0 b0, a1 b1, ...)
        return kron if kron is product else named(kron, "UnsafeViewBackward0")  # as PyTorch's

    def cross(self: TensorSelf, other: Any, dim: int | None = None) -> Tensor:
        """The cross product of 3-vectors along dim (broadcast; by default the first dim of
        size 3)."""
        b = as_tensor(other)
        if self.ndim != b.ndim:
            raise ValueError(
                f"cross: inputs must have the same number of dims; got shapes {self.shape} and "
                f"{b.shape}"
            )
        if self._array.dtype != b._array.dtype:
            raise TypeError(f"cross: expects one dtype; got {self.dtype} and {b.dtype}")
        need_number(self, "cross")
        return linalg.LinalgCross.apply(self, b, dim=cross_dim(self, b, dim, "cross"))

    def addmv(self: TensorSelf, mat: Any, vec: Any, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        """beta * self + alpha * (mat @ vec), self broadcast to the product's shape."""
        mat, vec = as_tensor(mat), as_tensor(vec)
        _same_dtypes(self, mat, vec, "addmv")
        need_number(self, "addmv")
        sm, sv = mat._array.shape, vec._array.shape
        if len(sm) != 2 or len(sv) != 1 or sm[1] != sv[0]:
            raise ValueError(
                f"addmv: expects a matrix (n, m) and a vector (m,); got shapes {mat.shape} and "
                f"{vec.shape}"
            )
        return _scaled_sum(self, mat, vec, beta, alpha, "addmv", mat._array.shape[:1])

    def addr(self: TensorSelf, vec1: Any, vec2: Any, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        """beta * self + alpha * the outer product of vec1 and vec2."""
        vec1, vec2 = as_tensor(vec1), as_tensor(vec2)
        _same_dtypes(self, vec1, vec2, "addr")
        _integral_scalars(self, alpha, beta, "addr")
        if vec1._array.ndim != 1 or vec2._array.ndim != 1:
            raise ValueError(f"addr: expects two vectors; got shapes {vec1.shape} and {vec2.shape}")
        if self._array.dtype.kind == "b":  # and the vectors, of one dtype with it
            product = vec1.reshape(-1, 1) & vec2.reshape(1, -1)
            shape = xp.broadcast_shapes(self.shape, product.shape)
            if shape != product.shape:
                raise ValueError(f"addr: self {self.shape} does not broadcast to {product.shape}")
            return (self & bool(beta)) | (product & bool(alpha))
        return _scaled_sum(
            self, vec1, vec2, beta, alpha, "addr", vec1._array.shape + vec2._array.shape
        )

    def addbmm(
        self: TensorSelf, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1
    ) -> Tensor:
        """beta * self + alpha * the sum over the batch of batch1[i] @ batch2[i]."""
        b1, b2 = as_tensor(batch1), as_tensor(batch2)
        _same_dtypes(self, b1, b2, "addbmm")
        need_number(self, "addbmm")
        s1, s2 = b1._array.shape, b2._array.shape
        if len(s1) != 3 or len(s2) != 3 or s1[0] != s2[0] or s1[2] != s2[1]:
            raise ValueError(
                f"addbmm: expects batches of matrices (b, n, m) and (b, m, p); got shapes "
                f"{b1.shape} and {b2.shape}"
            )
        return _scaled_sum(
            self, b1, b2, beta, alpha, "addbmm", (b1._array.shape[1], b2._array.shape[2])
        )

    def ger(self: TensorSelf, vec2: Any) -> Tensor:
        """outer, by its older name."""
        return self.outer(vec2)

    def vdot(self: TensorSelf, other: Any) -> Tensor:
        """The dot product of two 1-D tensors (conjugating self, which real values leave)."""
        b = as_tensor(other)
        if self.ndim != 1 or b.ndim != 1 or self.shape != b.shape:
            raise ValueError(
                f"vdot: expects two 1-D tensors of one size; got shapes {self.shape} and {b.shape}"
            )
        if self.dtype != b.dtype:
            raise TypeError(f"vdot: expects one dtype; got {self.dtype} and {b.dtype}")
        need_number(self, "vdot")
        return matmul(self, b, _VDOT)


def cross_dim(a: Tensor, b: Tensor, dim: int | None, op: str) -> int:
    """The dim of size 3 in both a and b that their cross product runs along, from 0 (by
    default the first of their broadcast shape of size 3), checked."""
    sa, sb = a._array.shape, b._array.shape
    if dim is None:
        broadcast = [m if n == 1 else n for n, m in zip(sa, sb, strict=True)]
        dim = broadcast.index(3) if 3 in broadcast else -1
    d = normalize_dim(dim, len(sa), op, sa)
    if sa[d] != 3 or sb[d] != 3:
        raise ValueError(f"{op}: dim {dim} must have size 3; got shapes {a.shape} and {b.shape}")
    return d


def copy_of_view(x: Tensor, view: Tensor, name: str) -> Tensor:
    """``view`` (of x) copied into memory of its own (C order), its node the copy of the
    view's named ``name``, as PyTorch names the op's (Function.copied: narrow_copy's, each
    _copy function's). Where the method gave x itself (a squeeze with nothing to squeeze),
    a view of the whole of x stands for it."""
    if view is x:
        view = x[...]
    out = make(view._array.copy(), view.requires_grad)
    if view.grad_fn is not None:
        out.grad_fn = view.grad_fn.copied(name)
    tangent = forward_ad.tangent_of(view)  # forward mode: the view's tangent, copied too
    if tangent is not None:
        forward_ad.set_tangent(out, tangent.clone(memory_format=contiguous_format))
    return out


def _scatter_into(t: Tensor, src: Any, index: tuple, shape: tuple, op: str, put: Any) -> Tensor:
    """t with src, of the shape t[index] has, written at index (by ``put``, the index put
    named as the op's node)."""
    src = as_tensor(src)
    if src.shape != tuple(shape):
        raise ValueError(f"{op}: src must have shape {tuple(shape)}; got {src.shape}")
    return put.apply(t, src if src.dtype == t.dtype else src.to(t.dtype), index=index)


def _embed_options(t: Tensor, offset: int, dim1: int, dim2: int) -> dict[str, Any]:
    """DiagEmbed's options that put a diagonal of t(offset, dim1, dim2) back in t's shape."""
    a = normalize_dim(dim1, t.ndim, "diagonal_scatter", t.shape)
    b = normalize_dim(dim2, t.ndim, "diagonal_scatter", t.shape)
    return dict(offset=int(offset), dim1=a, dim2=b, shape=t.shape)


def _even_split(t: Tensor, sections: Any, dim: int, ndim: int, op: str) -> tuple[Tensor, ...]:
    """hsplit's, vsplit's and dsplit's split: an int must divide the dim's size."""
    shape = t._array.shape
    if len(shape) < ndim:
        raise ValueError(f"{op}: expects a tensor of at least {ndim} dims; got shape {t.shape}")
    if is_int(sections) and (sections == 0 or shape[dim] % sections):
        raise ValueError(
            f"{op}: the size {t.shape[dim]} of dim {dim} is not divisible by {sections}; got "
            f"shape {t.shape}"
        )
    return t.tensor_split(sections, dim)


def _flat_index(t: Tensor, index: Any, op: str) -> Any:
    """take's and put's index: an int64 array of positions in the flattened t (negative
    ones from the end, as given), checked."""
    idx = array.on_device_of(index._array if isinstance(index, Core) else index, t._array)
    if idx.dtype != array.int64:
        raise TypeError(f"{op}: index must be an int64 tensor; got dtype {idx.dtype}")
    n = t.numel()
    bad = idx[(idx < -n) | (idx >= n)]
    if bad.size:
        raise IndexError(
            f"{op}: index {int(bad.reshape(-1)[0])} is out of range for a tensor of {n} "
            f"elements; got shape {t.shape}"
        )
    return idx


def _same_dtypes(t: Tensor, a: Tensor, b: Tensor, op: str) -> None:
    if not t._array.dtype == a._array.dtype == b._array.dtype:
        raise TypeError(
            f"{op}: input tensors must have the same dtype; got {t.dtype}, {a.dtype} and {b.dtype}"
        )


def _integral_scalars(t: Tensor, alpha: Any, beta: Any, op: str) -> None:
    """PyTorch's refusal of a float alpha or beta for integer and bool tensors."""
    if t._array.dtype.kind in "biu" and (isinstance(alpha, float) or isinstance(beta, float)):
        raise TypeError(
            f"{op}: for integer or bool tensors, alpha and beta must not be floats; got alpha "
            f"{alpha} and beta {beta} for dtype {t.dtype}"
        )


def _scaled_sum(
    t: Tensor, a: Tensor, b: Tensor, beta: Any, alpha: Any, op: str, shape: tuple[int, ...]
) -> Tensor:
    """beta * t + alpha * op's product of a and b, of the given shape, as one node (op's own,
    as PyTorch's), t broadcast to the product's shape; beta 0 ignores t's values (NaN
    included), as PyTorch's."""
    if t._array.shape != shape and not broadcasts_to(t._array.shape, shape):
        raise ValueError(f"{op}: self of shape {t.shape} does not broadcast to {tuple(shape)}")
    kind = {"addmv": linalg.Addmv, "addr": linalg.Addr, "addbmm": linalg.Addbmm}[op]
    return kind.apply(t, a, b, beta=scalar_for(t, beta, op), alpha=scalar_for(t, alpha, op))


def _unsafe(outs: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
    """split's outputs, their one node named as PyTorch's unsafe_split's
    (UnsafeSplitBackward0)."""
    if outs[0].grad_fn is not None:
        named(outs[0], "Unsafe" + outs[0].grad_fn.name())
    return outs


_INDEX_REDUCE = movement.ScatterReduce.named("IndexReduceBackward0")  # along one dim
_INDEX_COPY = movement.IndexPut.named("IndexCopyBackward0")
_SELECT_SCATTER = movement.IndexPut.named("SelectScatterBackward0")
_SLICE_SCATTER = movement.IndexPut.named("SliceScatterBackward0")
_VDOT = linalg.MatMul.named("VdotBackward0")  # vdot's product, named as PyTorch's (Function.named)


@functools.lru_cache(maxsize=256)
def _summed_dims(shape: tuple[int, ...], have: tuple[int, ...]) -> tuple[int, ...]:
    """The dims sum_to_size sums to bring ``have`` down to ``shape`` (its leading dims and
    those where shape has 1), made once for each pair; refused where shape is not one that
    have broadcasts from."""
    if len(shape) > len(have) or not broadcasts_to(shape, have):
        raise ValueError(f"sum_to_size: size {shape} is not one that shape {have} broadcasts from")
    lead = len(have) - len(shape)
    ones = [lead + i for i, n in enumerate(shape) if n == 1 and have[lead + i] != 1]
    return tuple(range(lead)) + tuple(ones)


@functools.lru_cache(maxsize=256)
def _kron_shapes(sa: tuple[int, ...], sb: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """kron's shapes for operands of shapes sa and sb, made once for each pair: each
    operand spread over every other dim, (a0, 1, a1, 1, ...) and (1, b0, 1, b1, ...), and the
    product's (a0 b0, a1 b1, ...); the shorter shape padded with leading 1s."""
    n = max(len(sa), len(sb))
    sa, sb = (1,) * (n - len(sa)) + sa, (1,) * (n - len(sb)) + sb
    spread_a: list[int] = []
    spread_b: list[int] = []
    for p, q in zip(sa, sb, strict=True):
        spread_a += (p, 1)
        spread_b += (1, q)
    return tuple(spread_a), tuple(spread_b), tuple(p * q for p, q in zip(sa, sb, strict=True))
