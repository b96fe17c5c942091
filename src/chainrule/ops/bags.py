"""embedding's and embedding_bag's primitives: one node each (PyTorch's EmbeddingBackward0 on
the weight; EmbeddingBagBackward0 on the weight and the per-sample weights) where the
compositions were a lookup, a product, a selection and an index_add; which positions count
and their bags, from the indices and offsets that nn/layers.py and nn/embedding_bag.py check."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..array import xp
from ..autograd.primitive import Function, tensor_type
from .movement import IndexAdd

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor

_REDUCE = {"sum": xp.add, "mean": xp.add, "max": xp.maximum}


def bags_of(input: Any, offsets: Any, include_last_offset: bool) -> tuple[Any, Any, int]:
    """The flat indices (n,), each one's bag (n,) and the number of bags: each row of a 2-D
    input a bag, or each run of a 1-D input from one offset to the next (offsets holding one
    more, the end, with ``include_last_offset``; the last bag runs to the input's end all the
    same, as PyTorch's)."""
    if offsets is None:  # (B, L): row b is bag b
        bags, length = input.shape
        return input.reshape(-1), xp.repeat(xp.arange(bags, like=input), length), bags
    bags = offsets.size - 1 if include_last_offset else offsets.size
    of = xp.searchsorted(offsets, xp.arange(input.size, like=input), side="right") - 1  # (n,)
    # past the last offset kept by include_last_offset: the last bag's, as PyTorch's
    of[of >= bags] = bags - 1
    return input, of, max(bags, 0)


def _example_keys(idx: Any, examples: int) -> tuple[Any, int]:
    """(keys (examples, n), span): idx's ``examples`` runs of equal length, each run's
    indices moved to a range of its own, span apart, so that one count counts each alone."""
    span = int(idx.max()) + 1
    keys = idx.reshape(examples, -1) + xp.arange(0, examples * span, span, like=idx)[:, None]
    return keys, span


def frequency_scale(idx: Any, dtype: Any, examples: int = 1) -> Any:
    """scale_grad_by_freq's factor of each index's gradient (n, 1), as PyTorch 2.13's CPU
    kernel computes it: the k-th distinct index (in sorted order) divided by the count of
    the k-th smallest index (not, as documented, by its own count). idx holds ``examples``
    runs of equal length (vmap's examples, one after another), each counted on its own."""
    n = idx.size // examples
    keys, span = _example_keys(idx, examples)
    distinct, group = xp.unique(keys, return_inverse=True)  # (D,), each one's rank among them
    counts = xp.bincount(group.reshape(-1))  # (D,)
    ranked = xp.repeat(distinct, counts)  # (examples * n,): each example's sorted, in turn
    example = distinct // span  # (D,): whose each distinct index is
    kth = xp.arange(distinct.size, like=idx) - xp.searchsorted(example, example)  # its rank there
    divisor = counts[xp.searchsorted(distinct, ranked[example * n + kth])]  # (D,)
    return (1.0 / divisor[group.reshape(-1)]).astype(dtype)[:, None]


def own_count_scale(idx: Any, dtype: Any, examples: int = 1) -> Any:
    """scale_grad_by_freq's factor of each index's gradient (n, 1), as PyTorch's embedding
    computes it: one over how often its index occurs. idx (n,) holds ``examples`` runs of
    equal length (vmap's examples, one after another), each counted on its own."""
    _, group = xp.unique(_example_keys(idx, examples)[0], return_inverse=True)  # each one's rank
    counts = xp.bincount(group.reshape(-1))  # (distinct,)
    return (1.0 / counts[group.reshape(-1)]).astype(dtype)[:, None]


class Embedding(Function):
    """out = weight[indices] (*indices.shape, embedding_dim);  grad_weight = zeros like
    weight with each row of grad added at its index (repeats accumulate), none where the
    index is padding_idx, each times one over its index's count in indices where
    scale_grad_by_freq (own_count_scale over the ``examples`` runs: 1 but under vmap)."""

    rule = "grad_weight = index_add of grad's rows (/ count) at indices, none at padding_idx"
    saves_inputs = False

    def forward(
        self,
        weight: Any,
        *,
        indices: Any,
        padding_idx: Any,
        scale_grad_by_freq: bool,
        examples: int = 1,
    ) -> Any:
        self.indices, self.padding_idx = indices, padding_idx
        self.scale_grad_by_freq, self.examples = scale_grad_by_freq, examples
        return weight[indices]  # (*indices.shape, D), C-contiguous as PyTorch's

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        make = tensor_type()._make
        (weight,) = self.inputs
        idx = self.indices.reshape(-1)  # (n,)
        rows = grad.reshape(idx.size, weight.shape[-1])  # (n, D)
        if self.scale_grad_by_freq and idx.size:
            rows = rows * make(own_count_scale(idx, weight._array.dtype, self.examples))
        padding = self.padding_idx
        if padding is not None:  # the positions whose index is not padding_idx (k,)
            # (vmap's rule gives the padding row of each example's rows of one table)
            left = idx == padding if xp.ndim(padding) == 0 else xp.isin(idx, padding)
            at = xp.flatnonzero(~left)
            idx, rows = idx[at], rows[make(at)]  # (k,), (k, D)
        return (IndexAdd.apply(rows, shape=weight.shape, index=(idx,)),)


class EmbeddingBag(Function):
    """out[b] = the sum, mean or max over the positions i of bag b of weight[idx[i]], in
    mode 'sum' each times psw[at[i]] (psw the per-sample weights, flattened; at: the
    positions whose index is not padding_idx, every position without one); an empty bag is
    0. idx and the bags are bags_of(input, offsets); the positions come in order of bags;
    scale is frequency_scale(idx) over the ``examples`` runs of idx (1 but under vmap).

    grad_weight[idx[i]] += grad[b] * psw[at[i]] * scale[i] (sum), grad[b] / count(b) *
    scale[i] (mean), or, for max, grad[b, j] at the first row of bag b holding column j's max;
    grad_psw[at[i]] = grad[b] . weight[idx[i]], 0 at positions left out of every bag."""

    rule = (
        "grad_weight = index_add of grad[bag] (* psw, / count, * scale) at idx; "
        "grad_psw = grad[bag] . weight[idx]"
    )
    saves_inputs = "others"  # weight for psw's gradient, psw for weight's

    def forward(
        self,
        weight: Any,
        psw: Any,
        *,
        input: Any,
        offsets: Any,
        include_last_offset: bool,
        padding_idx: Any,
        mode: str,
        scale_grad_by_freq: bool,
        examples: int = 1,
    ) -> Any:
        idx, bag, bags = bags_of(input, offsets, include_last_offset)
        scale = None  # scale_grad_by_freq's factors (n, 1), as PyTorch's CPU kernel's
        if scale_grad_by_freq and idx.size:  # (vmap's rule: each example's indices on their own)
            scale = frequency_scale(idx, weight.dtype, examples)
        at = None  # every position is in a bag (offsets[0] is 0), in order of the bags
        if padding_idx is not None:  # (k,): the positions whose index is not padding_idx
            # (vmap's rule gives the padding row of each example's rows of one table)
            left = idx == padding_idx if xp.ndim(padding_idx) == 0 else xp.isin(idx, padding_idx)
            at = xp.flatnonzero(~left)
            idx, bag = idx[at], bag[at]
            scale = None if scale is None else scale[at]
        self.idx, self.bag, self.at, self.mode, self.scale = idx, bag, at, mode, scale
        rows = weight[idx]  # (k, D)
        if psw is not None:
            p = psw.reshape(-1)  # (n,)
            rows *= (p if at is None else p[at])[:, None]
        out = xp.zeros((bags, weight.shape[1]), dtype=rows.dtype, like=rows)  # (B, D)
        if not idx.size:
            return out
        size = xp.bincount(bag, minlength=bags)  # (B,): each bag's count of positions
        self.which = which = size.nonzero()[0]  # (nb,): the bags that hold a position
        counts = size[which]  # (nb,)
        first = size.cumsum()[which] - counts  # (nb,): where each starts
        out[which] = _REDUCE[mode].reduceat(rows, first, axis=0)
        if mode == "mean":  # an empty bag's divisor 1: it stays 0
            self.divisor = xp.maximum(size, 1)[:, None].astype(out.dtype)  # (B, 1)
            out /= self.divisor
        elif mode == "max":  # each bag's first row holding its column's max: its weight row
            held = rows == xp.repeat(out[which], counts, axis=0)  # (k, D)
            place = xp.where(held, xp.arange(idx.size, like=idx)[:, None], idx.size - 1)  # (k, D)
            self.argmax = idx[xp.minimum.reduceat(place, first, axis=0)]  # (nb, D)
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        weight, psw = self.inputs
        need_w, need_p = self.needs_input_grad
        make = tensor_type()._make
        gw = gp = None
        if self.mode == "max":
            if need_w and self.idx.size:  # each bag's gradient at its max's (row, column)
                d = weight.shape[1]
                flat = (self.argmax * d + xp.arange(d, like=self.argmax)).reshape(-1)  # (nb * D,)
                g = grad[make(self.which)].reshape(-1)  # (nb * D,)
                gw = grad.new_zeros(weight.numel()).index_add(0, make(flat), g)
                gw = gw.reshape(weight.shape)
            elif need_w:
                gw = grad.new_zeros(weight.shape)
            return gw, None
        if self.mode == "mean" and self.idx.size:
            grad = grad / make(self.divisor)
        idx = make(self.idx)
        g = grad[make(self.bag)]  # (k, D): each position's bag's gradient
        if need_w:
            p = None if psw is None else psw.reshape(-1)  # (n,)
            p = p if p is None or self.at is None else p[make(self.at)]  # (k,)
            rows = g if p is None else g * p.unsqueeze(1)
            rows = rows if self.scale is None else rows * make(self.scale)
            gw = grad.new_zeros(weight.shape).index_add(0, idx, rows)
        if need_p:
            dots = (g * weight[idx]).sum(1)  # (k,)
            if self.at is not None:  # 0 at the positions left out
                dots = grad.new_zeros(psw.numel()).index_add(0, make(self.at), dots)
            gp = dots.reshape(psw.shape)
        return gw, gp
