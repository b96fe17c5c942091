"""The CTC loss as one primitive: the forward-backward (alpha-beta) sums over alignments, in
log space, every sample of the batch at once (one step of the recursion a time step). A
primitive for stability and speed: written in Tensor ops it would be a graph of thousands
of small logsumexp nodes; and its gradient is PyTorch's, which is not the plain derivative
(see CtcLoss). nn/likelihood_losses.py checks the arguments.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..array import xp
from ..autograd.primitive import Function

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor


def _logsumexp(a: Any, axis: int) -> Any:
    """log(sum(exp(a))) along axis; -inf where every term is -inf (log(0): called under an
    errstate that ignores it)."""
    top = a.max(axis=axis, keepdims=True)
    safe = xp.where(xp.isfinite(top), top, 0.0)
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

    def forward(
        self, lp: Any, *, rows: Any, input_lengths: Any, blank: int, zero_infinity: bool
    ) -> Any:
        # -inf - -inf (NaN, masked after) and log(0) are expected throughout: one errstate
        with xp.errstate(divide="ignore", invalid="ignore"):
            return self._forward(lp, rows, input_lengths, blank, zero_infinity)

    def _forward(
        self, lp: Any, rows: Any, input_lengths: Any, blank: int, zero_infinity: bool
    ) -> Any:
        steps, n, c = lp.shape
        neg_inf = -xp.inf
        lengths = xp.asarray(input_lengths)  # (N,)
        ends = xp.asarray([2 * len(r) + 1 for r in rows])  # (N,): each l''s length
        width = int(ends.max()) if n else 1
        labels = xp.full((n, width), blank)  # (N, S): l', blanks around and between labels
        for b, target in enumerate(rows):
            labels[b, 1 : 2 * len(target) : 2] = target
        valid = xp.arange(width)[None, :] < ends[:, None]  # (N, S)
        seen = xp.take_along_axis(lp, xp.broadcast_to(labels, (steps, n, width)), 2)  # (T, N, S)
        seen = xp.where(valid, seen, neg_inf)
        # the skip over a blank is allowed onto a label unlike the one two places back:
        # 0 where allowed, -inf where not, added to the term two places back
        skip = (labels != blank) & (labels != _shift(labels, 2, -1))  # (N, S)
        skip_add = xp.where(skip, 0.0, neg_inf).astype(lp.dtype)
        back_add = xp.where(_shift(skip, -2, False), 0.0, neg_inf).astype(lp.dtype)  # s to s+2
        # alpha and beta with two places of -inf before (alpha) or after (beta) each row, so
        # the terms one and two places back (or on) are slices, not shifted copies
        alpha_pad = xp.full((steps, n, width + 2), neg_inf, dtype=lp.dtype)
        beta_pad = xp.full((steps, n, width + 2), neg_inf, dtype=lp.dtype)
        alpha, beta = alpha_pad[:, :, 2:], beta_pad[:, :, :width]  # (T, N, S) views
        if steps:
            alpha[0, :, :2] = seen[0, :, :2]
        for t in range(1, steps):  # alpha past a sample's length stays at its last step
            a = alpha_pad[t - 1]
            step = xp.logaddexp(a[:, 2:], a[:, 1:-1])
            step = xp.logaddexp(step, a[:, :-2] + skip_add, out=step)
            step += seen[t]
            alpha[t] = xp.where((t < lengths)[:, None], step, a[:, 2:])
        ends_at = (xp.arange(width)[None, :] >= ends[:, None] - 2) & valid  # (N, S)
        for t in range(steps - 1, -1, -1):  # beta starts at each sample's last step
            start = xp.where(ends_at, seen[t], neg_inf)
            if t + 1 < steps:
                b = beta_pad[t + 1]
                step = xp.logaddexp(b[:, :-2], b[:, 1:-1])
                step = xp.logaddexp(step, b[:, 2:] + back_add, out=step)
                step += seen[t]
            else:
                step = start
            last = (t == lengths - 1)[:, None]
            beta[t] = xp.where(last, start, xp.where((t < lengths - 1)[:, None], step, neg_inf))
        final = alpha[-1] if steps else xp.full((n, width), neg_inf, dtype=lp.dtype)
        at_end = xp.where(ends_at, final, neg_inf)  # (N, S): the last two places of each l'
        losses = -_logsumexp(at_end, 1)  # (N,)
        empty = lengths == 0
        losses[empty] = xp.where(ends[empty] == 1, 0.0, xp.inf)
        # lcab[t, n, c] = log sum over the s with l'[s] = c of alpha beta: summed in exp space
        # under each (t, n)'s largest term, a one-hot product gathering the places by class
        both = alpha + beta  # (T, N, S)
        top = both.max(axis=2, keepdims=True) if width else xp.zeros((steps, n, 1))
        top = xp.where(xp.isfinite(top), top, 0.0)
        onehot = (labels[:, :, None] == xp.arange(c)).astype(lp.dtype)  # (N, S, C)
        summed = xp.einsum("tns,nsc->tnc", xp.exp(both - top), onehot)  # (T, N, C)
        lcab = xp.log(summed) + top
        self.alpha, self.nll = alpha, losses.copy()  # PyTorch's node's result1 and result0
        self.impossible = xp.isinf(losses) if zero_infinity else xp.zeros(n, dtype=bool)
        losses[self.impossible] = 0.0
        self.lcab_loss = lcab + losses[None, :, None]  # (T, N, C)
        steps_in = xp.arange(steps)[:, None] < lengths[None, :]  # (T, N)
        self.counted = (steps_in & ~self.impossible[None, :])[:, :, None]  # (T, N, 1)
        return losses.astype(lp.dtype, copy=False)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        (lp,) = self.inputs
        with xp.errstate(invalid="ignore", over="ignore"):
            posterior = (lp * -1.0 + self.lcab_loss).exp()
        per_class = (lp.exp() - posterior) * grad.reshape(1, -1, 1)  # (T, N, C)
        return (per_class.masked_fill(~self.counted, 0.0),)
