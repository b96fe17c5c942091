"""Elementwise primitives: arithmetic, math functions, comparisons-free selection.

Each op returns gradients in the output's broadcast shape; the engine unbroadcasts.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

from .. import fastpath
from ..array import copy_order, host, is_floating, ndarray, xp
from ..autograd.node import named
from ..autograd.primitive import Function, arrays_of
from ..fastpath import division, masked, on_value, select

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor


class Add(Function):
    """out = a + b"""

    rule = "grad_a = grad, grad_b = grad"
    saves_inputs = False

    def forward(self, a: Any, b: Any) -> Any:
        return a + b

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return grad, grad


class FloorDivide(Function):
    """out = a / b rounded down (floor_divide, div's 'floor') or toward zero (div's 'trunc'),
    in the inputs' dtype (float a / 0 is inf or NaN)"""

    rule = "grad_a = grad_b = 0 for div's rounding modes; none for floor_divide (it fails)"
    saves_inputs = False

    def forward(self, a: Any, b: Any, *, rounding_mode: str | None = None) -> Any:
        # PyTorch's names: floor_divide's node has no derivative, div's is DivBackward2
        self.node_name = "DivBackward2" if rounding_mode else "torch::autograd::NotImplemented"
        self.rounding_mode = rounding_mode
        # a float divided by 0: inf or NaN, its warning ignored (array/modules.py)
        if rounding_mode != "trunc":
            return division.floor_divide(a, b)
        if is_floating(xp.result_type(a, b)):
            return xp.trunc(xp.true_divide(a, b))
        return (a - xp.fmod(a, b)) // b  # exact: the remainder toward zero taken away

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        if self.node_name == "DivBackward2":  # a step function: zeros, as PyTorch's
            zeros = grad.new_zeros(grad.shape)
            return tuple(zeros if need else None for need in self.needs_input_grad)
        raise RuntimeError(
            f"floor_divide: the derivative is not implemented (PyTorch has none either); got "
            f"a gradient of shape {tuple(grad.shape)} to pass back; where none should flow, "
            "detach first (a.detach() // b)"
        )


class Sub(Function):
    """out = a - b  (a primitive rather than a + (-b): one node, not two, on a hot path)"""

    rule = "grad_a = grad, grad_b = -grad"
    saves_inputs = False

    def forward(self, a: Any, b: Any) -> Any:
        return a - b

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return grad, -grad if self.needs_input_grad[1] else None

    backward_arrays = backward  # operators only: the same rule serves arrays


class Mul(Function):
    """out = a * b"""

    rule = "grad_a = grad * b, grad_b = grad * a"
    saves_inputs = "others"  # each input's value only for the others' gradients

    def forward(self, a: Any, b: Any) -> Any:
        return a * b

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        a, b = self.inputs
        need_a, need_b = self.needs_input_grad
        return grad * b if need_a else None, grad * a if need_b else None

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        a, b = arrays_of(self.inputs)
        need_a, need_b = self.needs_input_grad
        return grad * b if need_a else None, grad * a if need_b else None


class Div(Function):
    """out = a / b"""

    rule = "grad_a = grad / b, grad_b = -grad * out / b  (= -grad * a / b**2)"
    saves_out = True

    def forward(self, a: Any, b: Any) -> Any:
        return a / b

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        b = self.inputs[1]
        need_a, need_b = self.needs_input_grad
        return grad / b if need_a else None, -grad * out / b if need_b else None

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        b = arrays_of(self.inputs)[1]
        need_a, need_b = self.needs_input_grad
        if not need_b:
            return grad / b if need_a else None, None
        if fastpath.enabled() and _per_row(b, out):  # a / a.sum(-1, keepdim=True)
            grad_a = grad / b  # grad_b = -(grad / b) . out along each row, b's shape
            dots = xp.einsum(
                "ij,ij->i", grad_a.reshape(-1, out.shape[-1]), out.reshape(-1, out.shape[-1])
            )
            grad_b = xp.negative(dots, out=dots).reshape(b.shape)
            return grad_a if need_a else None, grad_b
        return grad / b if need_a else None, -grad * out / b


def _per_row(b: Any, out: Any) -> bool:
    """Whether b is one value per row of out (out's shape with a last dim of 1, in out's
    dtype) and the rows hold more than one value: then b's gradient is one dot product per
    row, summed by einsum as it is made, not an array of out's shape for the engine to sum
    (not in bfloat16, for which einsum has no loop)."""
    shape = getattr(b, "shape", None)
    return (
        shape is not None
        and len(shape) == out.ndim >= 2
        and shape[-1] == 1 < out.shape[-1]
        and shape[:-1] == out.shape[:-1]
        and b.dtype == out.dtype
        and out.dtype.kind == "f"
    )


class Neg(Function):
    """out = -a"""

    rule = "grad_a = -grad"
    saves_inputs = False

    def forward(self, a: Any) -> Any:
        return -a

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (-grad,)

    backward_arrays = backward  # operators only: the same rule serves arrays


class Pow(Function):
    """out = a ** b

    As PyTorch:
    - a ** -0.5 is 1 / sqrt(a), so at -0.0 it is -inf and at -inf NaN (NumPy's power gives
      inf and 0), and sqrt's gradient, 0.5 * a ** -0.5, is -inf at -0.0;
    - grad_a is 0 where b == 0 (even at a == 0, where a**(b-1) is inf);
    - grad_b is 0 where a == 0 and b >= 0 (the limit of a**b log a for b > 0), and
      out * log(a) = out * -inf elsewhere at a == 0 (-inf, or inf where out is -inf).
    """

    rule = "grad_a = grad * b * a**(b-1), grad_b = grad * out * log(a)"
    saves_out = True

    def forward(self, a: Any, b: Any) -> Any:
        if isinstance(b, (int, float)) and isinstance(a, ndarray) and is_floating(a.dtype):
            if b == -0.5:  # 1 / 0: inf, its warning ignored as in division
                return xp.reciprocal(xp.sqrt(a))
            if b == 3 and fastpath.enabled():  # a * a * a, as PyTorch computes a cube
                out = a * a  # a NumPy scalar when a is 0-d
                return xp.multiply(out, a, out=out) if out.ndim else out * a
        if isinstance(b, ndarray) and b.dtype.kind == "i" and xp.result_type(a, b).kind in "iu":
            return _int_power(a, b)
        return a**b

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        a, b = self.inputs
        need_a, need_b = self.needs_input_grad
        ga = gb = None
        if need_a:
            if isinstance(b, (int, float)):
                ga = grad * b * a ** (b - 1) if b != 0 else grad * 0.0
            else:
                # At a == 0 == b, b * a**(b-1) is 0 * inf: raise 1 there instead, giving 0.
                ga = grad * b * Where.apply((a._array == 0) & (b._array == 0), 1.0, a) ** (b - 1)
        if need_b:
            # flat: where a == 0 and b >= 0, whose gradient is 0 (out is finite there)
            log_a: Any  # a number, an array or a Tensor, as the base is
            if isinstance(a, (int, float)):  # a number base (2 ** x): log(a) is a number
                log_a = math.log(a) if a > 0 else (-math.inf if a == 0 else math.nan)
                flat = b._array >= 0 if a == 0 else None
                if flat is not None:  # 1 where flat, so out * log_a is 0 * 1 there, not NaN
                    log_a = xp.where(flat, 1.0, log_a).astype(out.dtype)
            else:
                zero = a._array == 0
                flat = zero & (b._array >= 0) if zero.any() else None
                if flat is None:
                    log_a = a.log()
                else:  # log(a) without NumPy's warning: -inf at 0, except 0 where flat
                    log_a = Where.apply(zero & ~flat, -math.inf, Where.apply(zero, 1.0, a).log())
            gb = out * log_a
            gb = grad * (gb if flat is None else Where.apply(flat, 0.0, gb))
        return ga, gb


def rsqrt(a: Any, out: Any) -> Any:
    """Pow's a ** -0.5, 1 / sqrt(a), written into ``out`` (a itself, for rsqrt_)."""
    return xp.reciprocal(xp.sqrt(a, out=out), out=out)


def _int_power(a: Any, b: Any) -> Any:
    """a ** b for integers, a negative power as PyTorch's (NumPy refuses it): 1 ** b is 1,
    (-1) ** b is 1 or -1 by b's parity, any other base gives 0."""
    negative = b < 0
    out = a ** xp.where(negative, 0, b)
    tiny = xp.where(a == 1, 1, xp.where(a == -1, 1 - 2 * (b & 1), 0))  # where b < 0
    return xp.where(negative, tiny, out).astype(out.dtype, copy=False)


class Exp(Function):
    """out = exp(a)"""

    rule = "grad_a = grad * out"
    saves_inputs = False
    saves_out = True

    def forward(self, a: Any) -> Any:
        return xp.exp(a)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad * out,)

    backward_arrays = backward  # operators only: the same rule serves arrays


class Log(Function):
    """out = log(a)"""

    rule = "grad_a = grad / a"

    def forward(self, a: Any) -> Any:
        return xp.log(a)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad / self.inputs[0],)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        return (grad / self.inputs[0]._array,)


class Log1p(Function):
    """out = log(1 + a), exact where a is tiny (where log(1 + a) rounds 1 + a first)"""

    rule = "grad_a = grad / (1 + a)"

    def forward(self, a: Any) -> Any:
        return xp.log1p(a)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad / (self.inputs[0] + 1.0),)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        return (grad / (self.inputs[0]._array + 1.0),)


class Expm1(Function):
    """out = exp(a) - 1, exact where a is tiny (where exp(a) - 1 cancels)"""

    rule = "grad_a = grad * (out + 1)"
    saves_inputs = False
    saves_out = True

    def forward(self, a: Any) -> Any:
        return xp.expm1(a)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad * (out + 1.0),)

    backward_arrays = backward  # operators only: the same rule serves arrays


class Sqrt(Function):
    """out = sqrt(a)"""

    rule = "grad_a = grad / (2 * out)"
    saves_inputs = False
    saves_out = True

    def forward(self, a: Any) -> Any:
        return xp.sqrt(a)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad / (out * 2.0),)

    backward_arrays = backward  # operators only: the same rule serves arrays


class Sin(Function):
    """out = sin(a)"""

    rule = "grad_a = grad * cos(a)"

    def forward(self, a: Any) -> Any:
        return xp.sin(a)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad * self.inputs[0].cos(),)


class Cos(Function):
    """out = cos(a)"""

    rule = "grad_a = -grad * sin(a)"

    def forward(self, a: Any) -> Any:
        return xp.cos(a)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (-grad * self.inputs[0].sin(),)


class Tanh(Function):
    """out = tanh(a)"""

    rule = "grad_a = grad * (1 - out) * (1 + out)"
    saves_inputs = False
    saves_out = True

    def forward(self, a: Any) -> Any:
        return xp.tanh(a)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        # 1 - out^2 as (1 - out)(1 + out): within an ulp of PyTorch's fused 1 - out*out where
        # out nears 1 (1 - out * out there lost 3-4 digits of float32, 7 of float64)
        return (grad * ((1.0 - out) * (1.0 + out)),)

    backward_arrays = backward  # operators only: the same rule serves arrays


def exp_quietly(a: Any) -> None:
    """exp(a) in place, inf where it overflows, with no warning: NumPy's is ignored, as every
    warning of chainrule's modules (array/modules.py), and where the user's filter or
    seterr makes it an error, NumPy raises it once the array is written, so it is passed
    over. No errstate context: entered on each call, it was most of a small sigmoid's time."""
    try:
        xp.exp(a, out=a)
    except (RuntimeWarning, FloatingPointError):  # raised after the loop wrote every value
        pass


def _sigmoid_of(v: Any) -> Any:
    """Sigmoid's passes on a 0-d input's value v, a NumPy scalar (fastpath)."""
    return 1 / (1 + host.exp(-v))


class Sigmoid(Function):
    """out = 1 / (1 + exp(-a)), as PyTorch's kernel: where exp(-a) overflows (a < -88 in
    float32) the result is 0, PyTorch's too."""

    rule = "grad_a = grad * out * (1 - out)"
    saves_inputs = False
    saves_out = True

    def forward(self, a: Any) -> Any:
        value = None if a.ndim else on_value(a, _sigmoid_of)  # 0-d: the value's (fastpath)
        if value is not None:
            return value
        # the half types in float32, as PyTorch computes them; in place on one buffer
        x = a if a.dtype.itemsize >= 4 else a.astype(xp.float32)
        out = xp.negative(x, out=xp.empty_like(x))  # an array, 0-d too
        exp_quietly(out)
        out += 1
        xp.reciprocal(out, out=out)
        return out if out.dtype == a.dtype else out.astype(a.dtype)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad * out * (1.0 - out),)

    backward_arrays = backward  # operators only: the same rule serves arrays


class Relu(Function):
    """out = max(a, 0)  (relu'(0) = 0; where a is NaN the gradient passes, as PyTorch's)"""

    rule = "grad_a = grad where out != 0 (a > 0, or NaN), else 0"
    saves_inputs = False
    saves_out = True

    def forward(self, a: Any) -> Any:
        return xp.maximum(0, a)  # the bound first: -0.0 stays -0.0, as PyTorch's (see Clamp)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        # out is 0, positive or NaN, so "not a <= 0" is out != 0: one pass, and NaN passes,
        # as in PyTorch. The mask is a constant; selected, so a NaN gradient stays out of 0.
        grad_a = Slopes.apply(grad, out, mask=out._array != 0, slope=0.0)
        return (twice(grad_a, "ThresholdBackwardBackward0", threshold=0),)  # threshold_backward

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        return (masked(grad, out != 0),)


class Abs(Function):
    """out = |a|  (abs'(0) = 0)"""

    rule = "grad_a = grad * sign(a)"

    def forward(self, a: Any) -> Any:
        return xp.abs(a)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad * self.inputs[0].sign(),)


class Sign(Function):
    """out = sign(a), 0 at NaN and +0 at -0.0 in every float dtype (as PyTorch)"""

    rule = "grad_a = 0 (everywhere it exists)"

    def forward(self, a: Any) -> Any:
        if a.dtype.kind == "b":  # a bool is its own sign (NumPy's sign has no bool loop)
            return a.copy()
        if is_floating(a.dtype):  # into an array of a's (a 0-d a's too: no NumPy scalar)
            value = None if a.ndim else on_value(a, _sign_of)  # 0-d: the value's (fastpath)
            return sign(a, out=xp.empty_like(a)) if value is None else value
        return xp.sign(a)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad * 0.0,)


def _sign_of(v: Any) -> float:
    """Sign's value of a 0-d input's value v, a NumPy scalar (fastpath): +0 at -0.0 and NaN."""
    return float(v > 0) - float(v < 0)


def sign(a: Any, out: Any) -> Any:
    """PyTorch's sign of a float array, (a > 0) - (a < 0) (0 at NaN, +0 at -0.0), written into
    ``out`` (a itself for sign_): the difference in int8, cast to out's dtype as it is written
    (-1, 0 and 1 are exact in every float dtype), where one in out's dtype casts both bools."""
    return xp.subtract(a > 0, a < 0, dtype=xp.int8, out=out, casting="unsafe")


class Clamp(Function):
    """out = min(max(a, lo), hi), lo and hi numbers (options) or tensors (inputs), as
    PyTorch: the gradient is 0 where it does not flow, even where the incoming one is NaN or
    inf; a tensor bound takes it where it binds (hi where it is below lo)."""

    rule = (
        "grad_a = grad where lo <= a <= hi, else 0; "
        "grad_lo = grad where a < lo < hi; grad_hi = grad where a > hi or hi < lo"
    )
    NAMES = {  # PyTorch's node names: number bounds, tensor bounds
        "clamp": ("ClampBackward1", "ClampBackward0"),
        "clamp_min": ("ClampMinBackward0", "ClampMinBackward1"),
        "clamp_max": ("ClampMaxBackward0", "ClampMaxBackward1"),
    }

    def forward(self, a: Any, lo: Any = None, hi: Any = None, *, op: str = "clamp") -> Any:
        self.lo, self.hi = lo, hi
        self.node_name = self.NAMES[op][isinstance(lo, ndarray) or isinstance(hi, ndarray)]
        # what np.clip calls for one bound, without its Python wrapper; the bound first, as
        # NumPy's maximum and minimum give their second operand at a tie of zeros: a -0.0
        # at a bound of 0 stays -0.0, as PyTorch's (whose tensor bounds keep it only in its
        # scalar loop, for the last few elements)
        if hi is None:
            return xp.maximum(lo, a)
        if lo is None:
            return xp.minimum(hi, a)
        out = a.clip(lo, hi)  # the method: np.clip's Python wrapper calls it
        if out.dtype != a.dtype and is_floating(a.dtype):  # bfloat16's clip gives float32
            out = out.astype(a.dtype)  # (ml_dtypes has no clip loop): rounded back, exactly
        return out

    def masks(self) -> Any:
        """Where each input's gradient flows, a constant mask each (None for no bound)."""
        a, lo, hi = self.inputs[0]._array, self.lo, self.hi
        inside = a >= lo if hi is None else (a <= hi if lo is None else (a >= lo) & (a <= hi))
        if len(self.inputs) == 1:  # number bounds: options, not inputs
            return (inside,)
        below = None if lo is None else (a < lo if hi is None else (a < lo) & (lo < hi))
        above = None if hi is None else (a > hi if lo is None else (a > hi) | (hi < lo))
        return inside, below, above

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        pairs = zip(self.masks(), self.needs_input_grad, strict=True)
        return tuple(Where.apply(m, grad, 0.0) if need else None for m, need in pairs)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        pairs = zip(self.masks(), self.needs_input_grad, strict=True)
        return tuple(masked(grad, m) if need else None for m, need in pairs)


class Piecewise(Function):
    """out = a where mask, else slope * a + other: the piecewise-linear activations
    (leaky_relu, hardtanh, relu6, threshold), the mask fixed by a's values and ``other`` a
    constant (a number or an array); ``whole``: other is a where mask too (hardtanh's clip),
    so it is the result as it is; ``leaky``: leaky_relu's a * slope, multiplied even at slope
    0 (-0.0 for a negative a, NaN for -inf, and grad * 0 back, as PyTorch's). A mask None
    is nowhere: rrelu's a * noise in training, given whole, its slope the noise array"""

    rule = "grad_a = grad where mask, else grad * slope"
    saves_inputs = True

    def forward(
        self, a: Any, *, mask: Any, slope: Any, other: Any, whole: bool = False, leaky: bool = False
    ) -> Any:
        self.mask, self.slope, self.leaky = mask, slope, leaky
        if whole:  # in a's dtype, as select's (an integer a clipped to float bounds)
            return other.astype(a.dtype, copy=False)
        if leaky:
            return leaky_below(a, mask, slope)
        if not slope:
            return select(mask, a, other)
        return select(mask, a, a * slope + other)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        a = self.inputs[0]
        grad_a = Slopes.apply(grad, a, mask=self.mask, slope=self.slope, leaky=self.leaky)
        call = {k: v for k, v in getattr(self, "call", {}).items() if k != "result"}
        return (twice(grad_a, derivative(self), **{"negative_slope": self.slope, **call}),)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        if self.mask is None:  # nowhere: rrelu's noise is all of the slope
            return (grad * self.slope,)
        if self.slope or self.leaky:
            return (select(self.mask, grad, grad * self.slope),)
        return (masked(grad, self.mask),)


def leaky_below(a: Any, mask: Any, slope: Any) -> Any:
    """leaky_relu's and prelu's a where mask (a > 0; None: made here), else a * slope: no + 0,
    which made -0.0 * slope +0.0 (PyTorch's stays -0.0). A nonzero slope by max/min
    (fastpath/table.py): a negative one only where a tie of zeros gives the second operand."""
    if fastpath.enabled() and (slope > 0 or slope < 0 and _ties_second(a)):
        return leaky(a, slope)
    return select(a > 0 if mask is None else mask, a, a * slope)


def _ties_second(a: Any) -> bool:
    """Whether NumPy's maximum and minimum give the second operand at a tie in a's array
    (float32 and float64 on the host; float16's give the first): at a zero, a and a * slope
    of a negative slope differ in sign."""
    return type(a) is host.ndarray and a.dtype in (host.float32, host.float64)


def leaky(a: Any, slope: Any) -> Any:
    """a where a > 0, else a * slope, for a nonzero slope (a number or a NumPy scalar): the
    larger (slope below 1, a negative one too) or smaller of a and a * slope, two passes that
    pick no element one by one; NaN stays NaN, inf * slope keeps its sign, and at a zero of
    either sign the tie gives a * slope, as PyTorch's (-0.0 * -0.3 is +0.0)."""
    rest = a * slope
    pick = xp.maximum if slope < 1 else xp.minimum
    return pick(a, rest, out=rest if rest.ndim else None)  # 0-d: NumPy scalars


def derivative(fn: Any) -> str:
    """PyTorch's name for the node of the gradient of ``fn``'s op (of LeakyReluBackward1's,
    leaky_relu_backward's LeakyReluBackwardBackward0)."""
    return re.sub(r"Backward\d+$", "BackwardBackward0", type(fn).__name__)


def twice(grad_a: Tensor, name: str, **call: Any) -> Tensor:
    """grad_a, a Slopes output, its node (where one was recorded: create_graph) named as
    PyTorch's node of the activation's gradient, keeping the arguments that node saves."""
    if grad_a.grad_fn is None:
        return grad_a
    return named(grad_a, name, **call)


class Slopes(Function):
    """out = g where mask, else g * slope (0 selects, so NaN stays out, unless ``leaky``: then
    leaky_relu_backward's g * 0): the gradient of a piecewise-linear op, recorded with that
    op's input (or output) ``a`` among its inputs, whose derivative in ``a`` is 0. A second
    derivative through relu, clamp or leaky_relu is then zeros, as PyTorch's (its
    threshold_backward and leaky_relu_backward take the input too), rather than a gradient
    that never depended on the input."""

    rule = "grad_g = grad where mask, else grad * slope; grad_a = 0"
    saves_inputs = True

    def forward(self, g: Any, a: Any, *, mask: Any, slope: Any, leaky: bool = False) -> Any:
        self.mask, self.slope, self.leaky = mask, slope, leaky
        if mask is None:  # nowhere (Piecewise's, rrelu's noise)
            return g * slope
        if slope or leaky:
            return select(mask, g, g * slope)
        return masked(g, mask)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        need_g, need_a = self.needs_input_grad
        a, mask, slope = self.inputs[1], self.mask, self.slope
        gg = None
        if need_g:  # the gradient's op again, named as this node (Slopes' own, or PyTorch's)
            gg = Slopes.apply(grad, a, mask=mask, slope=slope, leaky=self.leaky)
            gg = twice(gg, type(self).__name__, **getattr(self, "call", {}))
        return gg, a.new_zeros(a.shape) if need_a else None


class Where(Function):
    """out = x where cond else y

    Selected, not multiplied by the mask (as PyTorch): a NaN or inf gradient does not leak
    into the branch not taken, so where(c, f(where(c, x, safe)), 0) has a finite gradient.
    """

    rule = "grad_x = grad where cond, grad_y = grad where not cond"

    def forward(self, cond: Any, x: Any, y: Any) -> Any:
        self.cond = cond
        out = xp.where(cond, x, y)
        if isinstance(x, float) and isinstance(y, ndarray):
            out = out.astype(y.dtype, copy=False)
        elif isinstance(y, float) and isinstance(x, ndarray):
            out = out.astype(x.dtype, copy=False)
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        _, need_x, need_y = self.needs_input_grad
        c = self.cond
        gx = Where.apply(c, grad, 0.0) if need_x else None
        return None, gx, Where.apply(c, 0.0, grad) if need_y else None

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        _, need_x, need_y = self.needs_input_grad
        c = self.cond
        return None, masked(grad, c) if need_x else None, masked(grad, ~c) if need_y else None


class Maximum(Function):
    """out = max(a, b);  where either is NaN (out is NaN) both inputs get all of the
    gradient, as PyTorch: each input's share is 0 where it loses, 1/2 at a tie, 1 otherwise."""

    rule = "grad_a = grad where a > b, grad_b = grad where b > a (ties: half each)"

    pick = staticmethod(xp.maximum)
    wins = staticmethod(xp.greater)

    def forward(self, a: Any, b: Any) -> Any:
        return self.pick(a, b)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        # The weights are found here, not in forward, which then costs nothing extra under
        # no_grad and saves nothing.
        a, b = arrays_of(self.inputs)
        need_a, need_b = self.needs_input_grad
        tie = 0.5 * (a == b)

        def share(loses: Any) -> Any:
            return (1.0 - loses - tie).astype(grad.dtype)

        return (
            grad * share(self.wins(b, a)) if need_a else None,
            grad * share(self.wins(a, b)) if need_b else None,
        )


class Minimum(Maximum):
    """out = min(a, b)"""

    rule = "grad_a = grad where a < b, grad_b = grad where b < a (ties: half each)"

    pick = staticmethod(xp.minimum)
    wins = staticmethod(xp.less)


class Cast(Function):
    """out = a converted to dtype (a copy), its dims laid out in memory in ``order``
    (outermost first: a memory format's) where given, else as a's are"""

    rule = "grad_a = grad cast back to a's dtype"
    saves_inputs = False

    def forward(self, a: Any, dtype: Any, order: Any = None, name: str = "ToCopyBackward0") -> Any:
        self.node_name = name  # clone's copy is CloneBackward0, to's ToCopyBackward0
        order = copy_order(a) if order is None else order
        if order is None:
            return a.astype(dtype, order="C", copy=True)
        back = tuple(order.index(d) for d in range(len(order)))
        return a.transpose(order).astype(dtype, order="C").transpose(back)  # a view of a copy

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad.to(self.inputs[0].dtype),)
