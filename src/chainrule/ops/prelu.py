"""prelu's primitive: one node where the composition was five (a reshape of the slopes, a
kept part, a where, a product and a sum); and its gradient's, PyTorch's _prelu_kernel_backward
of two outputs. Argument checks live in nn/activation.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..array import host, xp
from ..autograd.outputs import packed_outputs
from ..autograd.primitive import Function
from ..fastpath import masked, select
from .elementwise import Where, leaky_below
from .movement import GetItem

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
        # _prelu_kernel_backward, one op of two outputs (PyTorch's PreluKernelBackwardBackward0
        # under create_graph), grad_w's summed over all dims but the channels' after it
        x, weight = self.inputs
        gx, part = _outputs(PreluKernelBackward.apply(grad, x, weight))
        need_x, need_w = self.needs_input_grad
        return gx if need_x else None, _per_slope(part, x.ndim, weight) if need_w else None

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


def _per_slope(part: Tensor, ndim: int, weight: Tensor) -> Tensor:
    """grad_w: ``part``, a gradient per element, summed over every dim but the channels' (of
    a 1-d input, to one element, as PyTorch's sum_to_size: SumBackward1 with create_graph)."""
    if ndim == 1 and weight.shape == (1,):
        return part.sum(0, keepdim=True)
    if weight.numel() == 1:
        return part.sum().reshape(weight.shape)
    return part.sum([d for d in range(ndim) if d != 1]).reshape(weight.shape)


class PreluKernelBackward(Function):
    """out = (grad_x, grad_w per element), packed: g where x > 0, else w g; and g x where
    x <= 0, else 0. PreluKernel's gradient as an op (PyTorch's _prelu_kernel_backward), so that
    taken with create_graph it is one node of two outputs, PreluKernelBackwardBackward0, on g,
    x and w. With gx, gw the two outputs' gradients: grad_g = gx where x > 0, else gx w + gw x;
    grad_x = gw g where x <= 0, else 0; grad_w = the sum of gx g where x <= 0 per channel."""

    rule = (
        "grad_g = gx where x > 0, else gx * w + gw * x; grad_x = gw * g where x <= 0, "
        "else 0; grad_w = sum(gx * g where x <= 0) per channel"
    )

    def forward(self, g: Any, x: Any, weight: Any) -> Any:
        positive = x > 0
        w = weight.reshape(_slopes_shape(x.ndim, weight.size))
        return xp.stack([select(positive, g, g * w), masked(g * x, ~positive)])

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        g, x, weight = self.inputs
        need_g, need_x, need_w = self.needs_input_grad
        positive = x._array > 0
        gx, gw = grad[0], grad[1]
        w = weight.reshape(_slopes_shape(x.ndim, weight.numel()))
        grad_g = Where.apply(positive, gx, gx * w + gw * x) if need_g else None
        grad_x = Where.apply(positive, 0.0, gw * g) if need_x else None
        grad_w = _per_slope(Where.apply(positive, 0.0, gx * g), x.ndim, weight) if need_w else None
        return grad_g, grad_x, grad_w


def _outputs(packed: Tensor) -> tuple[Tensor, Tensor]:
    """packed[0] and packed[1], the outputs of one node where packed has one, as PyTorch's."""
    if packed.grad_fn is None:
        return packed[0], packed[1]
    parts = []
    for k in (0, 1):  # the rule of each output's place in packed: indexing's
        part = GetItem()
        part.inputs, part.index = (packed,), (k,)
        parts.append(part)
    first, second = packed_outputs(packed, parts, "PreluKernelBackward", _NAME, ())
    return first, second


_NAME = "PreluKernelBackwardBackward0"
