"""The ``cr.*`` functions that are not a Tensor method's form: those of several tensors (cat,
stack, einsum, meshgrid, matmul, where), pad, var_mean and std_mean, is_tensor, and the global
generator's state. Factories are factories.py's; the forms of the methods are in forms/.
"""

from __future__ import annotations

import builtins
import functools
import math
from collections.abc import Sequence
from typing import Any

from . import array, sparse
from .arguments import broadcast_shape, need_float, need_number, normalize_dim, resolve_device
from .autograd.node import named
from .ops import distance, linalg, movement, selection
from .ops import padding as padding_ops
from .tensor import Tensor, as_tensor, write_out
from .tensor import matmul as _matmul
from .tensor import where as _where
from .tensor.reductions import variance
from .tensor.size import Size

__all__ = [
    "cat",
    "stack",
    "einsum",
    "meshgrid",
    "pad",
    "var_mean",
    "std_mean",
    "is_tensor",
    "result_type",
    "promote_types",
    "finfo",
    "iinfo",
    "get_rng_state",
    "set_rng_state",
    # defined beside the Tensor, whose methods call them
    "matmul",
    "where",
    # joining, splitting, combining, searching
    "concat",
    "concatenate",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "hstack",
    "vstack",
    "row_stack",
    "dstack",
    "column_stack",
    "broadcast_shapes",
    "broadcast_tensors",
    "block_diag",
    "cartesian_prod",
    "combinations",
    "tril_indices",
    "triu_indices",
    "searchsorted",
    "bucketize",
    "isin",
    "tensordot",
    "cdist",
    "unravel_index",
]


def matmul(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
    """input @ other, as Tensor.matmul (batched, broadcast); ``out=`` as PyTorch's. A sparse
    operand takes the sparse product."""
    if isinstance(input, sparse.SparseTensor) or isinstance(other, sparse.SparseTensor):
        return write_out(sparse.matmul(input, other), out, "matmul", exact=True)
    return write_out(_matmul(input, other), out, "matmul", exact=True)


def where(condition: Any, input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
    """input where condition holds, else other (broadcast, promoted), as Tensor.where;
    ``out=`` as PyTorch's: tensors only, out of the result's dtype."""
    if out is not None and not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        kinds = f"{type(input).__name__} and {type(other).__name__}"
        raise TypeError(f"where: with out=, input and other must be tensors; got {kinds}")
    return write_out(_where(condition, input, other), out, "where", exact=True)


def cat(tensors: Sequence[Any], dim: int = 0, *, out: Tensor | None = None) -> Tensor:
    return write_out(_cat(tensors, dim), out, "cat")


def _cat(tensors: Sequence[Any], dim: int, read: Any = None) -> Tensor:
    """cat; with ``read``, each tensor read with the shape read(shape) gives it (hstack's,
    vstack's, dstack's and column_stack's of fewer dims), in the one node."""
    ts: list[Tensor] = list(map(as_tensor, tensors))
    shapes, dtypes = [], set()
    for t in ts:  # one loop: each comprehension is a call of its own (to Python 3.12)
        shapes.append(t._array.shape)
        dtypes.add(t._array.dtype)
    if not ts:
        raise ValueError("cat: expected a non-empty sequence of tensors")
    reads: list[Any] | None = None if read is None else [read(s) for s in shapes]
    if reads is not None and reads == shapes:
        reads = None  # every tensor as it is: cat's own node
    elif reads is not None and (0,) in reads:  # cat's legacy empty tensor: read as it is
        ts, shapes = [t.reshape(r) for t, r in zip(ts, reads, strict=True)], reads
        reads = None
    if reads is None and (0,) in shapes:  # a legacy empty tensor among them
        ts, dim = _legacy_empty_joined(ts, [s == (0,) for s in shapes], dim)
        shapes = [t._array.shape for t in ts]
    shapes_read = shapes if reads is None else reads
    first = shapes_read[0]
    d = normalize_dim(dim, len(first), "cat", first)
    if len(dtypes) > 1:
        _cat_shapes(shapes_read, d, dim)  # shapes first, as PyTorch checks them
        dtype = array.promote_all((t.dtype for t in ts), "cat")
        ts = [t.to(dtype) for t in ts]
    options = {} if reads is None else {"shapes": tuple(reads)}
    try:  # NumPy checks the shapes as PyTorch does: read them again only where it refused
        return movement.Cat.apply(*ts, dim=d, **options)
    except (ValueError, IndexError):  # an IndexError: a 0-d tensor has no dim d
        _cat_shapes(shapes_read, d, dim)
        raise


def _cat_shapes(shapes_read: list[tuple[int, ...]], d: int, dim: int) -> None:
    """Refuse shapes cat cannot join along d: of one number of dims (1 or more), equal but d."""
    first = shapes_read[0]
    lead, rest = first[:d], first[d + 1 :]  # what every shape shares, but along d
    for shape in shapes_read[1:] if first else shapes_read:  # a 0-d first is refused at once
        if len(shape) != (len(first) or 1) or shape[:d] != lead or shape[d + 1 :] != rest:
            shapes = [tuple(s) for s in shapes_read]
            what = (
                f"a 0-d tensor (at position {shapes.index(())}) cannot be concatenated"
                if () in shapes
                else f"shapes must match except in dim {dim}"
            )
            raise ValueError(f"cat: {what}; got shapes {shapes}")


def _legacy_empty_joined(ts: list[Tensor], legacy: list[bool], dim: int) -> tuple[list, int]:
    """PyTorch's cat skips a 1-D empty tensor beside others (its legacy empty tensor), its
    dtype still counted: here it joins as an empty slice of the others' shape, so it still
    gets its (empty) gradient. With only such tensors, PyTorch reads no dim."""
    others = [t for t, skip in zip(ts, legacy, strict=True) if not skip]
    if not others:
        return ts, 0
    first = others[0].shape
    d = normalize_dim(dim, len(first), "cat", first)
    empty = first[:d] + (0,) + first[d + 1 :]  # the others' shape, none along d
    return [t.reshape(empty) if skip else t for t, skip in zip(ts, legacy, strict=True)], d


def stack(tensors: Sequence[Any], dim: int = 0, *, out: Tensor | None = None) -> Tensor:
    ts = [as_tensor(t) for t in tensors]
    if not ts:
        raise ValueError("stack: expected a non-empty sequence of tensors")
    first = ts[0]._array
    if [t for t in ts if t._array.shape != first.shape]:  # lists, not any() over generators
        raise ValueError(
            f"stack: all tensors must have one shape; got shapes {[tuple(t.shape) for t in ts]}"
        )
    d = normalize_dim(dim, first.ndim + 1, "stack", first.shape)
    if [t for t in ts if t._array.dtype != first.dtype]:
        dtype = array.promote_all((t.dtype for t in ts), "stack")
        ts = [t.to(dtype) for t in ts]
    return write_out(movement.Stack.apply(*ts, dim=d), out, "stack")


def einsum(equation: str, *operands: Any) -> Tensor:
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    ts = [as_tensor(x) for x in operands]
    equation, ts = _diagonals(equation, ts)
    if builtins.all(t.dtype == array.bool_ for t in ts) and _contracts(equation):
        need_number(ts[0], "einsum")  # PyTorch contracts with bmm, which has no bool loop
    if ts and ts[0].dtype.kind in "biu" and linalg.sums_alone(equation, [t.shape for t in ts]):
        ts = [t.to(array.int64) for t in ts]  # the letter PyTorch sums alone widens the result
    return linalg.Einsum.apply(*ts, equation=equation)


def _diagonals(equation: str, ts: list[Tensor]) -> tuple[str, list[Tensor]]:
    """An operand that repeats a letter (``ii``, ``NMaa``) is read along its diagonal, as
    PyTorch's einsum reads it: the repeated dims become one, last, taken by ``diagonal``
    (a view, whose gradient puts grad back on the diagonal)."""
    lhs, arrow, rhs = equation.replace(" ", "").partition("->")
    specs = lhs.split(",")
    if not arrow or len(specs) != len(ts):  # parse_einsum refuses these, naming why
        return equation, ts
    ts = list(ts)
    for i, spec in enumerate(specs):
        t = ts[i]
        while len(spec) == t.ndim and len(set(spec)) < len(spec):
            c = next(c for c in spec if spec.count(c) > 1)
            d0 = spec.index(c)
            d1 = spec.index(c, d0 + 1)
            if t.shape[d0] != t.shape[d1]:
                raise ValueError(
                    f"einsum: letter {c!r} repeats in operand {i} ({spec!r}) over dims of sizes "
                    f"{t.shape[d0]} and {t.shape[d1]}; got shapes {[tuple(x.shape) for x in ts]}"
                )
            t = t.diagonal(0, d0, d1)
            spec = spec[:d0] + spec[d0 + 1 : d1] + spec[d1 + 1 :] + c
        specs[i], ts[i] = spec, t
    return ",".join(specs) + "->" + rhs, ts


def _contracts(equation: str) -> bool:
    """Whether an einsum sums a product over an index two operands share."""
    lhs, arrow, rhs = equation.replace(" ", "").partition("->")
    terms = lhs.split(",")
    letters = [c for c in "".join(terms) if c.isalpha()]
    out = rhs if arrow else "".join(c for c in letters if letters.count(c) == 1)
    return builtins.any(
        c not in out and builtins.sum(c in t for t in terms) > 1 for c in set(letters)
    )


def meshgrid(*tensors: Any, indexing: str = "ij") -> tuple[Tensor, ...]:
    """Grids from 0-D or 1-D tensors (or one list of them), each expanded to all their
    lengths; ``indexing='xy'`` swaps the first two dims, as NumPy and PyTorch do."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid: indexing must be 'ij' or 'xy'; got {indexing!r}")
    ts = [as_tensor(t) for t in tensors]
    if [t for t in ts if t.ndim > 1]:
        raise ValueError(
            f"meshgrid: expects 0-D or 1-D tensors; got {[tuple(t.shape) for t in ts]}"
        )
    ts = [t.reshape(-1) for t in ts]
    swap = indexing == "xy" and len(ts) >= 2
    if swap:  # build the grids as 'ij' over (y, x, ...), then swap the first two dims back
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.shape[0] for t in ts)
    grids = [
        t.reshape((1,) * i + (-1,) + (1,) * (len(ts) - i - 1)).expand(*shape)  # along dim i
        for i, t in enumerate(ts)
    ]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: float = 0.0) -> Tensor:
    """Pad the last dims, PyTorch's way: ``pad`` = (left, right, top, bottom, ...) starting
    from the last dim. ``mode``: 'constant' (``value``), or 'reflect' (mirrored, the edge not
    repeated), 'replicate' (the edge repeated) or 'circular' (wrapped around), which pad the
    last 1, 2 or 3 dims of an input with one or two more dims, as PyTorch's: one take of the
    input by an index of sources (ops/padding.py), whose gradient sums what each position
    lent to the padding."""
    try:
        widths = _pad_widths(tuple(pad), mode, input.shape)
    except TypeError:  # an entry that is not hashable (a NumPy 0-d array): checked afresh
        widths = _pad_widths.__wrapped__(tuple(pad), mode, input.shape)
    if mode == "constant":
        return movement.Pad.apply(input, widths=widths, value=value)
    if mode != "circular":  # PyTorch's reflect and replicate pads have no bool loop
        need_number(input, "pad")
    return padding_ops.pad(input, widths, mode)


@functools.lru_cache(maxsize=256)
def _pad_widths(pad: tuple[Any, ...], mode: str, shape: tuple[int, ...]) -> tuple:
    """pad checked against mode and shape, as ints: for 'constant' the (before, after) of
    every dim; for the other modes F.pad's own (left, right, top, bottom, ...). Kept for each
    call's arguments, as they depend on nothing else."""
    if mode not in _PAD_MODES:
        modes = ", ".join(map(repr, _PAD_MODES))
        raise ValueError(f"pad: mode must be one of {modes}; got {mode!r}")
    if len(pad) % 2 or len(pad) // 2 > len(shape):
        raise ValueError(
            f"pad: pad {pad} must have an even length of at most 2*ndim; got shape {shape}"
        )
    if builtins.min(pad, default=0) < 0:
        raise ValueError(f"pad: negative padding is not supported; got {pad}")
    k = len(pad) // 2
    pad = tuple(map(int, pad))
    if mode == "constant":
        widths = [(0, 0)] * len(shape)
        for i in range(k):
            widths[len(shape) - 1 - i] = (pad[2 * i], pad[2 * i + 1])
        return tuple(widths)
    if k not in (1, 2, 3) or len(shape) not in (k + 1, k + 2):
        raise ValueError(
            f"pad: mode={mode!r} pads the last 1, 2 or 3 dims of an input with one or two "
            f"dims more (2 or 3 dims for 1, 3 or 4 for 2, 4 or 5 for 3); got pad {pad} "
            f"for shape {shape}"
        )
    for i in range(k):
        n, most = shape[-1 - i], builtins.max(pad[2 * i], pad[2 * i + 1])
        if most and most > (n - 1 if mode == "reflect" else n if n or mode == "circular" else -1):
            _pad_refused(mode, pad[2 * i : 2 * i + 2], len(shape) - 1 - i, shape)
    if mode != "circular" and 0 in shape[-k - 1 :]:
        raise ValueError(
            f"pad: mode={mode!r} needs every dim but a batch's (the first of {k + 2}) not "
            f"empty; got shape {shape}"
        )
    return pad


def _pad_refused(mode: str, lo_hi: tuple[int, ...], dim: int, shape: Any) -> None:
    need = {
        "reflect": "each padding smaller than the size of the dim it pads",
        "circular": "each padding at most the size of the dim it pads",
        "replicate": "a dim that is not empty",
    }[mode]
    raise ValueError(
        f"pad: mode={mode!r} needs {need}; got padding {lo_hi} for dim {dim} of size "
        f"{shape[dim]} (shape {shape})"
    )


def var_mean(
    input: Any,
    dim: Any = None,
    unbiased: bool | None = None,
    keepdim: bool = False,
    *,
    correction: float | None = None,
) -> tuple[Tensor, Tensor]:
    """(var, mean) over the same dims, with var's arguments and overloads."""
    return _with_mean("var", input, dim, unbiased, keepdim, correction)


def std_mean(
    input: Any,
    dim: Any = None,
    unbiased: bool | None = None,
    keepdim: bool = False,
    *,
    correction: float | None = None,
) -> tuple[Tensor, Tensor]:
    """(std, mean) over the same dims, with std's arguments and overloads."""
    return _with_mean("std", input, dim, unbiased, keepdim, correction)


def _with_mean(
    stat: str, input: Any, dim: Any, unbiased: Any, keepdim: bool, correction: Any
) -> tuple[Tensor, Tensor]:
    """(var or std, mean), one op whose node the two outputs share, as PyTorch's."""
    return variance(as_tensor(input), dim, unbiased, keepdim, correction, {}, stat + "_mean")


def is_tensor(obj: Any) -> bool:
    return isinstance(obj, Tensor)


def result_type(tensor1: Any, tensor2: Any) -> Any:
    """PyTorch's ``result_type``: the dtype an elementwise op of the two (tensors or Python
    numbers) computes in, by PyTorch's promotion (chainrule.array.result_type)."""
    return array.dtype_object(array.result_type(tensor1, tensor2))


def promote_types(type1: Any, type2: Any) -> Any:
    """PyTorch's ``promote_types``: the smallest dtype both fit in, by category first."""
    return array.dtype_object(array.promote_types(array.as_dtype(type1), array.as_dtype(type2)))


finfo = array.finfo  # PyTorch's torch.finfo and torch.iinfo (the array layer's)
iinfo = array.iinfo


def get_rng_state() -> Tensor:
    """The global generator's whole state as a uint8 tensor (as torch.get_rng_state);
    ``set_rng_state`` of it makes the same draws again from that point."""
    return array.default_generator.get_state()


def set_rng_state(new_state: Any) -> None:
    """Put back a state ``get_rng_state`` made (or ``Generator.get_state``)."""
    state = new_state._array if isinstance(new_state, Tensor) else new_state
    array.default_generator.set_state(state)


# -- joining, splitting and combining ---------------------------------------------------------


def concat(tensors: Sequence[Any], dim: int = 0, *, out: Tensor | None = None) -> Tensor:
    """cat, by another of PyTorch's names."""
    return cat(tensors, dim, out=out)


def concatenate(
    tensors: Sequence[Any], dim: int = 0, *, axis: int | None = None, out: Tensor | None = None
) -> Tensor:
    """cat, as NumPy names it (its dim also called axis)."""
    return cat(tensors, dim if axis is None else axis, out=out)


def atleast_1d(*tensors: Any) -> Any:
    """Each tensor with at least 1 dim (a 0-d one as shape (1,)); one tensor for one."""
    return _atleast(tensors, lambda t: t.reshape(1) if not t.ndim else t)


def atleast_2d(*tensors: Any) -> Any:
    """Each tensor with at least 2 dims: (n,) as (1, n) (PyTorch's unsqueeze), () as (1, 1)."""
    return _atleast(
        tensors, lambda t: t.unsqueeze(0) if t.ndim == 1 else t.reshape(1, 1) if t.ndim == 0 else t
    )


def atleast_3d(*tensors: Any) -> Any:
    """Each tensor with at least 3 dims: () as (1, 1, 1), (n,) as (1, n, 1), (m, n) as
    (m, n, 1)."""
    shapes = {0: lambda s: (1, 1, 1), 1: lambda s: (1, s[0], 1), 2: lambda s: s + (1,)}
    return _atleast(tensors, lambda t: _at_least_3d(t, shapes[t.ndim]) if t.ndim < 3 else t)


def _at_least_3d(t: Tensor, shape: Any) -> Tensor:
    """t of 0, 1 or 2 dims reshaped to ``shape(t.shape)``: PyTorch's last step is an
    unsqueeze of the last dim, but for a 0-d t's reshape."""
    out = t.reshape(shape(t.shape))
    return named(out, "UnsqueezeBackward0", dim=-1) if t.ndim else out


def _atleast(tensors: tuple, fn: Any) -> Any:
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(fn(as_tensor(t)) for t in tensors[0])
    out = tuple(fn(as_tensor(t)) for t in tensors)
    return out[0] if len(out) == 1 else out


# The shape hstack, vstack, dstack and column_stack read a tensor of fewer dims with (as
# atleast_1d, atleast_2d and atleast_3d give it; column_stack's as one column), in one cat.
def _as_1d(s: tuple) -> tuple:
    return s or (1,)


def _as_2d(s: tuple) -> tuple:
    return (1,) * (2 - len(s)) + s if len(s) < 2 else s


def _as_3d(s: tuple) -> tuple:
    return {0: (1, 1, 1), 1: (1, *s, 1), 2: (*s, 1)}.get(len(s), s)


def _as_column(s: tuple) -> tuple:
    return (math.prod(s), 1) if len(s) < 2 else s


def hstack(tensors: Sequence[Any], *, out: Tensor | None = None) -> Tensor:
    """The tensors joined along dim 1 (dim 0 where all are 1-D), 0-d ones read as 1-D."""
    ts = [as_tensor(t) for t in tensors]
    dim = 0 if ts and max([t._array.ndim for t in ts]) < 2 else 1
    return write_out(_cat(ts, dim, _as_1d), out, "cat")


def vstack(tensors: Sequence[Any], *, out: Tensor | None = None) -> Tensor:
    """The tensors joined along dim 0, each read as at least 2-D ((n,) as (1, n))."""
    return write_out(_cat(tensors, 0, _as_2d), out, "cat")


row_stack = vstack


def dstack(tensors: Sequence[Any], *, out: Tensor | None = None) -> Tensor:
    """The tensors joined along dim 2, each read as at least 3-D."""
    return write_out(_cat(tensors, 2, _as_3d), out, "cat")


def column_stack(tensors: Sequence[Any], *, out: Tensor | None = None) -> Tensor:
    """The tensors joined as columns (dim 1): a 0-d or 1-D one as one column."""
    return write_out(_cat(tensors, 1, _as_column), out, "cat")


def broadcast_shapes(*shapes: Any) -> Any:
    """The shape the given shapes (or ints) broadcast to, as a Size."""
    as_tuples = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    try:
        return Size(array.xp.broadcast_shapes(*as_tuples))
    except ValueError:
        raise ValueError(
            f"broadcast_shapes: shapes {as_tuples} cannot be broadcast together"
        ) from None


def broadcast_tensors(*tensors: Any) -> tuple[Tensor, ...]:
    """The tensors expanded to their common broadcast shape (views; one of that shape
    already is itself, as PyTorch's)."""
    ts = [as_tensor(t) for t in tensors]
    shape = broadcast_shape("broadcast_tensors", *[t._array.shape for t in ts])
    return tuple([t if t._array.shape == shape else t.broadcast_to(shape) for t in ts])


def block_diag(*tensors: Any) -> Tensor:
    """The tensors (0-d, 1-D read as one row, or 2-D) as blocks down the diagonal of one
    matrix, zeros elsewhere, in their promoted dtype."""
    ts = [as_tensor(t) for t in tensors]
    if [t for t in ts if t._array.ndim > 2]:
        raise ValueError(
            f"block_diag: expects tensors of at most 2 dims; got shapes {[t.shape for t in ts]}"
        )
    if not ts:
        return Tensor._make(array.xp.zeros((1, 0), dtype=array.float32))
    if [t for t in ts if t._array.dtype != ts[0]._array.dtype]:  # of several dtypes
        dtype = array.promote_all((t.dtype for t in ts), "block_diag")
        ts = [t if t.dtype == dtype else t.to(dtype) for t in ts]
    blocks = [t if t._array.ndim == 2 else t.reshape(1, -1) for t in ts]  # 0-d, 1-D: one row
    return selection.BlockDiag.apply(*blocks)


def cartesian_prod(*tensors: Any) -> Tensor:
    """Every combination of one value from each 1-D tensor, one per row (itertools.product's
    order); of one tensor, that tensor."""
    ts = [as_tensor(t) for t in tensors]
    if not ts or [t for t in ts if t._array.ndim != 1]:
        raise ValueError(f"cartesian_prod: expects 1-D tensors; got shapes {[t.shape for t in ts]}")
    if [t for t in ts if t._array.dtype != ts[0]._array.dtype]:
        raise TypeError(
            f"cartesian_prod: expects tensors of one dtype; got {[t.dtype for t in ts]}"
        )
    if len(ts) == 1:
        return ts[0]
    grid, k = tuple([t._array.shape[0] for t in ts]), len(ts)  # meshgrid's, 'ij'
    n = math.prod(grid)  # each tensor along its own dim of the grid, flattened: a column each
    # shapes of the sizes they have, of one dtype: reshape's and stack's checks skipped
    cols = [
        t._reshaped(grid[i : i + 1] + (1,) * (k - i - 1)).broadcast_to(grid)  # (n_i, 1, ..)
        for i, t in enumerate(ts)
    ]
    return movement.Stack.apply(*[c._reshaped((n,)) for c in cols], dim=1)  # (n, k)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """Every combination of r values of a 1-D tensor, one per row (itertools' order)."""
    x = as_tensor(input)
    if x.ndim != 1 or r < 0:
        raise ValueError(
            f"combinations: expects a 1-D tensor and r >= 0; got shape {x.shape} and r {r}"
        )
    if r == 0:  # no combination: a new empty tensor, outside the graph, as PyTorch's
        return x.new_empty(0)
    n, host = x.shape[0], array.host
    # PyTorch's way: of the grid of every r-tuple of positions, a mask of the combinations (i0 <
    # i1 < ..., <= with replacement); column k each kept tuple's value at its ik, row-major
    along = [(1,) * k + (n,) + (1,) * (r - k - 1) for k in range(r)]  # x along grid dim k
    at = host.arange(n)
    before = host.less_equal if with_replacement else host.less
    mask = host.ones(n, dtype=bool)
    for k in range(r - 1):
        mask = mask & before(at.reshape(along[k]), at.reshape(along[k + 1]))  # (n, ..., n)
    mask = array.from_host(mask, x._array)
    columns = [x.view(a).expand((n,) * r).masked_select(mask) for a in along]
    return movement.Stack.apply(*columns, dim=1)  # (count, r)


def tril_indices(
    row: int,
    col: int,
    offset: int = 0,
    *,
    dtype: Any = None,
    device: Any = None,
    layout: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """The (row, column) indices of the lower triangle of a row x col matrix (column <= row
    + offset), as a 2 x N tensor in row-major order."""
    _sides(row, col, "tril_indices")
    return _triangle(array.host.tril_indices(row, offset, col), dtype, device, "tril_indices")


def triu_indices(
    row: int,
    col: int,
    offset: int = 0,
    *,
    dtype: Any = None,
    device: Any = None,
    layout: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """The (row, column) indices of the upper triangle of a row x col matrix (column >= row
    + offset), as a 2 x N tensor in row-major order."""
    _sides(row, col, "triu_indices")
    return _triangle(array.host.triu_indices(row, offset, col), dtype, device, "triu_indices")


def _sides(row: int, col: int, op: str) -> None:
    if row < 0 or col < 0:
        raise ValueError(f"{op}: row and col must not be negative; got {row} and {col}")


def _triangle(pair: Any, dtype: Any, device: Any, op: str) -> Tensor:
    """tril_indices' and triu_indices' pair of index rows, checked, as a (2, N) tensor."""
    kind = (None if dtype is None else array.as_dtype(dtype)) or array.int64
    if kind.kind not in "iu":
        raise TypeError(f"{op}: dtype must be an integer dtype; got {kind}")
    out = array.host.stack(pair).astype(kind).reshape(2, -1)  # (2, N)
    dev = array.get_default_device() if device is None else resolve_device(device, op)
    return Tensor._make(array.from_host(out, dev))


# -- search and membership --------------------------------------------------------------------


def searchsorted(
    sorted_sequence: Any,
    input: Any,
    *,
    out_int32: bool = False,
    right: bool = False,
    side: str | None = None,
    sorter: Any = None,
    out: Tensor | None = None,
) -> Tensor:
    """Where each value of input would go in sorted_sequence's last dim to keep it sorted
    (the first such place, or with right=True / side='right' the last); a sequence of more
    dims searches row by row, its leading dims input's."""
    if side not in (None, "left", "right") or (side == "left" and right):
        raise ValueError(
            f"searchsorted: side must be 'left' or 'right' and agree with right; got side "
            f"{side!r} and right {right}"
        )
    seq_t = as_tensor(sorted_sequence)
    scalar = not isinstance(input, Tensor) and array.xp.ndim(input) == 0
    kind = array.result_type(seq_t, input, op="searchsorted")  # both compared in one dtype
    seq, values = seq_t._array.astype(kind), as_tensor(input)._array.astype(kind)
    if sorter is not None:
        order = as_tensor(sorter)._array
        if order.shape != seq.shape or order.dtype != array.int64:
            raise ValueError(
                f"searchsorted: sorter must be an int64 tensor of the sequence's shape; got "
                f"{order.dtype} {order.shape} for {seq.shape}"
            )
        seq = array.xp.take_along_axis(seq, order, axis=-1)
    if seq.ndim > 1 and (scalar or seq.shape[:-1] != values.shape[:-1]):
        raise ValueError(
            f"searchsorted: a sequence of {seq.ndim} dims needs values with its leading dims; "
            f"got shapes {seq.shape} and {values.shape}"
        )
    right = right or side == "right"
    if seq.ndim <= 1 and not _has_nan(seq) and not _has_nan(values):
        found = array.xp.searchsorted(seq.reshape(-1), values, side="right" if right else "left")
    else:
        found = _bisect(seq, values, right)
    result = Tensor._make(found.astype(array.int32 if out_int32 else array.int64))
    return write_out(result, out, "searchsorted", exact=True)


def _has_nan(a: Any) -> bool:
    return array.is_floating(a.dtype) and bool(array.xp.isnan(a).any())


def _bisect(seq: Any, values: Any, right: bool) -> Any:
    """PyTorch's binary search, all values at once: each value's [lo, hi) halved until empty,
    moving right past x where not x >= v (x > v for right), which NumPy's searchsorted
    answers alike but where NaN is compared (PyTorch's order sends every NaN right)."""
    xp = array.xp
    rows = seq.reshape(-1, seq.shape[-1]) if seq.ndim > 1 else seq.reshape(1, -1)  # (R, n)
    flat = values.reshape(len(rows), -1) if seq.ndim > 1 else values.reshape(1, -1)  # (R, k)
    lo = xp.zeros(flat.shape, dtype=array.int64)
    hi = xp.full(flat.shape, rows.shape[1], dtype=array.int64)
    while (lo < hi).any():
        mid = (lo + hi) // 2
        x = xp.take_along_axis(rows, xp.minimum(mid, max(rows.shape[1] - 1, 0)), axis=1)
        go = ~(x > flat) if right else ~(x >= flat)
        busy = lo < hi
        lo, hi = xp.where(busy & go, mid + 1, lo), xp.where(busy & ~go, mid, hi)
    return lo.reshape(values.shape)


def bucketize(
    input: Any,
    boundaries: Any,
    *,
    out_int32: bool = False,
    right: bool = False,
    out: Tensor | None = None,
) -> Tensor:
    """Each value's bucket among the 1-D sorted boundaries: i where boundaries[i-1] < x <=
    boundaries[i] (with right=True, boundaries[i-1] <= x < boundaries[i])."""
    edges = as_tensor(boundaries)
    if edges.ndim != 1:
        raise ValueError(f"bucketize: boundaries must be 1-D; got shape {edges.shape}")
    found = searchsorted(edges, input, out_int32=out_int32, right=right)
    return write_out(found, out, "bucketize", exact=True)


def unravel_index(indices: Any, shape: Any) -> tuple[Tensor, ...]:
    """Each flat index (negative from the end) as one coordinate a dim of shape, in
    indices' shape: the tuple of int64 tensors that indexes the same elements."""
    idx = as_tensor(indices)
    dims = (shape,) if isinstance(shape, int) else tuple(int(n) for n in shape)
    total = math.prod(dims)
    arr = idx._array
    if arr.dtype.kind not in "iu":
        raise TypeError(f"unravel_index: expects integer indices; got dtype {arr.dtype}")
    arr = arr.astype(array.int64)  # room for the shape's size
    if builtins.any(n < 0 for n in dims):
        raise ValueError(f"unravel_index: the shape's sizes must not be negative; got {dims}")
    if arr.size and (arr.min() < -total or arr.max() >= total):
        raise ValueError(f"unravel_index: an index is out of range for shape {dims}")
    coords = array.xp.unravel_index(arr % builtins.max(total, 1), dims) if dims else ()
    return tuple(Tensor._make(c.astype(array.int64)) for c in coords)


def isin(
    elements: Any,
    test_elements: Any,
    *,
    assume_unique: bool = False,
    invert: bool = False,
    out: Tensor | None = None,
) -> Tensor:
    """Whether each of elements is among test_elements (not, with invert), in elements'
    shape; either may be a number; ``out=`` as PyTorch's."""
    a, b = as_tensor(elements), as_tensor(test_elements)
    if array.bool_ in (a.dtype, b.dtype):
        raise TypeError(f"isin: bool tensors are not supported; got {a.dtype} and {b.dtype}")
    kind = array.result_type(elements, test_elements)
    inside = array.xp.isin(
        a._array.astype(kind), b._array.astype(kind), assume_unique=assume_unique, invert=invert
    )
    return write_out(Tensor._make(array.xp.asarray(inside)), out, "isin", exact=True)


# -- products ---------------------------------------------------------------------------------


def tensordot(a: Any, b: Any, dims: Any = 2, out: Tensor | None = None) -> Tensor:
    """The sum of a * b over dims pairs: an int n pairs a's last n dims with b's first n;
    two lists pair a's dims dims[0] with b's dims[1]. The result has a's free dims then b's."""
    x, y = as_tensor(a), as_tensor(b)
    if x._array.dtype != y._array.dtype:
        raise TypeError(f"tensordot: expects one dtype; got {x.dtype} and {y.dtype}")
    need_number(x, "tensordot")
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    sx, sy = x._array.shape, y._array.shape
    if isinstance(dims, int):
        if dims < 0 or dims > builtins.min(len(sx), len(sy)):
            raise ValueError(
                f"tensordot: dims must be in [0, {builtins.min(len(sx), len(sy))}]; got {dims} "
                f"for shapes {x.shape} and {y.shape}"
            )
        da, db = list(range(len(sx) - dims, len(sx))), list(range(dims))
    else:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
    if len(da) != len(db):
        raise ValueError(f"tensordot: the two lists of dims differ in length; got {da} and {db}")
    da = [normalize_dim(d, len(sx), "tensordot", sx) for d in da]
    db = [normalize_dim(d, len(sy), "tensordot", sy) for d in db]
    if len(set(da)) < len(da) or len(set(db)) < len(db):
        raise ValueError(f"tensordot: a dim appears twice in a list of dims; got {da} and {db}")
    for i, j in zip(da, db, strict=True):  # a size-1 dim against a longer one: the other summed
        if sx[i] == 1 != sy[j]:
            y = y.sum(j, keepdim=True).to(y.dtype)
        elif sy[j] == 1 != sx[i]:
            x = x.sum(i, keepdim=True).to(x.dtype)
        elif sx[i] != sy[j]:
            raise ValueError(
                f"tensordot: contracted dims differ in size; got dims {da} of {x.shape} and "
                f"{db} of {y.shape}"
            )
    sx, sy = x._array.shape, y._array.shape
    free_a = [d for d in range(len(sx)) if d not in da]
    free_b = [d for d in range(len(sy)) if d not in db]
    kept_a, kept_b = [sx[d] for d in free_a], [sy[d] for d in free_b]
    # dims normalised and shapes of the sizes they have: permute's and reshape's checks skipped
    k, m, n = math.prod([sx[d] for d in da]), math.prod(kept_a), math.prod(kept_b)
    left = x._permuted(tuple(free_a + da))._reshaped((m, k))  # (free of a, contracted)
    right = y._permuted(tuple(db + free_b))._reshaped((k, n))  # (contracted, free of b)
    dot = m == n == 1  # one row times one column: PyTorch's dot, 0-d
    product = left._reshaped((k,)) @ right._reshaped((k,)) if dot else left @ right
    result = product._reshaped(tuple(kept_a + kept_b))  # viewed, even as it is, as PyTorch's
    return write_out(result, out, "tensordot", exact=True)


def cdist(
    x1: Any, x2: Any, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary"
) -> Tensor:
    """The p-norm distance between each row of x1 (..., P, M) and each of x2 (..., R, M):
    (..., P, R), the batch dims broadcast. Every compute_mode computes the norm directly."""
    a, b = as_tensor(x1), as_tensor(x2)
    modes: tuple[str, ...] = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist")
    modes += ("donot_use_mm_for_euclid_dist",)
    if compute_mode not in modes:
        raise ValueError(f"cdist: compute_mode must be one of {modes}; got {compute_mode!r}")
    sa, sb = a._array.shape, b._array.shape  # plain tuples: no Size made for each check
    if len(sa) < 2 or len(sb) < 2 or sa[-1] != sb[-1]:
        raise ValueError(
            f"cdist: expects x1 (..., P, M) and x2 (..., R, M) of one M; got shapes {sa} and {sb}"
        )
    if p < 0:
        raise ValueError(f"cdist: p must be non-negative; got {p}")
    if a._array.dtype != b._array.dtype:
        raise TypeError(f"cdist: expects one dtype; got {a.dtype} and {b.dtype}")
    need_float(a, "cdist")
    many = sa[-2] > 25 or sb[-2] > 25
    by_products = p == 2 and (compute_mode == modes[1] or compute_mode == modes[0] and many)
    if by_products:
        return distance.EuclideanDist.apply(a, b)  # (..., P, R): one node
    if a._array.dtype.char not in "fd":  # PyTorch's direct kernel: float32 and float64
        raise TypeError(f"cdist: expects float32 or float64 tensors; got dtype {a.dtype}")
    return distance.Cdist.apply(a, b, p=float(p))  # (..., P, R): one node, PyTorch's
