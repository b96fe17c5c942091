"""cdist's direct kernel as one op: its node is PyTorch's one node (CdistBackward0, its
``_saved_p``, ``_saved_x1``, ``_saved_x2`` and ``_saved_result``), where the differences and
their norm made two; and cdist by products as one op (EuclideanDist), where the composition
made eight."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..array import xp
from ..autograd.primitive import Function

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor


class Cdist(Function):
    """out[..., i, j] = ||x1[..., i, :] - x2[..., j, :]||_p, the batch dims broadcast

    The gradient is PyTorch's cdist's: with d = x1_i - x2_j and g the gradient of their
    distance, grad_d = g * sign(d) * |d|^(p-1) / out^(p-1) (p = 2: g * d / out; p = inf:
    g * sign(d) where |d| is the largest, every tied one whole; p = 0: none), 0 where the
    distance is 0 (and, for p < 1, where d is); grad_x1 sums it over j, grad_x2 is minus
    its sum over i.
    """

    rule = "grad_x1 = sum_j grad_d, grad_x2 = -sum_i grad_d, grad_d = grad * d(||d||_p)/dd"
    saves_out = True

    def forward(self, x1: Any, x2: Any, p: float) -> Any:
        self.p = p
        d = xp.abs(x1[..., :, None, :] - x2[..., None, :, :])  # (..., P, R, M)
        if p == 2:
            return xp.sqrt(xp.sum(d * d, axis=-1))
        if p == 1:
            return xp.sum(d, axis=-1)
        if p == 0:
            return xp.sum(d != 0, axis=-1).astype(d.dtype)
        if math.isinf(p):
            return xp.max(d, axis=-1, initial=0.0)
        return xp.sum(d**p, axis=-1) ** (1 / p)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x1, x2 = self.inputs
        p = self.p
        d = x1.unsqueeze(-2) - x2.unsqueeze(-3)  # (..., P, R, M)
        g, dist = grad.unsqueeze(-1), out.unsqueeze(-1)
        zero = dist == 0  # no gradient there; 1 stands for 0 in the divisions (no 0 / 0)
        if p == 0:
            gd = d * 0.0
        elif p == 1:
            gd = g * d.sign()
        elif p == 2:
            gd = g * d / dist.masked_fill(zero, 1.0)
        elif math.isinf(p):
            gd = g * d.sign() * (d.abs() == dist)
        else:
            size = d.abs()
            if p < 1:  # |d|^(p-1) is infinite at d = 0: no gradient there either
                zero = zero | (d == 0)
                size = size.masked_fill(zero, 1.0)
            gd = g * d.sign() * size ** (p - 1) / dist.masked_fill(dist == 0, 1.0) ** (p - 1)
        gd = gd.masked_fill(zero, 0.0)
        need1, need2 = self.needs_input_grad
        return gd.sum(-2) if need1 else None, -gd.sum(-3) if need2 else None


class EuclideanDist(Function):
    """out = sqrt(max(|x1_i|^2 + |x2_j|^2 - 2 x1_i . x2_j, 1e-30)), by one matrix product of
    x1's rows padded with their squared norm and a 1 and x2's with a 1 and theirs (cdist by
    products, the batch dims broadcast), low precision rounded as its product is; one node,
    PyTorch's last (ViewBackward0), for its _euclidean_dist and the view after it.

    The gradient is PyTorch's _euclidean_dist_backward: with ratio = grad / out (0 where out
    is 0), grad_x1 = x1 * sum_j ratio - ratio @ x2, grad_x2 = x2 * sum_i ratio - ratio^T @ x1.
    """

    rule = "grad_x1 = x1 * ratio.sum(-1) - ratio @ x2, grad_x2 = x2 * ratio.sum(-2) - ratio^T @ x1"
    saves_out = True

    def forward(self, x1: Any, x2: Any) -> Any:
        x1_sq = xp.sum(x1 * x1, axis=-1, keepdims=True)  # (..., P, 1)
        x2_sq = xp.sum(x2 * x2, axis=-1, keepdims=True)  # (..., R, 1)
        left = xp.concatenate([x1 * -2.0, x1_sq, xp.ones_like(x1_sq)], axis=-1)  # (..., P, M + 2)
        right = xp.concatenate([x2, xp.ones_like(x2_sq), x2_sq], axis=-1)  # (..., R, M + 2)
        squared = xp.matmul(left, xp.swapaxes(right, -1, -2))  # (..., P, R)
        out = xp.sqrt(xp.maximum(squared.astype(x1.dtype, copy=False), 1e-30))
        self.out_shape = out.shape
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x1, x2 = self.inputs
        ratio = (grad / out).masked_fill(out == 0, 0.0)  # (..., P, R)
        need_1, need_2 = self.needs_input_grad
        g1 = x1 * ratio.sum(-1, keepdim=True) - ratio @ x2 if need_1 else None
        g2 = x2 * ratio.sum(-2).unsqueeze(-1) - ratio.mT @ x1 if need_2 else None
        return g1, g2
