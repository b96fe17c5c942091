"""The reflect, replicate and circular pads of the last 1, 2 or 3 dims (F.pad's modes besides
'constant', which is movement.Pad). Each is one take: every padded position of the last dims'
plane reads one position of the input's plane, named by one flat index made once for each
(sizes, padding, mode); the gradient adds each padded position's grad at its source (one
add.at), and that sum's gradient is the take again, so every order of derivative is these
two ops. Argument checks are F.pad's (functions.py)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .. import array
from ..array import xp
from ..autograd.primitive import Function
from ..autograd.saved import record
from ..bounded import Bounded

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor

# PyTorch's node names for mode's pad of k dims, and for its gradient's: circular is a
# composite of copies into slices there, its output CopySlices
_NAMES = {
    "reflect": ("ReflectionPad{}DBackward0", "ReflectionPad{}DBackwardBackward0"),
    "replicate": ("ReplicationPad{}DBackward0", "ReplicationPad{}DBackwardBackward0"),
    "circular": ("CopySlices", "IndexPadBackwardBackward0"),
}


def positions(n: int, lo: int, hi: int, mode: str) -> Any:
    """The source position of each of the lo + n + hi positions along a padded dim of n."""
    i = array.host.arange(-lo, n + hi)
    if mode == "reflect":  # mirrored about the edge, which is not repeated
        i = array.host.abs(i)
        return array.host.where(i > n - 1, 2 * (n - 1) - i, i)
    if mode == "replicate":
        return array.host.clip(i, 0, n - 1)
    return i % n  # circular


def flat_index(sizes: tuple[int, ...], padding: tuple[int, ...], mode: str) -> Any:
    """The padded plane's sources: an array of the padded sizes whose every entry is the flat
    position (in the input's plane of ``sizes``) it reads; ``padding`` F.pad's (left, right,
    top, bottom, ...) from the last dim. Made once for each key (read-only: a constant)."""
    key = (sizes, padding, mode)
    found = _INDEXES.get(key)
    if found is not None:
        return found
    k = len(sizes)
    index = array.host.zeros((), dtype=array.host.intp)
    stride = 1
    for i in range(k):  # from the last dim: each dim's positions times its stride, broadcast
        d = k - 1 - i
        where = positions(sizes[d], padding[2 * i], padding[2 * i + 1], mode) * stride
        index = index + where.reshape((-1,) + (1,) * i)
        stride *= sizes[d]
    index.flags.writeable = False
    _INDEXES.keep(key, index)
    return index


_INDEXES: Bounded[tuple[tuple[int, ...], tuple[int, ...], str], Any] = Bounded(256)


def _places(sizes: tuple[int, ...], padding: tuple[int, ...], mode: str, planes: int) -> Any:
    """Each padded position's source in the flattened stack of ``planes`` input planes (the
    gradient's add.at places), made once for each key as flat_index is."""
    key = (sizes, padding, mode, planes)
    found = _PLACES.get(key)
    if found is not None:
        return found
    plane = math.prod(sizes)
    starts = array.host.arange(0, planes * plane, plane).reshape(-1, 1)
    places = (starts + flat_index(sizes, padding, mode).reshape(1, -1)).reshape(-1)
    places.flags.writeable = False
    _PLACES.keep(key, places)
    return places


_PLACES: Bounded[tuple[tuple[int, ...], tuple[int, ...], str, int], Any] = Bounded(64)


def _index_for(x: Any, sizes: tuple[int, ...], padding: tuple[int, ...], mode: str) -> Any:
    """flat_index on x's device."""
    index = flat_index(sizes, padding, mode)
    if type(x) is not array.host.ndarray:
        index = array.from_host(index, x)
    return index


def pad(x: Tensor, padding: tuple[int, ...], mode: str) -> Tensor:
    """x's last len(padding) // 2 dims padded in mode, its node named as PyTorch's."""
    op = _PADS[mode, len(padding) // 2]
    return record(op.apply(x, padding=padding, mode=mode), padding=padding)


class IndexPad(Function):
    """out[..., p] = x[..., index[p]] over the last k dims' plane, index the source of each
    padded position (reflected, replicated or wrapped); grad_x = the sum, at each source, of
    the grad of the positions that read it (IndexPadBackward).

    ``padding`` is F.pad's (left, right, top, bottom, ...) from the last dim, k = its length
    // 2; ``mode`` one of 'reflect', 'replicate', 'circular'.
    """

    rule = "grad_x = grad added at each padded position's source (IndexPadBackward)"

    def forward(self, x: Any, *, padding: tuple[int, ...], mode: str) -> Any:
        k = len(padding) // 2
        lead, sizes = x.shape[: x.ndim - k], x.shape[x.ndim - k :]
        self.padding, self.mode, self.sizes = padding, mode, sizes
        index = _index_for(x, sizes, padding, mode)
        return x.reshape(lead + (math.prod(sizes),)).take(index, axis=-1)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        name = _NAMES[self.mode][1].format(len(self.sizes))
        back = IndexPadBackward.named(name)
        g = back.apply(grad, padding=self.padding, mode=self.mode, sizes=self.sizes)
        return (record(g, padding=self.padding),)


class IndexPadBackward(Function):
    """out = zeros of the unpadded shape with g[..., p] added at out[..., index[p]] over the
    last dims' plane (sources lent to several padded positions add up: one add.at over the
    flattened planes); linear in g, its adjoint reads the grad at the index (IndexPad).
    """

    rule = "grad_g = the incoming grad padded again (IndexPad)"
    saves_inputs = False

    def forward(self, g: Any, *, padding: tuple[int, ...], mode: str, sizes: tuple) -> Any:
        self.padding, self.mode = padding, mode
        lead, plane = g.shape[: g.ndim - len(sizes)], math.prod(sizes)
        planes = math.prod(lead)
        places = _places(sizes, padding, mode, planes)
        if type(g) is not array.host.ndarray:
            places = array.from_host(places, g)
        out = xp.zeros(planes * plane, dtype=g.dtype, like=g)
        xp.add.at(out, places, g.reshape(-1))  # in g's dtype; faster than bincount's float64
        return out.reshape(lead + tuple(sizes))

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (pad(grad, self.padding, self.mode),)


# IndexPad under PyTorch's name for each mode's pad of k dims
_PADS = {
    (mode, k): IndexPad.named(names[0].format(k))
    for mode, names in _NAMES.items()
    for k in (1, 2, 3)
}
