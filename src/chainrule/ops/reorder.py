"""flip, rot90 and roll: a tensor's values moved to other places along dims, each a copy of
its own, as PyTorch's (no memory shared with the input)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from .. import array, fastpath
from ..array import xp
from ..autograd.primitive import Function

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor

_REVERSED = slice(None, None, -1)


class Flip(Function):
    """out = a with the order of its values reversed along each of dims, a copy (PyTorch's
    flip shares no memory with its input);  grad_a = grad flipped along the same dims."""

    rule = "grad_a = grad flipped along the same dims"
    saves_inputs = False

    def forward(self, a: Any, dims: Any) -> Any:
        self.dims = dims
        if not dims:  # nothing to reverse (a 0-d a too): a copy all the same
            return a.copy()
        index = [slice(None)] * a.ndim
        for d in dims:
            index[d] = _REVERSED
        if a.size >= FLIPPED_ROWS_MIN and fastpath.enabled() and _flips_rows(a, dims[-1]):
            return _rows_flipped(a, tuple(index[: dims[-1] + 1]))
        return a[tuple(index)].copy()

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (Flip.apply(grad, dims=self.dims),)


# From this many rows (positions along the dims up to the last flipped one) a flip copies each
# row of the dims after it as one element of its bytes (fastpath/table.py): NumPy's copy of a
# reversed dim pays for each row of a few values, and copies a row of one element at once.
FLIPPED_ROWS_MIN = 512


def _flips_rows(a: Any, last: int) -> bool:
    """Whether a flip whose last flipped dim is ``last`` copies many rows of the dims after
    it: a host array in C order, with dims after ``last`` and FLIPPED_ROWS_MIN rows."""
    if last == a.ndim - 1 or type(a) is not array.host.ndarray or not a.flags.c_contiguous:
        return False
    rows = 1
    for n in a.shape[: last + 1]:
        rows *= n
    return rows >= FLIPPED_ROWS_MIN


def _rows_flipped(a: Any, index: tuple) -> Any:
    """a[index] copied (index reversing dims up to the last flipped one), each row of the
    dims after it moved as one element of its bytes."""
    lead = a.shape[: len(index)]
    rows = a.reshape(lead + (-1,))  # (lead..., row), a view: a is in C order
    whole = rows.view(xp.dtype((xp.void, rows.shape[-1] * a.itemsize)))  # (lead..., 1)
    return whole[index].copy().view(a.dtype).reshape(a.shape)


class Rot90(Function):
    """out = a rotated k quarter turns in the plane of dims, from the first dim toward the
    second, in memory of its own (as PyTorch's)

    A quarter turn is a flip of the second dim and a swap of the two (three quarters, of
    the first dim), as NumPy's rot90."""

    rule = "grad_a = grad rotated -k quarter turns in the same plane"
    saves_inputs = False

    def forward(self, a: Any, k: int, dims: tuple[int, int]) -> Any:
        self.k, self.dims = k, dims  # as given, as PyTorch's node keeps them
        turns = k % 4
        if turns == 0:
            return a.copy()
        if turns == 2:
            return xp.flip(a, dims).copy()
        # a quarter turn: flipped along one dim (copied), then the two dims swapped (a view
        # of the copy, as PyTorch's result is)
        flipped = xp.flip(a, dims[1] if turns == 1 else dims[0]).copy()
        return xp.swapaxes(flipped, *dims)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad.rot90(-self.k, self.dims),)


class Roll(Function):
    """out = a with its values shifted by shifts[i] along dims[i], those pushed past the end
    coming back at the start (along the flattened a where dims is empty), a copy;
    grad_a = grad rolled back by -shifts."""

    rule = "grad_a = grad rolled by -shifts along the same dims"
    saves_inputs = False

    def forward(self, a: Any, shifts: Any, dims: Any) -> Any:
        self.shifts, self.dims = shifts, dims
        if not dims and a.size >= FLAT_SLICES_MIN and fastpath.enabled():
            return _flat_rolled(a, shifts[0])
        if not dims:  # the flattened a, shifted, in a's shape
            return a.reshape(-1).take(_sources(a.size, shifts[0], a)).reshape(a.shape)
        out = a
        for s, d in zip(shifts, dims, strict=True):  # one gather of whole slices a dim
            if a.shape[d] and s % a.shape[d]:
                out = out.take(_sources(a.shape[d], s, a), d)
        return a.copy() if out is a else out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        back = tuple(-s for s in self.shifts)
        return (Roll.apply(grad, shifts=back, dims=self.dims),)


# From this many elements a flattened roll is two slice copies rather than one gather by index
# (fastpath/table.py): the gather reads an index an element.
FLAT_SLICES_MIN = 2048


def _flat_rolled(a: Any, shift: int) -> Any:
    """a flattened and rolled by shift, in a's shape: the values that wrap round and the
    rest, each one copy of a slice."""
    flat, out = a.reshape(-1), xp.empty(a.shape, dtype=a.dtype, like=a)
    into, s = out.reshape(-1), shift % a.size
    into[s:] = flat[: a.size - s]
    into[:s] = flat[a.size - s :]
    return out


def _sources(n: int, shift: int, like: Any) -> Any:
    """Where each of n positions rolled by shift takes its value from, on like's device."""
    index = _host_sources(n, shift % n if n else 0)
    return index if type(like) is array.host.ndarray else array.from_host(index, like)


@functools.lru_cache(maxsize=64)
def _host_sources(n: int, shift: int) -> Any:
    """(n,) positions, read-only: made once for each size and shift, shared by the calls."""
    index = (array.host.arange(n) - shift) % max(n, 1)
    index.flags.writeable = False
    return index
