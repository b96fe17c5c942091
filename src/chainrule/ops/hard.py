"""The hard activations as primitives: hardswish, hardsigmoid, softshrink, hardshrink. For
speed: each is one or two NumPy passes where its composite of selections was several nodes
(~20x PyTorch's time at 10^6 elements, ~10x on small tensors); their gradients, recorded
with Slopes (hardswish's as an op of its own, HardswishBackward, as PyTorch's
hardswish_backward), differentiate again as PyTorch's. nn/more_activations.py checks arguments.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..array import xp
from ..autograd.primitive import Function
from ..fastpath import masked, on_value, select
from .elementwise import Slopes, Where, derivative, twice

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor

SIXTH32 = float(xp.float32(1.0 / 6.0))  # PyTorch's hardsigmoid gradient: 1/6 in float32


def _hardswish_of(v: Any) -> Any:
    """Hardswish's passes on a 0-d input's value v, a NumPy scalar (fastpath); a NaN
    compares false, so it stays NaN, as clip keeps it."""
    return min(max(v + 3.0, 0.0), 6.0) * v / 6.0


class Hardswish(Function):
    """out = x min(max(x + 3, 0), 6) / 6; grad_x = grad (x / 3 + 1/2) strictly inside
    (-3, 3) and at NaN (NaN), grad from 3 on, 0 up to -3 (as PyTorch's vector loop)."""

    rule = "grad_x = grad * (x / 3 + 0.5) on (-3, 3) and at NaN, grad on [3, inf), else 0"

    def forward(self, x: Any) -> Any:
        value = None if x.ndim else on_value(x, _hardswish_of)  # 0-d: the value's (fastpath)
        if value is not None:
            return value
        out = xp.add(x, 3.0, out=xp.empty_like(x))  # an array for a 0-d x too
        out.clip(0.0, 6.0, out=out)  # the method: np.clip's Python wrapper calls it
        out *= x
        out /= 6.0
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        # hardswish_backward, one op (PyTorch's HardswishBackwardBackward0 under create_graph)
        return (HardswishBackward.apply(grad, self.inputs[0]),)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any]:
        return (_hardswish_grad(grad, self.inputs[0]._array),)


def _hardswish_grad(g: Any, a: Any) -> Any:
    """g times hardswish's slope at a: a / 3 + 1/2 strictly inside (-3, 3) and at NaN, 1 from
    3 on, else 0."""
    high = a >= 3.0
    middle = ~((a <= -3.0) | high)  # neither end, so NaN too
    return select(middle, g * (a / 3.0 + 0.5), masked(g, high))


class HardswishBackward(Function):
    """out = g (x / 3 + 1/2) strictly inside (-3, 3) and at NaN, g from 3 on, else 0:
    Hardswish's gradient as an op (PyTorch's hardswish_backward), so that taken with
    create_graph it is one node, HardswishBackwardBackward0, on g and x. grad_g = this op of
    grad; grad_x = grad g / 3 strictly inside (-3, 3), else 0, as PyTorch's."""

    rule = "grad_g = hardswish_backward(grad, x); grad_x = grad * g / 3 on (-3, 3), else 0"

    def forward(self, g: Any, x: Any) -> Any:
        return _hardswish_grad(g, x)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        need_g, need_x = self.needs_input_grad
        g, x = self.inputs
        gg = HardswishBackward.apply(grad, x) if need_g else None
        if not need_x:
            return gg, None
        a = x._array
        return gg, Where.apply((a > -3.0) & (a < 3.0), grad * g / 3.0, 0.0)


class Hardsigmoid(Function):
    """out = min(max(x + 3, 0), 6) / 6; grad_x = grad / 6 strictly inside (-3, 3), else 0
    (the sixth rounded to float32, as PyTorch's kernel has it)."""

    rule = "grad_x = grad * float32(1/6) on (-3, 3), else 0"

    def forward(self, x: Any) -> Any:
        out = xp.add(x, 3.0, out=xp.empty_like(x))
        out.clip(0.0, 6.0, out=out)  # the method: np.clip's Python wrapper calls it
        out /= 6.0
        return out

    def _inside(self) -> Any:
        """-3 < x < 3, made in backward: forward needs none."""
        a = self.inputs[0]._array
        return (a > -3.0) & (a < 3.0)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (Slopes.apply(grad, self.inputs[0], mask=self._inside(), slope=0.0) * SIXTH32,)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any]:
        return (masked(grad, self._inside()) * grad.dtype.type(SIXTH32),)


class Softshrink(Function):
    """out = x - lambd above lambd, x + lambd below -lambd, else 0 (x - clip(x, -lambd,
    lambd)); grad_x = grad where |x| > lambd (and at NaN, as PyTorch's), else 0."""

    rule = "grad_x = grad where |x| > lambd or x is NaN, else 0"

    def forward(self, x: Any, *, lambd: float) -> Any:
        self.lambd = lambd  # the method: np.clip's Python wrapper calls it
        out = None if x.ndim else xp.empty_like(x)  # 0-d: an array, not a NumPy scalar
        kept = x.clip(-lambd, lambd, out=out)  # x at a tie: x - kept is +0 at zeros
        return xp.subtract(x, kept, out=kept)

    def _outside(self) -> Any:
        """Not |x| <= lambd (NaN too, as PyTorch's), made in backward: forward needs none."""
        return ~(xp.abs(self.inputs[0]._array) <= self.lambd)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        grad_x = Slopes.apply(grad, self.inputs[0], mask=self._outside(), slope=0.0)
        return (twice(grad_x, derivative(self), lambd=self.lambd),)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any]:
        return (masked(grad, self._outside()),)


class Hardshrink(Function):
    """out = x where |x| > lambd (and at NaN, as PyTorch's), else 0; grad_x = grad where
    |x| > lambd, else 0 (at NaN too, as PyTorch's vectorised kernel)."""

    rule = "grad_x = grad where |x| > lambd, else 0"

    def forward(self, x: Any, *, lambd: float) -> Any:
        self.lambd = lambd
        out = masked(x, ~(xp.abs(x) <= lambd))  # NaN kept; a +0 where x is dropped
        return out if x.ndim else xp.asarray(out)  # a 0-d x's NumPy scalar made an array

    def _outside(self) -> Any:
        """|x| > lambd, made in backward: forward needs none."""
        return xp.abs(self.inputs[0]._array) > self.lambd

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        grad_x = Slopes.apply(grad, self.inputs[0], mask=self._outside(), slope=0.0)
        return (twice(grad_x, derivative(self), lambd=self.lambd),)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any]:
        return (masked(grad, self._outside()),)
