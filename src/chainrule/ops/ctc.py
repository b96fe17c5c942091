"""The CTC loss as one primitive: the forward-backward (alpha-beta) sums over alignments, in
log space. A primitive for stability and speed: written in Tensor ops it would be a graph of
thousands of small logsumexp nodes; and its gradient is PyTorch's, which is not the plain
derivative (see CtcLoss). nn/likelihood_losses.py checks the arguments.
"""

from __future__ import annotations

from typing import Any

from ..array import xp
from ..autograd.function import Function


def _logsumexp(a: Any, axis: int) -> Any:
    """log(sum(exp(a))) along axis; -inf where every term is -inf."""
    top = a.max(axis=axis, keepdims=True)
    safe = xp.where(xp.isfinite(top), top, 0.0)
    with xp.errstate(divide="ignore"):
        out = xp.log(xp.exp(a - safe).sum(axis=axis, keepdims=True)) + safe
    return out.squeeze(axis)


def _shift(a: Any, by: int, fill: float) -> Any:
    """a moved by ``by`` places along its last axis (right for by > 0), the rest ``fill``."""
    out = xp.full_like(a, fill)
    if by > 0:
        out[..., by:] = a[..., :-by]
    else:
        out[..., :by] = a[..., -by:]
    return out


class CtcLoss(Function):
    """loss_n = -log sum over the alignments of target n to its input_lengths[n] steps of
    prod_t p[t, n, aligned class], by the alpha-beta recursion over the target with blanks
    between and around its labels (l').

    grad_lp[t, n, c] = grad_n (exp(lp[t, n, c]) - exp(lcab[t, n, c] + loss_n - lp[t, n, c]))
    for t < input_lengths[n], else 0, lcab = log sum over the s with l'[s] = c of
    alpha[t, s] beta[t, s]: PyTorch's gradient, the true one plus exp(lp) (whose sum over c
    a following log_softmax takes away, so the logits' gradient is the true one). With
    ``zero_infinity`` an impossible alignment (loss inf) gives loss 0 and gradient 0.
    """

    rule = (
        "grad_lp = grad * (exp(lp) - exp(log(sum_s alpha beta) + loss - lp)), 0 past each "
        "input's length"
    )

    def forward(self, lp, *, rows, input_lengths, blank, zero_infinity):
        steps, n, c = lp.shape
        neg_inf = -xp.inf
        losses = xp.empty(n, dtype=lp.dtype)
        lcab = xp.full(lp.shape, neg_inf, dtype=lp.dtype)  # (T, N, C)
        for b in range(n):
            length, target = int(input_lengths[b]), rows[b]
            labels = xp.full(2 * len(target) + 1, blank)
            labels[1::2] = target  # l': (S',)
            if length == 0:
                losses[b] = 0.0 if len(target) == 0 else xp.inf
                continue
            seen = lp[:length, b, labels]  # (T_b, S')
            # the skip over a blank is allowed onto a label unlike the one two places back
            skip = (labels != blank) & (labels != _shift(labels[None], 2, -1)[0])  # (S',)
            alpha = xp.full(seen.shape, neg_inf, dtype=lp.dtype)
            alpha[0, :2] = seen[0, :2]
            with xp.errstate(invalid="ignore"):
                for t in range(1, length):
                    a = alpha[t - 1]
                    two = xp.where(skip, _shift(a, 2, neg_inf), neg_inf)
                    alpha[t] = xp.logaddexp(xp.logaddexp(a, _shift(a, 1, neg_inf)), two) + seen[t]
                beta = xp.full(seen.shape, neg_inf, dtype=lp.dtype)
                beta[-1, -2:] = seen[-1, -2:]
                back_skip = _shift(skip, -2, False)  # from s to s + 2
                for t in range(length - 2, -1, -1):
                    a = beta[t + 1]
                    two = xp.where(back_skip, _shift(a, -2, neg_inf), neg_inf)
                    beta[t] = xp.logaddexp(xp.logaddexp(a, _shift(a, -1, neg_inf)), two) + seen[t]
            losses[b] = -_logsumexp(alpha[-1, -2:], 0)
            both = alpha + beta  # (T_b, S')
            for label in xp.unique(labels):
                lcab[:length, b, label] = _logsumexp(both[:, labels == label], 1)
        self.impossible = xp.isinf(losses) if zero_infinity else xp.zeros(n, dtype=bool)
        losses[self.impossible] = 0.0
        with xp.errstate(invalid="ignore"):  # -inf + inf: NaN, PyTorch's gradient there too
            self.lcab_loss = lcab + losses[None, :, None]  # (T, N, C)
        steps_in = xp.arange(steps)[:, None] < xp.asarray(input_lengths)[None, :]  # (T, N)
        self.counted = (steps_in & ~self.impossible[None, :])[:, :, None]  # (T, N, 1)
        return losses

    def backward(self, grad, out):
        (lp,) = self.inputs
        with xp.errstate(invalid="ignore", over="ignore"):
            posterior = (lp * -1.0 + self.lcab_loss).exp()
        per_class = (lp.exp() - posterior) * grad.reshape(1, -1, 1)  # (T, N, C)
        return (per_class.masked_fill(~self.counted, 0.0),)
