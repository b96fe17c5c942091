"""Elementwise primitives: arithmetic, math functions, comparisons-free selection.

Each op returns gradients in the output's broadcast shape; the engine unbroadcasts.
"""

from __future__ import annotations

import math
from typing import Any

from .. import fastpath
from ..array import errstate, is_floating, ndarray, xp
from ..autograd.function import Function, arrays_of
from ..fastpath import masked


class Add(Function):
    """out = a + b"""

    rule = "grad_a = grad, grad_b = grad"
    saves_inputs = False

    def forward(self, a: Any, b: Any) -> Any:
        return a + b

    def backward(self, grad, out):
        return grad, grad


class FloorDivide(Function):
    """out = a / b rounded down (floor_divide, div's 'floor') or toward zero (div's 'trunc'),
    in the inputs' dtype (float a / 0 is inf or NaN)"""

    rule = "grad_a = grad_b = 0 for div's rounding modes; none for floor_divide (it fails)"
    saves_inputs = False

    def forward(self, a: Any, b: Any, *, rounding_mode: str | None = None) -> Any:
        # PyTorch's names: floor_divide's node has no derivative, div's is DivBackward2
        self.node_name = "DivBackward2" if rounding_mode else "torch::autograd::NotImplemented"
        with errstate(divide="ignore", invalid="ignore"):
            if rounding_mode != "trunc":
                return xp.floor_divide(a, b)
            if is_floating(xp.result_type(a, b)):
                return xp.trunc(xp.true_divide(a, b))
            return (a - xp.fmod(a, b)) // b  # exact: the remainder toward zero taken away

    def backward(self, grad, out):
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

    def forward(self, a, b):
        return a - b

    def backward(self, grad, out):
        return grad, -grad if self.needs_input_grad[1] else None

    backward_arrays = backward  # operators only: the same rule serves arrays


class Mul(Function):
    """out = a * b"""

    rule = "grad_a = grad * b, grad_b = grad * a"
    saves_inputs = "others"  # each input's value only for the others' gradients

    def forward(self, a, b):
        return a * b

    def backward(self, grad, out):
        a, b = self.inputs
        need_a, need_b = self.needs_input_grad
        return grad * b if need_a else None, grad * a if need_b else None

    def backward_arrays(self, grad, out):
        a, b = arrays_of(self.inputs)
        need_a, need_b = self.needs_input_grad
        return grad * b if need_a else None, grad * a if need_b else None


class Div(Function):
    """out = a / b"""

    rule = "grad_a = grad / b, grad_b = -grad * out / b  (= -grad * a / b**2)"
    saves_out = True

    def forward(self, a, b):
        return a / b

    def backward(self, grad, out):
        b = self.inputs[1]
        need_a, need_b = self.needs_input_grad
        return grad / b if need_a else None, -grad * out / b if need_b else None

    def backward_arrays(self, grad, out):
        b = arrays_of(self.inputs)[1]
        need_a, need_b = self.needs_input_grad
        return grad / b if need_a else None, -grad * out / b if need_b else None


class Neg(Function):
    """out = -a"""

    rule = "grad_a = -grad"
    saves_inputs = False

    def forward(self, a):
        return -a

    def backward(self, grad, out):
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

    def forward(self, a, b):
        if isinstance(b, (int, float)) and isinstance(a, ndarray) and is_floating(a.dtype):
            if b == -0.5:
                with errstate(divide="ignore"):  # 1 / 0: inf, as a ** -0.5 gives quietly
                    return xp.reciprocal(xp.sqrt(a))
            if b == 3 and fastpath.enabled():  # a * a * a, as PyTorch computes a cube
                out = a * a  # a NumPy scalar when a is 0-d
                return xp.multiply(out, a, out=out) if out.ndim else out * a
        if isinstance(b, ndarray) and b.dtype.kind == "i" and xp.result_type(a, b).kind in "iu":
            return _int_power(a, b)
        return a**b

    def backward(self, grad, out):
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

    def forward(self, a):
        return xp.exp(a)

    def backward(self, grad, out):
        return (grad * out,)

    backward_arrays = backward  # operators only: the same rule serves arrays


class Log(Function):
    """out = log(a)"""

    rule = "grad_a = grad / a"

    def forward(self, a):
        return xp.log(a)

    def backward(self, grad, out):
        return (grad / self.inputs[0],)

    def backward_arrays(self, grad, out):
        return (grad / self.inputs[0]._array,)


class Log1p(Function):
    """out = log(1 + a), exact where a is tiny (where log(1 + a) rounds 1 + a first)"""

    rule = "grad_a = grad / (1 + a)"

    def forward(self, a):
        return xp.log1p(a)

    def backward(self, grad, out):
        return (grad / (self.inputs[0] + 1.0),)

    def backward_arrays(self, grad, out):
        return (grad / (self.inputs[0]._array + 1.0),)


class Expm1(Function):
    """out = exp(a) - 1, exact where a is tiny (where exp(a) - 1 cancels)"""

    rule = "grad_a = grad * (out + 1)"
    saves_inputs = False
    saves_out = True

    def forward(self, a):
        return xp.expm1(a)

    def backward(self, grad, out):
        return (grad * (out + 1.0),)

    backward_arrays = backward  # operators only: the same rule serves arrays


class Sqrt(Function):
    """out = sqrt(a)"""

    rule = "grad_a = grad / (2 * out)"
    saves_inputs = False
    saves_out = True

    def forward(self, a):
        return xp.sqrt(a)

    def backward(self, grad, out):
        return (grad / (out * 2.0),)

    backward_arrays = backward  # operators only: the same rule serves arrays


class Sin(Function):
    """out = sin(a)"""

    rule = "grad_a = grad * cos(a)"

    def forward(self, a):
        return xp.sin(a)

    def backward(self, grad, out):
        return (grad * self.inputs[0].cos(),)


class Cos(Function):
    """out = cos(a)"""

    rule = "grad_a = -grad * sin(a)"

    def forward(self, a):
        return xp.cos(a)

    def backward(self, grad, out):
        return (-grad * self.inputs[0].sin(),)


class Tanh(Function):
    """out = tanh(a)"""

    rule = "grad_a = grad * (1 - out**2)"
    saves_inputs = False
    saves_out = True

    def forward(self, a):
        return xp.tanh(a)

    def backward(self, grad, out):
        return (grad * (1.0 - out * out),)

    backward_arrays = backward  # operators only: the same rule serves arrays


class Sigmoid(Function):
    """out = 1 / (1 + exp(-a)), computed without overflow"""

    rule = "grad_a = grad * out * (1 - out)"
    saves_inputs = False
    saves_out = True

    def forward(self, a):
        # exp of a non-positive number only: exp(-|a|) never overflows.
        e = xp.exp(-xp.abs(a))
        return xp.where(a >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(a.dtype, copy=False)

    def backward(self, grad, out):
        return (grad * out * (1.0 - out),)

    backward_arrays = backward  # operators only: the same rule serves arrays


class Relu(Function):
    """out = max(a, 0)  (relu'(0) = 0; where a is NaN the gradient passes, as PyTorch's)"""

    rule = "grad_a = grad where out != 0 (a > 0, or NaN), else 0"
    saves_inputs = False
    saves_out = True

    def forward(self, a):
        return xp.maximum(a, 0)

    def backward(self, grad, out):
        # out is 0, positive or NaN, so "not a <= 0" is out != 0: one pass, and NaN passes,
        # as in PyTorch. The mask is a constant; selected, so a NaN gradient stays out of 0.
        return (Slopes.apply(grad, out, mask=out._array != 0, slope=0.0),)

    def backward_arrays(self, grad, out):
        return (masked(grad, out != 0),)


class Abs(Function):
    """out = |a|  (abs'(0) = 0)"""

    rule = "grad_a = grad * sign(a)"

    def forward(self, a):
        return xp.abs(a)

    def backward(self, grad, out):
        return (grad * self.inputs[0].sign(),)


class Sign(Function):
    """out = sign(a), 0 at NaN (as PyTorch, where NumPy gives NaN)"""

    rule = "grad_a = 0 (everywhere it exists)"

    def forward(self, a):
        if a.dtype.kind == "b":  # a bool is its own sign (NumPy's sign has no bool loop)
            return a.copy()
        out = xp.sign(a)
        return xp.where(xp.isnan(out), 0, out) if is_floating(out.dtype) else out

    def backward(self, grad, out):
        return (grad * 0.0,)


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

    def forward(self, a, lo=None, hi=None, *, op="clamp"):
        self.lo, self.hi = lo, hi
        self.node_name = self.NAMES[op][isinstance(lo, ndarray) or isinstance(hi, ndarray)]
        return xp.clip(a, lo, hi)

    def masks(self):
        """Where each input's gradient flows, a constant mask each (None for no bound)."""
        a, lo, hi = self.inputs[0]._array, self.lo, self.hi
        inside = a >= lo if hi is None else (a <= hi if lo is None else (a >= lo) & (a <= hi))
        if len(self.inputs) == 1:  # number bounds: options, not inputs
            return (inside,)
        below = None if lo is None else (a < lo if hi is None else (a < lo) & (lo < hi))
        above = None if hi is None else (a > hi if lo is None else (a > hi) | (hi < lo))
        return inside, below, above

    def backward(self, grad, out):
        pairs = zip(self.masks(), self.needs_input_grad, strict=True)
        return tuple(Where.apply(m, grad, 0.0) if need else None for m, need in pairs)

    def backward_arrays(self, grad, out):
        pairs = zip(self.masks(), self.needs_input_grad, strict=True)
        return tuple(masked(grad, m) if need else None for m, need in pairs)


class Piecewise(Function):
    """out = a where mask, else slope * a + other: the piecewise-linear activations
    (leaky_relu, hardtanh, relu6, threshold), the mask fixed by a's values and ``other`` a
    constant (a number or an array)"""

    rule = "grad_a = grad where mask, else grad * slope"
    saves_inputs = True

    def forward(self, a, *, mask, slope, other):
        self.mask, self.slope = mask, slope
        rest = a * slope + other if slope else other
        return xp.where(mask, a, rest).astype(a.dtype, copy=False)

    def backward(self, grad, out):
        return (Slopes.apply(grad, self.inputs[0], mask=self.mask, slope=self.slope),)

    def backward_arrays(self, grad, out):
        if self.slope:
            return (xp.where(self.mask, grad, grad * self.slope),)
        return (masked(grad, self.mask),)


class Slopes(Function):
    """out = g where mask, else g * slope (0 selects, so NaN stays out): the gradient of a
    piecewise-linear op, recorded with that op's input (or output) ``a`` among its inputs,
    whose derivative in ``a`` is 0. A second derivative through relu, clamp or leaky_relu is
    then zeros, as PyTorch's (its threshold_backward and leaky_relu_backward take the input
    too), rather than a gradient that never depended on the input."""

    rule = "grad_g = grad where mask, else grad * slope; grad_a = 0"
    saves_inputs = True

    def forward(self, g, a, *, mask, slope):
        self.mask, self.slope = mask, slope
        if slope:
            return xp.where(mask, g, g * slope)
        return masked(g, mask)

    def backward(self, grad, out):
        need_g, need_a = self.needs_input_grad
        a = self.inputs[1]
        gg = Slopes.apply(grad, a, mask=self.mask, slope=self.slope) if need_g else None
        return gg, a.new_zeros(a.shape) if need_a else None


class Where(Function):
    """out = x where cond else y

    Selected, not multiplied by the mask (as PyTorch): a NaN or inf gradient does not leak
    into the branch not taken, so where(c, f(where(c, x, safe)), 0) has a finite gradient.
    """

    rule = "grad_x = grad where cond, grad_y = grad where not cond"

    def forward(self, cond, x, y):
        self.cond = cond
        out = xp.where(cond, x, y)
        if isinstance(x, float) and isinstance(y, ndarray):
            out = out.astype(y.dtype, copy=False)
        elif isinstance(y, float) and isinstance(x, ndarray):
            out = out.astype(x.dtype, copy=False)
        return out

    def backward(self, grad, out):
        _, need_x, need_y = self.needs_input_grad
        c = self.cond
        gx = Where.apply(c, grad, 0.0) if need_x else None
        return None, gx, Where.apply(c, 0.0, grad) if need_y else None

    def backward_arrays(self, grad, out):
        _, need_x, need_y = self.needs_input_grad
        c = self.cond
        return None, masked(grad, c) if need_x else None, masked(grad, ~c) if need_y else None


class Maximum(Function):
    """out = max(a, b);  where either is NaN (out is NaN) both inputs get all of the
    gradient, as PyTorch: each input's share is 0 where it loses, 1/2 at a tie, 1 otherwise."""

    rule = "grad_a = grad where a > b, grad_b = grad where b > a (ties: half each)"

    pick = staticmethod(xp.maximum)
    wins = staticmethod(xp.greater)

    def forward(self, a, b):
        return self.pick(a, b)

    def backward(self, grad, out):
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

    def forward(self, a, dtype, order=None, name="ToCopyBackward0"):
        self.node_name = name  # clone's copy is CloneBackward0, to's ToCopyBackward0
        if order is None:
            return a.astype(dtype, copy=True)
        back = tuple(order.index(d) for d in range(len(order)))
        return a.transpose(order).astype(dtype, order="C").transpose(back)  # a view of a copy

    def backward(self, grad, out):
        return (grad.to(self.inputs[0].dtype),)


class ScaleGrad(Function):
    """out = a (a view, the same values), scale a constant array that broadcasts against
    the gradient: what embedding's scale_grad_by_freq needs"""

    rule = "grad_a = grad * scale"

    def forward(self, a, scale):
        self.scale = scale
        return a.view()

    def backward(self, grad, out):
        return grad * self.scale, None

    backward_arrays = backward  # operators only: the same rule serves arrays


# Polynomials in powers of y, made as Chebyshev interpolants in 40-digit arithmetic: erf(x)/x
# with y = 2x^2 - 1 for |x| < 1, and erfc(x) exp(x^2) with y = (12/|x| - 7)/5 for 1 <= |x| <= 6.
_ERF_SMALL = (
    0.9654687386698673, -0.1405360890227171, 0.019852496688983708, -0.0022854855611441132,
    0.00021751715604159932, -1.7537169441124866e-05, 1.223382738359897e-06,
    -7.511569286591727e-08, 4.115800583208149e-09, -2.035228405815769e-10,
    9.167619596865806e-12, -3.8078824063194953e-13, 1.4543887079465116e-14,
)
_ERFCX_TAIL = (
    0.28972211632346406, 0.16536269001261455, -0.030831050508395068, 0.0028211318978840923,
    0.0010344322249226908, -0.0007383867430399212, 0.0002656054895056027,
    -5.52864958439701e-05, -4.046789993234076e-06, 1.0882654670489532e-05,
    -6.497291537598882e-06, 2.5830659599898264e-06, -6.657921249770734e-07,
    1.4689536495763653e-09, 1.3115171718798185e-07, -9.481431088854679e-08,
    4.106033452106679e-08, -1.8649792031756494e-08, 1.0397665991608866e-08,
    2.2486492143038342e-10, -4.287386484589626e-09, 1.5556735704659984e-09,
)


def _horner(coefs: tuple[float, ...], y: Any) -> Any:
    """sum_k coefs[k] y**k (two coefficients or more) by Horner's rule, in place on one
    fresh buffer."""
    out = y * coefs[-1]
    out += coefs[-2]
    for c in coefs[-3::-1]:
        out *= y
        out += c
    return out


# erf(x)/x as a rational function of t = x^2 for |x| <= 4, where single precision needs
# it (beyond, erf rounds to +-1 there): numerator and denominator coefficients, lowest power
# first, fitted by least squares with Lawson's reweighting against the float64 erf below, to
# a relative error of at most 2.1e-9. Evaluated in float64, it gives float32's erf within one
# ulp of PyTorch's, with no branch: one pass of a dozen operations per piece of the array.
_ERF_NUM = (
    1.1283791693737475, 0.18520336224409492, 0.054316895978864785, 0.0038496131338136013,
    0.0003796074883118959, 4.684736603558501e-06, -1.320202833447061e-08,
)
_ERF_DEN = (
    1.0, 0.49746562009436585, 0.11395844419433579, 0.015462087660648983,
    0.0013075683893650563, 6.311019461476183e-05,
)
# Elements per piece when an elementwise op runs piece by piece: a piece's float64
# temporaries are 128 KiB each.
PIECE = 16384


def _erf_narrow(x: Any) -> Any:
    """erf of a float64 array (a fresh one, which it writes over) to single precision."""
    xp.clip(x, -4.0, 4.0, out=x)
    t = x * x
    num = _horner(_ERF_NUM, t)
    num *= x
    num /= _horner(_ERF_DEN, t)
    return num


def erf(a: Any) -> Any:
    """erf of an array, as Erf computes it: the polynomials in float64; narrower floats (and
    integers, which give float32) by the rational function, piece by piece, with the fast
    path on, and as float64's erf rounded with it off."""
    if a.dtype != xp.float64 and not fastpath.enabled():
        return erf(a.astype(xp.float64)).astype(a.dtype if is_floating(a.dtype) else xp.float32)
    if a.dtype != xp.float64:
        flat = a.reshape(-1)
        out = xp.empty(flat.shape, a.dtype if is_floating(a.dtype) else xp.float32, like=a)
        for s in range(0, flat.size, PIECE):
            out[s : s + PIECE] = _erf_narrow(flat[s : s + PIECE].astype(xp.float64))
        return out.reshape(a.shape)
    x = a.reshape(-1)  # (n,)
    ax = xp.abs(x)
    small = xp.flatnonzero(ax < 1.0)
    big = xp.flatnonzero(~(ax < 1.0))  # NaN lands here and stays NaN
    out = xp.empty_like(x)
    xs = x[small]
    y = xs * xs
    y *= 2.0
    y -= 1.0
    out[small] = xs * _horner(_ERF_SMALL, y)
    ab = xp.minimum(ax[big], 6.0)  # beyond 6 the tail rounds to exactly 1
    y = 12.0 / ab
    y -= 7.0
    y /= 5.0
    erfc = xp.exp(-(ab * ab))
    erfc *= _horner(_ERFCX_TAIL, y)
    out[big] = 1.0 - erfc
    xp.copysign(out, x, out=out)
    return out.reshape(a.shape)


class Erf(Function):
    """out = erf(a)

    NumPy has no erf. In float64, two polynomials (above) give it to about one ulp, each
    evaluated only where it applies (index arrays); past |x| = 6, erf is +-1 in double
    precision. With the fast path on, float32 (and narrower floats, and integers, which give
    float32) take the rational function above, evaluated in float64 piece by piece, within
    one ulp of PyTorch's erf; with it off, the polynomials' float64 erf, rounded.
    """

    def forward(self, a):
        return erf(a)

    rule = "grad_a = grad * 2/sqrt(pi) * exp(-a**2)"

    def backward(self, grad, out):
        x = self.inputs[0]
        return (grad * (-(x * x)).exp() * (2.0 / math.sqrt(math.pi)),)


_SQRT_HALF = 1.0 / math.sqrt(2.0)
_PDF = 1.0 / math.sqrt(2.0 * math.pi)  # the standard normal density at 0
_TANH_C = math.sqrt(2.0 / math.pi)
_TANH_K = 0.044715

# Phi(-|x|) = 0.5 erfc(u), u = |x| / sqrt 2, as exp(-u^2) t P(t) with t = 1 / (1 + 0.4 u): P's
# coefficients, lowest power first, fitted by least squares with Lawson's reweighting to
# 0.5 erfc(u) exp(u^2) / t over t in (0, 1] (40-digit references), to a relative error of
# 1.3e-7. It shares exp(-u^2) with the normal density, so one pass makes both GELU and its
# slope. Evaluated in float32: within 5.7e-7 of Phi(x) relatively for |x| < 3, 4.2e-6 out to
# |x| = 12 (the rounding of x^2 in the exponent), where PyTorch's 0.5 (1 + erf) cancels and
# is off by up to 100% for x < -5.
_PHI_T = 0.4 * _SQRT_HALF  # t = 1 / (1 + _PHI_T |x|)
_PHI_TAIL = (
    0.11283793097425206, 0.11283479807559813, 0.10392136684580724, 0.08427086261487575,
    0.07071618971555195, -0.0028047563830096668, 0.08454387836304396, -0.09145145129141728,
    0.025131243582729796,
)


def _gelu_narrow(x: Any, out: Any, slope: Any) -> None:
    """x Phi(x) into ``out`` and Phi(x) + x phi(x) into ``slope``, for a float32 piece x.
    Phi(x) is (1 + sign x) / 2 - sign(x) Phi(-|x|): exact in both tails, 0.5 at 0, with no
    masked select."""
    t = xp.abs(x)
    t *= _PHI_T
    t += 1.0
    xp.reciprocal(t, out=t)
    tail = _horner(_PHI_TAIL, t)
    tail *= t
    density = x * x  # exp(-x^2 / 2) = exp(-u^2)
    density *= -0.5
    xp.exp(density, out=density)
    tail *= density  # Phi(-|x|)
    sign = xp.sign(x)
    tail *= sign
    cdf = sign  # (1 + sign) / 2 - sign Phi(-|x|) = Phi(x)
    cdf += 1.0
    cdf *= 0.5
    cdf -= tail
    xp.multiply(x, cdf, out=out)
    density *= x
    density *= _PDF  # x phi(x)
    xp.add(density, cdf, out=slope)


class Gelu(Function):
    """out = x * Phi(x), Phi the standard normal CDF: 0.5 (1 + erf(x / sqrt 2)), or, with
    approximate="tanh", 0.5 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as PyTorch's gelu.

    One primitive instead of the half-dozen ops it would be in Tensor ops: forward makes the
    output and keeps the one array the gradient needs, the slope Phi + x phi for exact GELU
    (so that first-order backward is one product), the tanh for the tanh form, which works
    on the whole array. With the fast path on, exact GELU works piece by piece, floats
    narrower than float64 making Phi in float32 from exp(-x^2 / 2) and a polynomial
    (_gelu_narrow); with it off, on the whole array, from erf. Under create_graph the rule
    runs in Tensor ops from x, so it differentiates again.
    """

    rule = (
        "grad_x = grad * (Phi(x) + x * phi(x)), phi the normal density; with tanh: grad * "
        "(0.5 (1 + th) + 0.5 x (1 - th^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2))"
    )

    def forward(self, a, approximate):
        self.approximate = approximate
        dtype = a.dtype if is_floating(a.dtype) else xp.float32
        if approximate == "none" and dtype == xp.float64:  # erf's exact path, whole
            cdf = erf(a * _SQRT_HALF)
            cdf += 1.0
            cdf *= 0.5
            self.saved = cdf + a * xp.exp(a * a * -0.5) * _PDF  # 0-d a makes NumPy scalars
            return a * cdf
        if approximate != "none" or not fastpath.enabled():
            return self._whole(a, dtype)
        flat = a.reshape(-1)
        out = xp.empty(flat.shape, dtype, like=a)
        saved = xp.empty(flat.shape, dtype, like=a)
        if dtype != xp.float32:  # float16: made in float32
            pair = xp.empty((2, min(PIECE, flat.size)), xp.float32, like=a)
        for s in range(0, flat.size, PIECE):
            x = flat[s : s + PIECE]
            if dtype == xp.float32:
                _gelu_narrow(x.astype(dtype, copy=False), out[s : s + PIECE], saved[s : s + PIECE])
            else:  # stored in float16
                o, d = pair[:, : x.size]
                _gelu_narrow(x.astype(xp.float32), o, d)
                out[s : s + PIECE], saved[s : s + PIECE] = o, d
        self.saved = saved.reshape(a.shape)
        return out.reshape(a.shape)

    def _whole(self, a, dtype):
        """Forward on the whole array (exact GELU in float32 for narrower floats, as the
        pieces): the output, and the slope or the tanh kept."""
        if self.approximate == "none":
            x = a.astype(xp.float32)
            cdf = 0.5 * (1.0 + erf(x * _SQRT_HALF))
            kept = cdf + x * xp.exp(-0.5 * x * x) * _PDF
            out = x * cdf
        else:
            x = a.astype(dtype, copy=False)
            kept = xp.tanh(_TANH_C * (x + _TANH_K * (x * x * x)))  # PyTorch's order
            out = 0.5 * x * (1.0 + kept)
        self.saved = kept.astype(dtype, copy=False)
        return out.astype(dtype, copy=False)

    def backward_arrays(self, grad, out):
        if self.approximate == "none":  # the slope, kept by forward
            return (xp.multiply(grad, self.saved, dtype=self.saved.dtype),)
        th = self.saved
        x = self.inputs[0]._array.astype(th.dtype, copy=False)
        d = x * 0.5  # tanh's slope, in PyTorch's order:
        d *= 1.0 - th * th  # 0.5 (1 + th) + 0.5 x (1 - th^2) c (1 + 3k x^2)
        d *= _TANH_C
        d *= x * x * (3.0 * _TANH_K) + 1.0
        d += (th + 1.0) * 0.5
        d *= grad
        return (d,)

    def backward(self, grad, out):
        x = self.inputs[0]
        if not is_floating(x.dtype):
            x = x.to(self.saved.dtype)
        if self.approximate == "none":
            cdf = (x * _SQRT_HALF).erf() * 0.5 + 0.5
            return (grad * (cdf + x * (x * x * -0.5).exp() * _PDF),)
        th = ((x * x * x * _TANH_K + x) * _TANH_C).tanh()
        slope = x * 0.5 * (1.0 - th * th) * _TANH_C * (x * x * (3.0 * _TANH_K) + 1.0)
        return (grad * (slope + (th + 1.0) * 0.5),)
