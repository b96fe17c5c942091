"""Losses, as functions and as modules, with PyTorch's formulas and reductions; and one_hot.
The numerically delicate pieces (log_softmax, the binary cross entropies) are ops/ primitives.
"""

from __future__ import annotations

import warnings
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from .. import array, fastpath
from ..arguments import broadcasts_to, need_float, need_number
from ..autograd.mode import is_grad_enabled
from ..autograd.node import named
from ..autograd.saved import record
from ..ops import losses, reduce
from ..tensor import Tensor, as_tensor
from ..tensor.core import make
from .module import Module

xp = array.xp
REDUCTIONS = ("none", "mean", "sum")  # PyTorch's numbers for them, as its nodes keep them


# -- shared checks ------------------------------------------------------------------------


def _check_reduction(reduction: str, op: str) -> None:
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{op}: reduction must be 'mean', 'sum' or 'none'; got {reduction!r}")


def legacy_reduction(
    size_average: bool | None, reduce: bool | None, reduction: str, op: str
) -> str:
    """The reduction a loss uses: ``reduction``, checked, unless one of PyTorch's legacy
    flags is given; then 'mean' for both true (None counts as true), 'sum' for reduce
    alone, else 'none', with PyTorch's deprecation warning."""
    if size_average is None and reduce is None:
        _check_reduction(reduction, op)
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    chosen = ("mean" if size_average else "sum") if reduce else "none"
    warnings.warn(
        f"{op}: size_average and reduce are deprecated; pass reduction={chosen!r} instead",
        UserWarning,
        stacklevel=3,
    )
    return chosen


def reduce_loss(loss: Tensor, reduction: str) -> Tensor:
    """The loss itself ('none'), its mean or its sum."""
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


def _same_shape(input: Any, target: Any, op: str) -> tuple[Tensor, Tensor]:
    """Elementwise losses take input and target of one shape: broadcasting (N, 1) against
    (N,) would silently make an (N, N) loss."""
    x, t = as_tensor(input), as_tensor(target)
    if x._array.shape != t._array.shape:  # the arrays' (a Tensor's shape is made at each read)
        raise ValueError(f"{op}: input and target shapes differ; got {x.shape} and {t.shape}")
    return x, t


def _array_beside(x: Any, input: Tensor, what: str, op: str) -> Any:
    """A target or weight as an array on input's device: a tensor must be there already
    (PyTorch's error otherwise); data (a list, an array) is made or moved there."""
    if isinstance(x, Tensor):
        if array.ACCELERATED and type(x._array) is not type(input._array):
            raise RuntimeError(
                f"{op}: expected all tensors to be on the same device; got input of shape "
                f"{input.shape} on {input.device} and {what} of shape {x.shape} on {x.device}"
            )
        return x._array
    return array.on_device_of(x, input._array)


def _weight_array(weight: Any, c: int, op: str, input: Tensor) -> Any:
    """A per-class weight as an array of shape (C,), or None."""
    if weight is None:
        return None
    w = _array_beside(weight, input, "weight", op)
    if w.shape != (c,):
        raise ValueError(f"{op}: expected weight of shape ({c},) (one per class); got {w.shape}")
    return w


# -- elementwise losses -------------------------------------------------------------------


def mse_loss(
    input: Tensor, target: Tensor, *, reduction: str = "mean", weight: Tensor | None = None
) -> Tensor:
    """(input - target)^2, reduced; with ``weight`` (input's shape) each term is weighted and
    'mean' is the weighted mean, as PyTorch's."""
    _check_reduction(reduction, "mse_loss")
    x, t = _same_shape(input, target, "mse_loss")
    need_float(x, "mse_loss")
    if weight is not None:  # PyTorch's too is a composite then
        d = x - t
        return _weighted(d * d, weight, reduction, "mse_loss")
    t = t if t.is_floating_point() else t.to(x.dtype)  # x's float dtype, as PyTorch promotes
    out = losses.MseLoss.apply(x, t, reduction=reduction)
    return record(out, reduction=REDUCTIONS.index(reduction))


def l1_loss(
    input: Tensor, target: Tensor, *, reduction: str = "mean", weight: Tensor | None = None
) -> Tensor:
    """|input - target|, reduced; the gradient at 0 is 0; ``weight`` as in mse_loss."""
    _check_reduction(reduction, "l1_loss")
    x, t = _same_shape(input, target, "l1_loss")
    need_number(x, "l1_loss")
    if reduction == "mean":  # PyTorch's mean of integers has no dtype to give
        need_float(x, "l1_loss")
    return _weighted((x - t).abs(), weight, reduction, "l1_loss")


def smooth_l1_loss(
    input: Tensor, target: Tensor, *, reduction: str = "mean", beta: float = 1.0
) -> Tensor:
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta, for d = input - target (the L1
    loss for beta = 0), reduced."""
    _check_reduction(reduction, "smooth_l1_loss")
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be non-negative; got {beta}")
    x, t = _same_shape(input, target, "smooth_l1_loss")
    need_float(x, "smooth_l1_loss")
    if beta == 0:  # the L1 loss, as PyTorch composes it
        return reduce_loss((x - t).abs(), reduction)
    t = t if t.is_floating_point() else t.to(x.dtype)  # x's float dtype, as PyTorch promotes
    out = losses.SmoothL1Loss.apply(x, t, k=beta, reduction=reduction)
    return record(out, beta=float(beta), reduction=REDUCTIONS.index(reduction))


def huber_loss(
    input: Tensor, target: Tensor, *, reduction: str = "mean", delta: float = 1.0
) -> Tensor:
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta), for d = input - target,
    reduced: smooth_l1_loss with beta = delta, times delta."""
    _check_reduction(reduction, "huber_loss")
    if not delta > 0:
        raise ValueError(f"huber_loss: delta must be positive; got {delta}")
    x, t = _same_shape(input, target, "huber_loss")
    need_float(x, "huber_loss")
    t = t if t.is_floating_point() else t.to(x.dtype)  # x's float dtype, as PyTorch promotes
    out = losses.HuberLoss.apply(x, t, k=delta, reduction=reduction)
    return record(out, delta=float(delta), reduction=REDUCTIONS.index(reduction))


def _weighted(loss: Tensor, weight: Any, reduction: str, op: str) -> Tensor:
    if weight is None:
        return reduce_loss(loss, reduction)
    w = as_tensor(weight)
    if w.shape != loss.shape:
        raise ValueError(f"{op}: weight must have the input's shape {loss.shape}; got {w.shape}")
    loss = loss * w
    return loss.sum() / w.sum() if reduction == "mean" else reduce_loss(loss, reduction)


def _within_0_1(a: Any) -> bool:
    """Whether every element of a non-empty array is in [0, 1] (none NaN): the ufuncs'
    reductions, without the methods' Python wrappers."""
    return bool(xp.minimum.reduce(a, axis=None) >= 0 and xp.maximum.reduce(a, axis=None) <= 1)


def binary_cross_entropy(
    input: Tensor, target: Tensor, weight: Tensor | None = None, *, reduction: str = "mean"
) -> Tensor:
    """-w (t log p + (1 - t) log(1 - p)) for probabilities p, each log clamped at -100."""
    _check_reduction(reduction, "binary_cross_entropy")
    p, t = _same_shape(input, target, "binary_cross_entropy")
    pv, tv = p._array, t._array
    if pv.dtype.kind != "f":  # as need_float's own check, which refuses all but bfloat16
        need_float(p, "binary_cross_entropy")
    if tv.dtype != pv.dtype:  # PyTorch's kernel takes one dtype, and refuses a mixed pair
        raise RuntimeError(
            f"binary_cross_entropy: target must have the input's dtype; got {t.dtype} for input "
            f"of dtype {p.dtype} (shape {tuple(p.shape)}); cast it: target.to(input.dtype)"
        )
    # NumPy warns of log(0) and log1p(-1), which are clamped: silenced only where they occur
    quiet: AbstractContextManager[Any] = _LOUD
    if pv.size:
        lo, hi = xp.minimum.reduce(pv, axis=None), xp.maximum.reduce(pv, axis=None)
        if not (lo >= 0 and hi <= 1):
            raise ValueError(
                "binary_cross_entropy: input must hold probabilities in [0, 1]; got values "
                f"from {lo} to {hi}; for logits use binary_cross_entropy_with_logits"
            )
        if lo == 0 or hi == 1:
            quiet = array.errstate(divide="ignore")
    if tv.size and not _within_0_1(tv):
        raise ValueError(
            "binary_cross_entropy: target must hold values in [0, 1]; got values from "
            f"{tv.min()} to {tv.max()}"
        )
    w = _weight_of(weight, p, "binary_cross_entropy")
    with quiet:
        if w is None and reduction == "none":
            if fastpath.off_graph(p) and fastpath.off_graph(t):  # no node: the array wrapped
                return make(losses.BinaryCrossEntropy().forward(pv, tv))
            loss = losses.BinaryCrossEntropy.apply(p, t)
        else:
            loss = _BCE.apply(p, t, weight=w, reduction=reduction)
    if w is not None:  # PyTorch's function expands it to the input's shape first
        w = xp.broadcast_to(w, p.shape)
    return record(loss, reduction=REDUCTIONS.index(reduction), weight=w)


_LOUD = nullcontext()  # no warning to silence: NumPy's errstate costs more than the loss

# PyTorch's one node of each binary cross entropy with a weight or a reduction
_BCE = losses.WeightedBinaryCrossEntropy.named("BinaryCrossEntropyBackward0")
_BCE_LOGITS = losses.WeightedBinaryCrossEntropyWithLogits.named(
    "BinaryCrossEntropyWithLogitsBackward0"
)


def _weight_of(weight: Any, input: Tensor, op: str) -> Any:
    """A binary cross entropy's weight as an array, or None: it must broadcast to the input's
    shape without growing it (an (N,) weight against (N, 1) would silently make an (N, N)
    loss), and takes no gradient, as in PyTorch."""
    if weight is None:
        return None
    w = as_tensor(weight)
    if not broadcasts_to(w.shape, input.shape):
        raise ValueError(
            f"{op}: weight must broadcast to the input's shape {input.shape}; got {w.shape}"
        )
    refuse_grad(w, "weight", op)
    return _array_beside(w, input, "weight", op)


def refuse_grad(tensor: Tensor, what: str, op: str) -> None:
    """Refuse an argument that PyTorch takes no gradient in when it would need one (it
    requires grad and grad mode is on), at the call, as PyTorch refuses it."""
    if tensor.requires_grad and is_grad_enabled():
        raise RuntimeError(
            f"{op}: not differentiable in {what}, as in PyTorch; got a {what} of shape "
            f"{tensor.shape} that requires grad; detach it first"
        )


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    *,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """binary_cross_entropy(sigmoid(input), target), computed from the logits without
    overflow; ``pos_weight`` (broadcast along the last dim) weighs the positive term."""
    _check_reduction(reduction, "binary_cross_entropy_with_logits")
    x, t = _same_shape(input, target, "binary_cross_entropy_with_logits")
    need_float(x, "binary_cross_entropy_with_logits")
    if not t.is_floating_point():  # PyTorch refuses integer and bool targets too
        raise TypeError(
            "binary_cross_entropy_with_logits: target must be a floating-point tensor (the "
            f"probability of the positive class); got dtype {t.dtype} for input of dtype "
            f"{x.dtype}; cast it: target.float()"
        )
    pw = None if pos_weight is None else as_tensor(pos_weight)
    if pw is not None and not broadcasts_to(pw.shape, x.shape):
        raise ValueError(
            "binary_cross_entropy_with_logits: pos_weight must broadcast to the input's shape "
            f"{x.shape}; got {pw.shape}"
        )
    if pw is not None:
        refuse_grad(pw, "pos_weight", "binary_cross_entropy_with_logits")
    w = _weight_of(weight, x, "binary_cross_entropy_with_logits")
    if w is None and reduction == "none":
        loss = losses.BinaryCrossEntropyWithLogits.apply(x, t, pw)
    else:
        loss = _BCE_LOGITS.apply(x, t, pw, weight=w, reduction=reduction)
    return record(loss, reduction=REDUCTIONS.index(reduction), weight=w)


# -- class-index losses -------------------------------------------------------------------


# An integer's bits read as an unsigned integer of its width: see _class_targets.
UNSIGNED = {1: xp.uint8, 2: xp.uint16, 4: xp.uint32, 8: xp.uint64}


def outside(t: Any, c: int) -> bool:
    """Whether a non-empty integer target array holds a value outside [0, c): a negative one
    reads as huge unsigned, so one reduction tests both ends (the ufunc's, without max's
    Python wrapper)."""
    return bool(xp.maximum.reduce(t.view(UNSIGNED[t.itemsize]), axis=None) >= c)


def _class_targets(
    input: Tensor, target: Any, weight: Any, ignore_index: int, op: str
) -> tuple[Any, Any, Any, Any]:
    """Check class-index targets against (N, C, d1, ...) or (C,) input. Returns the targets
    with ignored entries set to class 0, the ignored mask (None when none is ignored), the
    per-element weights (0 where ignored; None when all are 1) and the per-class weight
    array (or None)."""
    t = _array_beside(target, input, "target", op)
    if t.dtype.kind not in "iu":  # bools would index as masks, floats are probabilities
        raise TypeError(
            f"{op}: class targets must be integers (int64); got dtype {array.dtype_object(t.dtype)}"
        )
    shape = input._array.shape  # the array's shape: a tuple, no Size to make
    class_dim = 0 if len(shape) == 1 else 1
    c = shape[class_dim]
    expected = shape[:class_dim] + shape[class_dim + 1 :]
    if t.shape != expected:
        raise ValueError(
            f"{op}: expected target of shape {expected} for input of shape {input.shape} (class "
            f"dim {class_dim}); got {t.shape}"
        )
    w = _weight_array(weight, c, op, input)
    if (
        t.size and not 0 <= ignore_index < c and not outside(t, c)
    ):  # the common case, found in one reduction: every target a class, none ignored
        per_element = None if w is None else array.result_array(w[t]).astype(input.dtype)
        return t, None, per_element, w
    ignored = t == ignore_index
    bad = ~ignored & (t.view(UNSIGNED[t.itemsize]) >= c)  # a negative target reads as huge
    if xp.count_nonzero(bad):  # count_nonzero: a tenth of any()'s time on few elements
        raise IndexError(
            f"{op}: target index {t[bad].reshape(-1)[0]} is out of range for {c} classes (C); got "
            f"input shape {input.shape} (classes in dim {class_dim}) and target shape {t.shape}; "
            f"expected values in [0, {c - 1}] or ignore_index={ignore_index}"
        )
    if not xp.count_nonzero(ignored):  # none ignored after all
        per_element = None if w is None else array.result_array(w[t]).astype(input.dtype)
        return t, None, per_element, w
    safe = xp.where(ignored, 0, t)
    if w is None:  # 1 where counted, 0 where ignored, written into an array (0-d stays one)
        per_element = xp.empty(t.shape, dtype=input.dtype, like=t)
        xp.logical_not(ignored, out=per_element)
    else:
        per_element = array.result_array(w[safe]).astype(input.dtype)  # 0-d stays an array
        per_element[ignored] = 0
    return safe, ignored, per_element, w


def _as_given(out: Tensor, target: Any, w: Any, ignore_index: int) -> Tensor:
    """out, its node keeping the target, class weights and ignore_index as given (its
    ``_saved_*``, as PyTorch's nll_loss node's)."""
    t = target._array if isinstance(target, Tensor) else array.host.asarray(target)
    return record(out, target=t, weight=w, ignore_index=ignore_index)


def _nll(logp: Tensor, safe: Any, per_element: Any, reduction: str) -> Tensor:
    # 'mean' with weights is a weighted mean: divided by the weights of the counted targets.
    class_dim = 0 if logp.ndim == 1 else 1
    return reduce.NLLLoss.apply(logp, safe, per_element, class_dim=class_dim, reduction=reduction)


def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    *,
    ignore_index: int = -100,
    reduction: str = "mean",
) -> Tensor:
    """-weight[t] * input[t] for log-probabilities input (N, C, d1, ...) or (C,) and class
    indices target (N, d1, ...) or (); targets equal to ignore_index count for nothing, and
    'mean' divides by the sum of the counted targets' weights."""
    _check_reduction(reduction, "nll_loss")
    logp = as_tensor(input)
    need_float(logp, "nll_loss")
    if logp.ndim == 0:
        raise ValueError(f"nll_loss: expected input of shape (N, C, ...) or (C,); got {logp.shape}")
    safe, _, per_element, w = _class_targets(logp, target, weight, ignore_index, "nll_loss")
    out = _nll(logp, safe, per_element, reduction)
    return _as_given(out, target, w, ignore_index)


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    *,
    ignore_index: int = -100,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """nll_loss(log_softmax(input, class dim), target) for logits (N, C, d1, ...) or (C,).

    Target: class indices (N, d1, ...), or class probabilities of input's shape. With
    ``label_smoothing`` s the loss is (1 - s) nll + s/C * (-sum_c weight_c log p_c), each term
    reduced as PyTorch does (for 'mean', the smoothing term is divided by the same weight sum
    as nll; with probabilities, by the number of elements N d1 ...).
    """
    op = "cross_entropy"
    _check_reduction(reduction, op)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"{op}: label_smoothing must be in [0, 1]; got {label_smoothing}")
    x = as_tensor(input)
    need_float(x, op)
    if x.ndim == 0:
        raise ValueError(f"{op}: expected input of shape (N, C, ...) or (C,); got {x.shape}")
    class_dim = 0 if x.ndim == 1 else 1
    c = x._array.shape[class_dim]
    t_dtype = (
        target._array.dtype
        if isinstance(target, Tensor)
        else target.dtype
        if isinstance(target, array.ndarray)
        else array.host.asarray(target).dtype
    )
    if array.is_floating(t_dtype):
        return _soft_cross_entropy(
            x.log_softmax(class_dim),
            as_tensor(target),
            weight,
            ignore_index,
            reduction,
            label_smoothing,
        )
    safe, ignored, per_element, w = _class_targets(x, target, weight, ignore_index, op)
    if label_smoothing == 0.0:  # log_softmax and nll_loss as one node
        out = reduce.CrossEntropy.apply(
            x, safe, per_element, class_dim=class_dim, reduction=reduction
        )
        return _as_given(out, target, w, ignore_index)
    logp = x.log_softmax(class_dim)
    nll = _nll(logp, safe, per_element, reduction)
    class_shape = (c,) + (1,) * (x.ndim - class_dim - 1)  # a (C,) vector along the class dim
    terms = logp if w is None else logp * w.reshape(class_shape)  # (N, C, ...)
    if ignored is not None:  # an ignored target's terms count for nothing
        at = ignored.shape  # (N, d1, ...): a dim of 1 put in at the class dim, by reshape
        terms = terms.masked_fill(ignored.reshape(at[:class_dim] + (1,) + at[class_dim:]), 0.0)
    # -s/C times the sum of the terms over the classes, over everything where reduced, and
    # divided by the weight of the counted targets for 'mean' (NaN where there are none), as
    # nll_loss's mean: the scale folded into one product
    scale = -label_smoothing / c
    if reduction == "none":
        return nll * (1.0 - label_smoothing) + terms.sum(class_dim) * scale
    if reduction == "mean":
        counted = safe.size if per_element is None else per_element.sum()
        with xp.errstate(divide="ignore", invalid="ignore"):
            scale = float(xp.float64(scale) / counted)
    return nll * (1.0 - label_smoothing) + terms.sum() * scale


def _soft_cross_entropy(
    logp: Tensor, target: Tensor, weight: Any, ignore_index: int, reduction: str, smoothing: float
) -> Tensor:
    op = "cross_entropy"
    shape = logp._array.shape  # the array's shape: a tuple, no Size to make
    if target._array.shape != shape:
        raise ValueError(
            f"{op}: class-probability targets must have the input's shape; got {logp.shape} and "
            f"{target.shape}"
        )
    if ignore_index != -100:
        raise ValueError(f"{op}: ignore_index is not supported for class-probability targets")
    class_dim = 0 if len(shape) == 1 else 1
    c = shape[class_dim]
    if smoothing > 0.0:
        target = target * (1.0 - smoothing) + smoothing / c
    w = _weight_array(weight, c, op, logp)
    if w is not None:
        logp = logp * w.reshape((c,) + (1,) * (logp.ndim - class_dim - 1))
    terms = logp * target  # (N, C, ...)
    if reduction == "none":
        return -terms.sum(class_dim)
    loss = -terms.sum()
    if reduction == "sum":
        return loss
    size = logp._array.size
    if not size:  # the mean over no samples: NaN, as PyTorch's
        return loss * float("nan")
    samples = size // c  # N d1 ..., which PyTorch's node keeps, a tensor over a number
    return named(loss / samples, "DivBackward1", other=samples)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """(*) class indices -> (*, num_classes) int64 with a 1 at each index; num_classes=-1
    means one more than the largest index."""
    idx = tensor._array if isinstance(tensor, Tensor) else xp.asarray(tensor)
    if idx.dtype.kind not in "iu":
        raise TypeError(
            f"one_hot: indices must be integers; got dtype {array.dtype_object(idx.dtype)}"
        )
    if num_classes == -1 and idx.size == 0:
        raise ValueError("one_hot: cannot infer num_classes from an empty tensor; pass it")
    if idx.size:
        low, high = int(idx.min()), int(idx.max())
        num_classes = high + 1 if num_classes == -1 else num_classes
        if low < 0 or high >= num_classes:
            bad = low if low < 0 else high
            raise IndexError(f"one_hot: index {bad} is out of range for num_classes {num_classes}")
    out = xp.zeros(idx.size * num_classes, dtype=array.int64, like=idx)
    rows = xp.arange(idx.size, like=idx) * num_classes  # where each row starts
    out[rows + idx.ravel().astype(rows.dtype, copy=False)] = 1  # and its 1
    return Tensor._make(out.reshape(idx.shape + (num_classes,)))  # (*, num_classes)


# -- modules ------------------------------------------------------------------------------


class _Loss(Module):
    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        _check_reduction(reduction, type(self).__name__)
        self.reduction = reduction


class _WeightedLoss(_Loss):
    """A loss with an optional per-class weight, held as a buffer (as PyTorch, so it is in
    state_dict)."""

    weight: Any  # a buffer: a Tensor or None

    def __init__(self, weight: Any = None, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.register_buffer("weight", None if weight is None else as_tensor(weight))


class MSELoss(_Loss):
    def __init__(self, *, reduction: str = "mean") -> None:
        super().__init__(reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    def __init__(self, *, reduction: str = "mean") -> None:
        super().__init__(reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    def __init__(self, *, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(reduction)
        if beta < 0:
            raise ValueError(f"SmoothL1Loss: beta must be non-negative; got {beta}")
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction)
        if not delta > 0:
            raise ValueError(f"HuberLoss: delta must be positive; got {delta}")
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class BCELoss(_WeightedLoss):
    def __init__(self, weight: Any = None, *, reduction: str = "mean") -> None:
        super().__init__(weight, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return binary_cross_entropy(input, target, self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    weight: Any  # buffers: Tensors or None
    pos_weight: Any

    def __init__(
        self, weight: Any = None, *, reduction: str = "mean", pos_weight: Any = None
    ) -> None:
        super().__init__(reduction)
        self.register_buffer("weight", None if weight is None else as_tensor(weight))
        self.register_buffer("pos_weight", None if pos_weight is None else as_tensor(pos_weight))

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return binary_cross_entropy_with_logits(
            input, target, self.weight, reduction=self.reduction, pos_weight=self.pos_weight
        )


class NLLLoss(_WeightedLoss):
    def __init__(
        self, weight: Any = None, *, ignore_index: int = -100, reduction: str = "mean"
    ) -> None:
        super().__init__(weight, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return nll_loss(
            input, target, self.weight, ignore_index=self.ignore_index, reduction=self.reduction
        )


class CrossEntropyLoss(_WeightedLoss):
    def __init__(
        self,
        weight: Any = None,
        *,
        ignore_index: int = -100,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__(weight, reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return cross_entropy(
            input,
            target,
            self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            label_smoothing=self.label_smoothing,
        )
