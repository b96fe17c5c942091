"""prelu's primitive: one node where the composition was five (a reshape of the slopes, a
kept part, a where, a product and a sum). Argument checks live in nn/activation.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..array import host
from ..autograd.primitive import Function
from ..fastpath import masked, select
from .elementwise import Where, leaky_below

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor


def _slopes_shape(x_ndim: int, weight_size: int) -> tuple[int, ...]:
    """The weight's shape broadcast against the input: () for one slope, (1, C, 1, ...) for
    one per channel (dim 1)."""
    return () if weight_size == 1 else (1, -1) + (1,) * (x_ndim - 2)


class PreluKernel(Function):
    """out = x where x > 0, else w * x, w one slope or one per channel (dim 1);
    grad_x = grad where x > 0, else w * grad; grad_w = the sum of grad * x where x <= 0 over
    every dim but the channels'."""

    rule = "grad_x = grad * (x > 0 ? 1 : w), grad_w = sum(grad * x where x <= 0) per channel"

    def forward(self, x: Any, weight: Any) -> Any:
        if weight.size == 1 and type(weight) is host.ndarray:  # a host value: no device read
            return leaky_below(x, None, weight.item())
        return select(x > 0, x, x * weight.reshape(_slopes_shape(x.ndim, weight.size)))

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x, weight = self.inputs
        need_x, need_w = self.needs_input_grad
        positive = x._array > 0  # selected, not multiplied: an inf slope or x stays out
        gx = gw = None
        if need_x:
            w = weight.reshape(_slopes_shape(x.ndim, weight.numel()))
            gx = Where.apply(positive, grad, grad * w)
        if need_w:
            part = Where.apply(positive, 0.0, grad * x)
            if weight.numel() == 1:
                gw = part.sum().reshape(weight.shape)
            else:
                gw = part.sum([d for d in range(x.ndim) if d != 1]).reshape(weight.shape)
        return gx, gw

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, Any]:
        x, weight = self.inputs[0]._array, self.inputs[1]._array
        need_x, need_w = self.needs_input_grad
        positive = x > 0
        gx = gw = None
        if need_x:
            gx = select(positive, grad, grad * weight.reshape(_slopes_shape(x.ndim, weight.size)))
        if need_w:
            part = masked(grad * x, ~positive)
            dims = None if weight.size == 1 else tuple(d for d in range(x.ndim) if d != 1)
            gw = part.sum(dims).reshape(weight.shape)
        return gx, gw
