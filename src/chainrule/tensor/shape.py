"""Tensor shape and indexing: reshapes and views, transposes, splits, getitem and setitem,
gather and scatter, index and masked selection."""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from .. import array, fastpath
from ..arguments import (
    broadcast_shape,
    broadcasts_to,
    index_arg,
    index_vector,
    infer_shape,
    is_int,
    need_dims,
    need_number,
    normalize_dim,
    normalize_dims,
    shape_arg,
    split_index,
    spread_or_keyword,
)
from ..autograd.node import named
from ..autograd.outputs import split_node
from ..autograd.saved import record
from ..ops import elementwise, movement, reorder
from ..ops.movement import viewed
from .arithmetic import scalar_for, where
from .core import Core, as_tensor, make
from .indexing import copy_of_view

if TYPE_CHECKING:  # Tensor in annotations alone (core.py says why)
    from . import Tensor
    from .core import TensorSelf

xp = array.xp


class Shape(Core):
    """The movement and indexing methods of Tensor."""

    __slots__ = ()

    @property
    def T(self: TensorSelf) -> Tensor:
        return viewed(_PERMUTE, self, dims=_REVERSED[self._array.ndim])  # a view, even of 1-D

    @property
    def mT(self: TensorSelf) -> Tensor:
        n = self._array.ndim
        if n < 2:
            need_dims(self, 2, "mT")  # raises
        out = viewed(_TRANSPOSE, self, dims=_SWAPPED[n])  # (..., m, n) -> (..., n, m)
        return named(out, "TransposeBackward0", dim0=-2, dim1=-1)

    # -- shape -----------------------------------------------------------------------------

    def reshape(self: TensorSelf, *shape_list: Any, shape: Any = None) -> Tensor:
        shape = shape_arg(spread_or_keyword(shape_list, shape, "shape", "reshape"))
        data = self._array
        try:  # NumPy infers -1 and checks the size: a view of contiguous data costs little
            ok = data.flags.c_contiguous and (not shape or min(shape) >= -1)  # NumPy takes -2
            new = data.reshape(shape).shape if ok else None
        except (ValueError, TypeError):
            new = None
        if new is None and _sizes(shape) == data.size:  # every size given, as Python ints
            new = shape
        if new is None:
            new = infer_shape(shape, self.shape, "reshape")  # raises, naming both shapes
        return self._reshaped(new)

    def _reshaped(self: TensorSelf, new: tuple[int, ...]) -> Tensor:
        """reshape to ``new``, a shape of self's size already checked (the methods that
        build their shape from self's, as flatten does, skip reshape's parsing)."""
        # of the same shape too: a new view, as PyTorch's (y is x is False)
        out = viewed(movement.Reshape, self, shape=new)  # a copy: PyTorch's clone, unsafe view
        if out._vc is self._vc or not self._array.size:  # a view: of a tensor out of row-major
            # order, PyTorch's _reshape_alias
            return out if self._array.flags.c_contiguous else named(out, "ReshapeAliasBackward0")
        return named(out, "UnsafeViewBackward0", cloned=True)  # PyTorch's CloneBackward0 below

    def view(self: TensorSelf, *shape: Any, size: Any = None) -> Tensor:
        """The tensor's memory seen with a new shape: refused, as PyTorch refuses it, where
        the strides cannot give that shape without a copy (reshape copies there);
        ``view(dtype)``, which reads the bytes as another dtype, is refused too."""
        shape = spread_or_keyword(shape, size, "size", "view")
        if (
            len(shape) == 1
            and not isinstance(shape[0], (int, tuple, list))
            and not is_int(shape[0])
        ):
            raise TypeError(
                f"view: reading a tensor's bytes as another dtype (view({shape[0]})) is not "
                "supported; use .to(dtype) to convert the values"
            )
        return self._as_view(self.reshape(*shape))

    def _as_view(self: TensorSelf, out: Tensor) -> Tensor:
        """``out``, self reshaped, where it is a view of self; else PyTorch's refusal."""
        # NumPy's reshape views wherever PyTorch's view can (PyTorch took its rule from
        # NumPy), and copies elsewhere: a copy here is the view PyTorch refuses. A view
        # shares self's version counter (Function.apply made it one).
        if out is self or not out._array.size or (out._vc is not None and out._vc is self._vc):
            return out if out is self else named(out, "ViewBackward0")
        raise RuntimeError(
            "view: view size is not compatible with input tensor's size and stride (at least "
            "one dimension spans across two contiguous subspaces); got shape "
            f"{self._array.shape} with stride {self.stride()} and size {out._array.shape}. "
            "Use .reshape(...) instead."
        )

    def t(self: TensorSelf) -> Tensor:
        """The transpose of a 2-D tensor; a 0-D or 1-D tensor as it is."""
        n = self._array.ndim
        if n > 2:
            raise ValueError(f"t: expects a tensor of at most 2 dims; got shape {self.shape}")
        return viewed(_T, self, dims=_REVERSED[n])  # a view, even of 0-D or 1-D

    def narrow(self: TensorSelf, dim: int, start: Any, length: int) -> Tensor:
        """The slice start : start + length along dim (start may be negative)."""
        need_dims(self, 1, "narrow")
        shape = self._array.shape
        d = normalize_dim(dim, len(shape), "narrow", shape)
        n = shape[d]
        first = int(start) + n if int(start) < 0 else int(start)
        if not (0 <= first <= n and is_int(length) and 0 <= length <= n - first):
            raise IndexError(
                f"narrow: start {start} and length {length} are out of range for dim {d} of "
                f"size {n}; got shape {shape}"
            )
        # slices only: the index is NumPy's as it stands (self[...] would parse it again)
        out = viewed(
            movement.GetItem, self, index=(slice(None),) * d + (slice(first, first + length),)
        )  # a slice even of the whole dim, as PyTorch's; its dim as given
        return named(out, "SliceBackward0", dim=dim, start=first, end=first + length, step=1)

    def view_as(self: TensorSelf, other: Tensor) -> Tensor:
        shape = other._array.shape if isinstance(other, Core) else tuple(other.shape)
        if math.prod(shape) != self._array.size:
            return self.view(shape)  # refused, naming both shapes
        return self._as_view(self._reshaped(shape))  # a shape already checked: no parsing

    def flatten(self: TensorSelf, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        shape = self._array.shape
        n = len(shape)
        if n == 0:
            return self.reshape(1)
        s = normalize_dim(start_dim, n, "flatten", shape)
        e = normalize_dim(end_dim, n, "flatten", shape)
        if s > e:
            raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
        if s == e:  # nothing to merge: self, as PyTorch's
            return self
        # the merged size spelled out, not -1, which an empty tensor cannot resolve
        return self._reshaped(shape[:s] + (math.prod(shape[s : e + 1]),) + shape[e + 1 :])

    def unflatten(self: TensorSelf, dim: int, sizes: Any) -> Tensor:
        """Dim split into sizes (one of them may be -1): flatten's inverse, (N, 12) -> (N, 3, 4)."""
        shape = self._array.shape
        d = normalize_dim(dim, len(shape), "unflatten", shape)
        sizes = tuple(sizes)
        known = math.prod(n for n in sizes if n != -1)
        if sizes.count(-1) > 1 or (
            known != shape[d] if -1 not in sizes else known == 0 or shape[d] % known
        ):
            raise ValueError(
                f"unflatten: sizes {sizes} do not multiply to dim {dim}'s size {shape[d]}; "
                f"got shape {shape}"
            )
        return self.reshape(*shape[:d], *sizes, *shape[d + 1 :])

    def squeeze(self: TensorSelf, dim: Any = None) -> Tensor:
        shape = self._array.shape
        if dim is None:
            kept = tuple([n for n in shape if n != 1])
        else:
            dims = normalize_dims(dim, self, "squeeze") or ()
            kept = tuple([n for d, n in enumerate(shape) if n != 1 or d not in dims])
        which = 0 if dim is None else 1 if is_int(dim) else 2  # PyTorch's three overloads
        out = viewed(_SQUEEZE[which], self, shape=kept)
        return named(out, _SQUEEZE[which].__name__, **({} if dim is None else {"dim": dim}))

    def unsqueeze(self: TensorSelf, dim: int) -> Tensor:
        shape = self._array.shape
        d = normalize_dim(dim, len(shape) + 1, "unsqueeze", shape)
        shape = shape[:d] + (1,) + shape[d:]  # a 1 inserted at d
        return named(viewed(_UNSQUEEZE, self, shape=shape), "UnsqueezeBackward0", dim=dim)

    def transpose(self: TensorSelf, dim0: int, dim1: int) -> Tensor:
        shape = self._array.shape
        order = list(range(len(shape)))
        a = normalize_dim(dim0, len(shape), "transpose", shape)
        b = normalize_dim(dim1, len(shape), "transpose", shape)
        if order:  # a 0-d tensor's transpose(0, 0) keeps its no dims
            order[a], order[b] = order[b], order[a]
        out = viewed(_TRANSPOSE, self, dims=tuple(order))  # dims already checked
        return named(out, "TransposeBackward0", dim0=dim0, dim1=dim1)

    def swapaxes(self: TensorSelf, axis0: int, axis1: int) -> Tensor:
        """transpose, as NumPy names its dims."""
        return self.transpose(axis0, axis1)

    swapdims = transpose

    def permute(self: TensorSelf, *dim_list: Any, dims: Any = None) -> Tensor:
        dims = shape_arg(spread_or_keyword(dim_list, dims, "dims", "permute"))
        shape = self._array.shape
        n = len(shape)
        norm = tuple(
            [
                d % n if type(d) is int and -n <= d < n else normalize_dim(d, n, "permute", shape)
                for d in dims
            ]
        )  # normalize_dim's common case inline: on every permute's way
        if len(norm) != n or len(set(norm)) != n:
            raise ValueError(
                f"permute: dims {tuple(dims)} are not a permutation of the {n} dims of a "
                f"tensor of shape {shape}"
            )
        return self._permuted(norm)

    def _permuted(self: TensorSelf, order: tuple[int, ...]) -> Tensor:
        """permute by ``order``, a permutation of self's dims already checked (movedim's)."""
        return viewed(_PERMUTE, self, dims=order)

    def expand(self: TensorSelf, *sizes: Any, size: Any = None) -> Tensor:
        sizes = shape_arg(spread_or_keyword(sizes, size, "size", "expand"))
        have = self._array.shape
        lead = len(sizes) - len(have)
        if lead < 0:
            raise ValueError(f"expand: cannot expand shape {have} to fewer dims {tuple(sizes)}")
        shape = list(sizes)
        for i, m in enumerate(have):  # each dim of self: -1 (kept), its size, or grown from 1
            n = shape[lead + i]
            if n == -1:
                shape[lead + i] = m
            elif n != m and m != 1:
                raise ValueError(f"expand: shape {have} cannot be broadcast to {tuple(sizes)}")
        return viewed(movement.Expand, self, shape=tuple(shape))  # checked: no broadcast_to

    def broadcast_to(self: TensorSelf, shape: Sequence[int]) -> Tensor:
        shape, have = tuple(shape), self._array.shape
        if not broadcasts_to(have, shape):
            raise ValueError(f"expand: shape {have} cannot be broadcast to {shape}")
        return viewed(movement.Expand, self, shape=shape)

    def expand_as(self: TensorSelf, other: Tensor) -> Tensor:
        return self.broadcast_to(other.shape)

    def split(self: TensorSelf, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
        need_dims(self, 1, "split")
        shape = self._array.shape
        d = normalize_dim(dim, len(shape), "split", shape)
        n = shape[d]
        if isinstance(split_size_or_sections, int):
            step = split_size_or_sections
            if step <= 0:
                raise ValueError(f"split: split_size must be positive; got {step}")
            sizes = [min(step, n - i) for i in range(0, n, step)] or [0]
        else:
            sizes = list(split_size_or_sections)
            if sum(sizes) != n:
                raise ValueError(
                    f"split: sections {sizes} sum to {sum(sizes)}, not to dim {dim}'s size {n}; "
                    f"got shape {self.shape}"
                )
        lead = (slice(None),) * d
        indexes, start = [], 0
        for s in sizes:  # basic slices: GetItem itself, no index to parse
            indexes.append(lead + (slice(start, start + s),))
            start += s
        out = movement.sliced(movement.GetItem, self, indexes)
        op = "Split" if isinstance(split_size_or_sections, int) else "SplitWithSizes"
        for k, piece in enumerate(out):  # written in place in a graph: refused, as PyTorch's
            piece._multi_output = (op, k)
        if out[0].grad_fn is not None:  # one node for all of them, as PyTorch's
            saved = {"dim": d, "self_sizes": shape}
            if op == "Split":
                saved["split_size"] = split_size_or_sections
            else:
                saved["split_sizes"] = tuple(sizes)
            split_node(self, out, "Split", f"{op}Backward0", **saved)
        return tuple(out)

    @property
    def output_nr(self: TensorSelf) -> int:
        """Which output of its node this tensor is: k for split's k-th piece, else 0."""
        fn = self.grad_fn
        return fn.number(self) if fn is not None and fn.several else 0

    def unbind(self: TensorSelf, dim: int = 0) -> tuple[Tensor, ...]:
        """The slices along dim, that dim removed: x.unbind(1) of (B, T, C) is T of (B, C)."""
        shape = self._array.shape
        if not shape:
            need_dims(self, 1, "unbind")  # raises
        d = normalize_dim(dim, len(shape), "unbind", shape)
        lead = (slice(None),) * d
        out = tuple(movement.sliced(movement.Unbind, self, [lead + (k,) for k in range(shape[d])]))
        for k, t in enumerate(out):
            t._multi_output = ("Unbind", k)
        if out and out[0].grad_fn is not None:  # one node for all of them, as PyTorch's
            split_node(self, out, "Unbind", "UnbindBackward0", dim=d)
        return out

    def chunk(self: TensorSelf, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
        if chunks <= 0:
            raise ValueError(f"chunk: chunks must be positive; got {chunks}")
        need_dims(self, 1, "chunk")
        shape = self._array.shape
        n = shape[normalize_dim(dim, len(shape), "chunk", shape)]
        if not n:  # as PyTorch's: chunks empty parts, split_with_sizes' (0, ..., 0)
            return self.split([0] * chunks, dim)
        return self.split(-(-n // chunks), dim)

    def __getitem__(self: TensorSelf, index: Any) -> Tensor:
        if type(index) is int or type(index) is tuple and _integers(index):
            # x[i], x[i, j]: nothing to turn or split
            ints = index if type(index) is tuple else (index,)
            if fastpath.enabled():
                view = fastpath.view_at(self, ints)
                if view is not None:
                    return view
            return movement.GetItem.apply(self, index=ints)
        key = index_arg(index, self._array)
        steps = split_index(key)
        if steps is not None:  # integers and index arrays: PyTorch's order (see split_index)
            selected = movement.GetItem.apply(self, index=steps[0])
            return movement.GetItem.apply(selected, index=steps[1])
        return viewed(movement.GetItem, self, index=key)

    def __iter__(self: TensorSelf) -> Iterator[Tensor]:
        return (self[i] for i in range(len(self)))

    def __setitem__(self: TensorSelf, index: Any, value: Any) -> None:
        if type(index) is int or type(index) is tuple and _integers(index):
            if isinstance(value, array.moved_types) and self.is_cuda:
                value = array.from_host(value, self._array)
            self._put(index if type(index) is tuple else (index,), value)  # nothing to turn
            return
        index = index_arg(index, self._array)
        if isinstance(value, array.moved_types) and self.is_cuda:  # moved, as an index is
            value = array.from_host(value, self._array)
        steps = split_index(index)
        if steps is not None and getattr(value, "ndim", False):  # PyTorch's order, where the
            # value's layout depends on it (a number lands on the same elements either way):
            # into the integers' selection, a view
            movement.GetItem.apply(self, index=steps[0])[steps[1]] = value
            return
        self._put(index, value)

    def gather(self: TensorSelf, dim: int, index: Any) -> Tensor:
        """The values at index along dim, in index's shape: for dim 1, out[i][j] =
        self[i][index[i][j]], index no larger than self in a dim but dim. A 0-d self or
        index reads as one of shape (1,), as PyTorch's; an empty index gathers nothing,
        whatever its integer dtype or dims."""
        idx = _index_array(self, index)
        if _reads_scalars(self, idx):  # checked as of shape (1,); Gather reads them so
            d, at = _scatter_index(_lifted(self), dim, _lifted(idx), None, "gather")
            return movement.Gather.apply(self, at.reshape(idx.shape), dim=d)
        if not idx.size:  # PyTorch checks neither its dims nor its dtype
            d = normalize_dim(dim, self.ndim, "gather", self.shape)
            return movement.Gather.apply(self, idx.astype(array.int64), dim=d)
        if idx.dtype.kind not in "iu" or idx.ndim != self.ndim:
            raise ValueError(
                f"gather: index must be an integer tensor with {self.ndim} dims; got dtype "
                f"{idx.dtype} and shape {idx.shape}"
            )
        d, idx = _scatter_index(self, dim, idx, None, "gather")  # its sizes and values
        return movement.Gather.apply(self, idx, dim=d)

    def take_along_dim(self: TensorSelf, indices: Any, dim: int | None = None) -> Tensor:
        """PyTorch's take_along_dim: with a dim, gather from self and int64 indices broadcast
        against each other in every dim but dim, an index read modulo dim's size (-1 is the
        last, as PyTorch's); with no dim, gather along the flattened tensor."""
        idx = _index_array(self, indices)
        if dim is None:
            return self.flatten().gather(0, idx.reshape(-1))
        if idx.dtype != array.int64:
            raise TypeError(f"take_along_dim: indices must be int64; got dtype {idx.dtype}")
        d = normalize_dim(dim, self.ndim, "take_along_dim", self.shape)
        if idx.ndim != self.ndim or not self.ndim:
            raise ValueError(
                "take_along_dim: input and indices must have the same number of dims, at least "
                f"1; got shapes {self.shape} and {idx.shape}"
            )
        try:  # every dim but d broadcast; d keeps indices' size
            shape = xp.broadcast_shapes(
                self.shape[:d] + idx.shape[d : d + 1] + self.shape[d + 1 :], idx.shape
            )
        except ValueError:
            raise ValueError(
                f"take_along_dim: input and indices cannot be broadcast together in the dims "
                f"but {d}; got shapes {self.shape} and {idx.shape}"
            ) from None
        n = self.shape[d]
        if not n and idx.size:
            raise ValueError(
                f"take_along_dim: nothing to take from dim {d} of size 0; got shapes "
                f"{self.shape} and {idx.shape}"
            )
        source = self.broadcast_to(shape[:d] + (n,) + shape[d + 1 :])  # self's size along d
        return source.gather(d, xp.broadcast_to(idx % max(n, 1), shape))

    def diag(self: TensorSelf, diagonal: int = 0) -> Tensor:
        """A 1-D tensor's values on a square matrix's diagonal (zeros elsewhere), or a 2-D
        tensor's diagonal as 1-D; diagonal > 0 is above the main one, < 0 below."""
        k = diagonal
        if self.ndim == 2:  # PyTorch's diag of a matrix is its diagonal_copy
            return copy_of_view(self, self.diagonal(k), "DiagonalBackward0_copy")
        if self.ndim != 1:
            raise ValueError(f"diag: expected a 1-D or 2-D tensor; got shape {self.shape}")
        return self.diag_embed(k)  # PyTorch's diag of a vector is its diag_embed

    def tril(self: TensorSelf, diagonal: int = 0) -> Tensor:
        """The lower triangle of the last two dims (column <= row + diagonal), zeros above."""
        need_dims(self, 2, "tril")
        keep = _triangle(self._array, int(diagonal), False)  # (rows, cols)
        return named(_TRIL.apply(keep, self, _zero(self)), "TrilBackward0", diagonal=diagonal)

    def triu(self: TensorSelf, diagonal: int = 0) -> Tensor:
        """The upper triangle of the last two dims (column >= row + diagonal), zeros below."""
        need_dims(self, 2, "triu")
        keep = _triangle(self._array, int(diagonal), True)  # (rows, cols)
        return named(_TRIU.apply(keep, self, _zero(self)), "TriuBackward0", diagonal=diagonal)

    def flip(self: TensorSelf, *dim_list: Any, dims: Any = None) -> Tensor:
        """The order of the values reversed along each of dims: one index of reversed slices,
        then a copy, since PyTorch's flip shares no memory with its input (a write into the
        result must not reach it)."""
        dims = spread_or_keyword(dim_list, dims, "dims", "flip")
        flipped = normalize_dims(shape_arg(dims), self, "flip") if dims and shape_arg(dims) else ()
        out = reorder.Flip.apply(self, dims=flipped)  # no dims (or 0-d): a copy, PyTorch's
        return named(out, "FlipBackward0", dims=tuple(shape_arg(dims)))  # as given, PyTorch's

    def roll(self: TensorSelf, shifts: Any, dims: Any = None) -> Tensor:
        """Values shifted along dims, those pushed off the end coming back at the start; with
        no dims, along the flattened tensor. One index of source positions per dim."""
        if dims is None:
            if isinstance(shifts, (tuple, list)) and len(shifts) != 1:
                raise ValueError(
                    f"roll: without dims, shifts must be one int; got {tuple(shifts)} for shape "
                    f"{self.shape}"
                )
            shift = shifts[0] if isinstance(shifts, (tuple, list)) else shifts
            return reorder.Roll.apply(self, shifts=(int(shift),), dims=())
        shift_list = list(shifts) if isinstance(shifts, (tuple, list)) else [shifts]
        dim_list = list(dims) if isinstance(dims, (tuple, list)) else [dims]
        if len(shift_list) != len(dim_list):
            raise ValueError(
                f"roll: shifts {tuple(shift_list)} and dims {tuple(dim_list)} differ in length; "
                f"got shape {self.shape}"
            )
        if not self._array.ndim:  # a 0-d tensor has no dim to roll along, as in PyTorch
            raise IndexError(f"roll: dims {tuple(dim_list)} are out of range for a 0-d tensor")
        shape = self._array.shape
        dims = tuple(normalize_dim(dim, len(shape), "roll", shape) for dim in dim_list)
        out = reorder.Roll.apply(self, shifts=tuple(map(int, shift_list)), dims=dims)
        return named(out, "RollBackward0", dims=tuple(dim_list))  # as given, as PyTorch's

    def tile(self: TensorSelf, dims: Any) -> Tensor:
        """repeat, with leading 1s added to dims when it is shorter than the shape."""
        dims = (dims,) if isinstance(dims, int) else tuple(dims)
        return self.repeat((1,) * (self.ndim - len(dims)) + dims)  # whole: () for a 0-d's ()

    def repeat(self: TensorSelf, *sizes: Any, repeats: Any = None) -> Tensor:
        """The tensor tiled sizes[i] times along each dim (leading 1s added to its shape when
        sizes is longer), a copy: movement.Repeat."""
        sizes = shape_arg(spread_or_keyword(sizes, repeats, "repeats", "repeat"))
        if len(sizes) < self.ndim or not all(is_int(r) and r >= 0 for r in sizes):
            raise ValueError(
                f"repeat: sizes must be non-negative ints, at least one per dim; got sizes "
                f"{tuple(sizes)} for shape {self.shape}"
            )
        sizes = tuple(map(int, sizes))
        out = movement.Repeat.apply(self, sizes=sizes)
        return named(out, "RepeatBackward0", repeats=sizes, self_sym_sizes=self.shape)

    def repeat_interleave(
        self: TensorSelf, repeats: Any, dim: int | None = None, *, output_size: int | None = None
    ) -> Tensor:
        """Each value repeated along dim (over the flattened tensor for None): repeats is one
        count for all or one count per value. An index_select of the repeated positions."""
        if dim is None:
            return self.flatten().repeat_interleave(repeats, 0, output_size=output_size)
        shape = self._array.shape
        d = normalize_dim(dim, len(shape), "repeat_interleave", shape)
        n = shape[d] if shape else 1
        if type(repeats) is int and repeats >= 0:  # one count for all: nothing to check
            source = xp.repeat(xp.arange(n, like=self._array), repeats)  # each one's source
        else:
            counts = repeats._array if isinstance(repeats, Core) else repeats
            counts = array.on_device_of(counts, self._array)
            if counts.dtype.kind not in "iu" or counts.ndim > 1 or counts.size not in (1, n):
                raise ValueError(
                    f"repeat_interleave: repeats must be an int or an integer tensor of 1 or {n} "
                    f"values (the size of dim {d}); got dtype {counts.dtype} and shape "
                    f"{counts.shape} for shape {self.shape}"
                )
            if (counts < 0).any():
                raise ValueError(f"repeat_interleave: repeats must not be negative; got {counts}")
            source = xp.repeat(xp.arange(n, like=counts), counts.reshape(-1))
        if output_size is not None and output_size != len(source):
            raise ValueError(
                f"repeat_interleave: output_size {output_size} differs from the {len(source)} "
                f"values the repeats make; got shape {self.shape}"
            )
        whole = self if shape else self._reshaped((1,))
        # the positions, an index array along d: GetItem itself, no index to parse
        out = movement.GetItem.apply(whole, index=(slice(None),) * d + (source,))
        if not isinstance(repeats, Core):  # PyTorch's view of each value's expanded copies
            sizes = whole.shape[:d] + (n, repeats) + whole.shape[d + 1 :]
            return named(out, "ViewBackward0", sizes=sizes)
        return named(out, "IndexSelectBackward0", dim=d, index=source, sizes=self.shape or (1,))

    def index_select(self: TensorSelf, dim: int, index: Any) -> Tensor:
        """The slices index names along dim, in its order; of a 0-d self, self (index must
        name its one value once), as PyTorch's."""
        d = normalize_dim(dim, self.ndim, "index_select", self.shape)
        idx = index_vector(index, d, self, "index_select")
        if not self.ndim:
            if len(idx) != 1:
                raise ValueError(
                    f"index_select: the index of a 0-d tensor must hold one value; got index "
                    f"of shape {idx.shape}"
                )
            # the one value, read by a 0-d index of the (1,) view: a 0-d result, one GetItem
            out = movement.GetItem.apply(self._reshaped((1,)), index=(idx.reshape(()),))
            given = index._array if isinstance(index, Core) else idx
            return named(out, "IndexSelectBackward0", dim=dim, index=given, sizes=self.shape)
        # GetItem itself, with no index to parse: one take along d, contiguous as PyTorch's
        out = movement.GetItem.apply(self, index=(slice(None),) * d + (idx,))
        given = index._array if isinstance(index, Core) else idx
        return named(out, "IndexSelectBackward0", dim=dim, index=given, sizes=self.shape)

    def scatter(
        self: TensorSelf,
        dim: int,
        index: Any,
        src: Any = None,
        *,
        value: Any = None,
        reduce: Any = None,
    ) -> Tensor:
        """self with src (a tensor, or a number: ``value``) written at index along dim; for
        dim 1, out[i][index[i][j]] = src[i][j]. A repeated position keeps the last write.
        ``reduce`` 'add' or 'multiply' adds or multiplies src in instead (each repeat too)."""
        src = value if src is None else src
        src = src if isinstance(src, (Core, int, float)) else as_tensor(src)
        idx = _index_array(self, index)
        d, idx = _checked_index(self, dim, idx, src, "scatter")
        if reduce is not None:
            return _scatter_with_reduce(self, d, idx, src, reduce)
        if not isinstance(src, Core):  # scatter.value: the number is no input, as PyTorch's
            out = _SCATTER_VALUE.apply(self, src=src, index=idx, dim=d)
            return named(out, "ScatterBackward1", dim=dim, index=idx)  # dim as given
        return movement.Scatter.apply(self, src, index=idx, dim=d)

    def scatter_add(self: TensorSelf, dim: int, index: Any, src: Any) -> Tensor:
        """self with src added at index along dim (repeated positions add up)."""
        src = as_tensor(src)
        d, idx = _checked_index(self, dim, _index_array(self, index), src, "scatter_add")
        where = movement.along_dim(idx.reshape(idx.shape or (1,)), d, max(self.ndim, 1))
        out = _SCATTER_ADD.apply(self, src, index=where, alpha=1)  # src's corner as idx's
        return record(out, dim=dim, index=idx)

    def scatter_reduce(
        self: TensorSelf, dim: int, index: Any, src: Any, reduce: str, *, include_self: bool = True
    ) -> Tensor:
        """self with src reduced into the places index names along dim: reduce 'sum',
        'prod', 'mean', 'amax' or 'amin', over self's value too unless include_self is False."""
        if reduce not in ("sum", "prod", "mean", "amax", "amin"):
            raise ValueError(
                "scatter_reduce: reduce must be 'sum', 'prod', 'mean', 'amax' or 'amin'; got "
                f"{reduce!r}"
            )
        src = as_tensor(src)
        if reduce == "mean":  # PyTorch's mean has no bool loop
            need_number(self, "scatter_reduce")
        idx = _index_array(self, index)
        d, idx = _checked_index(self, dim, idx, src, "scatter_reduce")
        options = dict(index=idx, dim=d, reduce=reduce, include_self=bool(include_self))
        return movement.ScatterReduce.apply(self, src, **options)

    def index_fill(self: TensorSelf, dim: int, index: Any, value: Any) -> Tensor:
        """self with the slices index names along dim set to value (a number or 0-d tensor,
        which gets their gradient)."""
        d = normalize_dim(dim, self.ndim, "index_fill", self.shape)
        mask = xp.zeros(self.shape[d] if self.ndim else 1, dtype=bool, like=self._array)
        idx = index_vector(index, d, self, "index_fill")
        mask[idx] = True
        shape = (-1,) + (1,) * (self.ndim - d - 1) if self.ndim else ()  # (n, 1, ..) along d
        out = where(mask.reshape(shape), value, self)
        # the fill takes self's dtype, as PyTorch's: an integer tensor filled with 1.7 holds 1
        if out._array.dtype != self._array.dtype:
            return out.to(self.dtype)
        # a number: PyTorch's IndexFillBackward0; a 0-d tensor: its IndexFillBackward1 (the
        # where's edges the other way, as masked_fill's)
        which = "IndexFillBackward1" if isinstance(value, Core) else "IndexFillBackward0"
        return named(out, which, dim=dim, index=idx)

    def index_add(
        self: TensorSelf, dim: int, index: Any, source: Any, *, alpha: float = 1
    ) -> Tensor:
        """self with alpha * source added at the positions index names along dim: source's
        slice k goes to index[k] (repeated positions add up)."""
        shape = self._array.shape  # the arrays' shapes: plain tuples, as numpy gives them
        d = normalize_dim(dim, len(shape), "index_add", shape)
        idx = index_vector(index, d, self, "index_add")
        source = as_tensor(source)
        got = source._array.shape
        expected = shape[:d] + (len(idx),) + shape[d + 1 :]  # self's, dim d len(idx)
        both_0d = not shape and not got  # PyTorch reads both as of shape (1,)
        if not both_0d and (got != expected or len(got) != len(shape)):
            raise ValueError(
                f"index_add: source must have shape {expected} (self's, with dim {d} as long as "
                f"index); got self {shape}, index {idx.shape} and source {got}"
            )
        _same_dtype(self, source, "index_add", "source")
        alpha = scalar_for(self, alpha, "index_add")
        out = _INDEX_ADD.apply(self, source, index=(slice(None),) * d + (idx,), alpha=alpha)
        return record(out, dim=dim, index=idx)

    def masked_select(self: TensorSelf, mask: Any) -> Tensor:
        """The values where mask (broadcast with self) is True, as a 1-D tensor."""
        m = array.on_device_of(mask._array if isinstance(mask, Core) else mask, self._array)
        if m.dtype != array.bool_:
            raise TypeError(f"masked_select: mask must be a bool tensor; got dtype {m.dtype}")
        shape = broadcast_shape("masked_select", self.shape, m.shape)
        if self.shape == shape or not self.ndim:  # a 0-d self is expanded (NumPy indexes
            # no element of it by an array)
            x = self if self.shape == shape else self.broadcast_to(shape)
            out = x[m if m.shape == shape else xp.broadcast_to(m, shape)]
        else:  # self broadcast: each picked value's place in self (PyTorch's one node)
            at = xp.nonzero(xp.broadcast_to(m, shape))  # (k,) for each dim of shape
            own = zip(at[len(shape) - self.ndim :], self.shape, strict=True)  # self's dims
            index = [a if n != 1 else 0 for a, n in own]  # a dim of 1: its one place
            if max(self.shape) == 1:  # an array among them, for one value per pick
                index[0] = xp.zeros_like(at[0])
            out = movement.GetItem.apply(self, index=tuple(index))
        return named(out, "MaskedSelectBackward0", mask=m)


def _index_array(t: Tensor, index: Any) -> Any:
    """An index of gather or scatter (a Tensor, array or list) as an array on t's device."""
    return array.on_device_of(index._array if isinstance(index, Core) else index, t._array)


def _reads_scalars(t: Tensor, idx: Any, src: Any = None) -> bool:
    """Whether PyTorch reads gather's or scatter's 0-d tensors here as ones of shape (1,):
    where self, index or src is 0-d and self and index have at most 1 dim."""
    return 0 in (t.ndim, idx.ndim, getattr(src, "ndim", 1)) and t.ndim <= 1 and idx.ndim <= 1


def _checked_index(
    t: Tensor, dim: int, idx: Any, src: Tensor | float | None, op: str
) -> tuple[int, Any]:
    """_scatter_index's dim and index, where PyTorch reads 0-d tensors as ones of shape (1,)
    checked so (the index kept in its own shape: the ops read it so too)."""
    if not _reads_scalars(t, idx, src):
        return _scatter_index(t, dim, idx, src, op)
    d, at = _scatter_index(_lifted(t), dim, _lifted(idx), _lifted(src), op)
    return d, at.reshape(idx.shape)


def _lifted(x: Any) -> Any:
    """A 0-d tensor or array as one of shape (1,); anything else (a number) as it is."""
    return x.reshape(1) if getattr(x, "ndim", 1) == 0 else x


def _scatter_index(
    t: Tensor, dim: int, idx: Any, src: Tensor | float | None, op: str
) -> tuple[int, Any]:
    """gather's and scatter's dim and index checked: an integer index with self's dims (and
    src's, where a tensor), no larger than self in a dim but dim nor than src in any, each
    value in range."""
    shape = t._array.shape  # the arrays' shapes: plain tuples, as numpy gives them
    d = normalize_dim(dim, len(shape), op, shape)
    src_shape = src._array.shape if isinstance(src, Core) else None
    fits = idx.dtype.kind in "iu" and idx.ndim == len(shape)
    fits = fits and (src_shape is None or len(src_shape) == idx.ndim)
    for k, m in enumerate(idx.shape if fits else ()):
        fits = fits and (k == d or m <= shape[k]) and (src_shape is None or m <= src_shape[k])
    if not fits:
        src_text = "" if src_shape is None else f" and src {src_shape}"
        than_src = "" if src_shape is None else "src in any dim nor than "
        raise ValueError(
            f"{op}: index must be an integer tensor with self's dims, no larger than {than_src}"
            f"self in a dim but {d}; got index of dtype {idx.dtype} and shape {idx.shape}, self "
            f"{shape}{src_text}"
        )
    bad = idx[(idx < 0) | (idx >= shape[d])]
    if bad.size:
        raise IndexError(
            f"{op}: index {int(bad[0])} is out of range for dim {d} of size {shape[d]}; got "
            f"shape {shape}"
        )
    if isinstance(src, Core):
        _same_dtype(t, src, op, "src")
    return d, idx.astype(array.int64, copy=False)


def _scatter_with_reduce(t: Tensor, d: int, idx: Any, src: Any, reduce: Any) -> Tensor:
    """scatter's reduce: 'add' and 'multiply' are scatter_reduce's 'sum' and 'prod' with
    self included; a number is reduced in at every place of index."""
    names = {"add": "sum", "multiply": "prod"}
    if reduce not in names:
        raise ValueError(f"scatter: reduce must be 'add' or 'multiply'; got {reduce!r}")
    if not isinstance(src, Core):
        src = make(xp.full(idx.shape, src, dtype=t.dtype, like=t._array))
    options = dict(index=idx, dim=d, reduce=names[reduce], include_self=True)
    return movement.ScatterReduce.apply(t, src, **options)


def _same_dtype(t: Tensor, other: Tensor, op: str, name: str) -> None:
    if other._array.dtype != t._array.dtype:
        raise TypeError(f"{op}: {name} must have self's dtype; got {t.dtype} and {other.dtype}")


def _triangle(a: Any, diagonal: int, upper: bool) -> Any:
    """The mask of the triangle tril (or triu, ``upper``) keeps of a's last two dims, on a's
    device: made once for each shape and diagonal (np.tri costs several microseconds)."""
    keep = _host_triangle(*a.shape[-2:], diagonal, upper)
    return keep if type(a) is array.host.ndarray else array.from_host(keep, a)


@functools.lru_cache(maxsize=64)
def _host_triangle(rows: int, cols: int, diagonal: int, upper: bool) -> Any:
    """(rows, cols) bools, read-only: every call of the shape shares it."""
    keep = array.host.tri(rows, cols, k=diagonal - upper, dtype=bool)
    if upper:
        keep = ~keep  # column >= row + diagonal
    keep.flags.writeable = False
    return keep


def _zero(t: Tensor) -> Any:
    """The zero of t's dtype, as a Python number: where(mask, t, 0) keeps t's dtype (False
    for a bool tensor, which 0 would promote to int64)."""
    return False if t._array.dtype.kind == "b" else 0


# The orders of no change, T (every dim reversed) and mT (the last two swapped) for each
# number of dims an array can have: a lookup, not a tuple built on every call.
_KEPT = [tuple(range(n)) for n in range(65)]
# The ops as the methods' nodes are named (Function.named): made with PyTorch's name, not
# renamed after apply (named() then only keeps the call's arguments)
_PERMUTE = movement.Permute.named("PermuteBackward0")
_TRANSPOSE = movement.Permute.named("TransposeBackward0")
_T = movement.Permute.named("TBackward0")
_SQUEEZE = [movement.Reshape.named(f"SqueezeBackward{k}") for k in range(3)]  # PyTorch's overloads
_UNSQUEEZE = movement.Reshape.named("UnsqueezeBackward0")
_TRIL = elementwise.Where.named("TrilBackward0")
_TRIU = elementwise.Where.named("TriuBackward0")
_SCATTER_VALUE = movement.Scatter.named("ScatterBackward1")
_SCATTER_ADD = movement.ScatterAdd.named("ScatterAddBackward0")
_INDEX_ADD = movement.ScatterAdd.named("IndexAddBackward0")
_REVERSED = [tuple(reversed(range(n))) for n in range(65)]
_SWAPPED = [(*range(n - 2), n - 1, n - 2) if n >= 2 else () for n in range(65)]


def _sizes(shape: tuple) -> int:
    """The number of elements of ``shape`` where each of its sizes is a Python int of at least
    0, else -1 (a -1 to infer, a NumPy int or a tensor: infer_shape's to read)."""
    for n in shape:  # a loop, not all() over a generator: on every reshape's way
        if type(n) is not int or n < 0:
            return -1
    return math.prod(shape)


def _integers(index: tuple) -> bool:
    """Whether an index is Python ints alone (a loop: cheaper than all() on this hot path)."""
    for i in index:
        if type(i) is not int:
            return False
    return True
