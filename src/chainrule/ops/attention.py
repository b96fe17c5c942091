"""Scaled dot-product attention as one primitive: scores, mask, softmax, dropout and the
product with the values in one node, whose backward is the whole attention's rule.

The arguments are checked by its functional form (nn/attention.py); the layers built on it
live there too.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from .. import fastpath
from ..array import (
    device_of,
    from_host,
    generator,
    host,
    is_floating,
    like,
    make_read_only,
    xp,
)
from ..autograd.mode import state
from ..autograd.primitive import Function, arrays_of, tensor_type
from ..fastpath import exps
from ..fastpath.rowsums import row_sums
from .elementwise import Where

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor


class ScaledDotProductAttention(Function):
    """out = dropout(softmax(q @ k^T * scale + mask)) @ v
    (q (..., L, E), k (..., S, E), v (..., S, Ev), mask broadcast to (..., L, S); batch dims
    broadcast).

    With P = softmax(...) and D = P after dropout (P * keep / (1 - dropout_p)):
    grad_v = D^T @ grad; dD = grad @ v^T; dP = dD * keep / (1 - dropout_p);
    dS = P * (dP - sum(dP * P, -1)), the gradient of the scores (and of a float mask);
    grad_q = dS @ k * scale; grad_k = dS^T @ q * scale.

    A bool mask takes part where True (the rest scores -inf), a float mask is added, and
    ``is_causal`` keeps key j for query i where j <= i (top-left aligned when L != S). A row
    with every key masked has probabilities 0 (so output 0 and gradient 0), as PyTorch's.

    One primitive rather than a composite of matmul, softmax and dropout: forward keeps only
    P (and the dropout mask), not a node and saved array per step. The rule in Tensor ops
    recomputes P from the inputs when the backward pass is itself recorded (create_graph),
    so that second-order gradients see P's dependence on q, k and the mask.

    float16 and bfloat16 inputs (without dropout: the functional form computes those in
    float32) are computed in float32 as PyTorch's CPU kernel computes them: exp(S - max) is
    rounded to the inputs' dtype before its product with v, that product divided by the
    row's sum, and the result rounded; backward in float32, its gradients rounded.
    """

    rule = (
        "dS = P * (dP - sum(dP * P, -1)) with dP = grad @ v.T (dropped where dropout dropped); "
        "grad_q = dS @ k * scale, grad_k = dS.T @ q * scale, grad_v = P.T @ grad, "
        "grad_mask = dS"
    )

    def forward(
        self, q: Any, k: Any, v: Any, mask: Any, *, scale: Any, is_causal: bool, dropout_p: Any
    ) -> Any:
        self.scale, self.is_causal = scale, is_causal
        self.half = q.dtype if q.dtype.itemsize == 2 else None  # float16 or bfloat16
        if self.half is not None:  # in float32 (see the class docstring)
            q, k, v = (a.astype(xp.float32) for a in (q, k, v))
            if mask is not None and mask.dtype == self.half:
                mask = mask.astype(xp.float32)
        scores = xp.matmul(q, xp.swapaxes(k, -1, -2))  # (..., L, S)
        scores *= scale
        self.bias = self._bias(mask, scores)
        if self.bias is not None:
            scores += self.bias
        if mask is not None and is_floating(mask.dtype):
            scores += mask
        in_place = fastpath.enabled()  # the softmax along S in the scores' memory
        # Large float32 or float64 scores: exp(scores) alone where the shift by each row's
        # max would change nothing but rounding (no row dead then), as softmax's
        made = None if self.half is not None else exps.unshifted(scores, scores.ndim - 1)
        if made is not None:
            p, total = made
            self.dead = None
        else:
            p, total = self._exps(scores, in_place)
        if self.half is not None:  # PyTorch's kernel: exp(S - max) rounded, times v, / the sum
            e = p.astype(self.half).astype(xp.float32)
            self.p, self.keep = p / total, None
            return (xp.matmul(e, v) / total).astype(self.half)
        if in_place:
            p /= total
        else:
            p = p / total
        self.p, self.keep = p, None
        if dropout_p > 0:
            # PyTorch's dropout on the probabilities: bernoulli_(1 - p) / (1 - p) in the dtype
            if dropout_p >= 1:  # all dropped, nothing drawn
                self.keep = xp.zeros_like(p)
            else:
                drawn = generator().bernoulli(p.size, 1.0 - dropout_p).reshape(p.shape)
                kept = host.ones((), p.dtype) / host.asarray(1.0 - dropout_p, p.dtype)
                self.keep = from_host(drawn * kept, p)  # 0 or 1/(1-p)
            p = p * self.keep
        return xp.matmul(p, v)  # (..., L, Ev)

    def _exps(self, scores: Any, in_place: bool) -> tuple[Any, Any]:
        """exp(scores - each row's max) (in the scores' memory where ``in_place``) and
        its sums along S (kept as 1). A row whose every score is -inf (all keys masked) is
        shifted by 0 instead of its max and its sum taken as 1: P = 0 there (self.dead)."""
        # (..., L, 1); S may be 0. The ufunc's reduce and count_nonzero: the methods' Python
        # wrappers cost more than the work on small scores
        top = xp.maximum.reduce(scores, axis=-1, keepdims=True, initial=-xp.inf)
        dead = top == -xp.inf
        self.dead = dead if xp.count_nonzero(dead) else None
        if self.dead is not None:
            top[dead] = 0
        if in_place:
            scores -= top
            p = xp.exp(scores, out=scores)
        else:
            p = xp.exp(scores - top)
        rows = p.reshape(math.prod(p.shape[:-1]), p.shape[-1])  # (... * L, S), a view
        total = row_sums(rows).reshape(*p.shape[:-1], 1)  # (..., L, 1)
        if self.dead is not None:
            total[dead] = 1
        return p, total

    def _bias(self, mask: Any, scores: Any) -> Any:
        """The scores' additive -inf where a bool mask or causality leaves a key out, 0
        elsewhere (None if neither applies), of a shape that broadcasts to the scores'."""
        shape, dtype = scores.shape, scores.dtype
        bias = None
        if mask is not None and mask.dtype.kind == "b":
            bias = xp.where(mask, 0.0, -xp.inf).astype(dtype)
        if self.is_causal:
            causal = _causal_bias(*shape[-2:], dtype, device_of(scores))
            bias = causal if bias is None else bias + causal
        return bias

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        q, k, v, mask = self.inputs
        if self.half is not None:  # in float32, as forward; the engine rounds the gradients
            q, k, v, grad = q.float(), k.float(), v.float(), grad.float()
        need_q, need_k, need_v, need_mask = self.needs_input_grad
        p = self._probabilities(q, k) if state.grad_enabled else tensor_type()._make(self.p)
        d = p if self.keep is None else p * self.keep  # the probabilities after dropout
        gv = d.mT @ grad if need_v else None  # (..., S, Ev)
        dp = grad @ v.mT  # (..., L, S)
        if self.keep is not None:
            dp = dp * self.keep
        ds = p * (dp - (dp * p).sum(dim=(-1,), keepdim=True))  # the scores' gradient
        gq = (ds @ k) * self.scale if need_q else None  # (..., L, E)
        gk = (ds.mT @ q) * self.scale if need_k else None  # (..., S, E)
        return gq, gk, gv, ds if need_mask else None

    def _probabilities(self, q: Tensor, k: Tensor) -> Any:
        """P recomputed from the inputs in Tensor ops, so that a recorded backward pass
        differentiates through it (see the class docstring)."""
        mask = self.inputs[3]
        scores = (q @ k.mT) * self.scale  # (..., L, S)
        if self.bias is not None:
            scores = scores + self.bias
        if mask is not None and is_floating(mask.dtype):
            scores = scores + mask
        if self.dead is None:
            return scores.softmax(-1)
        # A dead row's scores are all -inf: softmax of zeros there, then P = 0, so neither
        # NaN nor a gradient comes out of it.
        p = Where.apply(self.dead, 0.0, scores).softmax(-1)
        return Where.apply(self.dead, 0.0, p)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        q, k, v, _ = arrays_of(self.inputs)
        if self.half is not None:  # in float32, as forward; the engine rounds the gradients
            q, k, v, grad = (a.astype(xp.float32) for a in (q, k, v, grad))
        need_q, need_k, need_v, need_mask = self.needs_input_grad
        p = self.p
        gv = None
        if need_v:
            d = p if self.keep is None else p * self.keep
            gv = xp.matmul(xp.swapaxes(d, -1, -2), grad)  # (..., S, Ev)
        ds = xp.matmul(grad, xp.swapaxes(v, -1, -2))  # dP, (..., L, S), fresh
        if self.keep is not None:
            ds *= self.keep
        # sum(dP * P) of each row, in one pass
        ds -= xp.einsum("...s,...s->...", ds, p)[..., None]
        ds *= p  # dS = P * (dP - sum(dP * P))
        gq = gk = None
        if need_q:
            gq = xp.matmul(ds, k)  # (..., L, E), scaled in place
            gq *= self.scale
        if need_k:
            gk = xp.matmul(xp.swapaxes(ds, -1, -2), q)
            gk *= self.scale
        return gq, gk, gv, ds if need_mask else None


@lru_cache(maxsize=8)
def _causal_bias(L: int, S: int, dtype: Any, device: Any) -> Any:
    """(L, S): -inf where key j comes after query i (j > i), else 0; made once per shape,
    dtype and device, and never written (a model calls attention with the same shape every
    layer)."""
    bias = xp.triu(xp.full((L, S), -xp.inf, dtype=dtype, like=like(device)), 1)
    make_read_only(bias)
    return bias
