"""The ``cr.*`` functions that are not a Tensor method's form: those of several tensors (cat,
stack, einsum, meshgrid, matmul, where), pad, var_mean and std_mean, is_tensor, and the global
generator's state. Factories are factories.py's; the forms of the methods are in forms/.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import Any

from . import array, sparse
from .arguments import need_number, normalize_dim
from .ops import linalg, movement
from .tensor import Tensor, as_tensor, where, write_out
from .tensor import matmul as _matmul

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
]


def matmul(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
    """input @ other, as Tensor.matmul (batched, broadcast); ``out=`` as PyTorch's. A sparse
    operand takes the sparse product."""
    if isinstance(input, sparse.SparseTensor) or isinstance(other, sparse.SparseTensor):
        return write_out(sparse.matmul(input, other), out, "matmul")
    return write_out(_matmul(input, other), out, "matmul")


def cat(tensors: Sequence[Any], dim: int = 0, *, out: Tensor | None = None) -> Tensor:
    return write_out(_cat(tensors, dim), out, "cat")


def _cat(tensors: Sequence[Any], dim: int) -> Tensor:
    ts = [as_tensor(t) for t in tensors]
    if not ts:
        raise ValueError("cat: expected a non-empty sequence of tensors")
    legacy = [t._array.shape == (0,) for t in ts]
    if builtins.any(legacy):
        ts, dim = _legacy_empty_joined(ts, legacy, dim)
    d = normalize_dim(dim, ts[0].ndim, "cat", ts[0].shape)
    first = ts[0].shape
    for t in ts[1:] if first else ts:  # a 0-d first tensor is refused at once
        pairs = enumerate(zip(t.shape, first, strict=False))
        if t.ndim != (len(first) or 1) or builtins.any(a != b for i, (a, b) in pairs if i != d):
            shapes = [tuple(x.shape) for x in ts]
            what = (
                f"a 0-d tensor (at position {shapes.index(())}) cannot be concatenated"
                if () in shapes
                else f"shapes must match except in dim {dim}"
            )
            raise ValueError(f"cat: {what}; got shapes {shapes}")
    dtype = array.result_dtype((t.dtype for t in ts), "cat")
    return movement.Cat.apply(*[t.to(dtype) for t in ts], dim=d)


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


def stack(tensors: Sequence[Any], dim: int = 0) -> Tensor:
    ts = [as_tensor(t) for t in tensors]
    if not ts:
        raise ValueError("stack: expected a non-empty sequence of tensors")
    if builtins.any(t.shape != ts[0].shape for t in ts):
        raise ValueError(
            f"stack: all tensors must have one shape; got shapes {[tuple(t.shape) for t in ts]}"
        )
    d = normalize_dim(dim, ts[0].ndim + 1, "stack", ts[0].shape)
    return cat([t.unsqueeze(d) for t in ts], d)


def einsum(equation: str, *operands: Any) -> Tensor:
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    ts = [as_tensor(x) for x in operands]
    if builtins.all(t.dtype == array.bool_ for t in ts) and _contracts(equation):
        need_number(ts[0], "einsum")  # PyTorch contracts with bmm, which has no bool loop
    if ts and ts[0].dtype.kind in "biu" and linalg.sums_alone(equation, [t.shape for t in ts]):
        ts = [t.to(array.int64) for t in ts]  # the letter PyTorch sums alone widens the result
    return linalg.Einsum.apply(*ts, equation=equation)


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
    last 1, 2 or 3 dims of an input with one or two more dims, as PyTorch's.

    The non-constant modes index the input with an array of source positions per padded
    dim, so their gradient sums what each position lent to the padding (any order)."""
    if mode not in _PAD_MODES:
        modes = ", ".join(map(repr, _PAD_MODES))
        raise ValueError(f"pad: mode must be one of {modes}; got {mode!r}")
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise ValueError(
            f"pad: pad {tuple(pad)} must have an even length of at most 2*ndim; got shape "
            f"{input.shape}"
        )
    if builtins.any(p < 0 for p in pad):
        raise ValueError(f"pad: negative padding is not supported; got {tuple(pad)}")
    k = len(pad) // 2
    if mode == "constant":
        widths = [(0, 0)] * input.ndim
        for i in range(k):
            widths[input.ndim - 1 - i] = (int(pad[2 * i]), int(pad[2 * i + 1]))
        return movement.Pad.apply(input, widths=tuple(widths), value=value)
    if k not in (1, 2, 3) or input.ndim not in (k + 1, k + 2):
        raise ValueError(
            f"pad: mode={mode!r} pads the last 1, 2 or 3 dims of an input with one or two "
            f"dims more (2 or 3 dims for 1, 3 or 4 for 2, 4 or 5 for 3); got pad {tuple(pad)} "
            f"for shape {input.shape}"
        )
    if mode != "circular":  # PyTorch's reflect and replicate pads have no bool loop
        need_number(input, "pad")
    out = input
    for i in range(k):
        dim = input.ndim - 1 - i
        lo, hi, n = int(pad[2 * i]), int(pad[2 * i + 1]), input.shape[dim]
        if not (lo or hi):
            continue
        need = {
            "reflect": ("each padding smaller than the size of the dim it pads", n - 1),
            "circular": ("each padding at most the size of the dim it pads", n),
            "replicate": ("a dim that is not empty", math.inf if n else -1),
        }[mode]
        if builtins.max(lo, hi) > need[1]:
            raise ValueError(
                f"pad: mode={mode!r} needs {need[0]}; got padding ({lo}, {hi}) for dim {dim} of "
                f"size {n} (shape {input.shape})"
            )
        out = out[(slice(None),) * dim + (_pad_index(n, lo, hi, mode),)]
    return out


def _pad_index(n: int, lo: int, hi: int, mode: str) -> Any:
    """The source position of each of the lo + n + hi positions along a padded dim."""
    i = array.xp.arange(-lo, n + hi)
    if mode == "reflect":
        i = array.xp.abs(i)
        return array.xp.where(i > n - 1, 2 * (n - 1) - i, i)
    if mode == "replicate":
        return array.xp.clip(i, 0, n - 1)
    return i % n  # circular


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
    x = as_tensor(input)
    spread = getattr(x, stat)(dim, unbiased, keepdim, correction=correction)
    return spread, _mean_as(x, dim, keepdim)


def _mean_as(x: Tensor, dim: Any, keepdim: bool) -> Tensor:
    """The mean over the dims var or std reduced (all where dim is the unbiased flag)."""
    return x.mean(None if isinstance(dim, bool) else dim, keepdim)


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
