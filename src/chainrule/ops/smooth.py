"""The smooth activations as primitives: the ELU family (elu, selu, celu), softplus,
logsigmoid, silu and mish. For speed: each forward is a few NumPy passes with no selection where
its composite was ten to twenty nodes (5-20x PyTorch's time); each backward is its rule in
Tensor ops, so it differentiates again: elu's, softplus's and logsigmoid's an op of its own
(EluBackward, ...), as PyTorch's elu_backward, whose rule is the second derivative, so that a
gradient taken with create_graph is PyTorch's one node. nn/activation.py checks arguments.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..array import errstate, host, module_of, result_array, xp
from ..autograd.primitive import Function
from ..fastpath import on_value, select
from ..fastpath.rules import SELECT_MIN
from .elementwise import Add, Sub, Where, exp_quietly

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


def _sigmoid(a: Any) -> Any:
    """1 / (1 + exp(-a)), as Sigmoid's forward: the half types in float32, 0 where exp(-a)
    overflows, quietly; an array (0-d too)."""
    out = _opmath(result_array(a))  # a 0-d array's product is a NumPy scalar
    out = xp.negative(out, out=xp.empty_like(out))
    exp_quietly(out)
    out += 1
    return xp.reciprocal(out, out=out)


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
        # elu_backward, one op (PyTorch's EluBackwardBackward0 under create_graph); an
        # in-place elu's node (EluBackward1) gives it the result, as PyTorch's
        of_result = type(self).__name__.endswith("Backward1")
        alpha = getattr(self, "call", {}).get("alpha", self.coef / self.scale)
        x = out if of_result else self.inputs[0]
        shown = {"scale": _whole(self.scale), "input_scale": _whole(self.input_scale)}
        return (EluBackward.apply(grad, x, alpha=alpha, **shown, is_result=of_result),)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any]:
        if type(self).__name__.endswith("Backward1"):  # an in-place elu's: of its result
            return (_elu_grad_of_result(grad, out, self.coef, self.scale, self.input_scale),)
        return (_elu_grad(grad, self.inputs[0]._array, self.coef, self.scale, self.input_scale),)


def _whole(value: float) -> float:
    """An option PyTorch's kernel takes as an int where it is 1 (elu's scale), as shown."""
    return int(value) if value == 1 else value


def _elu_grad(g: Any, x: Any, coef: float, scale: float, input_scale: float) -> Any:
    """g times Elu's slope at x: scale where x > 0, else coef input_scale exp(input_scale x)
    (NaN at a NaN, as PyTorch's vector loop)."""
    k = coef * input_scale
    slope = xp.minimum(x, 0.0)
    if input_scale != 1:
        slope *= input_scale
    slope = xp.exp(slope)  # 1 where x > 0
    if k != 1:
        slope *= k
    if k != scale:  # then scale where x > 0: k + (scale - k)
        slope += xp.multiply(x > 0, scale - k, dtype=slope.dtype)
    return g * slope


def _elu_grad_of_result(g: Any, y: Any, coef: float, scale: float, input_scale: float) -> Any:
    """g times Elu's slope read from its result y, as PyTorch's for an in-place elu: scale
    where y > 0, else input_scale (y + coef) (NaN at a NaN, as PyTorch's vector loop)."""
    slope = xp.add(y, coef)
    slope *= input_scale
    return g * xp.where(y > 0, xp.asarray(scale, slope.dtype), slope)


class EluBackward(Function):
    """out = g scale where x > 0, else g alpha scale input_scale exp(input_scale x): Elu's
    gradient as an op (PyTorch's elu_backward), so that taken with create_graph it is one
    node, EluBackwardBackward0, on g and x; with ``is_result`` x is Elu's result (an in-place
    elu's), the slope input_scale (x + alpha scale) where x <= 0. grad_g = this op of grad;
    grad_x = this op of grad g input_scale where x < 0, else 0 (of a result: grad g
    input_scale there), as PyTorch's elu_double_backward."""

    rule = (
        "grad_g = elu_backward(grad, x); grad_x = elu_backward(grad * g * input_scale, x) where "
        "x < 0, else 0 (of a result: grad * g * input_scale where x < 0)"
    )

    def forward(
        self, g: Any, x: Any, *, alpha: float, scale: float, input_scale: float, is_result: bool
    ) -> Any:
        self.call = {"alpha": alpha, "scale": scale, "input_scale": input_scale}
        self.call["is_result"] = is_result  # what PyTorch's node saves, as shown
        coef = alpha * scale
        if not is_result:
            return _elu_grad(g, x, coef, scale, input_scale)
        return _elu_grad_of_result(g, x, coef, scale, input_scale)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        need_g, need_x = self.needs_input_grad
        g, x = self.inputs
        c = self.call
        gg = EluBackward.apply(grad, x, **c) if need_g else None
        gx = None
        if need_x:
            scaled = grad * g * c["input_scale"]
            if not c["is_result"]:
                scaled = EluBackward.apply(scaled, x, **c)
            gx = Where.apply(x._array < 0, scaled, 0.0)
        return gg, gx


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
        # softplus_backward, one op (PyTorch's SoftplusBackwardBackward0 under create_graph)
        x, beta, threshold = self.inputs[0], self.beta, self.threshold
        return (SoftplusBackward.apply(grad, x, beta=beta, threshold=threshold),)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any]:
        # sigmoid(beta x) = 1 - exp(-beta softplus(x)) = -expm1(-beta out): from the output
        # in two passes, exact at both ends
        g = xp.multiply(out, -self.beta, out=xp.empty_like(grad))  # an array for 0-d too
        xp.expm1(g, out=g)
        g *= grad
        xp.negative(g, out=g)
        return (_past(g, grad, self.linear),)


class SoftplusBackward(Function):
    """out = g sigmoid(beta x), and g where beta x > threshold: Softplus's gradient as an op
    (PyTorch's softplus_backward), so that taken with create_graph it is one node,
    SoftplusBackwardBackward0, on g and x. grad_g = this op of grad; grad_x = grad g beta
    s (1 - s) with s = sigmoid(beta x) where beta x < threshold, else 0, as PyTorch's
    softplus_double_backward."""

    rule = (
        "grad_g = softplus_backward(grad, x); grad_x = grad * g * beta * s * (1 - s) where "
        "beta * x < threshold, else 0, s = sigmoid(beta * x)"
    )

    def forward(self, g: Any, x: Any, *, beta: float, threshold: float) -> Any:
        self.call = {"beta": beta, "threshold": threshold}  # as PyTorch's node shows them
        bx = x * beta if beta != 1 else x
        return xp.where(bx > threshold, g, g * _sigmoid(bx)).astype(g.dtype, copy=False)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        need_g, need_x = self.needs_input_grad
        g, x = self.inputs
        beta, threshold = self.call["beta"], self.call["threshold"]
        gg = SoftplusBackward.apply(grad, x, **self.call) if need_g else None
        gx = None
        if need_x:
            bx = x * beta if beta != 1 else x
            s = bx.sigmoid()
            gx = Where.apply(bx._array < threshold, grad * g * s * (1.0 - s) * beta, 0.0)
        return gg, gx


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
        # log_sigmoid_backward, one op (LogSigmoidBackwardBackward0 under create_graph)
        return (LogSigmoidBackward.apply(grad, self.inputs[0]),)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any]:
        # sigmoid(-x) = 1 - sigmoid(x) = -expm1(out): exact at both ends
        g = xp.expm1(out, out=xp.empty_like(grad))  # an array for 0-d too
        g *= grad
        xp.negative(g, out=g)
        return (g,)


class LogSigmoidBackward(Function):
    """out = g sigmoid(-x): LogSigmoid's gradient as an op (PyTorch's log_sigmoid_backward),
    so that taken with create_graph it is one node, LogSigmoidBackwardBackward0, on g and x.
    grad_g = this op of grad; grad_x = grad g (s - 1) s with s = sigmoid(x), as PyTorch's
    log_sigmoid_double_backward."""

    rule = "grad_g = grad * sigmoid(-x); grad_x = grad * g * (s - 1) * s, s = sigmoid(x)"

    def forward(self, g: Any, x: Any) -> Any:
        return (g * _sigmoid(-x)).astype(g.dtype, copy=False)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        need_g, need_x = self.needs_input_grad
        g, x = self.inputs
        gg = LogSigmoidBackward.apply(grad, x) if need_g else None
        s = x.sigmoid() if need_x else None
        return gg, grad * g * (s - 1.0) * s if s is not None else None


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


_ADD_NUMBER = Add.named("AddBackward1")  # PyTorch's add of a tensor and a number


class Silu(Function):
    """out = x sigmoid(x) = x / (1 + exp(-x)); grad_x = grad s (1 + x (1 - s)) with
    s = sigmoid(x) (as PyTorch's)."""

    rule = "grad_x = grad * s * (1 + x * (1 - s)), s = sigmoid(x)"

    def forward(self, x: Any) -> Any:
        a = _opmath(x)
        out = _silu(a, xp.negative(a, out=xp.empty_like(a)))
        return out if out.dtype == x.dtype else out.astype(x.dtype)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        # PyTorch's infinitely_differentiable_silu_backward node for node: its 1 - s a sub of
        # a number (SubBackward0), its 1 + ... an add of one (AddBackward1)
        (x,) = self.inputs
        s = x.sigmoid()
        return (grad * s * _ADD_NUMBER.apply(x * Sub.apply(1.0, s), 1.0),)


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
        # PyTorch's infinitely_differentiable_mish_backward node for node: softplus as
        # log1p(exp(x)), 1 - t^2 a sub of a number (SubBackward0)
        (x,) = self.inputs
        with errstate(over="ignore"):  # exp is inf past 88 (float32), t 1 there, quietly
            t = x.exp().log1p().tanh()
        return (grad * (t + x * x.sigmoid() * Sub.apply(1.0, t * t)),)

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
