"""The CTC loss as one primitive: the forward (alpha) sums over alignments in log space, every
sample of the batch and every place of its target at once (one step of the recursion a time
step); the backward (beta) sums only when a gradient is asked for, as PyTorch's kernels split
them. A primitive for stability and speed: written in Tensor ops it would be a graph of
thousands of small logsumexp nodes; and its gradient is PyTorch's, which is not the plain
derivative (see CtcLoss). nn/likelihood_losses.py checks the arguments.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import array
from ..array import errstate, xp
from ..autograd.primitive import Function

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor


def extended(padded: Any, blank: int, dtype: Any) -> tuple[Any, Any]:
    """l' of each target (N, 2 L + 1): blanks around and between its labels; and the term
    each of the three places an alpha step reads adds (3, N, 2 L + 1): for l'[s - 2], 0
    where l'[s] may be reached from it (a label unlike the one two places back), else -inf;
    0 for l'[s - 1] and l'[s], in ``dtype``."""
    n, width = padded.shape[0], 2 * padded.shape[1] + 1
    labels = xp.full((n, width), blank, dtype=xp.int64)
    labels[:, 1::2] = padded  # (N, L) into the odd places
    skip = xp.zeros((3, n, width), dtype=dtype)
    skip[0] = -xp.inf
    skip[0, :, 3::2][padded[:, 1:] != padded[:, :-1]] = 0.0  # (N, L - 1): label s against s - 2
    return labels, skip


class CtcLoss(Function):
    """loss_n = -log sum over the alignments of target n to its input_lengths[n] steps of
    prod_t p[t, n, aligned class], by the alpha recursion over the target with blanks
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
        self,
        lp: Any,
        *,
        padded: Any,
        input_lengths: Any,
        target_lengths: Any,
        blank: int,
        zero_infinity: bool,
    ) -> Any:
        return self._forward(lp, padded, input_lengths, target_lengths, blank, zero_infinity)

    @errstate(invalid="ignore")  # inf - inf where log_probs hold +inf: NaN, as PyTorch's
    def _forward(
        self,
        lp: Any,
        padded: Any,
        lengths: Any,
        target_lengths: Any,
        blank: int,
        zero_infinity: bool,
    ) -> Any:
        steps, n, _ = lp.shape
        neg_inf = -xp.inf
        labels, skip = extended(padded, blank, lp.dtype)
        width = labels.shape[1]
        # the steps some sample reads: past the longest input length alpha stays -inf, so
        # the recursion stops there however long log_probs' T is
        used = max(lengths.tolist(), default=0)
        # (used, N, S): lp of each place's class; places past an l''s end take any class,
        # since alpha there never reaches a place inside it (beta's recursion masks them)
        seen = lp[:used, xp.arange(n)[:, None], labels]
        # alpha with two places of -inf before each row, so the three places a step reads
        # (s - 2, s - 1, s) are windows over the row before: (T, 3, N, S), no copies
        # (a row even where every length is 0, for the loss's read of step -1 below)
        alpha_pad = xp.full((max(used, 1), n, width + 2), neg_inf, dtype=lp.dtype)
        alpha = alpha_pad[:used, :, 2:]  # (used, N, S) view
        at_t, at_n, at_s = alpha_pad.strides
        before = array.strided_view(alpha_pad, (used, 3, n, width), (at_t, at_s, at_n, at_s))
        # each step's three terms less the row before: the skip's -inf and the step's lp
        # (used, 3, N, S), so a step is one sum and one log-add-exp of three
        terms = seen[:, None] + skip
        if used:
            alpha[0, :, :2] = seen[0, :, :2]
        for t in range(1, used):  # past a sample's length alpha runs on (see kept_alpha)
            step = terms[t]
            step += before[t - 1]
            xp.logaddexp.reduce(step, axis=0, out=alpha[t])
        ends = 2 * target_lengths + 1  # (N,): each l''s length
        # the last two places of each l' at its last step, read from the padded rows (where
        # place -1 of a one-place l' is padding, -inf); a length 0 is settled below
        last, rows = lengths - 1, xp.arange(n)
        losses = -xp.logaddexp(alpha_pad[last, rows, ends + 1], alpha_pad[last, rows, ends])
        if not lengths.all():
            empty = lengths == 0
            losses[empty] = xp.where(ends[empty] == 1, 0.0, xp.inf)
        self.alpha, self.nll = alpha, losses  # PyTorch's node's result0 (result1: kept_alpha)
        self.steps = steps
        self.seen, self.labels, self.skip, self.lengths = seen, labels, skip[0], lengths
        self.ends, self.impossible = ends, None
        if zero_infinity:
            self.impossible = xp.isinf(losses)
            losses = xp.where(self.impossible, 0.0, losses)
        self.losses = losses
        return losses.astype(lp.dtype, copy=False)

    def steps_in(self, steps: int) -> Any:
        """(steps, N): which of the first steps lie inside each sample's input length."""
        return xp.arange(steps)[:, None] < self.lengths

    def used_alpha(self) -> Any:
        """alpha (used, N, S) over the steps up to the longest input length: -inf past each
        sample's length, where the forward's recursion ran on (cleared here, when read)."""
        self.alpha[~self.steps_in(self.alpha.shape[0])] = -xp.inf
        return self.alpha

    def kept_alpha(self) -> Any:
        """alpha as PyTorch's node keeps it (T, N, S): -inf past each sample's length."""
        kept = xp.full((self.steps, *self.alpha.shape[1:]), -xp.inf, dtype=self.alpha.dtype)
        kept[: self.alpha.shape[0]] = self.used_alpha()
        return kept

    def _lcab_loss(self, classes: int) -> Any:
        """lcab + loss (T, N, C): beta by the recursion backwards from each sample's last step,
        then alpha beta summed by class in exp space under each (t, n)'s largest term; -inf
        past the longest input length, where alpha is."""
        seen, lengths = self.seen, self.lengths
        steps, n, width = seen.shape  # steps: the longest input length
        alpha = self.used_alpha()
        neg_inf = -xp.inf
        places = xp.arange(width)
        ends = self.ends[:, None]  # (N, 1)
        seen = xp.where(places < ends, seen, neg_inf)  # (T, N, S): -inf past each l''s end
        ends_at = (places >= ends - 2) & (places < ends)  # (N, S): the last two places of l'
        # the skip from s + 2 back to s: allowed where l'[s + 2] may be reached from l'[s]
        skip = xp.zeros((3, n, width), dtype=seen.dtype)  # (3, N, S): for s, s + 1, s + 2
        skip[2] = neg_inf
        skip[2, :, :-2] = self.skip[:, 2:]
        # beta with two places of -inf after each row, so the three places a step reads are
        # windows over the row after, and its terms less that row added beforehand, as alpha's
        beta_pad = xp.full((steps, n, width + 2), neg_inf, dtype=seen.dtype)
        beta = beta_pad[:, :, :width]  # (T, N, S) view
        at_t, at_n, at_s = beta_pad.strides
        after = array.strided_view(beta_pad, (steps, 3, n, width), (at_t, at_s, at_n, at_s))
        terms = seen[:, None] + skip  # (T, 3, N, S)
        last = lengths - 1
        firsts = set(last.tolist())  # the steps where some sample's beta starts
        for t in range(steps - 1, -1, -1):  # past its length a sample's beta stays -inf
            if t + 1 < steps:
                step = terms[t]
                step += after[t + 1]
                xp.logaddexp.reduce(step, axis=0, out=beta[t])
            if t in firsts:
                starts = last == t  # (N,)
                beta[t, starts] = xp.where(ends_at[starts], seen[t, starts], neg_inf)
        both = alpha + beta  # (T, N, S)
        top = both.max(axis=2, keepdims=True) if width else xp.zeros((steps, n, 1))
        top = xp.where(xp.isfinite(top), top, 0.0)
        onehot = (self.labels[:, :, None] == xp.arange(classes)).astype(seen.dtype)  # (N, S, C)
        summed = xp.einsum("tns,nsc->tnc", xp.exp(both - top), onehot)  # (used, N, C)
        lcab_loss = xp.full((self.steps, n, classes), neg_inf, dtype=seen.dtype)
        lcab_loss[:steps] = xp.log(summed) + top + self.losses[None, :, None]
        return lcab_loss

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        (lp,) = self.inputs
        with xp.errstate(divide="ignore", invalid="ignore", over="ignore"):
            lcab_loss = self._lcab_loss(lp.shape[2])
            posterior = (lp * -1.0 + lcab_loss).exp()
        per_class = (lp.exp() - posterior) * grad.reshape(1, -1, 1)  # (T, N, C)
        counted = self.steps_in(self.steps)  # (T, N)
        if self.impossible is not None:
            counted = counted & ~self.impossible
        return (per_class.masked_fill(~counted[:, :, None], 0.0),)
