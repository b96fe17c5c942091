"""The losses PyTorch computes in one kernel, as one primitive each with its reduction inside,
so the node is PyTorch's: multi_margin_loss, multilabel_margin_loss, huber_loss,
smooth_l1_loss, mse_loss and soft_margin_loss. For speed: each was a composite of three to
fifteen nodes (up to 4-9x PyTorch's forward time on small inputs); each forward is now a few
NumPy passes, and each backward its rule in Tensor ops. The binary cross entropies (with
probabilities, with logits) are primitives for stability, and each with a weight or a reduction
one node too. nn/margin_losses.py and nn/loss.py check the arguments.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..array import errstate, xp
from ..autograd.primitive import Function
from .elementwise import Where
from .movement import Gather

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor


def _reduce(loss: Any, reduction: str) -> Any:
    """The losses themselves ('none'), their mean or their sum; the mean of nothing is NaN,
    quietly, as PyTorch's."""
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.mean() if loss.size else loss.sum() * xp.nan


def _per_row(terms: Any, axes: tuple[int, ...], c: int, shape: Any, reduction: str) -> Any:
    """Each row's terms summed over ``axes`` and divided by C, reduced: for 'sum' and 'mean'
    one sum of every term, divided once (a pass fewer than the rows' losses first)."""
    if reduction == "none":  # the ufunc's reduce: no Python wrapper
        return (xp.add.reduce(terms, axis=axes) / c).reshape(shape)
    rows = terms.shape[0]
    if reduction == "mean" and not rows:
        return terms.sum() * xp.nan  # the mean of nothing, quietly, as PyTorch's
    return xp.add.reduce(terms, axis=None) / (c * rows if reduction == "mean" else c)


def _spread(grad: Tensor, reduction: str, count: int) -> Tensor:
    """The gradient of each loss term from the reduced output's: grad itself ('none', 'sum'),
    or grad / count ('mean')."""
    return grad * (1.0 / count) if reduction == "mean" and count else grad


class MultiMarginLoss(Function):
    """out_n = sum over the classes i != y_n of w_y max(0, margin - x[n, y_n] + x[n, i])^p / C,
    reduced over n; x (N, C) or (C,), p 1 or 2. With z = margin - x_y + x_i:
    grad_x[n, i] = g_n w_y (1, or 2 z for p = 2) / C where z > 0 and i != y_n, else 0, and
    grad_x[n, y_n] = minus the sum of the others (g_n: the gradient of the loss of row n)."""

    rule = "grad_x_i = grad * w_y * p * z**(p-1) / C where z > 0 (i != y), grad_x_y = -sum_i"

    @errstate(invalid="ignore")  # inf - inf: NaN, no hinge, as PyTorch's, quietly
    def forward(
        self,
        x: Any,
        *,
        target: Any,
        p: int,
        margin: float,
        weight: Any,
        reduction: str,
        shape: tuple[int, ...],
    ) -> Any:
        rows = x if x.ndim == 2 else x.reshape(1, -1)  # (N, C)
        n, c = rows.shape
        at = (xp.arange(n, like=target), target)  # each row's target class
        z = margin - rows[at][:, None]  # (N, 1)
        z = z + rows  # (N, C)
        z[at] = xp.nan  # the target's own class is not counted: no hinge, as NaN is none
        active = z > 0
        self.target, self.p, self.margin, self.reduction = target, p, margin, reduction
        self.active, self.n = active, n
        w = None if weight is None else weight[target][:, None].astype(x.dtype, copy=False)
        self.coef = 1.0 / c if w is None else w / c  # (N, 1)
        terms = xp.fmax(z, 0.0, out=z)  # (N, C): the hinge, max(0, z), 0 where z is NaN
        if p == 2:
            terms *= terms
        if w is not None:
            terms *= w
        return _per_row(terms, (1,), c, shape, reduction)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        (x,) = self.inputs
        rows = x if x.ndim == 2 else x.reshape(1, -1)  # (N, C)
        g = _spread(grad, self.reduction, self.n).reshape(-1, 1)  # (N, 1) or (1, 1)
        slope = self.active * self.coef  # (N, C): 0 off the hinge and at the target
        slope = slope.astype(x._array.dtype, copy=False)  # 1 / C is a float64 number
        if self.p == 2:  # 2 z, with z in Tensor ops so that it differentiates again
            z = rows + (self.margin - Gather.apply(rows, self.target[:, None], dim=1))
            z = Where.apply(self.active, z, 0.0)  # off the hinge z may be inf or NaN: 0 there
            others = z * (slope * 2.0) * g
        else:
            others = g * slope
        at_target = xp.zeros_like(self.active)
        at_target[xp.arange(self.n, like=self.target), self.target] = True
        gx = others - Where.apply(at_target, others.sum(1, keepdim=True), 0.0)
        return (gx if x.ndim == 2 else gx.reshape(x.shape),)


class MultilabelMarginLoss(Function):
    """out_n = sum over the target classes j of row n and the other classes i of
    max(0, 1 - (x[n, j] - x[n, i])) / C, reduced over n; x (N, C) or (C,). With z = 1 - x_j
    + x_i: grad_x_i = g_n (the count of j with z > 0) / C, grad_x_j = -g_n (the count of i
    with z > 0) / C."""

    rule = "grad_x_i = grad * #{j: z_ji > 0} / C, grad_x_j = -grad * #{i: z_ji > 0} / C"

    @errstate(invalid="ignore")  # inf - inf: NaN, no hinge, as PyTorch's, quietly
    def forward(
        self,
        x: Any,
        *,
        classes: Any,
        listed: Any,
        is_target: Any,
        reduction: str,
        shape: tuple[int, ...],
    ) -> Any:
        rows = x if x.ndim == 2 else x.reshape(1, -1)  # (N, C)
        n, c = rows.shape
        picked = rows[xp.arange(n, like=classes)[:, None], classes]  # (N, slots): x_j
        z = 1.0 - picked[:, :, None]  # (N, slots, 1)
        z = z + rows[:, None, :]  # (N, slots, C)
        hinge = (z > 0) & listed[:, :, None] & ~is_target[:, None, :]  # (N, slots, C)
        terms = xp.where(hinge, z, 0.0)  # (N, slots, C); NaN is no hinge
        self.hinge, self.classes, self.n, self.c, self.reduction = hinge, classes, n, c, reduction
        return _per_row(terms, (1, 2), c, shape, reduction)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        (x,) = self.inputs
        g = _spread(grad, self.reduction, self.n).reshape(-1, 1)  # (N, 1)
        dt = x._array.dtype
        # (N, C): +1 for each counted (j, i) at i, -1 at j
        counts = self.hinge.sum(1).astype(dt)  # (N, C): the j hinging on each i
        lost = self.hinge.sum(2).astype(dt)  # (N, slots): the i each j hinges on
        xp.subtract.at(counts, (xp.arange(self.n, like=lost)[:, None], self.classes), lost)
        counts /= self.c
        gx = g * counts  # (N, C)
        return (gx if x.ndim == 2 else gx.reshape(x.shape),)


class _Piecewise(Function):
    """The quadratic-then-linear losses of d = x - t: the shared forward of Huber and smooth
    L1 (a kink at |d| = k), the subclasses giving the two pieces and the slope."""

    @errstate(invalid="ignore")  # inf - inf: NaN, no hinge, as PyTorch's, quietly
    def forward(self, x: Any, t: Any, *, k: float, reduction: str) -> Any:
        self.k, self.reduction = k, reduction
        a = xp.abs(xp.subtract(x, t))  # |d|, an array of our own (or a number, 0-d)
        self.inside = a < k
        # q = min(|d|, k) gives both pieces in one formula: no selection, which costs
        # several passes and a temporary of each piece
        return _reduce(self.pieces(a, xp.minimum(a, k), k), reduction)

    def pieces(self, a: Any, q: Any, k: float) -> Any:
        raise NotImplementedError  # each subclass's, from |d| and q = min(|d|, k)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x, t = self.inputs
        g = _spread(grad, self.reduction, self.inside.size) * self.slope(x - t)
        need_x, need_t = self.needs_input_grad
        return (g if need_x else None, -g if need_t else None)

    def slope(self, d: Tensor) -> Tensor:
        raise NotImplementedError  # each subclass's


class HuberLoss(_Piecewise):
    """out = 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta), d = x - t, reduced:
    q (|d| - 0.5 q) with q = min(|d|, delta), each piece exactly as PyTorch rounds it;
    grad_x = grad clamp(d, -delta, delta) (/ numel for 'mean'), grad_t = -grad_x."""

    rule = "grad_x = grad * clamp(x - t, -delta, delta), grad_t = -grad_x"

    def pieces(self, a: Any, q: Any, k: float) -> Any:
        a -= 0.5 * q
        a *= q
        return a

    def slope(self, d: Tensor) -> Tensor:  # clamp(d, -delta, delta), as PyTorch's
        return Where.apply(self.inside, d, d.sign() * self.k)


class SmoothL1Loss(_Piecewise):
    """out = 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta, d = x - t, reduced (beta
    > 0): (|d| - 0.5 q) q / beta with q = min(|d|, beta); grad_x = grad clamp(d / beta, -1,
    1) (/ numel for 'mean'), grad_t = -grad_x."""

    rule = "grad_x = grad * clamp((x - t) / beta, -1, 1), grad_t = -grad_x"

    def pieces(self, a: Any, q: Any, k: float) -> Any:
        a -= 0.5 * q
        q /= k  # 1 past the kink
        a *= q
        return a

    def slope(self, d: Tensor) -> Tensor:  # clamp(d / beta, -1, 1), as PyTorch's
        return Where.apply(self.inside, d / self.k, d.sign())


class MseLoss(Function):
    """out = reduce((x - t)^2);  grad_x = 2 grad (x - t) (/ numel for 'mean'),
    grad_t = -grad_x."""

    rule = "grad_x = 2 * grad * (x - t) (/ numel for 'mean'), grad_t = -grad_x"

    def forward(self, x: Any, t: Any, *, reduction: str) -> Any:
        self.reduction = reduction
        d = xp.subtract(x, t)  # an array of our own (or a number, 0-d)
        self.count = d.size
        return _reduce(xp.multiply(d, d, out=d) if d.ndim else d * d, reduction)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x, t = self.inputs
        g = (x - t) * _spread(grad * 2.0, self.reduction, self.count)
        need_x, need_t = self.needs_input_grad
        return (g if need_x else None, -g if need_t else None)


class SoftMarginLoss(Function):
    """out = reduce(log(1 + exp(-t x)));  with s = grad e / (1 + e), e = exp(-t x) (s / numel
    for 'mean'): grad_x = -t s. The target takes no gradient, as in PyTorch."""

    rule = "grad_x = -t * grad * sigmoid(-t x) (/ numel for 'mean')"

    def forward(self, x: Any, t: Any, *, reduction: str) -> Any:
        self.reduction = reduction
        z = xp.multiply(x, t)  # an array of our own (or a number, 0-d)
        self.count = z.size
        return _reduce(xp.log1p(xp.exp(-z)), reduction)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x, t = self.inputs
        e = (-t * x).exp()
        s = e / (e + 1) * _spread(grad, self.reduction, self.count)
        return -t * s, None


class _Reduces(Function):
    """A loss of elementwise terms with PyTorch's weight and reduction inside its one node:
    the base op's terms, times the weight, reduced; the base op's rule applied to the
    gradient of each term (spread by the reduction, times the weight). The weight takes no
    gradient, as in PyTorch."""

    def forward(self, *arrays: Any, weight: Any = None, reduction: str = "mean") -> Any:
        loss = super().forward(*arrays)
        self.weight, self.reduction, self.count = weight, reduction, loss.size
        if weight is not None:  # in the loss's dtype, as PyTorch's kernel multiplies in place
            loss *= weight.astype(loss.dtype, copy=False)
        return _reduce(loss, reduction)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        g = _spread(grad, self.reduction, self.count)
        if self.weight is not None:
            g = g * self.weight.astype(g._array.dtype, copy=False)
        return super().backward(g, out)


class BinaryCrossEntropy(Function):
    """out = -(t log p + (1 - t) log(1 - p)), each log clamped at -100 (as PyTorch), so p of
    exactly 0 or 1 gives a finite loss;  grad_p = g (p - t) / max(p (1 - p), 1e-12),
    grad_t = g (log(1 - p) - log p) = -g logit(p), unclamped (inf at p = 0, -inf at 1), as
    PyTorch's.

    A primitive for stability: composed from log and clamp, the gradient at p = 0 or 1
    would be 0/0. NumPy warns of the log of 0 there; binary_cross_entropy, which knows
    the input's least and greatest values, silences it where one is 0 or 1.
    """

    rule = (
        "grad_p = grad * (p - t) / max(p * (1 - p), 1e-12), grad_t = grad * (log(1 - p) - log(p))"
    )

    def forward(self, p: Any, t: Any) -> Any:
        log_p = xp.maximum(xp.log(p), -100.0)
        log_q = xp.maximum(xp.log1p(-p), -100.0)  # log(1 - p)
        return (t - 1.0) * log_q - t * log_p  # as PyTorch's kernel orders it

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        p, t = self.inputs
        need_p, need_t = self.needs_input_grad
        gp = grad * (p - t) / (p * (1.0 - p)).clamp(min=1e-12) if need_p else None
        if not need_t:
            return gp, None
        # from p in Tensor ops, so that a second derivative sees p; log(0) at p of 0 or 1 is
        # -inf, not clamped (PyTorch's -logit(p)), and quiet, as PyTorch's
        with errstate(divide="ignore"):
            log_odds = (-p).log1p() - p.log()
        return gp, grad * log_odds


def _softplus_neg(x: Any) -> Any:
    """log(1 + exp(-x)) for a Tensor x, never overflowing: max(-x, 0) + log(1 + exp(-|x|))."""
    return (-x).relu() + ((-x.abs()).exp() + 1.0).log()


class BinaryCrossEntropyWithLogits(Function):
    """out = (1 - t) x + l softplus(-x) with l = 1 + (w - 1) t, for logits x, targets t and
    positive-class weight w (None: w = 1, l = 1); softplus(-x) = log(1 + exp(-x)) is computed
    as max(-x, 0) + log1p(exp(-|x|)), so logits of +-1000 give exact, finite losses;
    grad_x = g ((1 - t) - l sigmoid(-x))  (= g (sigmoid(x) - t) when w = 1),
    grad_t = g (-x + (w - 1) softplus(-x)); w takes no gradient, as in PyTorch.

    A primitive for stability and for the exact gradient at x = 0, where a composite of
    relu and abs would take their kinks' conventions.
    """

    rule = (
        "grad_x = grad * ((1 - t) - l * sigmoid(-x)), grad_t = grad * (-x + (w - 1) * softplus(-x))"
    )

    def forward(self, x: Any, t: Any, pos_weight: Any = None) -> Any:
        softplus = xp.maximum(-x, 0) + xp.log1p(xp.exp(-xp.abs(x)))
        if pos_weight is None:
            out = (1 - t) * x + softplus
        else:
            out = (1 - t) * x + (1 + (pos_weight - 1) * t) * softplus
        # in the target's dtype, as PyTorch's, whose loss is (1 - t) written into in place
        return out if out.dtype == t.dtype else out.astype(t.dtype)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x, t, w = self.inputs
        need_x, need_t, _ = self.needs_input_grad
        gx = gt = None
        if w is None:
            if need_x:
                gx = grad * (x.sigmoid() - t)
            if need_t:
                gt = -grad * x
            return gx, gt, None
        if need_x:
            gx = grad * ((1.0 - t) - ((w - 1.0) * t + 1.0) * (-x).sigmoid())
        if need_t:
            gt = grad * ((w - 1.0) * _softplus_neg(x) - x)
        return gx, gt, None


class WeightedBinaryCrossEntropy(_Reduces, BinaryCrossEntropy):
    """out = reduce(w (-(t log p + (1 - t) log(1 - p)))), logs clamped at -100: binary cross
    entropy with its weight and reduction, PyTorch's one node; BinaryCrossEntropy's rule on
    grad w (/ numel for 'mean')."""

    rule = "BinaryCrossEntropy's rule on grad * w (/ numel for 'mean')"


class WeightedBinaryCrossEntropyWithLogits(_Reduces, BinaryCrossEntropyWithLogits):
    """out = reduce(w ((1 - t) x + l softplus(-x))): binary cross entropy of logits with its
    weight and reduction, PyTorch's one node; BinaryCrossEntropyWithLogits's rule on grad w
    (/ numel for 'mean')."""

    rule = "BinaryCrossEntropyWithLogits's rule on grad * w (/ numel for 'mean')"
