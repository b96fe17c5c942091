"""The margin and embedding losses, as functions and modules: margin_ranking, hinge_embedding,
soft_margin, cosine_embedding, multi_margin, multilabel_margin, multilabel_soft_margin,
triplet_margin (with a p-norm or any distance), and pairwise_distance. Each is composed from
Tensor ops as PyTorch composes it (or as its kernel computes), so the gradients are its too;
the cross entropies and regressions are in loss.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import array
from ..arguments import need_float, need_number
from ..autograd.node import named
from ..autograd.saved import record
from ..ops import losses
from ..tensor import Tensor, as_tensor, where
from .activation import logsigmoid
from .loss import REDUCTIONS, legacy_reduction, outside, reduce_loss, refuse_grad
from .module import Module

xp = array.xp

EPSILON = 1e-12  # cosine_embedding_loss's guard on the squared norms, as PyTorch's


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """||x1 - x2 + eps||_p over the last dim of the broadcast inputs, as PyTorch's."""
    a, b = as_tensor(x1), as_tensor(x2)
    _numbers("pairwise_distance", a, b)
    d = a - b + eps  # integers promote to the default float here, as PyTorch's
    # the node of at::norm, which PyTorch's kernel calls (dim -1 of a 0-d tensor is itself)
    return named(d.norm(p, max(a.ndim, b.ndim) - 1, keepdim), "NormBackward1")


def _numbers(op: str, *tensors: Tensor) -> None:
    """The operands of a loss PyTorch subtracts, which bools refuse."""
    for t in tensors:
        need_number(t, op)


def _no_halves(x: Tensor, op: str) -> None:
    """PyTorch's CPU kernels of the class margin losses take float32 and float64 only."""
    if x._array.dtype.itemsize < 4:
        raise TypeError(f"{op}: not implemented for {x.dtype}, as in PyTorch; use float32")


def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0.0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """max(0, -y (x1 - x2) + margin), y = 1 when x1 should rank higher, -1 for x2."""
    reduction = legacy_reduction(size_average, reduce, reduction, "margin_ranking_loss")
    x1, x2, y = as_tensor(input1), as_tensor(input2), as_tensor(target)
    _numbers("margin_ranking_loss", x1, x2, y)
    if not x1.ndim == x2.ndim == y.ndim:
        raise ValueError(
            "margin_ranking_loss: input1, input2 and target must have the same number of dims; "
            f"got shapes {x1.shape}, {x2.shape} and {y.shape}"
        )
    return reduce_loss((-y * (x1 - x2) + margin).clamp_min(0), reduction)


def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """x where y = 1, max(0, margin - x) where y = -1 (the sum of both for other y), as
    PyTorch's."""
    reduction = legacy_reduction(size_average, reduce, reduction, "hinge_embedding_loss")
    x, y = as_tensor(input), as_tensor(target)
    _numbers("hinge_embedding_loss", x, y)
    if reduction == "mean":  # PyTorch's mean of integers has no dtype to give
        need_float(x, "hinge_embedding_loss")
    margin_term = where(y._array != 1, (margin - x).clamp_min(0), 0.0)
    return reduce_loss(margin_term + where(y._array != -1, x, 0.0), reduction)


def soft_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """log(1 + exp(-y x)), the logistic loss of labels y in {1, -1}."""
    reduction = legacy_reduction(size_average, reduce, reduction, "soft_margin_loss")
    x, y = as_tensor(input), as_tensor(target)
    need_float(x, "soft_margin_loss")
    refuse_grad(y, "target", "soft_margin_loss")
    if x.shape != y.shape:  # broadcast: composed
        return reduce_loss((-x * y).exp().log1p(), reduction)
    y = y if y.is_floating_point() else y.to(x.dtype)  # x's float dtype, as PyTorch promotes
    out = losses.SoftMarginLoss.apply(x, y, reduction=reduction)
    return record(out, reduction=REDUCTIONS.index(reduction))


def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0.0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """1 - cos(x1, x2) where y = 1, max(0, cos(x1, x2) - margin) where y = -1; inputs (N, D)
    with target (N,), or (D,) with a 0-d target."""
    reduction = legacy_reduction(size_average, reduce, reduction, "cosine_embedding_loss")
    x1, x2, y = as_tensor(input1), as_tensor(input2), as_tensor(target)
    if y.ndim not in (0, 1) or x1.ndim != y.ndim + 1 or x2.ndim != y.ndim + 1:
        raise ValueError(
            "cosine_embedding_loss: expected inputs (N, D) with target (N,), or (D,) with a 0-d "
            f"target; got shapes {x1.shape}, {x2.shape} and {y.shape}"
        )
    dim = y.ndim
    prod = (x1 * x2).sum(dim)
    norms = (((x1 * x1).sum(dim) + EPSILON) * ((x2 * x2).sum(dim) + EPSILON)).sqrt()
    cos = prod / norms
    t = y._array
    loss = where(t == 1, 1.0 - cos, 0.0) + where(t == -1, (cos - margin).clamp_min(0), 0.0)
    return reduce_loss(loss, reduction)


def _class_rows(input: Tensor, target: Any, op: str) -> tuple[Tensor, int, Any, tuple]:
    """input, its classes (C; a (C,) input is one row of N, C) and target as an int array of
    N class indices, checked; and the shape of the loss 'none' gives: (N,), or target's for a
    (C,) input."""
    x = as_tensor(input)
    a = x._array  # its shape read once (the Tensor's is an object made at each read)
    if a.dtype.char not in "fd":  # the dtype checks, off the way of float32 and float64
        need_float(x, op)
        _no_halves(x, op)
    t = target._array if isinstance(target, Tensor) else xp.asarray(target)
    if a.ndim > 2 or t.dtype.kind not in "iu":
        raise ValueError(
            f"{op}: expected input (N, C) or (C,) and integer class targets (N,) or (); got "
            f"shapes {x.shape} and {t.shape} of dtype {array.dtype_object(t.dtype)}"
        )
    n, c = a.shape if a.ndim == 2 else (1, a.size)  # a 0-d input is one score
    if t.size != n or (a.ndim == 2 and t.ndim != 1):
        raise ValueError(
            f"{op}: expected one class target per row of the input; got input shape {x.shape} "
            f"and target shape {t.shape}"
        )
    shape = (n,) if a.ndim == 2 else t.shape
    t = t.reshape(n)
    if t.size and outside(t, c):
        raise IndexError(f"{op}: target out of range for {c} classes; got values {t.tolist()}")
    return x, c, t, shape


def multi_margin_loss(
    input: Tensor,
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """sum over classes i != y of w_y max(0, margin - x_y + x_i)^p, divided by C: the
    multi-class hinge loss of (N, C) scores and class targets y (N,), p 1 or 2."""
    op = "multi_margin_loss"
    reduction = legacy_reduction(size_average, reduce, reduction, op)
    if p not in (1, 2):
        raise ValueError(f"{op}: only p == 1 and p == 2 are supported; got p={p}")
    x, c, t, shape = _class_rows(input, target, op)
    w = None if weight is None else as_tensor(weight)
    if w is not None and (w.ndim != 1 or w.shape[0] != c):
        raise ValueError(
            f"{op}: weight must be one-dimensional, one per class ({c}); got shape {w.shape}"
        )
    if w is not None:
        refuse_grad(w, "weight", op)
    wa = None if w is None else w._array
    out = losses.MultiMarginLoss.apply(
        x, target=t, p=p, margin=margin, weight=wa, reduction=reduction, shape=shape
    )
    if out.grad_fn is None:  # no node to keep PyTorch's saved values
        return out
    kept = {"margin": margin, "p": p, "weight": wa, "target": t.reshape(shape)}
    return record(out, reduction=REDUCTIONS.index(reduction), **kept)


def multilabel_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """sum over the target classes j and the other classes i of max(0, 1 - (x_j - x_i)),
    divided by C. target (input's shape) lists each row's classes, ended by the first -1."""
    op = "multilabel_margin_loss"
    reduction = legacy_reduction(size_average, reduce, reduction, op)
    x = as_tensor(input)
    need_float(x, op)
    _no_halves(x, op)
    a = x._array  # its shape read once (the Tensor's is an object made at each read)
    t = target._array if isinstance(target, Tensor) else xp.asarray(target)
    if a.ndim > 2 or t.shape != a.shape or t.dtype.kind not in "iu":
        raise ValueError(
            f"{op}: expected input (N, C) or (C,) and an integer target of its shape; got "
            f"shapes {x.shape} and {t.shape} of dtype {array.dtype_object(t.dtype)}"
        )
    shape = a.shape if a.ndim == 2 else (1, a.size)  # (N, C)
    c = shape[1]
    t = t.reshape(shape)
    listed = xp.logical_and.accumulate(t >= 0, axis=1)  # (N, C): the slots before the first -1
    if xp.count_nonzero((t >= c) & listed):
        raise IndexError(f"{op}: target out of range for {c} classes; got values {t.tolist()}")
    classes = xp.where(listed, t, 0)  # (N, C): each slot's class
    is_target = xp.zeros(shape, dtype=bool, like=t)
    is_target[xp.nonzero(listed)[0], classes[listed]] = True  # (N, C)
    out = losses.MultilabelMarginLoss.apply(
        x,
        classes=classes,
        listed=listed,
        is_target=is_target,
        reduction=reduction,
        shape=shape[:1] if a.ndim == 2 else (),
    )
    if out.grad_fn is None:  # no node to keep PyTorch's saved values
        return out
    marks = is_target.astype(a.dtype).reshape(a.shape)  # as PyTorch's node keeps them
    kept = {"target": target if isinstance(target, Tensor) else t, "is_target": marks}
    return record(out, reduction=REDUCTIONS.index(reduction), **kept)


def multilabel_soft_margin_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The mean over classes of -(y log sigmoid(x) + (1 - y) log sigmoid(-x)), times weight."""
    reduction = legacy_reduction(size_average, reduce, reduction, "multilabel_soft_margin_loss")
    x, y = as_tensor(input), as_tensor(target)
    need_float(x, "multilabel_soft_margin_loss")
    loss = -(y * logsigmoid(x) + (1 - y) * logsigmoid(-x))
    if weight is not None:
        loss = loss * weight
    class_dim = x.ndim - 1
    return reduce_loss(loss.sum(class_dim) / x.shape[class_dim], reduction)


def _same_ndim(anchor: Tensor, positive: Tensor, negative: Tensor, op: str) -> None:
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise ValueError(
            f"{op}: anchor, positive and negative must have the same number of dims; got shapes "
            f"{anchor.shape}, {positive.shape} and {negative.shape}"
        )


def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """max(0, margin + d(a, p) - d(a, n)), d the pairwise p-norm distance; with ``swap``,
    d(a, n) is min(d(a, n), d(p, n))."""
    reduction = legacy_reduction(size_average, reduce, reduction, "triplet_margin_loss")
    if margin <= 0:
        raise ValueError(f"triplet_margin_loss: margin must be greater than 0; got {margin}")
    a, pos, neg = as_tensor(anchor), as_tensor(positive), as_tensor(negative)
    _numbers("triplet_margin_loss", a, pos, neg)
    _same_ndim(a, pos, neg, "triplet_margin_loss")
    return _triplet(
        a, pos, neg, lambda u, v: pairwise_distance(u, v, p, eps), margin, swap, reduction
    )


def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """triplet_margin_loss with any distance (pairwise_distance by default); margin > 0."""
    op = "triplet_margin_with_distance_loss"
    reduction = legacy_reduction(None, None, reduction, op)
    if margin <= 0:
        raise ValueError(f"{op}: margin must be greater than 0; got {margin}")
    a, pos, neg = as_tensor(anchor), as_tensor(positive), as_tensor(negative)
    _numbers(op, a, pos, neg)
    _same_ndim(a, pos, neg, op)
    distance = pairwise_distance if distance_function is None else distance_function
    return _triplet(a, pos, neg, distance, margin, swap, reduction)


def _triplet(
    a: Tensor,
    pos: Tensor,
    neg: Tensor,
    distance: Callable[[Tensor, Tensor], Tensor],
    margin: float,
    swap: bool,
    reduction: str,
) -> Tensor:
    d_pos, d_neg = distance(a, pos), distance(a, neg)
    if swap:
        d_neg = d_neg.minimum(distance(pos, neg))
    return reduce_loss((margin + d_pos - d_neg).clamp_min(0), reduction)


# -- modules -------------------------------------------------------------------------------


class _Reduced(Module):
    """A loss module's reduction, from PyTorch's legacy flags when they are given."""

    def __init__(
        self, size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean"
    ) -> None:
        super().__init__()
        self.reduction = legacy_reduction(size_average, reduce, reduction, type(self).__name__)


class MarginRankingLoss(_Reduced):
    def __init__(
        self,
        margin: float = 0.0,
        size_average: Any = None,
        reduce: Any = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return margin_ranking_loss(input1, input2, target, self.margin, reduction=self.reduction)


class HingeEmbeddingLoss(_Reduced):
    def __init__(
        self,
        margin: float = 1.0,
        size_average: Any = None,
        reduce: Any = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return hinge_embedding_loss(input, target, self.margin, reduction=self.reduction)


class SoftMarginLoss(_Reduced):
    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return soft_margin_loss(input, target, reduction=self.reduction)


class CosineEmbeddingLoss(_Reduced):
    def __init__(
        self,
        margin: float = 0.0,
        size_average: Any = None,
        reduce: Any = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return cosine_embedding_loss(input1, input2, target, self.margin, reduction=self.reduction)


class MultiMarginLoss(_Reduced):
    """multi_margin_loss; the per-class weight is a buffer (in state_dict), as PyTorch's."""

    weight: Any

    def __init__(
        self,
        p: int = 1,
        margin: float = 1.0,
        weight: Any = None,
        size_average: Any = None,
        reduce: Any = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError(f"MultiMarginLoss: only p == 1 and p == 2 are supported; got p={p}")
        if weight is not None and as_tensor(weight).ndim != 1:
            raise ValueError(f"MultiMarginLoss: weight must be one-dimensional; got {weight.shape}")
        self.p, self.margin = p, margin
        self.register_buffer("weight", None if weight is None else as_tensor(weight))

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return multi_margin_loss(
            input, target, self.p, self.margin, self.weight, reduction=self.reduction
        )


class MultiLabelMarginLoss(_Reduced):
    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return multilabel_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_Reduced):
    weight: Any

    def __init__(
        self,
        weight: Any = None,
        size_average: Any = None,
        reduce: Any = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", None if weight is None else as_tensor(weight))

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return multilabel_soft_margin_loss(input, target, self.weight, reduction=self.reduction)


class PairwiseDistance(Module):
    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class TripletMarginLoss(_Reduced):
    def __init__(
        self,
        margin: float = 1.0,
        p: float = 2.0,
        eps: float = 1e-6,
        swap: bool = False,
        size_average: Any = None,
        reduce: Any = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: margin must be greater than 0; got {margin}")
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return triplet_margin_loss(
            anchor,
            positive,
            negative,
            self.margin,
            self.p,
            self.eps,
            self.swap,
            reduction=self.reduction,
        )


class TripletMarginWithDistanceLoss(_Reduced):
    def __init__(
        self,
        *,
        distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
        margin: float = 1.0,
        swap: bool = False,
        reduction: str = "mean",
    ) -> None:
        super().__init__(reduction=reduction)
        if margin <= 0:
            raise ValueError(
                f"TripletMarginWithDistanceLoss: margin must be greater than 0; got {margin}"
            )
        # PyTorch's default is a PairwiseDistance module (a submodule, in repr)
        self.distance_function = distance_function or PairwiseDistance()
        self.margin, self.swap = margin, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return triplet_margin_with_distance_loss(
            anchor,
            positive,
            negative,
            distance_function=self.distance_function,
            margin=self.margin,
            swap=self.swap,
            reduction=self.reduction,
        )
