"""glu's primitive: one node (PyTorch's GluBackward0) where the composition was three (the
halves, a sigmoid, a product). Argument checks live in nn/activation.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..array import xp
from ..autograd.primitive import Function
from .elementwise import exp_quietly
from .movement import Cat

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor


class Glu(Function):
    """out = a * sigmoid(b), a and b the first and second halves of x along dim (computed
    as a / (1 + exp(-b)); the half types in float32, as PyTorch's kernel);
    grad_x = grad * s joined along dim to grad * a * s * (1 - s), s = sigmoid(b)."""

    rule = "grad_x = cat(grad * s, grad * a * s * (1 - s)) along dim, s = sigmoid(b)"

    def forward(self, x: Any, dim: int) -> Any:
        self.dim = dim
        lead, half = (slice(None),) * dim, x.shape[dim] // 2
        a, b = x[lead + (slice(None, half),)], x[lead + (slice(half, None),)]
        wide = xp.float32 if x.dtype.itemsize < 4 else None  # half types in float32
        out = xp.negative(b, dtype=wide)  # (..., half, ...): -b, then 1 + exp(-b)
        exp_quietly(out)  # where exp(-b) overflows to inf, out is a / inf = 0
        out += 1
        xp.divide(a, out, out=out)
        return out if wide is None else out.astype(x.dtype)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        a, b = self.inputs[0].chunk(2, self.dim)
        s = b.sigmoid()
        ga = grad * s
        return (Cat.apply(ga, ga * a * (1.0 - s), dim=self.dim),)
