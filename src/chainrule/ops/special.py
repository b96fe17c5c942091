"""The error function and GELU, the op built on it (NumPy has no erf): erf as Chebyshev
polynomials in float64, and for narrower floats as a rational function (fastpath/table.py);
GELU's forward and slope made piece by piece. Then the special functions NumPy lacks (erfc,
erfinv, lgamma, digamma, polygamma, i0, i1), on scipy.special (the ``special`` extra, imported
by the first call) but for trigamma, PyTorch's series in NumPy, and those it has in parts
(logit, xlogy, sinc).

Each op returns gradients in the output's broadcast shape; the engine unbroadcasts.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any

from .. import fastpath
from ..array import errstate, from_host, host, is_floating, ndarray, to_host, xp
from ..autograd.primitive import Function

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor

# Polynomials in powers of y, made as Chebyshev interpolants in 40-digit arithmetic: erf(x)/x
# with y = 2x^2 - 1 for |x| < 1, and erfc(x) exp(x^2) with y = (12/|x| - 7)/5 for 1 <= |x| <= 6.
_ERF_SMALL = (
    0.9654687386698673,
    -0.1405360890227171,
    0.019852496688983708,
    -0.0022854855611441132,
    0.00021751715604159932,
    -1.7537169441124866e-05,
    1.223382738359897e-06,
    -7.511569286591727e-08,
    4.115800583208149e-09,
    -2.035228405815769e-10,
    9.167619596865806e-12,
    -3.8078824063194953e-13,
    1.4543887079465116e-14,
)
_ERFCX_TAIL = (
    0.28972211632346406,
    0.16536269001261455,
    -0.030831050508395068,
    0.0028211318978840923,
    0.0010344322249226908,
    -0.0007383867430399212,
    0.0002656054895056027,
    -5.52864958439701e-05,
    -4.046789993234076e-06,
    1.0882654670489532e-05,
    -6.497291537598882e-06,
    2.5830659599898264e-06,
    -6.657921249770734e-07,
    1.4689536495763653e-09,
    1.3115171718798185e-07,
    -9.481431088854679e-08,
    4.106033452106679e-08,
    -1.8649792031756494e-08,
    1.0397665991608866e-08,
    2.2486492143038342e-10,
    -4.287386484589626e-09,
    1.5556735704659984e-09,
)


def _horner(coefs: tuple[float, ...], y: Any, out: Any = None) -> Any:
    """sum_k coefs[k] y**k (two coefficients or more) by Horner's rule, in place on one
    buffer: ``out`` where given, else a fresh one."""
    out = xp.multiply(y, coefs[-1], out=out)
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
    1.1283791693737475,
    0.18520336224409492,
    0.054316895978864785,
    0.0038496131338136013,
    0.0003796074883118959,
    4.684736603558501e-06,
    -1.320202833447061e-08,
)
_ERF_DEN = (
    1.0,
    0.49746562009436585,
    0.11395844419433579,
    0.015462087660648983,
    0.0013075683893650563,
    6.311019461476183e-05,
)
# Elements per piece when an elementwise op runs piece by piece: a piece's float64
# temporaries are 128 KiB each.
PIECE = 16384
# Elements per piece of exact GELU in float32: the piece's input, output and slope and its
# two rows of temporaries, 256 KiB each, stay in a 2 MiB cache.
GELU_PIECE = 65536


def _erf_narrow(x: Any) -> Any:
    """erf of a float64 array (a fresh one, which it writes over) to single precision."""
    xp.clip(x, -4.0, 4.0, out=x)
    t = x * x
    num = _horner(_ERF_NUM, t)
    num *= x
    num /= _horner(_ERF_DEN, t)
    return num


# At most this many values, on the host, in float32 or float64 (or integers): erf and GELU
# take Python's math.erf value by value with the fast path on, and float32 trigamma SciPy's
# zeta ufunc, where the arrays' dozen passes cost more than the values (fastpath/table.py).
FEW = 32


def _few(a: Any) -> bool:
    """Whether ``a`` is a few values that math.erf, or a ufunc's loop, takes one by one (see
    FEW): a host array, or the NumPy scalar that arithmetic on a 0-d one gives."""
    host_made = type(a) is host.ndarray or isinstance(a, host.generic)
    return a.size <= FEW and host_made and a.dtype.itemsize >= 4


def _erf_few(a: Any) -> Any:
    """erf of a few values by Python's math.erf (libm's, within an ulp in float64), in a's
    float dtype (float32 for integers)."""
    dtype = a.dtype if is_floating(a.dtype) else xp.float32
    return xp.array(list(map(math.erf, a.reshape(-1).tolist())), dtype).reshape(a.shape)


def erf(a: Any) -> Any:
    """erf of an array, as Erf computes it: the polynomials in float64; narrower floats (and
    integers, which give float32) by the rational function, piece by piece, with the fast
    path on, and as float64's erf rounded with it off. A few values, with the fast path on,
    by math.erf."""
    if _few(a) and fastpath.enabled():
        return _erf_few(a)
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

    def forward(self, a: Any) -> Any:
        return erf(a)

    rule = "grad_a = grad * 2/sqrt(pi) * exp(-a**2)"

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
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
    0.11283793097425206,
    0.11283479807559813,
    0.10392136684580724,
    0.08427086261487575,
    0.07071618971555195,
    -0.0028047563830096668,
    0.08454387836304396,
    -0.09145145129141728,
    0.025131243582729796,
)


def _gelu_narrow(x: Any, out: Any, slope: Any, work: Any) -> None:
    """x Phi(x) into ``out`` and Phi(x) + x phi(x) into ``slope``, for a float32 piece x,
    with ``work``'s two float32 rows (as long as x or longer) for the temporaries. Phi(x) is
    (1 + sign x) / 2 - sign(x) Phi(-|x|): exact in both tails, 0.5 at 0, with no masked
    select."""
    t, tail = work[0, : x.size], work[1, : x.size]
    xp.abs(x, out=t)
    t += 1.0 / _PHI_T
    xp.divide(1.0 / _PHI_T, t, out=t)  # 1 / (1 + _PHI_T |x|)
    _horner(_PHI_TAIL, t, out=tail)
    tail *= t
    density = xp.multiply(x, x, out=t)  # exp(-x^2 / 2) = exp(-u^2)
    density *= -0.5
    xp.exp(density, out=density)
    tail *= density  # Phi(-|x|)
    cdf = xp.sign(x, out=out)
    tail *= cdf
    cdf += 1.0  # (1 + sign) / 2 - sign Phi(-|x|) = Phi(x)
    cdf *= 0.5
    cdf -= tail
    density *= x
    density *= _PDF  # x phi(x)
    xp.add(density, cdf, out=slope)
    cdf *= x  # out = x Phi(x)


def _gelu_few(a: Any, dtype: Any) -> tuple[Any, Any]:
    """x Phi(x) and the slope Phi(x) + x phi(x) of a few values, value by value in float64
    by math.erf, as PyTorch's 0.5 (1 + erf(x / sqrt 2)), then rounded to ``dtype``."""
    out, slope = [], []
    for x in a.reshape(-1).tolist():
        cdf = 0.5 * (1.0 + math.erf(x * _SQRT_HALF))
        out.append(x * cdf)
        slope.append(cdf + x * math.exp(-0.5 * x * x) * _PDF)
    return xp.array(out, dtype).reshape(a.shape), xp.array(slope, dtype).reshape(a.shape)


class Gelu(Function):
    """out = x * Phi(x), Phi the standard normal CDF: 0.5 (1 + erf(x / sqrt 2)), or, with
    approximate="tanh", 0.5 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as PyTorch's gelu.

    One primitive instead of the half-dozen ops it would be in Tensor ops: forward makes the
    output and keeps the one array the gradient needs, the slope Phi + x phi for exact GELU
    (so that first-order backward is one product), the tanh for the tanh form, which works
    on the whole array. With the fast path on, exact GELU works piece by piece, floats
    narrower than float64 making Phi in float32 from exp(-x^2 / 2) and a polynomial
    (_gelu_narrow); with it off, on the whole array, from erf. Its rule in Tensor ops is
    GeluBackward, the gradient as an op (PyTorch's gelu_backward), which differentiates again.
    """

    rule = (
        "grad_x = grad * (Phi(x) + x * phi(x)), phi the normal density; with tanh: grad * "
        "(0.5 (1 + th) + 0.5 x (1 - th^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2))"
    )

    def forward(self, a: Any, approximate: str) -> Any:
        self.approximate = approximate
        dtype = a.dtype if is_floating(a.dtype) else xp.float32
        if approximate == "none" and _few(a) and fastpath.enabled():
            out, self.saved = _gelu_few(a, dtype)
            return out
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
        rows = 2 if dtype == xp.float32 else 4  # float16: output and slope made in float32
        work = xp.empty((rows, min(GELU_PIECE, flat.size)), xp.float32, like=a)
        for s in range(0, flat.size, GELU_PIECE):
            x, end = flat[s : s + GELU_PIECE], s + GELU_PIECE
            if dtype == xp.float32:
                _gelu_narrow(x.astype(dtype, copy=False), out[s:end], saved[s:end], work)
            else:  # stored in float16
                o, d = work[2:, : x.size]
                _gelu_narrow(x.astype(xp.float32), o, d, work)
                out[s:end], saved[s:end] = o, d
        self.saved = saved.reshape(a.shape)
        return out.reshape(a.shape)

    def _whole(self, a: Any, dtype: Any) -> Any:
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

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        if self.approximate == "none":  # the slope, kept by forward
            return (xp.multiply(grad, self.saved, dtype=self.saved.dtype),)
        th = self.saved
        d = _tanh_slope(self.inputs[0]._array.astype(th.dtype, copy=False), th)
        d *= grad
        return (d,)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        # gelu_backward, one op (PyTorch's GeluBackwardBackward0 under create_graph)
        return (GeluBackward.apply(grad, self.inputs[0], approximate=self.approximate),)


def _tanh_slope(x: Any, th: Any) -> Any:
    """The tanh form's slope at x, th its tanh, in PyTorch's order: 0.5 (1 + th) + 0.5 x
    (1 - th^2) c (1 + 3k x^2); a new array."""
    d = x * 0.5
    d *= 1.0 - th * th
    d *= _TANH_C
    d *= x * x * (3.0 * _TANH_K) + 1.0
    d += (th + 1.0) * 0.5
    return d


class GeluBackward(Function):
    """out = g (Phi(x) + x phi(x)), or the tanh form's slope: Gelu's gradient as an op
    (PyTorch's gelu_backward), so that taken with create_graph it is one node,
    GeluBackwardBackward0, on g and x. grad_g = this op of grad; grad_x = grad g gelu''(x):
    phi(x) (2 - x^2), or with tanh (th = tanh(u), u = c (x + k x^3)) (1 - th^2) (u' - x th
    u'^2 + 3 c k x^2), as PyTorch's gelu_double_backward."""

    rule = (
        "grad_g = gelu_backward(grad, x); grad_x = grad * g * phi(x) * (2 - x^2), with tanh: "
        "grad * g * (1 - th^2) * (u' - x th u'^2 + 3ck x^2)"
    )

    def forward(self, g: Any, x: Any, *, approximate: str) -> Any:
        self.call = {"approximate": approximate}  # as PyTorch's node shows it
        a = x if x.dtype.itemsize >= 4 else x.astype(xp.float32)  # half types in float32
        if approximate == "none":
            slope = erf(a * _SQRT_HALF)
            slope += 1.0
            slope *= 0.5
            slope += a * xp.exp(a * a * -0.5) * _PDF
        else:
            slope = _tanh_slope(a, xp.tanh(_TANH_C * (a + _TANH_K * (a * a * a))))
        return xp.multiply(g, slope, dtype=g.dtype)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        need_g, need_x = self.needs_input_grad
        g, x = self.inputs
        gg = GeluBackward.apply(grad, x, **self.call) if need_g else None
        if not need_x:
            return gg, None
        if self.call["approximate"] == "none":
            return gg, grad * g * (x * x * -0.5).exp() * _PDF * (2.0 - x * x)
        th = ((x * x * x * _TANH_K + x) * _TANH_C).tanh()
        du = (x * x * (3.0 * _TANH_K) + 1.0) * _TANH_C
        curve = du - x * th * du * du + x * x * (3.0 * _TANH_C * _TANH_K)
        return gg, grad * g * (1.0 - th * th) * curve


def _scipy_special(op: str) -> Any:
    """scipy.special, imported on first use, or an error that names the extra to install."""
    try:
        import scipy.special
    except ImportError:  # pragma: no cover - scipy is in the test extra
        raise ImportError(
            f"{op}: NumPy has no {op}, and chainrule computes it with scipy, which is not "
            "installed; install it with pip install chainrule[special]"
        ) from None
    return scipy.special


@functools.cache
def _host_ufunc(name: str) -> Any:
    """scipy.special's ufunc ``name`` where SciPy is installed, else None (NumPy serves)."""
    try:
        import scipy.special
    except ImportError:  # pragma: no cover - scipy is in the test extra
        return None
    return getattr(scipy.special, name)


def _host_floats(a: Any, b: Any) -> bool:
    """Whether b is a float32 or float64 host array and a a number or a host array of its
    dtype: what SciPy's ufuncs compute in that dtype (they take float16 to float64)."""
    if type(b) is not host.ndarray or b.dtype.char not in "fd":
        return False
    return not isinstance(a, ndarray) or (type(a) is host.ndarray and a.dtype == b.dtype)


def _on_host(op: str, name: str, a: Any, *args: Any) -> Any:
    """scipy.special's ``name`` of the float array ``a`` (after any leading ``args``), in a's
    dtype: float16 and bfloat16 computed in float32 and rounded, as PyTorch computes them."""
    fn = getattr(_scipy_special(op), name)  # its ufuncs report no floating-point warnings
    x = to_host(a)
    out = fn(*args, x if x.dtype.itemsize >= 4 else x.astype(xp.float32))
    return from_host(out.astype(a.dtype, copy=False), a)


class Erfc(Function):
    """out = erfc(a) = 1 - erf(a), exact in the right tail (where 1 - erf(a) cancels)"""

    rule = "grad_a = -grad * 2/sqrt(pi) * exp(-a**2)"

    def forward(self, a: Any) -> Any:
        return _on_host("erfc", "erfc", a)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x = self.inputs[0]
        return (grad * (-(x * x)).exp() * (-2.0 / math.sqrt(math.pi)),)


class Erfinv(Function):
    """out = erfinv(a), the inverse of erf on (-1, 1); +-inf at +-1, NaN beyond"""

    rule = "grad_a = grad * sqrt(pi)/2 * exp(out**2)"
    saves_inputs = False
    saves_out = True

    def forward(self, a: Any) -> Any:
        return _on_host("erfinv", "erfinv", a)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad * (out * out).exp() * (math.sqrt(math.pi) / 2.0),)


class Lgamma(Function):
    """out = log|gamma(a)|; inf at the poles 0, -1, -2, ... and at -inf, as PyTorch"""

    rule = "grad_a = grad * digamma(a)"

    def forward(self, a: Any) -> Any:
        return _lgamma(a)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad * self.inputs[0].digamma(),)


def _lgamma(a: Any) -> Any:
    """log|gamma(a)| of a float array, in its dtype; inf at -inf, as PyTorch's."""
    out = _on_host("lgamma", "gammaln", a)
    return xp.where(xp.isneginf(a), xp.inf, out).astype(out.dtype, copy=False)


class Mvlgamma(Function):
    """out = sum_(i < p) lgamma(a - i/2) + p (p - 1)/4 log(pi), the multivariate log-gamma
    function of dimension p, its terms summed as PyTorch's (from i = p - 1 down)"""

    rule = "grad_a = grad * sum_(i < p) digamma(a - i/2)"

    def forward(self, a: Any, *, p: int) -> Any:
        self.p = p
        terms = _lgamma(a[..., None] + _shifts(p, a))  # (..., p)
        return terms.sum(-1) + p * (p - 1) * math.log(math.pi) / 4

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        a = self.inputs[0]
        shifts = type(a)._make(_shifts(self.p, a._array))
        return (grad * (a.unsqueeze(-1) + shifts).digamma().sum(-1),)


def _shifts(p: int, a: Any) -> Any:
    """-(p - 1)/2, ..., -1/2, 0 in a's dtype, on a's device: mvlgamma's arguments less a."""
    return from_host(host.arange(-(p - 1) / 2, 0.5, 0.5).astype(a.dtype), a)


def _trigamma_steps(x: Any) -> Any:
    """PyTorch's trigamma at x >= 1/2, in x's dtype: six steps of the recurrence
    trigamma(x) = 1 / x^2 + trigamma(x + 1), then the asymptotic series at t = x + 6 by Horner's
    rule in ixx = 1 / t^2: (1 + 1/(2t) + ixx/6 - ixx**2/30 + ixx**3/42) / t. Each 1 / (x + i)^2
    is taken as (1 / (x + i))^2, which underflows to 0 where x^2 would overflow (no warning)."""
    r = x.reshape(1, -1) + xp.arange(7.0, dtype=x.dtype, like=x)[:, None]  # (7, x.size)
    xp.reciprocal(r, out=r)  # 1 / (x + i), i = 0, .., 6
    steps = r * r  # (7, x.size): 1 / (x + i)^2, ixx in the last row
    out = xp.add.reduce(steps[:6], axis=0)  # from x up, as PyTorch's
    ixx = steps[6]
    tail = _horner((1.0, 1.0 / 6, -1.0 / 30, 1.0 / 42), ixx)
    tail *= r[6]  # / t
    out += tail
    ixx *= 0.5  # 1 / (2 t^2)
    out += ixx
    return out.reshape(x.shape)


def trigamma(a: Any) -> Any:
    """polygamma(1, x) of a float array in its dtype (float16 and bfloat16 in float32, as
    PyTorch's), by PyTorch's steps: for x < 1/2 the reflection pi^2 / sin^2(pi x) -
    trigamma(1 - x), its sine in the same precision as PyTorch's so that it rounds as
    PyTorch's does near the poles; then the recurrence and series of _trigamma_steps. A few
    float32 values, with the fast path on, take SciPy's exact zeta(2, x) instead."""
    c = a if a.dtype.itemsize >= 4 else a.astype(xp.float32)
    f = c.dtype.type
    few = _few(c) and c.dtype.char == "f" and fastpath.enabled()
    series = _trigamma_zeta if few else _trigamma_steps
    # a tenth of low.any()'s time on few elements; one value's test in Python, a tenth again
    if not (c.item() < 0.5 if few and not c.ndim else xp.count_nonzero(c < f(0.5))):
        out = series(c)  # the astype only where needed: a NumPy scalar's costs as much as
        return out if out.dtype == a.dtype else out.astype(a.dtype)  # zeta of one value
    low = c < f(0.5)
    with errstate(divide="ignore", invalid="ignore", over="ignore"):  # inf at the poles
        out = series(xp.where(low, f(1) - c, c))
        pi = f(math.pi)
        sin = xp.sin(pi * c)
        out = xp.where(low, (pi * pi) / (sin * sin) - out, out)
        return out.astype(a.dtype, copy=False)  # past float16's range: inf


def _trigamma_zeta(x: Any) -> Any:
    """zeta(2, x) = trigamma(x) of a float32 host array, by SciPy's ufunc: its float32 loop
    computes in float64 and rounds, and warns of nothing."""
    return _hurwitz_zeta()(2.0, x)


@functools.cache
def _hurwitz_zeta() -> Any:
    """SciPy's Hurwitz zeta(s, q) ufunc itself: scipy.special.zeta's Python wrapper around it
    costs as much as the ufunc on a few elements."""
    sp = _scipy_special("polygamma")
    return getattr(getattr(sp, "_ufuncs", None), "_zeta", sp.zeta)


class Digamma(Function):
    """out = digamma(a) = gamma'(a) / gamma(a); -inf at 0, NaN at the negative poles"""

    rule = "grad_a = grad * polygamma(1, a)"

    def forward(self, a: Any) -> Any:
        return _on_host("digamma", "psi", a)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad * self.inputs[0].polygamma(1),)


class Polygamma(Function):
    """out = polygamma(n, a), the n-th derivative of digamma (n = 0: digamma itself)"""

    rule = "grad_a = grad * polygamma(n + 1, a)"

    def forward(self, a: Any, *, n: int) -> Any:
        self.n = n
        if n == 0:
            return _on_host("polygamma", "psi", a)
        if n == 1:
            return trigamma(a)
        # scipy's polygamma, without its Python wrappers' fixed cost: (-1)^(n+1) n! zeta(n+1, a)
        out = _hurwitz_zeta()(n + 1.0, to_host(a).astype(xp.float64))
        out *= _polygamma_scale(n)
        return from_host(out.astype(a.dtype), a)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad * self.inputs[0].polygamma(self.n + 1),)


@functools.cache
def _polygamma_scale(n: int) -> float:
    """(-1)^(n+1) n!, the scale of zeta(n + 1, a) in polygamma(n, a), by SciPy's gamma."""
    return (-1.0) ** (n + 1) * float(_scipy_special("polygamma").gamma(n + 1.0))


class I0(Function):
    """out = I0(a), the modified Bessel function of the first kind of order 0"""

    rule = "grad_a = grad * i1(a)"

    def forward(self, a: Any) -> Any:
        return _on_host("i0", "i0", a)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        return (grad * SpecialI1.apply(self.inputs[0]),)


class SpecialI1(Function):
    """out = I1(a), the modified Bessel function of the first kind of order 1: i0's slope"""

    rule = "grad_a = grad * (i0(a) - out / a), 1/2 where |a| <= eps"
    saves_out = True

    def forward(self, a: Any) -> Any:
        return _on_host("i1", "i1", a)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x = self.inputs[0]
        eps = float(xp.finfo(x._array.dtype).eps)
        big = xp.abs(x._array) > eps  # PyTorch's rule: a safe x where it is tiny
        safe = x.where(big, eps)
        return (grad * (safe.i0() - out / safe).where(big, 0.5),)


class Logit(Function):
    """out = log(z / (1 - z)), z = a clamped to [eps, 1 - eps] where eps is given; the
    gradient is 0 outside that range, NaN outside [0, 1] without eps, as PyTorch's."""

    rule = "grad_a = grad / (a * (1 - a)) inside [eps, 1 - eps] (or [0, 1]), else 0 (or NaN)"

    def forward(self, a: Any, *, eps: Any = None) -> Any:
        self.eps = eps
        z = a
        if eps is not None and eps >= 0:
            lo = a.dtype.type(eps)
            z = xp.clip(a, lo, a.dtype.type(1) - lo)
        with errstate(divide="ignore", invalid="ignore"):
            q = 1 - z
            if not q.ndim:  # a 0-d z's NumPy scalars
                return xp.log(z / q)
            return xp.log(xp.divide(z, q, out=q), out=q)  # in place

    def _inside(self) -> tuple[Any, float]:
        """Where the gradient flows, and its value elsewhere (0 with eps, else NaN)."""
        clamped = self.eps is not None and self.eps >= 0
        lo = self.eps if clamped else 0.0
        a = self.inputs[0]._array
        return (a >= lo) & (a <= 1.0 - lo), 0.0 if clamped else math.nan

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x = self.inputs[0]
        inside, other = self._inside()
        return ((grad / (x * (1.0 - x))).where(inside, other),)

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any]:
        a = self.inputs[0]._array
        g = xp.subtract(1.0, a, out=xp.empty_like(a))  # x (1 - x), then grad / it, in place
        g *= a
        with errstate(divide="ignore", invalid="ignore"):
            xp.divide(grad, g, out=g)
        inside, other = self._inside()
        if other == 0:
            return (fastpath.masked(g, inside),)
        return (fastpath.select(inside, g, other),)


class Xlogy(Function):
    """out = a * log(b), 0 where a == 0 (unless b is NaN), a and b arrays or numbers"""

    rule = "grad_a = grad * log(b) where a != 0, else 0; grad_b = grad * a / b"

    def forward(self, a: Any, b: Any) -> Any:
        tensors = (isinstance(a, ndarray), isinstance(b, ndarray))
        self.node_name = {(True, True): "XlogyBackward0", (False, True): "XlogyBackward1"}.get(
            tensors, "XlogyBackward2"
        )
        if not tensors[1]:  # a number: log it in a's dtype (NumPy's log of it is float64)
            b = xp.asarray(b, dtype=a.dtype)
        ufunc = _host_ufunc("xlogy")
        if ufunc is not None and _host_floats(a, b):  # SciPy's xlogy: one pass, no warning
            return ufunc(a, b)
        with errstate(divide="ignore", invalid="ignore"):
            out = a * xp.log(b)
        zero = xp.equal(a, 0)  # most often nowhere: one pass, no selection
        if xp.count_nonzero(zero):  # (a tenth of zero.any()'s time on few elements)
            out = xp.where(zero & ~xp.isnan(b), 0, out).astype(out.dtype, copy=False)
        return out

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        a, b = self.inputs
        need_a, need_b = self.needs_input_grad
        ga = gb = None
        if need_a:  # PyTorch's xlogy(a != 0, b): log(b) where a is nonzero, else 0
            ga = grad * Xlogy.apply((a != 0).to(grad.dtype), b)
        if need_b:
            gb = grad * a / b
        return ga, gb


class Sinc(Function):
    """out = sin(pi a) / (pi a), 1 at 0"""

    rule = "grad_a = grad * (cos(pi a) pi a - sin(pi a)) / (pi a**2), 0 at 0"

    def forward(self, a: Any) -> Any:
        c = a if a.dtype.itemsize >= 4 else a.astype(xp.float32)  # half types: as PyTorch's
        y = c * c.dtype.type(math.pi)
        out = xp.sin(y)
        zero = y == 0
        if xp.count_nonzero(zero):  # sin(0) / 0 is 1 (NumPy's sinc: a where on every call)
            out, y = xp.where(zero, 1, out), xp.where(zero, 1, y)
        out /= y
        # the astype only for the half types: a 0-d a's out is a NumPy scalar, whose astype
        # costs as much as the passes
        return out if c is a else out.astype(a.dtype)

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        x = self.inputs[0]
        pix = x * math.pi
        squared = x * x * math.pi
        zero = squared._array == 0
        top = pix * pix.cos() - pix.sin()
        # grad times the numerator first, then over pi a**2, as PyTorch's sinc_backward rounds
        # (in bfloat16 the numerator's cancellation makes the order show)
        return ((grad * top / squared.where(~zero, 1.0)).where(~zero, 0.0),)
