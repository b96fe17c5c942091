"""The likelihood losses, as functions and modules: kl_div, gaussian_nll_loss,
poisson_nll_loss, composed from Tensor ops as PyTorch composes them, and ctc_loss, whose
alignment sum is the primitive ops/ctc.py; the cross entropies are in loss.py.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from .. import array
from ..arguments import need_float, need_number
from ..autograd.mode import is_grad_enabled, no_grad
from ..autograd.primitive import batching, dual
from ..autograd.saved import record
from ..ops import ctc
from ..tensor import Tensor, as_tensor, where
from .loss import legacy_reduction, reduce_loss
from .module import Module

xp = array.xp


def kl_div(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """target (log target - input) elementwise, for log-probabilities input: t log t - t x
    (0 log 0 = 0),
    or exp(t) (t - x) when the target is given as log-probabilities too. 'batchmean' divides
    the sum by the batch size (dim 0), the KL divergence per sample; 'mean' (every element)
    warns, as PyTorch's."""
    op = "kl_div"
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, reduction, op)
    elif reduction == "mean":
        warnings.warn(
            "kl_div: reduction 'mean' divides the total loss by both the batch size and the "
            "support size; 'batchmean' divides only by the batch size, the KL divergence's "
            "definition",
            UserWarning,
            stacklevel=2,
        )
    elif reduction != "batchmean":
        legacy_reduction(None, None, reduction, op)  # checks it
    x, t = as_tensor(input), as_tensor(target)
    need_float(x, op)
    if log_target:
        loss = t.exp() * (t - x)
    else:  # xlogy(t, t) - t x: t log t taken as 0 at t = 0, its log on a safe 1 there
        zero = t._array == 0
        if t.requires_grad and is_grad_enabled() or batching[0] or dual[0]:  # (vmap's or
            # forward mode's: a batched target, or a target's tangent, needs the Tensor ops)
            loss = where(zero, 0.0, t * where(zero, 1.0, t).log()) - t * x
        else:  # t log t is a constant: the same operations on arrays, four nodes fewer
            ta = t._array
            with array.errstate(invalid="ignore"):  # log of a negative target: NaN
                tlogt = xp.where(zero, 0.0, ta * xp.log(xp.where(zero, 1.0, ta)))
            loss = Tensor._make(tlogt.astype(ta.dtype, copy=False)) - t * x
    if reduction == "batchmean":
        total = loss.sum()
        return total / x.shape[0] if x.ndim else total
    return reduce_loss(loss, reduction)


def gaussian_nll_loss(
    input: Tensor,
    target: Tensor,
    var: Tensor | float,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """0.5 (log var + (input - target)^2 / var) (+ 0.5 log 2 pi with ``full``): the negative
    log likelihood of target under N(input, var). var has input's shape, or one dim fewer,
    or one dim of size 1 (one variance shared along it); it is clamped to eps with no
    gradient to the clamp, as PyTorch's."""
    op = "gaussian_nll_loss"
    x, t = as_tensor(input), as_tensor(target)
    need_number(x, op)
    need_number(t, op)
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError(f"{op}: var has negative entries; got {var}")
        v = x.new_full(x.shape, float(var))
    else:
        v = as_tensor(var)
        need_number(v, op)
        if v.numel() and bool((v._array < 0).any()):
            raise ValueError(f"{op}: var has negative entries")
    if v.shape != x.shape:
        if x.shape[:-1] == v.shape:
            v = v.unsqueeze(-1)  # one variance for the last dim
        elif not (
            x.ndim == v.ndim
            and sum(b for a, b in zip(x.shape, v.shape, strict=True) if a != b) == 1
        ):
            raise ValueError(
                f"{op}: var must have the input's shape, that shape without its last dim, or "
                f"one dim of size 1; got input shape {x.shape} and var shape {v.shape}"
            )
    reduction = legacy_reduction(None, None, reduction, op)
    v = v.clone()
    if not v.is_floating_point():  # PyTorch clamps it in place, which a float eps refuses
        raise TypeError(f"{op}: var must be a floating-point tensor; got dtype {v.dtype}")
    with no_grad():  # the clamp for stability is not differentiated, as PyTorch's
        v.clamp_(min=eps)
    loss = 0.5 * (v.log() + (x - t) ** 2 / v)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return reduce_loss(loss, reduction)


def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average: bool | None = None,
    eps: float = 1e-8,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """exp(input) - target input for log rates (``log_input``), else input - target
    log(input + eps); with ``full``, Stirling's approximation of log(target!) added where
    target > 1."""
    reduction = legacy_reduction(size_average, reduce, reduction, "poisson_nll_loss")
    x, t = as_tensor(input), as_tensor(target)
    need_number(x, "poisson_nll_loss")
    need_number(t, "poisson_nll_loss")
    loss = x.exp() - t * x if log_input else x - t * (x + eps).log()
    if full:
        small = t._array <= 1
        big = where(small, 2.0, t)  # log's argument kept away from 0 where the term is not used
        stirling = big * big.log() - big + 0.5 * (2 * math.pi * big).log()
        loss = loss + where(small, 0.0, stirling)
    return reduce_loss(loss, reduction)


def _lengths(lengths: Any, n: int, what: str) -> Any:
    """input_lengths or target_lengths (a tensor, list or tuple) as an int64 array of n."""
    got = lengths._array if isinstance(lengths, Tensor) else xp.asarray(lengths)
    if got.dtype.kind not in "iu" or got.shape not in ((n,), () if n == 1 else (n,)):
        raise ValueError(
            f"ctc_loss: {what} must be {n} integers (one per sample); got shape {got.shape} of "
            f"dtype {array.dtype_object(got.dtype)}"
        )
    return array.to_host(got).astype("int64").reshape(n)


def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Any,
    target_lengths: Any,
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """The connectionist temporal classification loss: -log of the summed probability of
    every alignment of each target to its input. log_probs (T, N, C) (or (T, C) for one
    sample) are log-probabilities (log_softmax's); targets (N, S) padded, or the N targets
    concatenated (sum(target_lengths),). 'mean' divides each loss by its target length
    first, as PyTorch's. The gradient is PyTorch's: exp(log_probs) - (the posterior of
    each class at each step), which is the true one after log_softmax."""
    op = "ctc_loss"
    reduction = legacy_reduction(None, None, reduction, op)
    lp = as_tensor(log_probs)
    need_float(lp, op)
    if lp._array.dtype.itemsize < 4:
        raise TypeError(f"{op}: not implemented for {lp.dtype}, as in PyTorch; use float32")
    if lp.ndim not in (2, 3):
        raise ValueError(f"{op}: expected log_probs (T, N, C) or (T, C); got shape {lp.shape}")
    batched = lp.ndim == 3
    if not batched:
        lp = lp.unsqueeze(1)  # (T, 1, C)
    steps, n, c = lp.shape
    if not 0 <= blank < c:
        raise ValueError(f"{op}: blank must be a class in [0, {c}); got {blank}")
    tg = targets._array if isinstance(targets, Tensor) else xp.asarray(targets)
    tg = array.to_host(tg)
    if not batched and tg.ndim == 1:
        tg = tg[None]  # one sample's target, (1, S)
    in_len = _lengths(input_lengths, n, "input_lengths")
    tg_len = _lengths(target_lengths, n, "target_lengths")
    # the lengths as lists: N numbers, checked in Python faster than by NumPy's calls
    in_list, tg_list = in_len.tolist(), tg_len.tolist()
    if n and (max(in_list) > steps or min(in_list) < 0):
        raise ValueError(
            f"{op}: input_lengths must lie in [0, {steps}] (log_probs' T); got {in_list}"
        )
    longest = max(tg_list, default=0)
    if tg.ndim == 2:
        if tg.shape[0] != n or longest > tg.shape[1]:
            raise ValueError(
                f"{op}: padded targets must be (N, S) with N = {n} and S at least each target "
                f"length; got shape {tg.shape} and target_lengths {tg_len.tolist()}"
            )
        padded = tg[:, :longest]  # (N, L)
    elif tg.ndim == 1 and tg.shape[0] == tg_len.sum():
        starts = tg_len.cumsum() - tg_len  # (N,): where each target begins
        at = starts[:, None] + xp.arange(longest)  # (N, L)
        padded = tg[xp.minimum(at, max(tg.shape[0] - 1, 0))] if tg.size else at  # (N, L)
    else:
        raise ValueError(
            f"{op}: targets must be (N, S) padded or the targets concatenated "
            f"({int(tg_len.sum())},); got shape {tg.shape}"
        )
    padded = padded.astype(xp.int64, copy=False)
    counted = xp.arange(longest) < tg_len[:, None]  # (N, L): the places each target uses
    if (counted & ((padded < 0) | (padded >= c) | (padded == blank))).any():
        raise ValueError(f"{op}: targets must be classes in [0, {c}) other than blank {blank}")
    losses = ctc.CtcLoss.apply(
        lp,
        padded=padded,
        input_lengths=in_len,
        target_lengths=tg_len,
        blank=blank,
        zero_infinity=zero_infinity,
    )  # (N,)
    if losses.grad_fn is not None:  # the node keeps PyTorch's saved values
        given = {"input_lengths": tuple(in_list), "target_lengths": tuple(tg_list)}
        record(losses, targets=tg, blank=blank, zero_infinity=zero_infinity, **given)
    if reduction == "mean":
        per = xp.asarray(xp.maximum(tg_len, 1), dtype=losses._array.dtype, like=losses._array)
        return (losses / per).mean()
    out = reduce_loss(losses, reduction)
    return out if batched or reduction != "none" else out.squeeze(0)


# -- modules -------------------------------------------------------------------------------


class KLDivLoss(Module):
    def __init__(
        self,
        size_average: Any = None,
        reduce: Any = None,
        reduction: str = "mean",
        log_target: bool = False,
    ) -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = legacy_reduction(size_average, reduce, reduction, "KLDivLoss")
        self.reduction, self.log_target = reduction, log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class GaussianNLLLoss(Module):
    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__()
        self.full, self.eps = full, eps
        self.reduction = legacy_reduction(None, None, reduction, "GaussianNLLLoss")

    def forward(self, input: Tensor, target: Tensor, var: Tensor | float) -> Tensor:
        return gaussian_nll_loss(input, target, var, self.full, self.eps, self.reduction)


class PoissonNLLLoss(Module):
    def __init__(
        self,
        log_input: bool = True,
        full: bool = False,
        size_average: Any = None,
        eps: float = 1e-8,
        reduce: Any = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__()
        self.log_input, self.full, self.eps = log_input, full, eps
        self.reduction = legacy_reduction(size_average, reduce, reduction, "PoissonNLLLoss")

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        return poisson_nll_loss(
            log_input, target, self.log_input, self.full, eps=self.eps, reduction=self.reduction
        )


class CTCLoss(Module):
    def __init__(
        self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False
    ) -> None:
        super().__init__()
        self.blank, self.zero_infinity = blank, zero_infinity
        self.reduction = legacy_reduction(None, None, reduction, "CTCLoss")

    def forward(
        self, log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any
    ) -> Tensor:
        return ctc_loss(
            log_probs,
            targets,
            input_lengths,
            target_lengths,
            self.blank,
            self.reduction,
            self.zero_infinity,
        )
