"""Elementwise primitives: arithmetic, math functions, comparisons-free selection.

Each op returns gradients in the output's broadcast shape; the engine unbroadcasts.
"""

from __future__ import annotations

from typing import Any

from ..autograd import Function
from ..backend import xp


class Add(Function):
    """out = a + b;  grad_a = g, grad_b = g."""

    def forward(self, a: Any, b: Any) -> Any:
        return a + b

    def backward(self, grad, out):
        return grad, grad


class Sub(Function):
    """out = a - b;  grad_a = g, grad_b = -g.  (A primitive rather than a + (-b): one node, not
    two, on a hot path.)"""

    def forward(self, a, b):
        return a - b

    def backward(self, grad, out):
        return grad, (-grad if self.needs_input_grad[1] else None)


class Mul(Function):
    """out = a * b;  grad_a = g * b, grad_b = g * a."""

    def forward(self, a, b):
        return a * b

    def backward(self, grad, out):
        a, b = self.inputs
        need_a, need_b = self.needs_input_grad
        return (grad * b if need_a else None), (grad * a if need_b else None)


class Div(Function):
    """out = a / b;  grad_a = g / b, grad_b = -g * a / b**2."""

    def forward(self, a, b):
        return a / b

    def backward(self, grad, out):
        a, b = self.inputs
        need_a, need_b = self.needs_input_grad
        ga = grad / b if need_a else None
        gb = -grad * out / b if need_b else None
        return ga, gb


class Neg(Function):
    """out = -a;  grad_a = -g."""

    def forward(self, a):
        return -a

    def backward(self, grad, out):
        return (-grad,)


class Pow(Function):
    """out = a ** b;  grad_a = g * b * a**(b-1), grad_b = g * out * log(a).

    For grad_b, entries with a == 0 get 0 (the limit of a**b log a for b > 0), as PyTorch does.
    """

    def forward(self, a, b):
        return a**b

    def backward(self, grad, out):
        a, b = self.inputs
        need_a, need_b = self.needs_input_grad
        ga = gb = None
        if need_a:
            if isinstance(b, (int, float)):
                ga = grad * b * a ** (b - 1) if b != 0 else grad * 0.0
            else:
                ga = grad * b * a ** (b - 1)
        if need_b:
            safe = where(a == 0, 1.0, a)
            gb = grad * out * safe.log()
        return ga, gb


def where(cond: Any, x: Any, y: Any) -> Any:
    from ..tensor import as_tensor

    return Where.apply(as_tensor(cond).data, x, y)


class Exp(Function):
    """out = exp(a);  grad_a = g * out."""

    def forward(self, a):
        return xp.exp(a)

    def backward(self, grad, out):
        return (grad * out,)


class Log(Function):
    """out = log(a);  grad_a = g / a."""

    def forward(self, a):
        return xp.log(a)

    def backward(self, grad, out):
        return (grad / self.inputs[0],)


class Sqrt(Function):
    """out = sqrt(a);  grad_a = g / (2 out)."""

    def forward(self, a):
        return xp.sqrt(a)

    def backward(self, grad, out):
        return (grad / (out * 2.0),)


class Sin(Function):
    """out = sin(a);  grad_a = g * cos(a)."""

    def forward(self, a):
        return xp.sin(a)

    def backward(self, grad, out):
        return (grad * self.inputs[0].cos(),)


class Cos(Function):
    """out = cos(a);  grad_a = -g * sin(a)."""

    def forward(self, a):
        return xp.cos(a)

    def backward(self, grad, out):
        return (-grad * self.inputs[0].sin(),)


class Tanh(Function):
    """out = tanh(a);  grad_a = g * (1 - out**2)."""

    def forward(self, a):
        return xp.tanh(a)

    def backward(self, grad, out):
        return (grad * (1.0 - out * out),)


class Sigmoid(Function):
    """out = 1 / (1 + exp(-a)), computed without overflow;  grad_a = g * out * (1 - out)."""

    def forward(self, a):
        # exp of a non-positive number only: exp(-|a|) never overflows.
        e = xp.exp(-xp.abs(a))
        return xp.where(a >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(a.dtype, copy=False)

    def backward(self, grad, out):
        return (grad * out * (1.0 - out),)


class Relu(Function):
    """out = max(a, 0);  grad_a = g * (a > 0)  (relu'(0) = 0)."""

    def forward(self, a):
        return xp.maximum(a, 0)

    def backward(self, grad, out):
        return (grad * (out > 0),)


class Abs(Function):
    """out = |a|;  grad_a = g * sign(a)  (abs'(0) = 0)."""

    def forward(self, a):
        return xp.abs(a)

    def backward(self, grad, out):
        return (grad * self.inputs[0].sign(),)


class Sign(Function):
    """out = sign(a);  grad_a = 0 everywhere it exists."""

    def forward(self, a):
        return xp.sign(a)

    def backward(self, grad, out):
        return (grad * 0.0,)


class Clamp(Function):
    """out = min(max(a, lo), hi);  grad_a = g where lo <= a <= hi, else 0 (as PyTorch)."""

    def forward(self, a, lo=None, hi=None):
        self.lo, self.hi = lo, hi
        return xp.clip(a, lo, hi)

    def backward(self, grad, out):
        a = self.inputs[0].data
        mask = xp.ones(a.shape, dtype=bool)
        if self.lo is not None:
            mask &= a >= self.lo
        if self.hi is not None:
            mask &= a <= self.hi
        return (grad * mask,)


class Where(Function):
    """out = x where cond else y;  grad_x = g * cond, grad_y = g * ~cond."""

    def forward(self, cond, x, y):
        self.cond = cond
        out = xp.where(cond, x, y)
        if isinstance(x, float) and isinstance(y, xp.ndarray):
            out = out.astype(y.dtype, copy=False)
        elif isinstance(y, float) and isinstance(x, xp.ndarray):
            out = out.astype(x.dtype, copy=False)
        return out

    def backward(self, grad, out):
        _, need_x, need_y = self.needs_input_grad
        c = self.cond
        return None, (grad * c if need_x else None), (grad * ~c if need_y else None)


class Maximum(Function):
    """out = max(a, b);  the gradient goes to the larger input; at ties it is shared equally."""

    def forward(self, a, b):
        self.wa = xp.where(a > b, 1.0, xp.where(a == b, 0.5, 0.0))
        return xp.maximum(a, b)

    def backward(self, grad, out):
        need_a, need_b = self.needs_input_grad
        w = self.wa.astype(grad.dtype, copy=False)
        return (grad * w if need_a else None), (grad * (1.0 - w) if need_b else None)


class Minimum(Function):
    """out = min(a, b);  the gradient goes to the smaller input; at ties it is shared equally."""

    def forward(self, a, b):
        self.wa = xp.where(a < b, 1.0, xp.where(a == b, 0.5, 0.0))
        return xp.minimum(a, b)

    def backward(self, grad, out):
        need_a, need_b = self.needs_input_grad
        w = self.wa.astype(grad.dtype, copy=False)
        return (grad * w if need_a else None), (grad * (1.0 - w) if need_b else None)


class Cast(Function):
    """out = a converted to dtype (a copy);  grad_a = g converted back to a's dtype."""

    def forward(self, a, dtype):
        return a.astype(dtype, copy=True)

    def backward(self, grad, out):
        return (grad.to(self.inputs[0].dtype),)
