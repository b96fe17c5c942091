"""The smooth activations as primitives: the ELU family (elu, selu, celu), softplus,
logsigmoid, silu and mish. For speed: each forward is a few NumPy passes with no selection where
its composite was ten to twenty nodes (5-20x PyTorch's time); each backward is its rule in
Tensor ops, so it differentiates again. nn/activation.py checks arguments.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..array import errstate, host, module_of, xp
from ..autograd.primitive import Function
from ..fastpath import on_value, select
from ..fastpath.rules import SELECT_MIN
from .elementwise import Where, exp_quietly

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor


def _opmath(x: Any) -> Any:
    """x as the passes compute it: half precision in float32 (one rounding at the end, as
    PyTorch's kernels round), anything wider as it is, and always an array (a 0-d one too),
    so the passes can write in place."""
    if x.dtype.itemsize < 4:
        return x.astype(xp.float32)
    return module_of(x).asarray(x)  # the array's own module: a device array stays one


def _softplus(bx: Any) -> Any:
    """log(1 + exp(bx)), PyTorch's formula, in two passes: exp is inf past 88 (float32),
    where PyTorch's is inf too (softplus takes x itself past its threshold first; mish's
    tanh is 1 there). A new array (0-d too)."""
    out = xp.empty_like(bx)
    try:  # overflow: inf, as PyTorch's, quietly (see exp_quietly)
        xp.exp(bx, out=out)
    except (RuntimeWarning, FloatingPointError):  # raised after the result is written
        pass
    return xp.log1p(out, out=out)


def _past(out: Any, x: Any, linear: Any) -> Any:
    """out, x where ``linear`` (softplus past its threshold): by select past SELECT_MIN
    elements, where NumPy's copyto branches on each (a random mask cost it eight passes'
    time), and copied into out in place where fewer (select's where makes a new array)."""
    if out.size > SELECT_MIN:
        return select(linear, x, out)
    xp.copyto(out, x, where=linear)
    return out


class Elu(Function):
    """out = scale x for x > 0, else alpha scale (exp(input_scale x) - 1): elu (scale 1,
    input_scale 1), selu (its two constants) and celu (input_scale 1 / alpha), as PyTorch's
    one kernel for the three. grad_x = grad scale for x > 0, else grad alpha scale
    input_scale exp(input_scale x)."""

    rule = (
        "grad_x = grad * scale where x > 0, else grad * alpha * scale * input_scale "
        "* exp(input_scale * x)"
    )

    def forward(self, x: Any, *, alpha: float, scale: float, input_scale: float) -> Any:
        self.coef, self.scale, self.input_scale = alpha * scale, scale, input_scale
        value = None if x.ndim else on_value(x, self._elu_of)  # 0-d: the value's (fastpath)
        if value is not None:
            return value
        a = _opmath(x)
        # expm1(input_scale min(x, 0)) coef + max(x, 0) scale: each side 0 where the other
        # is taken, so a sum, not a selection (which costs ten passes on mixed signs); 0.0
        # first: at -0.0 both sides are -0.0 (NumPy's minimum and maximum give the second
        # operand at a tie), and so is the sum, as PyTorch's
        neg = xp.minimum(0.0, a, out=xp.empty_like(a))
        if input_scale != 1:
            neg *= input_scale
        xp.expm1(neg, out=neg)
        if self.coef != 1:
            neg *= self.coef
        pos = xp.maximum(0.0, a)
        if scale != 1:
            pos *= scale
        neg += pos
        return neg.astype(x.dtype, copy=False)

    def _elu_of(self, v: Any) -> Any:
        """The forward's passes on a 0-d input's value v, a NumPy scalar (fastpath): their
        max(0.0, v) added, which is v at a zero of either sign and +0.0 below."""
        if v > 0:
            return v * self.scale
        return host.expm1(v * self.input_scale) * self.coef + (v if v == 0 else 0.0)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        (x,) = self.inputs
        positive = x._array > 0
        below = Where.apply(positive, 0.0, x) * self.input_scale  # finite where x > 0 is taken
        slope = below.exp() * (self.coef * self.input_scale)
        return (grad * Where.apply(positive, self.scale, slope),)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any]:
        x = self.inputs[0]._array
        k = self.coef * self.input_scale
        slope = xp.minimum(x, 0.0)
        if self.input_scale != 1:
            slope *= self.input_scale
        slope = xp.exp(slope)  # 1 where x > 0
        if k != 1:
            slope *= k
        if k != self.scale:  # then scale where x > 0: k + (scale - k)
            slope += xp.multiply(x > 0, self.scale - k, dtype=slope.dtype)
        return (grad * slope,)


class Celu(Elu):
    """out = x for x > 0, else alpha (exp(x / alpha) - 1): Elu with input_scale 1 / alpha,
    whose gradient takes 1 / alpha with alpha rounded to float32 first, as PyTorch's."""

    rule = "grad_x = grad where x > 0, else grad * exp(x / float32(alpha))"

    def forward(self, x: Any, *, alpha: float) -> Any:  # type: ignore[override]
        out = super().forward(x, alpha=alpha, scale=1.0, input_scale=1.0 / alpha)
        self.input_scale = 1.0 / float(xp.float32(alpha))
        return out


class Softplus(Function):
    """out = log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (as
    PyTorch's); grad_x = grad sigmoid(beta x), and grad where beta x > threshold."""

    rule = "grad_x = grad * sigmoid(beta * x), and grad where beta * x > threshold"
    saves_out = True

    def forward(self, x: Any, *, beta: float, threshold: float) -> Any:
        self.beta, self.threshold = beta, threshold
        value = None if x.ndim else on_value(x, self._softplus_of)  # 0-d: the value's
        if value is not None:
            return value
        a = _opmath(x)
        bx = a * beta if beta != 1 else a
        self.linear = bx > threshold
        out = _softplus(bx)
        if beta != 1:
            out /= beta
        out = _past(out, a, self.linear)  # x itself past the threshold, as PyTorch's
        return out.astype(x.dtype, copy=False)

    def _softplus_of(self, v: Any) -> Any:
        """The forward's passes on a 0-d input's value v, a NumPy scalar (fastpath)."""
        bx = v * self.beta if self.beta != 1 else v
        self.linear = bx > self.threshold
        return v if self.linear else host.log1p(host.exp(bx)) / self.beta

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        (x,) = self.inputs
        bx = x * self.beta if self.beta != 1 else x
        return (Where.apply(self.linear, grad, grad * bx.sigmoid()),)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any]:
        # sigmoid(beta x) = 1 - exp(-beta softplus(x)) = -expm1(-beta out): from the output
        # in two passes, exact at both ends
        g = xp.multiply(out, -self.beta, out=xp.empty_like(grad))  # an array for 0-d too
        xp.expm1(g, out=g)
        g *= grad
        xp.negative(g, out=g)
        return (_past(g, grad, self.linear),)


class LogSigmoid(Function):
    """out = log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)) (as PyTorch's kernel);
    grad_x = grad sigmoid(-x)."""

    rule = "grad_x = grad * sigmoid(-x)"
    saves_out = True

    def forward(self, x: Any) -> Any:
        a = _opmath(x)
        out = xp.abs(a, out=xp.empty_like(a))  # -softplus(-a), in five passes:
        xp.negative(out, out=out)
        xp.exp(out, out=out)
        xp.log1p(out, out=out)
        return xp.subtract(xp.minimum(a, 0.0), out, out=out).astype(x.dtype, copy=False)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad * (-self.inputs[0]).sigmoid(),)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any]:
        # sigmoid(-x) = 1 - sigmoid(x) = -expm1(out): exact at both ends
        g = xp.expm1(out, out=xp.empty_like(grad))  # an array for 0-d too
        g *= grad
        xp.negative(g, out=g)
        return (g,)


def _silu(a: Any, out: Any) -> Any:
    """a / (1 + exp(out)) into out (holding -a): exp(-a) is inf below -88 (float32), where
    a / inf is -0, and NaN at -inf, as PyTorch's, quietly (see exp_quietly: no errstate,
    which cost a small input's silu a fifth of its time)."""
    exp_quietly(out)
    out += 1
    try:
        xp.divide(a, out, out=out)
    except (RuntimeWarning, FloatingPointError):  # raised after the quotient is written
        pass
    return out


class Silu(Function):
    """out = x sigmoid(x) = x / (1 + exp(-x)); grad_x = grad s (1 + x (1 - s)) with
    s = sigmoid(x) (as PyTorch's)."""

    rule = "grad_x = grad * s * (1 + x * (1 - s)), s = sigmoid(x)"

    def forward(self, x: Any) -> Any:
        a = _opmath(x)
        out = _silu(a, xp.negative(a, out=xp.empty_like(a)))
        return out if out.dtype == x.dtype else out.astype(x.dtype)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        (x,) = self.inputs
        s = x.sigmoid()
        return (grad * s * (1.0 + x * (1.0 - s)),)


def _mish_of(v: Any) -> Any:
    """Mish's passes on a 0-d input's value v, a NumPy scalar (fastpath)."""
    return host.tanh(host.log1p(host.exp(v))) * v


class Mish(Function):
    """out = x tanh(softplus(x)); grad_x = grad (t + x sigmoid(x) (1 - t^2)) with
    t = tanh(softplus(x)) (as PyTorch's)."""

    rule = "grad_x = grad * (t + x * sigmoid(x) * (1 - t**2)), t = tanh(softplus(x))"

    def forward(self, x: Any) -> Any:
        value = None if x.ndim else on_value(x, _mish_of)  # 0-d: the value's (fastpath)
        if value is not None:
            return value
        a = _opmath(x)
        out = _softplus(a)
        xp.tanh(out, out=out)
        try:  # -inf * 0: NaN, as PyTorch's, quietly (see exp_quietly)
            xp.multiply(out, a, out=out)
        except (RuntimeWarning, FloatingPointError):  # raised after the product is written
            pass
        return out.astype(x.dtype, copy=False)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        (x,) = self.inputs
        t = Softplus.apply(x, beta=1.0, threshold=20.0).tanh()
        return (grad * (t + x * x.sigmoid() * (1.0 - t * t)),)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any]:
        x = self.inputs[0]._array
        sp = _softplus(x)
        t = xp.tanh(sp)
        s = xp.expm1(-sp)  # -sigmoid(x) = expm1(-softplus(x))
        sq = t * t
        sq -= 1.0
        with errstate(invalid="ignore"):  # at x = -inf: NaN, as PyTorch's, quietly
            s *= x
            s *= sq  # x sigmoid(x) (1 - t^2)
            s += t
            s *= grad
        return (s,)
