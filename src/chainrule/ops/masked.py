"""masked_scatter as PyTorch computes it, one op: its node is PyTorch's one node
(MaskedScatterBackward0, its ``_saved_mask`` and ``_saved_source_sym_sizes``), where a
gather of source and a where made two."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .. import fastpath
from ..array import xp
from ..autograd.primitive import Function
from .movement import Pad

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor


def _repeated(mask: Any) -> int:
    """How many leading dims of mask repeat one pattern: those of stride 0, as broadcasting
    a smaller mask leaves them."""
    lead = 0
    for stride in mask.strides:
        if stride:
            break
        lead += 1
    return lead


class MaskedScatter(Function):
    """out = a (broadcast with mask) with source's first values, in order, where mask is
    True (``mask``: a bool array of out's shape)"""

    rule = (
        "grad_a = grad with zeros where mask, grad_source = grad at mask, in order, then zeros "
        "(source's shape)"
    )
    saves_inputs = False

    def forward(self, a: Any, source: Any, mask: Any) -> Any:
        self.mask, self.source_shape = mask, source.shape
        out = xp.broadcast_to(a, mask.shape).copy()
        lead = _repeated(mask) if fastpath.enabled() and out.size >= _PATTERN_FROM else 0
        if lead:
            # rows of one pattern (fastpath/table.py): each row's places by one index
            pattern = xp.flatnonzero(mask[(0,) * lead])  # the places within a row
            rows = out.reshape(math.prod(mask.shape[:lead]), -1)  # (R, row)
            taken = source.reshape(-1)[: rows.shape[0] * pattern.size]
            rows[:, pattern] = taken.reshape(rows.shape[0], pattern.size)  # (R, places)
        else:
            taken = source.reshape(-1)[: int(xp.count_nonzero(mask))]
            xp.place(out, mask, taken.astype(out.dtype, copy=False))  # in order, where True
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        mask = self.mask
        need_a, need_source = self.needs_input_grad
        grad_a = grad.masked_fill(mask, 0.0) if need_a else None
        if not need_source:
            return grad_a, None
        picked = grad[mask]  # (taken,)
        rest = math.prod(self.source_shape) - picked.shape[0]
        if rest:
            picked = Pad.apply(picked, widths=((0, rest),))
        return grad_a, picked.reshape(self.source_shape)


_PATTERN_FROM = 1024  # elements from which a pattern's rows fill faster than np.place
