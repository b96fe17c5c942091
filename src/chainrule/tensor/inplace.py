"""Tensor in place: the ``*_`` methods and augmented assignment, each its out-of-place op
plus one write into the tensor's array (_write), with the version counter bumped."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from .. import array, fastpath
from ..arguments import (
    broadcasts_to,
    index_arg,
)
from ..array.positions import view_positions
from ..array.tensor_type import tensor_type
from ..autograd import forward_ad
from ..autograd.mode import is_grad_enabled, state
from ..autograd.node import named
from ..autograd.versions import Counter, bump, version
from ..ops import movement
from ..ops.elementwise import rsqrt, sign
from ..ops.pointwise import frac, nan_to_num
from . import views
from .arithmetic import Arithmetic, false_mask, where
from .core import Core, make
from .pointwise import Pointwise

if TYPE_CHECKING:  # Tensor in annotations alone (core.py says why)
    from . import Tensor
    from .core import TensorSelf

xp = array.xp
_HOST = array.host.ndarray
# PyTorch's nodes of the fills that _fill writes as a where (fill_ of a number's)
_FILLS = {"zero_": "ZeroBackward0", "fill_": "FillBackward2"}

RESIZED = (
    "An output with one or more elements was resized since it had shape {}, which does not "
    "match the required output shape {}. This behavior is deprecated, and in a future PyTorch "
    "release outputs will not be resized unless they have zero elements. You can explicitly "
    "reuse an out tensor t by resizing it, inplace, to zero elements with t.resize_(0)."
)


def write_out(result: Any, out: Any, op: str, exact: bool = False) -> Any:
    """PyTorch's ``out=``: ``result`` written into ``out`` (resized to its shape, in out's
    dtype where the result casts to it within its category, or only in its own dtype where
    ``exact``) and ``out`` returned; refused where a gradient would be wanted, as PyTorch
    refuses it."""
    if out is None:
        return result
    if not isinstance(out, Core):
        raise TypeError(f"{op}: out must be a Tensor; got {type(out).__name__}")
    if is_grad_enabled() and (result.requires_grad or out.requires_grad):
        raise RuntimeError(
            f"{op}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad"
        )
    arr, values = out._array, result._array
    if values.dtype != arr.dtype:
        if exact:
            raise RuntimeError(
                f"{op}: expected out tensor to have dtype {result.dtype}, but got {out.dtype} "
                "instead"
            )
        narrowing = array.is_floating(values.dtype) and not array.is_floating(arr.dtype)
        if narrowing or (arr.dtype.kind == "b" and values.dtype.kind != "b"):  # PyTorch's canCast
            raise RuntimeError(
                f"{op}: result type {result.dtype} can't be cast to the desired output type "
                f"{out.dtype}"
            )
        values = values.astype(arr.dtype)
    if arr.shape == values.shape:
        arr[...] = values
    else:  # resized, as PyTorch resizes an out of another shape (with its warning)
        if arr.size:
            warnings.warn(RESIZED.format(list(arr.shape), list(values.shape)), stacklevel=3)
        out._array = values.copy()
    bump(out)
    return out


class InPlace(Core):
    """The in-place methods of Tensor."""

    __slots__ = ()

    # -- in place ---------------------------------------------------------------------------
    # Every in-place op is its out-of-place op plus one write into this tensor's array
    # (_write). With nothing to record, the result is copied in and the version bumped
    # (an item assignment or fill of values the dtype holds, one assignment; +=, -=, *=,
    # /= and a clamp to one bound with the fast path on, one ufunc into the array: _put,
    # _fill, _update).
    # When the result joins a graph, the tensor takes the op's node as its grad_fn (PyTorch
    # "rebases" it), and the node's input is a stand-in for the tensor's old value, so
    # nodes recorded before the write still reach the old one (reference.as_seen).

    def add_(self: TensorSelf, other: Any, *, alpha: Any = 1) -> Tensor:
        ufunc = xp.add if alpha == 1 else None
        return self._update("add_", ufunc, other, lambda t: t.add(other, alpha=alpha))

    def sub_(self: TensorSelf, other: Any, *, alpha: Any = 1) -> Tensor:
        ufunc = xp.subtract if alpha == 1 else None
        return self._update("sub_", ufunc, other, lambda t: t.sub(other, alpha=alpha))

    def mul_(self: TensorSelf, other: Any) -> Tensor:
        return self._update("mul_", xp.multiply, other, lambda t: t * other)

    def addcmul_(self: TensorSelf, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:
        return self._write("addcmul_", lambda t: t.addcmul(tensor1, tensor2, value=value))

    def lerp_(self: TensorSelf, end: Any, weight: Any) -> Tensor:
        """self moved toward end by weight, in place (an average of weights kept with
        ema.lerp_(p, 1 - decay)); the gradient reaches the old value through lerp."""
        return self.copy_(self.lerp(end, weight))

    def addcdiv_(self: TensorSelf, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:
        return self._write("addcdiv_", lambda t: t.addcdiv(tensor1, tensor2, value=value))

    def div_(self: TensorSelf, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        if rounding_mode is None:
            return self._update("div_", xp.true_divide, other, lambda t: t / other)
        return self._write("div_", lambda t: t.div(other, rounding_mode=rounding_mode))

    def pow_(self: TensorSelf, exponent: Any) -> Tensor:
        return self._write("pow_", lambda t: t**exponent)

    def matmul_(self: TensorSelf, other: Any) -> Tensor:
        return self._write("matmul_", lambda t: t @ other)

    def neg_(self: TensorSelf) -> Tensor:
        return self._write("neg_", lambda t: -t)

    def abs_(self: TensorSelf) -> Tensor:
        return self._write("abs_", Arithmetic.abs)

    def exp_(self: TensorSelf) -> Tensor:
        return self._write("exp_", Arithmetic.exp)

    def log_(self: TensorSelf) -> Tensor:
        return self._write("log_", Arithmetic.log)

    def log1p_(self: TensorSelf) -> Tensor:
        return self._write("log1p_", Arithmetic.log1p)

    def expm1_(self: TensorSelf) -> Tensor:
        return self._write("expm1_", Arithmetic.expm1)

    def sqrt_(self: TensorSelf) -> Tensor:
        return self._write("sqrt_", Arithmetic.sqrt)

    def sin_(self: TensorSelf) -> Tensor:
        return self._write("sin_", Arithmetic.sin)

    def cos_(self: TensorSelf) -> Tensor:
        return self._write("cos_", Arithmetic.cos)

    def tanh_(self: TensorSelf) -> Tensor:
        return self._write("tanh_", Arithmetic.tanh)

    def sigmoid_(self: TensorSelf) -> Tensor:
        return self._write("sigmoid_", Arithmetic.sigmoid)

    def relu_(self: TensorSelf) -> Tensor:
        return self._write("relu_", Arithmetic.relu)

    def clamp_(self: TensorSelf, min: Any = None, max: Any = None) -> Tensor:
        if (min is None or max is None) and self._array.dtype.kind != "b":  # one bound: one ufunc
            ufunc, bound = (_at_most, max) if min is None else (_at_least, min)
            return self._update("clamp_", ufunc, bound, lambda t: t.clamp(min, max))
        return self._write("clamp_", lambda t: t.clamp(min, max))

    clip_ = clamp_

    # -- the elementwise math of pointwise.py and the aliases of arithmetic.py's, in place --

    def tan_(self: TensorSelf) -> Tensor:
        return self._write("tan_", Pointwise.tan)

    def asin_(self: TensorSelf) -> Tensor:
        return self._write("asin_", Pointwise.asin)

    def acos_(self: TensorSelf) -> Tensor:
        return self._write("acos_", Pointwise.acos)

    def atan_(self: TensorSelf) -> Tensor:
        return self._write("atan_", Pointwise.atan)

    def sinh_(self: TensorSelf) -> Tensor:
        return self._write("sinh_", Pointwise.sinh)

    def cosh_(self: TensorSelf) -> Tensor:
        return self._write("cosh_", Pointwise.cosh)

    def asinh_(self: TensorSelf) -> Tensor:
        return self._write("asinh_", Pointwise.asinh)

    def acosh_(self: TensorSelf) -> Tensor:
        return self._write("acosh_", Pointwise.acosh)

    def atanh_(self: TensorSelf) -> Tensor:
        return self._write("atanh_", Pointwise.atanh)

    def arcsin_(self: TensorSelf) -> Tensor:
        return self._write("arcsin_", Pointwise.arcsin)

    def arccos_(self: TensorSelf) -> Tensor:
        return self._write("arccos_", Pointwise.arccos)

    def arctan_(self: TensorSelf) -> Tensor:
        return self._write("arctan_", Pointwise.arctan)

    def arcsinh_(self: TensorSelf) -> Tensor:
        return self._write("arcsinh_", Pointwise.arcsinh)

    def arccosh_(self: TensorSelf) -> Tensor:
        return self._write("arccosh_", Pointwise.arccosh)

    def arctanh_(self: TensorSelf) -> Tensor:
        return self._write("arctanh_", Pointwise.arctanh)

    def deg2rad_(self: TensorSelf) -> Tensor:
        return self._write("deg2rad_", Pointwise.deg2rad)

    def rad2deg_(self: TensorSelf) -> Tensor:
        return self._write("rad2deg_", Pointwise.rad2deg)

    def reciprocal_(self: TensorSelf) -> Tensor:
        return self._write("reciprocal_", Pointwise.reciprocal)

    def exp2_(self: TensorSelf) -> Tensor:
        return self._write("exp2_", Pointwise.exp2)

    def erf_(self: TensorSelf) -> Tensor:
        return self._write("erf_", Arithmetic.erf)

    def erfc_(self: TensorSelf) -> Tensor:
        return self._write("erfc_", Pointwise.erfc)

    def erfinv_(self: TensorSelf) -> Tensor:
        return self._write("erfinv_", Pointwise.erfinv)

    def lgamma_(self: TensorSelf) -> Tensor:
        return self._write("lgamma_", Pointwise.lgamma)

    def digamma_(self: TensorSelf) -> Tensor:
        return self._write("digamma_", Pointwise.digamma)

    def i0_(self: TensorSelf) -> Tensor:
        return self._write("i0_", Pointwise.i0)

    def sinc_(self: TensorSelf) -> Tensor:
        return self._write("sinc_", Pointwise.sinc)

    def frac_(self: TensorSelf) -> Tensor:
        return self._apply("frac_", frac, Pointwise.frac)

    def fix_(self: TensorSelf) -> Tensor:
        return self._write("fix_", Pointwise.fix)

    def sgn_(self: TensorSelf) -> Tensor:
        return self._apply("sgn_", sign, Pointwise.sgn)

    def trunc_(self: TensorSelf) -> Tensor:
        return self._apply("trunc_", xp.trunc, Arithmetic.trunc)

    def log2_(self: TensorSelf) -> Tensor:
        return self._write("log2_", Arithmetic.log2)

    def log10_(self: TensorSelf) -> Tensor:
        return self._write("log10_", Arithmetic.log10)

    def square_(self: TensorSelf) -> Tensor:
        return self._write("square_", Arithmetic.square)

    def rsqrt_(self: TensorSelf) -> Tensor:
        return self._apply("rsqrt_", rsqrt, Arithmetic.rsqrt)

    def sign_(self: TensorSelf) -> Tensor:
        return self._apply("sign_", sign, Arithmetic.sign)

    def negative_(self: TensorSelf) -> Tensor:
        return self._write("negative_", Arithmetic.negative)

    def absolute_(self: TensorSelf) -> Tensor:
        return self._write("absolute_", Arithmetic.absolute)

    def bitwise_not_(self: TensorSelf) -> Tensor:
        return self._write("bitwise_not_", Pointwise.bitwise_not)

    def logical_not_(self: TensorSelf) -> Tensor:
        return self._fill("logical_not_", self.logical_not())

    def atan2_(self: TensorSelf, other: Any) -> Tensor:
        return self._write("atan2_", lambda t: t.atan2(other))

    def arctan2_(self: TensorSelf, other: Any) -> Tensor:
        return self._write("arctan2_", lambda t: t.arctan2(other))

    def hypot_(self: TensorSelf, other: Any) -> Tensor:
        return self._write("hypot_", lambda t: t.hypot(other))

    def xlogy_(self: TensorSelf, other: Any) -> Tensor:
        return self._write("xlogy_", lambda t: t.xlogy(other))

    def ldexp_(self: TensorSelf, other: Any) -> Tensor:
        return self._write("ldexp_", lambda t: t.ldexp(other))

    def float_power_(self: TensorSelf, exponent: Any) -> Tensor:
        """self ** exponent in place, self float64 (the dtype of float_power's result)."""
        if self._array.dtype != array.float64:
            raise RuntimeError(
                f"float_power_: the base must be float64, the dtype of the result; got {self.dtype}"
            )
        return self._write("float_power_", lambda t: t.float_power(exponent))

    def copysign_(self: TensorSelf, other: Any) -> Tensor:
        return self._write("copysign_", lambda t: t.copysign(other))

    def fmod_(self: TensorSelf, other: Any) -> Tensor:
        return self._write("fmod_", lambda t: t.fmod(other))

    def gcd_(self: TensorSelf, other: Any) -> Tensor:
        return self._write("gcd_", lambda t: t.gcd(other))

    def lcm_(self: TensorSelf, other: Any) -> Tensor:
        return self._write("lcm_", lambda t: t.lcm(other))

    def heaviside_(self: TensorSelf, values: Any) -> Tensor:
        return self._fill("heaviside_", self.heaviside(values))

    def bitwise_and_(self: TensorSelf, other: Any) -> Tensor:
        return self._write("bitwise_and_", lambda t: t.bitwise_and(other))

    def bitwise_or_(self: TensorSelf, other: Any) -> Tensor:
        return self._write("bitwise_or_", lambda t: t.bitwise_or(other))

    def bitwise_xor_(self: TensorSelf, other: Any) -> Tensor:
        return self._write("bitwise_xor_", lambda t: t.bitwise_xor(other))

    def bitwise_left_shift_(self: TensorSelf, other: Any) -> Tensor:
        return self._write("bitwise_left_shift_", lambda t: t.bitwise_left_shift(other))

    def bitwise_right_shift_(self: TensorSelf, other: Any) -> Tensor:
        return self._write("bitwise_right_shift_", lambda t: t.bitwise_right_shift(other))

    def logical_and_(self: TensorSelf, other: Any) -> Tensor:
        return self._fill("logical_and_", self.logical_and(other))

    def logical_or_(self: TensorSelf, other: Any) -> Tensor:
        return self._fill("logical_or_", self.logical_or(other))

    def logical_xor_(self: TensorSelf, other: Any) -> Tensor:
        return self._fill("logical_xor_", self.logical_xor(other))

    def multiply_(self: TensorSelf, other: Any) -> Tensor:
        return self._write("multiply_", lambda t: t.multiply(other))

    def true_divide_(self: TensorSelf, other: Any) -> Tensor:
        return self._write("true_divide_", lambda t: t.true_divide(other))

    def clamp_min_(self: TensorSelf, min: Any) -> Tensor:
        return self._write("clamp_min_", lambda t: t.clamp_min(min))

    def clamp_max_(self: TensorSelf, max: Any) -> Tensor:
        return self._write("clamp_max_", lambda t: t.clamp_max(max))

    def floor_(self: TensorSelf) -> Tensor:
        return self._apply("floor_", xp.floor, Arithmetic.floor)

    def ceil_(self: TensorSelf) -> Tensor:
        return self._apply("ceil_", xp.ceil, Arithmetic.ceil)

    def round_(self: TensorSelf, *, decimals: int = 0) -> Tensor:
        return self._write("round_", lambda t: t.round(decimals=decimals))

    def floor_divide_(self: TensorSelf, other: Any) -> Tensor:
        return self._write("floor_divide_", lambda t: t // other)

    def remainder_(self: TensorSelf, other: Any) -> Tensor:
        return self._write("remainder_", lambda t: t % other)

    def nextafter_(self: TensorSelf, other: Any) -> Tensor:
        return self._write("nextafter_", lambda t: t.nextafter(other))

    def mvlgamma_(self: TensorSelf, p: int) -> Tensor:
        return self._write("mvlgamma_", lambda t: t.mvlgamma(p))

    def polygamma_(self: TensorSelf, n: int) -> Tensor:
        return self._write("polygamma_", lambda t: t.polygamma(n))

    def logit_(self: TensorSelf, eps: float | None = None) -> Tensor:
        return self._write("logit_", lambda t: t.logit(eps))

    def nan_to_num_(
        self: TensorSelf, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None
    ) -> Tensor:
        options = {"nan": nan, "posinf": posinf, "neginf": neginf}
        return self._apply("nan_to_num_", nan_to_num, lambda t: t.nan_to_num(**options), **options)

    def divide_(self: TensorSelf, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        return self.div_(other, rounding_mode=rounding_mode)

    def subtract_(self: TensorSelf, other: Any, *, alpha: Any = 1) -> Tensor:
        return self.sub_(other, alpha=alpha)

    # comparisons in place: 1 or 0 (True or False) in the tensor's own dtype, no gradient

    def eq_(self: TensorSelf, other: Any) -> Tensor:
        return self._fill("eq_", self.eq(other))

    def ne_(self: TensorSelf, other: Any) -> Tensor:
        return self._fill("ne_", self.ne(other))

    def lt_(self: TensorSelf, other: Any) -> Tensor:
        return self._fill("lt_", self.lt(other))

    def le_(self: TensorSelf, other: Any) -> Tensor:
        return self._fill("le_", self.le(other))

    def gt_(self: TensorSelf, other: Any) -> Tensor:
        return self._fill("gt_", self.gt(other))

    def ge_(self: TensorSelf, other: Any) -> Tensor:
        return self._fill("ge_", self.ge(other))

    not_equal_, less_, less_equal_, greater_, greater_equal_ = ne_, lt_, le_, gt_, ge_

    def scatter_(
        self: TensorSelf,
        dim: int,
        index: Any,
        src: Any = None,
        *,
        value: Any = None,
        reduce: Any = None,
    ) -> Tensor:
        return self._write(
            "scatter_", lambda t: t.scatter(dim, index, src, value=value, reduce=reduce)
        )

    def index_add_(
        self: TensorSelf, dim: int, index: Any, source: Any, *, alpha: float = 1
    ) -> Tensor:
        return self._write("index_add_", lambda t: t.index_add(dim, index, source, alpha=alpha))

    def index_fill_(self: TensorSelf, dim: int, index: Any, value: Any) -> Tensor:
        return self._write("index_fill_", lambda t: t.index_fill(dim, index, value))

    def tril_(self: TensorSelf, diagonal: int = 0) -> Tensor:
        return self._write("tril_", lambda t: t.tril(diagonal))

    def triu_(self: TensorSelf, diagonal: int = 0) -> Tensor:
        return self._write("triu_", lambda t: t.triu(diagonal))

    def masked_fill_(self: TensorSelf, mask: Any, value: Any) -> Tensor:
        return self._write("masked_fill_", lambda t: t.masked_fill(mask, value))

    def copy_(self: TensorSelf, src: Any, non_blocking: bool = False) -> Tensor:
        """Write ``src`` (broadcast to this shape, cast to this dtype) into this tensor;
        the gradient flows to ``src``, none to the old value."""
        src = src if isinstance(src, Core) else tensor_type()(src)
        if array.ACCELERATED and type(src._array) is not type(self._array):
            src = src.to(self.device)  # across devices, as PyTorch's copy_
        return self._fill("copy_", src.to(self.dtype))

    def index_put_(self: TensorSelf, indices: Any, values: Any, accumulate: bool = False) -> Tensor:
        """``self[indices] = values`` (``indices`` a tuple of index tensors), or with
        ``accumulate`` values added there, repeated positions adding up, as PyTorch's."""
        index = _index_tensors("index_put_", indices, self.shape)
        if not accumulate:
            self[index] = values
            return self
        return self._write("index_put_", lambda t: t.index_put(indices, values, True))

    def index_put(self: TensorSelf, indices: Any, values: Any, accumulate: bool = False) -> Tensor:
        """self with values written at indices, or with ``accumulate`` added there (one node,
        PyTorch's IndexPutBackward0, whose rule is ScatterAdd's)."""
        indices = _index_tensors("index_put", indices, self.shape)
        if not accumulate:
            return self.clone().index_put_(indices, values)
        values = values if isinstance(values, Core) else tensor_type()(values)
        key = index_arg(indices, self._array)
        # 0-d integer indices as of shape (1,): ScatterAdd's grid of places is never 0-d
        key = tuple([i.reshape(1) if _integer_0d(i) else i for i in key])
        shape = self._array[key].shape  # what values broadcast to
        spread = values.to(self.dtype).expand(shape)
        return _INDEX_PUT_ADD.apply(self, spread, index=key, alpha=1)

    def fill_(self: TensorSelf, value: Any) -> Tensor:
        """Every element set to value (a number or 0-d tensor), cast to this tensor's dtype
        as PyTorch casts it: 2.7 fills an integer tensor with 2, any nonzero a bool one with
        True."""
        if isinstance(value, Core):
            if value.ndim:
                raise RuntimeError(
                    f"fill_: the value must be a number or 0-d tensor; got shape {value.shape}"
                )
            value = value.to(self.dtype)
        elif not _holds_as_is(value, self._array):
            value = xp.asarray(value).astype(self._array.dtype).item()  # a number it holds
        return self._fill("fill_", value)

    def zero_(self: TensorSelf) -> Tensor:
        return self._fill("zero_", self._array.dtype.type(0).item())  # False for bool

    def _put(self: TensorSelf, index: tuple, value: Any) -> None:
        """``self[index] = value`` (index as arguments.index_arg gives it): an IndexPut
        through _write. With no graph to join and a value this dtype holds as it is, that is
        one assignment into the array (as in _fill), the same result; NumPy checks the index
        and the value's shape before it writes anything, and where it refuses, _write's
        path gives the error its own words."""
        src = value._array if isinstance(value, Core) else value
        arr = self._array
        if not _watched(self, value) and _holds_as_is(src, arr, False) and array.writeable(arr):
            try:
                arr[index] = src
            except (IndexError, ValueError, TypeError):
                pass
            else:
                bump(self)
                return
        written = None  # the part written, for a basic index (see views.repoint_views)
        if not any(isinstance(i, array.ndarray) for i in index):
            try:
                written = arr[index if Ellipsis in index else index + (Ellipsis,)]
            except (IndexError, TypeError):  # IndexPut reports it, naming op and shapes
                pass
        put = _INTO_VIEW if _through_a_view(index) else movement.IndexPut
        self._write("setitem", lambda t: put.apply(t, value, index=index), written)

    def _fill(self: TensorSelf, op: str, values: Any) -> Tensor:
        """Make ``values`` (broadcast to this shape) the tensor's new value, with a zero
        gradient for the old one: ``where(False, self, values)`` through _write. With no
        graph to join and values this dtype holds as they are, that is one assignment into
        the array, the same result."""
        src = values._array if isinstance(values, Core) else values
        arr = self._array
        if (
            _joins(self, values)
            or not array.writeable(arr)
            or not _holds_as_is(src, arr, bools=True)
        ):
            name = _FILLS.get(op, "")
            if op == "fill_" and isinstance(values, Core):
                name = "FillBackward3"  # the overload that takes a 0-d tensor
            if name:  # the where stands for PyTorch's op of this name
                return self._write(op, lambda t: named(where(false_mask(t), t, values), name))
            return self._write(op, lambda t: where(false_mask(t), t, values))
        arr[...] = src
        bump(self)
        return self

    # the operators call _update themselves, add_'s call one layer less on the path of
    # every ``N[i, j] += 1`` and ``total += x``
    def __iadd__(self: TensorSelf, other: Any) -> Tensor:
        return self._update("add_", xp.add, other, lambda t: t.add(other))

    def __isub__(self: TensorSelf, other: Any) -> Tensor:
        return self._update("sub_", xp.subtract, other, lambda t: t.sub(other))

    def __imul__(self: TensorSelf, other: Any) -> Tensor:
        return self._update("mul_", xp.multiply, other, lambda t: t * other)

    def __itruediv__(self: TensorSelf, other: Any) -> Tensor:
        return self._update("div_", xp.true_divide, other, lambda t: t / other)

    def __ipow__(self: TensorSelf, other: Any) -> Tensor:
        return self.pow_(other)

    def __imatmul__(self: TensorSelf, other: Any) -> Tensor:
        return self.matmul_(other)

    def __iand__(self: TensorSelf, other: Any) -> Tensor:
        return self.bitwise_and_(other)

    def __ior__(self: TensorSelf, other: Any) -> Tensor:
        return self.bitwise_or_(other)

    def __ixor__(self: TensorSelf, other: Any) -> Tensor:
        return self.bitwise_xor_(other)

    def __ilshift__(self: TensorSelf, other: Any) -> Tensor:
        return self.bitwise_left_shift_(other)

    def __irshift__(self: TensorSelf, other: Any) -> Tensor:
        return self.bitwise_right_shift_(other)

    def _update(self: TensorSelf, op: str, ufunc: Any, other: Any, compute: Any) -> Tensor:
        """``self op= other``: _write of ``compute``, the op's out-of-place form. With the
        fast path on and nothing to record (no graph to join, no tangent, no anomaly check,
        no exporter watching the writes), an ``other`` this dtype holds as it is and an array
        that can be written: ``ufunc(self, other, out=self)``, one NumPy call, the values
        the op's forward computes (it is that ufunc, on the same operands). Where NumPy
        refuses (a shape that does not broadcast, a cast, an int out of range), _write's path
        gives PyTorch's result or its refusal in chainrule's words."""
        if ufunc is not None and fastpath.enabled() and not _watched(self, other):
            src = other._array if isinstance(other, Core) else other
            arr = self._array
            # NumPy refuses to write a read-only array of its own (a broadcast view): only
            # the accelerator's, which has no such flag, asks writeable
            if _holds_as_is(src, arr) and (type(arr) is _HOST or array.writeable(arr)):
                try:
                    if arr.ndim:
                        ufunc(arr, src, out=arr)
                    else:  # NumPy's scalar result, assigned: a third quicker than out=
                        result = ufunc(arr, src)
                        if result.dtype != arr.dtype:  # int / int is a float: _write refuses
                            raise TypeError(op)
                        arr[()] = result
                except (TypeError, ValueError, OverflowError):
                    pass
                else:
                    bump(self)
                    return self
        return self._write(op, compute)

    def _apply(self: TensorSelf, op: str, forward: Any, compute: Any, **options: Any) -> Tensor:
        """``self.op_()`` of one tensor: _write of ``compute``, or, with the fast path on,
        nothing to record (as _update) and a writeable float array of the host's with
        elements, ``forward(arr, out=arr, **options)``: the op's values, written in place."""
        arr = self._array
        if fastpath.enabled() and arr.ndim and arr.dtype.kind == "f" and type(arr) is _HOST:
            if array.writeable(arr) and not _watched(self, None):
                forward(arr, out=arr, **options)
                bump(self)
                return self
        return self._write(op, compute)

    def _write(self: TensorSelf, op: str, compute: Any, written: Any = None) -> Tensor:
        """Make ``compute(self)`` the new value of this tensor, in place (see above; a view's
        write joins its base's graph as tensor/views.py says). ``compute``'s last op must be
        the only one that takes the tensor as an input; ``written``, where given, is the part
        of the array it changes (the rest keeps its values). With a dual level open, the
        tensor takes the result's tangent too (_pass_tangent)."""
        grad = is_grad_enabled()
        views.refuse_write(self, op, grad)
        old = views.stand_in(self) if grad else self  # the old value, which the result records
        if old is not self and forward_ad.active[0]:
            forward_ad.set_tangent(old, forward_ad.tangent_of(self))
        new = compute(old)
        if not isinstance(new, Core):
            new = tensor_type()(new)
        arr, out = self._array, new._array
        if out.shape != arr.shape:
            raise RuntimeError(
                f"{op}: the result's shape {out.shape} does not match the tensor's shape "
                f"{arr.shape} written in place (the other operand must broadcast to it)"
            )
        if out.dtype != arr.dtype:
            integers = out.dtype.kind in "iu" and arr.dtype.kind in "iu"  # wrapped, as PyTorch
            if not integers and not xp.can_cast(out.dtype, arr.dtype, "same_kind"):
                raise RuntimeError(
                    f"{op}: the result's dtype {out.dtype} cannot be written into a tensor of "
                    f"dtype {arr.dtype} in place; use the out-of-place form"
                )
        if not array.writeable(arr):
            raise RuntimeError(
                f"{op}: the tensor (shape {self.shape}) is a read-only view (expand or "
                "broadcast_to: several elements share one memory location); clone() it first"
            )
        fn = new.grad_fn
        base = None if fn is None else views.live_base(self)
        if fn is not None and base is not None:
            views.refuse_multi_output(self, base, op)
        if fn is not None and fn.saves_inputs and old is not self:  # the rule reads the old
            old._array, old._vc = arr.copy(), Counter([version(self)])  # value: keep it
        if out is not arr:
            arr[...] = out
        bump(self)
        if fn is not None:
            self._rebased(old, fn, base, written)
        if forward_ad.active[0]:
            _pass_tangent(self, new)
        return self

    def _rebased(
        self: TensorSelf, old: Tensor, fn: Any, base: Tensor | None, written: Any = None
    ) -> None:
        """After a write into this tensor (bumped) whose result joins the graph as node
        ``fn`` (an in-place op's, or a custom Function's that marked it dirty): it takes
        ``fn``, ``old`` standing for its value before; its base, where it is a view of one,
        a CopySlices node; and the other views of the memory the new node (views.py)."""
        views.rebase(self, old, fn)
        if fn.saves_out:  # and its counter, which _saved_result reads (autograd/saved_read.py)
            fn.out_version, fn.out_counter = version(self), self._vc
        if base is not None:
            views.copy_slices(base, self)
        if base is None:
            views.repoint_views(self, self, written)
        else:
            views.repoint_views(base, self, self._array)


_WRITE = InPlace._write  # Tensor's own, which an exporter's trace replaces


def _through_a_view(index: tuple) -> bool:
    """Whether PyTorch writes ``x[index] = v`` into a view of x (its node CopySlices): the index
    takes a view by an int, a None or a slice of part of a dim; index arrays alone (and whole
    slices) are its index_put_ on x itself (IndexPutBackward0)."""
    return any(type(i) is int or i is None or type(i) is slice and i != _ALL for i in index)


_ALL = slice(None)


def _watched(t: Tensor, value: Any) -> bool:
    """Whether a write of ``value`` into ``t`` must take _write's path, not one assignment
    or ufunc into the array: it joins a graph or a tangent flows (_joins), anomaly mode
    checks it, or an exporter watches the writes (onnx's trace, which replaces _write)."""
    return _joins(t, value) or state.anomaly or tensor_type()._write is not _WRITE


def _joins(t: Tensor, value: Any) -> bool:
    """Whether a write of ``value`` into ``t`` joins a graph (grad mode on, and t, value or
    t's base requires grad: with the base, it may be PyTorch's refusal) or passes on a
    tangent (a dual level is open)."""
    if forward_ad.active[0]:
        return True
    if not state.grad_mode:  # as is_grad_enabled() says, which _write asks
        return False
    base = t._base
    wants = t.requires_grad or getattr(value, "requires_grad", False)
    return wants or base is not None and base.requires_grad


def _pass_tangent(t: Tensor, new: Tensor) -> None:
    """After a write of ``new`` into ``t`` with a dual level open: ``t``'s tangent becomes
    ``new``'s (zero where ``new`` has none), written into the tangent ``t`` carries, so that
    the views whose tangents are views of it see the change, as PyTorch's in-place
    tangents. A view of a base with no tangent gives the base one, zero elsewhere."""
    tangent, mine = forward_ad.tangent_of(new), forward_ad.tangent_of(t)
    if mine is None and tangent is None:
        return
    if mine is None or mine.requires_grad or (tangent is not None and tangent.requires_grad):
        base = views.live_base(t)
        if mine is None and base is not None and forward_ad.tangent_of(base) is None:
            whole = xp.zeros_like(base._array)
            at = array.from_host(view_positions(base._array, t._array), whole)
            whole.reshape(-1)[at] = tangent._array
            forward_ad.set_tangent(base, make(whole))
        forward_ad.set_tangent(t, tangent)
    elif not array.writeable(mine._array):  # a broadcast tangent: replaced, not written
        forward_ad.set_tangent(t, new.new_zeros(new.shape) if tangent is None else tangent)
    elif tangent is None:
        mine._array[...] = 0
    else:
        mine._array[...] = tangent._array


def _holds_as_is(src: Any, arr: Any, broadcast: bool = True, bools: bool = False) -> bool:
    """Whether writing ``src`` into ``arr`` needs no cast or check of _write's: an array of
    arr's dtype, or of bools where ``bools`` (a comparison's 1s and 0s, which every dtype
    holds), that broadcasts to it (unless ``broadcast`` is False: NumPy checks that where a
    part of arr is written), or a number of a kind arr's dtype holds (a float into floats,
    an int into ints or floats, a bool into anything)."""
    if type(src) is type(arr):  # an array of arr's own module
        return (src.dtype == arr.dtype or bools and src.dtype.kind == "b") and (
            not broadcast or src.shape == arr.shape or broadcasts_to(src.shape, arr.shape)
        )
    if isinstance(src, array.ndarray):  # another module's
        return False
    kind = arr.dtype.kind
    if isinstance(src, bool):
        return True
    if isinstance(src, int):
        return kind in "iuf"
    return isinstance(src, float) and kind == "f"


def _index_tensors(op: str, indices: Any, shape: tuple[int, ...]) -> tuple:
    """index_put's indices as a tuple, refused where there is none (PyTorch fails inside
    then, with an internal assert or an undefined tensor)."""
    index = tuple(indices)
    if not index:
        raise RuntimeError(
            f"{op}: indices must hold at least one index tensor; got none, for a tensor of "
            f"shape {tuple(shape)}"
        )
    return index


def _at_least(a: Any, lo: Any, out: Any = None) -> Any:
    """max(a, lo) as Clamp's forward computes it, the bound first (-0.0 stays -0.0)."""
    return xp.maximum(lo, a, out=out)


def _at_most(a: Any, hi: Any, out: Any = None) -> Any:
    """min(a, hi) as Clamp's forward computes it, the bound first (-0.0 stays -0.0)."""
    return xp.minimum(hi, a, out=out)


def _integer_0d(i: Any) -> bool:
    return isinstance(i, array.ndarray) and i.ndim == 0 and i.dtype.kind in "iu"


_INDEX_PUT_ADD = movement.ScatterAdd.named("IndexPutBackward0")  # index_put's accumulate
_INTO_VIEW = movement.IndexPut.named("CopySlices")  # x[i] = v where x[i] is a view
