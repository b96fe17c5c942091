"""Tensor arithmetic: operators, elementwise math, comparisons, clamping and matrix
products, with the operand coercion they share, and cr.matmul and cr.where."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import array
from ..arguments import broadcast_shape, broadcasts_to, clamp_bounds, need_number, normalize_dims
from ..autograd.forward_ad import carries
from ..autograd.node import UNGIVEN_ZERO
from ..ops import arithmetic as fused
from ..ops import elementwise, linalg, special
from .core import HOST_ARRAY, Core, as_tensor, make

if TYPE_CHECKING:  # Tensor in annotations alone (core.py says why)
    from . import Tensor
    from .core import TensorSelf

xp = array.xp
Number = (int, float, bool)


class Arithmetic(Core):
    """The operators and elementwise methods of Tensor."""

    __slots__ = ()
    __array_ufunc__ = None  # NumPy defers to our reflected operators: array * Tensor works
    __hash__ = object.__hash__  # by identity, as == is elementwise

    # -- arithmetic ------------------------------------------------------------------------

    def __add__(self: TensorSelf, other: Any) -> Tensor:
        return elementwise.Add.apply(*operands(self, other, "add"))

    def __radd__(self: TensorSelf, other: Any) -> Tensor:
        return elementwise.Add.apply(*operands(other, self, "add"))

    def __sub__(self: TensorSelf, other: Any) -> Tensor:
        _no_bool(self, other, "sub")
        return elementwise.Sub.apply(*operands(self, other, "sub"))

    def __rsub__(self: TensorSelf, other: Any) -> Tensor:
        _no_bool(other, self, "sub")
        sub = _RSUB if isinstance(other, (int, float)) else elementwise.Sub
        return sub.apply(*operands(other, self, "sub"))

    def __mul__(self: TensorSelf, other: Any) -> Tensor:
        return elementwise.Mul.apply(*operands(self, other, "mul"))

    def __rmul__(self: TensorSelf, other: Any) -> Tensor:
        return elementwise.Mul.apply(*operands(other, self, "mul"))

    def __truediv__(self: TensorSelf, other: Any) -> Tensor:
        return elementwise.Div.apply(*operands(self, other, "div", floats=True))

    def __rtruediv__(self: TensorSelf, other: Any) -> Tensor:
        div = _RDIV if isinstance(other, (int, float)) else elementwise.Div
        return div.apply(*operands(other, self, "div", floats=True))

    def __pow__(self: TensorSelf, other: Any) -> Tensor:
        if self._array.dtype.kind == "b":
            _no_bool(self, other, "pow", both=True)
        return elementwise.Pow.apply(*operands(self, other, "pow"))

    def __rpow__(self: TensorSelf, other: Any) -> Tensor:
        if self._array.dtype.kind == "b":
            _no_bool(other, self, "pow", both=True)
        return elementwise.Pow.apply(*operands(other, self, "pow"))

    def __floordiv__(self: TensorSelf, other: Any) -> Tensor:
        return _floor_divide(self, other)

    def __rfloordiv__(self: TensorSelf, other: Any) -> Tensor:
        return _floor_divide(other, self)

    def __mod__(self: TensorSelf, other: Any) -> Tensor:
        return _remainder(self, other)

    def __rmod__(self: TensorSelf, other: Any) -> Tensor:
        return _remainder(other, self)

    def __neg__(self: TensorSelf) -> Tensor:
        return elementwise.Neg.apply(self)

    def __pos__(self: TensorSelf) -> Tensor:
        return self

    def __abs__(self: TensorSelf) -> Tensor:
        return self.abs()

    def __matmul__(self: TensorSelf, other: Any) -> Tensor:
        return matmul(self, other)

    def __rmatmul__(self: TensorSelf, other: Any) -> Tensor:
        return matmul(other, self)

    def add(self: TensorSelf, other: Any, *, alpha: Any = 1) -> Tensor:
        return self + (other if alpha == 1 else other * alpha)

    def sub(self: TensorSelf, other: Any, *, alpha: Any = 1) -> Tensor:
        _no_bool(self, other, "sub")  # before alpha makes a bool other a number
        return self - (other if alpha == 1 else other * alpha)

    def addcmul(self: TensorSelf, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:
        """self + value * tensor1 * tensor2, within an ulp of PyTorch's (which fuses the last
        multiply and the add into one rounding)."""
        if _fused(self, tensor1, tensor2, value):
            return fused.Addcmul.apply(self, tensor1, tensor2, value=value)
        t1 = as_tensor(tensor1)
        kind = _kind_of(self, t1, tensor2, "addcmul")
        if kind in "iu":  # value in the integer dtype, as PyTorch casts it (0.5: 0)
            value = int(value)
        return self + value * t1 * tensor2

    def addcdiv(self: TensorSelf, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:
        """self + value * tensor1 / tensor2, in that order, as PyTorch (Adam's update)."""
        if _fused(self, tensor1, tensor2, value):
            return fused.Addcdiv.apply(self, tensor1, tensor2, value=value)
        t1 = as_tensor(tensor1)
        if _kind_of(self, t1, tensor2, "addcdiv") in "iu":
            raise TypeError(
                "addcdiv: integer division is not supported, as in PyTorch; got dtypes "
                f"{self.dtype}, {t1.dtype} and {as_tensor(tensor2).dtype}; hint: (input + value "
                "* (tensor1 / tensor2).trunc()).to(input.dtype)"
            )
        return self + value * t1 / tensor2

    def lerp(self: TensorSelf, end: Any, weight: Tensor | float) -> Tensor:
        """self + weight * (end - self), computed from end's side where weight >= 0.5, as
        PyTorch (so weight 1 gives end exactly)."""
        if _fused(self, end, weight, 1):  # a tensor weight: LerpBackward1
            return _LERP[1].apply(self, end, weight)
        if _fused(self, end, self, weight):  # a number weight: LerpBackward0
            return _LERP[0].apply(self, end, weight)
        if not array.is_floating(array.result_type(self, end, op="lerp")):
            raise TypeError(
                f"lerp: expects floating tensors; got dtypes {self.dtype} and "
                f"{as_tensor(end).dtype}"
            )
        diff = end - self
        if isinstance(weight, Core):
            return where(weight.abs() < 0.5, self + weight * diff, end - diff * (1 - weight))
        return self + weight * diff if abs(weight) < 0.5 else end - diff * (1 - weight)

    mul = __mul__
    floor_divide = __floordiv__
    remainder = __mod__
    neg = __neg__
    multiply, negative, subtract, true_divide = mul, neg, sub, __truediv__

    def div(self: TensorSelf, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        """self / other; rounding_mode 'trunc' rounds toward zero and 'floor' down, in the
        inputs' dtype (integers stay integers), with zero gradients, as PyTorch's."""
        if rounding_mode is None:
            return self / other
        if rounding_mode not in ("trunc", "floor"):
            raise ValueError(
                f"div: rounding_mode must be None, 'trunc' or 'floor'; got {rounding_mode!r}"
            )
        return _floor_divide(self, other, rounding_mode)

    divide = div

    def pow(self: TensorSelf, exponent: Any) -> Tensor:
        return self**exponent

    # comparisons make bool tensors and record nothing
    def __eq__(self: TensorSelf, other: Any) -> Tensor:  # type: ignore[override]
        return _compare(xp.equal, self, other)

    def __ne__(self: TensorSelf, other: Any) -> Tensor:  # type: ignore[override]
        return _compare(xp.not_equal, self, other)

    def __lt__(self: TensorSelf, other: Any) -> Tensor:
        return _compare(xp.less, self, other)

    def __le__(self: TensorSelf, other: Any) -> Tensor:
        return _compare(xp.less_equal, self, other)

    def __gt__(self: TensorSelf, other: Any) -> Tensor:
        return _compare(xp.greater, self, other)

    def __ge__(self: TensorSelf, other: Any) -> Tensor:
        return _compare(xp.greater_equal, self, other)

    # bitwise: bool and integer tensors only, no gradient; of two bools, the logical op (the
    # same values, the comparison ONNX export records)

    def __invert__(self: TensorSelf) -> Tensor:
        if self.dtype.kind not in "biu":
            raise TypeError(f"invert: needs a bool or integer tensor; got dtype {self.dtype}")
        return make(~self._array)

    def __and__(self: TensorSelf, other: Any) -> Tensor:
        return _bitwise(self, other, "bitwise_and")

    def __rand__(self: TensorSelf, other: Any) -> Tensor:
        return _bitwise(other, self, "bitwise_and")

    def __or__(self: TensorSelf, other: Any) -> Tensor:
        return _bitwise(self, other, "bitwise_or")

    def __ror__(self: TensorSelf, other: Any) -> Tensor:
        return _bitwise(other, self, "bitwise_or")

    def __xor__(self: TensorSelf, other: Any) -> Tensor:
        return _bitwise(self, other, "bitwise_xor")

    def __rxor__(self: TensorSelf, other: Any) -> Tensor:
        return _bitwise(other, self, "bitwise_xor")

    def __lshift__(self: TensorSelf, other: Any) -> Tensor:
        return _bitwise(self, other, "bitwise_left_shift")

    def __rlshift__(self: TensorSelf, other: Any) -> Tensor:
        return _bitwise(other, self, "bitwise_left_shift")

    def __rshift__(self: TensorSelf, other: Any) -> Tensor:
        return _bitwise(self, other, "bitwise_right_shift")

    def __rrshift__(self: TensorSelf, other: Any) -> Tensor:
        return _bitwise(other, self, "bitwise_right_shift")

    eq, ne, lt, le, gt, ge = __eq__, __ne__, __lt__, __le__, __gt__, __ge__
    not_equal, less, less_equal, greater, greater_equal = ne, lt, le, gt, ge

    def isnan(self: TensorSelf) -> Tensor:
        return make(xp.isnan(self._array))

    def isinf(self: TensorSelf) -> Tensor:
        return make(xp.isinf(self._array))

    def isfinite(self: TensorSelf) -> Tensor:
        return make(xp.isfinite(self._array))

    def isclose(
        self: TensorSelf,
        other: Tensor,
        rtol: float = 1e-05,
        atol: float = 1e-08,
        equal_nan: bool = False,
    ) -> Tensor:
        """|self - other| <= atol + rtol * |other| elementwise (broadcast), in one dtype."""
        if not isinstance(other, Core) or other.dtype != self.dtype:
            got = other.dtype if isinstance(other, Core) else type(other).__name__
            raise TypeError(f"isclose: needs two tensors of one dtype; got {self.dtype} and {got}")

        def isclose(x: Any, y: Any) -> Any:
            return xp.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan)

        return _compare(isclose, self, other)

    def allclose(
        self: TensorSelf,
        other: Tensor,
        rtol: float = 1e-05,
        atol: float = 1e-08,
        equal_nan: bool = False,
    ) -> bool:
        """True when isclose holds everywhere."""
        return bool(self.isclose(other, rtol, atol, equal_nan).all())

    def equal(self: TensorSelf, other: Tensor) -> bool:
        """True when both have one shape and equal values (of any dtypes)."""
        return self.shape == other.shape and bool(xp.array_equal(self._array, other._array))

    def any(self: TensorSelf, dim: Any = None, keepdim: bool = False) -> Tensor:
        """Whether any value is nonzero: over the whole tensor, or along dim (an int or a
        tuple of them)."""
        return _logical(self, xp.any, dim, keepdim, "any")

    def all(self: TensorSelf, dim: Any = None, keepdim: bool = False) -> Tensor:
        """Whether every value is nonzero: over the whole tensor, or along dim."""
        return _logical(self, xp.all, dim, keepdim, "all")

    # -- elementwise math ------------------------------------------------------------------

    def abs(self: TensorSelf) -> Tensor:
        need_number(self, "abs")
        return elementwise.Abs.apply(self)

    def sign(self: TensorSelf) -> Tensor:
        return elementwise.Sign.apply(self)

    absolute = abs

    # rounding: a step function, whose gradient is 0 (as PyTorch's); an integer tensor
    # comes back as a copy, a bool one is refused

    def floor(self: TensorSelf) -> Tensor:
        return self._rounded("floor")

    def ceil(self: TensorSelf) -> Tensor:
        return self._rounded("ceil")

    def trunc(self: TensorSelf) -> Tensor:
        return self._rounded("trunc")

    def round(self: TensorSelf, *, decimals: int = UNGIVEN_ZERO) -> Tensor:
        """To the nearest integer, halves to even; with decimals, as PyTorch computes it:
        rint(x * 10^d) / 10^d (d > 0) or rint(x / 10^-d) * 10^-d (d < 0), in x's dtype."""
        if decimals is UNGIVEN_ZERO:
            return self._rounded("round")
        return self._rounded("round", decimals, _ROUNDED["decimals"])

    def _rounded(self: TensorSelf, op: str, decimals: int = 0, rounded: Any = None) -> Tensor:
        need_number(self, op)  # PyTorch rounds no bools
        if not array.is_floating(self._array.dtype):
            return self.clone()
        rounded = rounded or _ROUNDED[op]
        return rounded.apply(self, how="rint" if op == "round" else op, decimals=decimals)

    def exp(self: TensorSelf) -> Tensor:
        return elementwise.Exp.apply(floating(self))

    def log(self: TensorSelf) -> Tensor:
        return elementwise.Log.apply(floating(self))

    def log1p(self: TensorSelf) -> Tensor:
        return elementwise.Log1p.apply(floating(self))

    def expm1(self: TensorSelf) -> Tensor:
        return elementwise.Expm1.apply(floating(self))

    def log2(self: TensorSelf) -> Tensor:
        """log(x) / log(2), within an ulp of PyTorch's (whose own log2 differs from NumPy's)."""
        return fused.Log2.apply(floating(self))

    def log10(self: TensorSelf) -> Tensor:
        """log(x) / log(10), within an ulp of PyTorch's (whose own log10 differs from NumPy's)."""
        return fused.Log10.apply(floating(self))

    def sqrt(self: TensorSelf) -> Tensor:
        return elementwise.Sqrt.apply(floating(self))

    def sin(self: TensorSelf) -> Tensor:
        return elementwise.Sin.apply(floating(self))

    def cos(self: TensorSelf) -> Tensor:
        return elementwise.Cos.apply(floating(self))

    def tanh(self: TensorSelf) -> Tensor:
        return elementwise.Tanh.apply(floating(self))

    def sigmoid(self: TensorSelf) -> Tensor:
        return elementwise.Sigmoid.apply(floating(self))

    def relu(self: TensorSelf) -> Tensor:
        need_number(self, "relu")
        return elementwise.Relu.apply(self)

    def erf(self: TensorSelf) -> Tensor:
        return special.Erf.apply(floating(self))

    def rsqrt(self: TensorSelf) -> Tensor:
        """1 / sqrt(x), of an integer tensor in float32."""
        return _RSQRT.apply(floating(self), -0.5)

    def outer(self: TensorSelf, vec2: Any) -> Tensor:
        """The outer product of two 1-D tensors: (n,) and (m,) -> (n, m), as PyTorch writes
        it (its graph too): self as a column times vec2."""
        other = as_tensor(vec2)
        if self._array.ndim != 1 or other._array.ndim != 1:
            raise ValueError(
                f"outer: expected two 1-D tensors; got shapes {self.shape} and {other.shape}"
            )
        return self._reshaped((self._array.shape[0], 1)) * other  # (n, 1) * (m,) -> (n, m)

    def square(self: TensorSelf) -> Tensor:
        x = self.to(array.int64) if self._array.dtype.kind == "b" else self  # as PyTorch's
        return elementwise.Pow.apply(x, 2)  # PyTorch's pow(x, 2): its node, one edge

    def clamp_min(self: TensorSelf, min: Any) -> Tensor:
        return _clamp(self, min, None, "clamp_min")

    def clamp_max(self: TensorSelf, max: Any) -> Tensor:
        return _clamp(self, None, max, "clamp_max")

    def clamp(self: TensorSelf, min: Any = None, max: Any = None) -> Tensor:
        """Bounds are numbers, or tensors that broadcast with this one and take their
        gradient where they bind, as PyTorch's."""
        return _clamp(self, min, max, "clamp")

    clip = clamp

    def where(self: TensorSelf, condition: Any, other: Any) -> Tensor:
        """self where condition, else other: cr.where(condition, self, other)."""
        return where(condition, self, other)

    def maximum(self: TensorSelf, other: Any) -> Tensor:
        return elementwise.Maximum.apply(*operands(self, other, "maximum"))

    def minimum(self: TensorSelf, other: Any) -> Tensor:
        return elementwise.Minimum.apply(*operands(self, other, "minimum"))

    def masked_fill(self: TensorSelf, mask: Any, value: float) -> Tensor:
        out = where(mask, value, self, _MASKED_FILL[isinstance(value, Core)])
        # the fill takes self's dtype, as PyTorch's: an integer tensor filled with 1.7 holds 1
        return out if out._array.dtype == self._array.dtype else out.to(self.dtype)

    # -- matrix products -------------------------------------------------------------------

    def mm(self: TensorSelf, mat2: Any) -> Tensor:
        """The product of two 2-D tensors, checked as PyTorch's (no broadcasting)."""
        other = as_tensor(mat2)
        if other.is_sparse:  # dense @ sparse: the sparse tensor's own product
            return other.__rmatmul__(self)
        if self.ndim != 2 or other.ndim != 2:
            raise ValueError(
                f"mm: expects two 2-D tensors (matrices); got shapes {self.shape} and {other.shape}"
            )
        if self.shape[1] != other.shape[0]:
            raise ValueError(
                f"mm: mat1 and mat2 shapes cannot be multiplied ({self.shape[0]}x"
                f"{self.shape[1]} and {other.shape[0]}x{other.shape[1]})"
            )
        need_number(self, "mm")
        return matmul(self, other)

    def mv(self: TensorSelf, vec: Any) -> Tensor:
        """A 2-D tensor times a 1-D one, checked as PyTorch's (no broadcasting)."""
        other = as_tensor(vec)
        if self.ndim != 2 or other.ndim != 1 or self.shape[1] != other.shape[0]:
            raise ValueError(
                f"mv: expects a matrix (n, m) and a vector (m,); got shapes {self.shape} and "
                f"{other.shape}"
            )
        need_number(self, "mv")
        return matmul(self, other)

    def dot(self: TensorSelf, other: Any) -> Tensor:
        """The inner product of two 1-D tensors of one size, as PyTorch's (no broadcasting)."""
        other = as_tensor(other)
        if self.ndim != 1 or other.ndim != 1 or self.shape != other.shape:
            raise ValueError(
                f"dot: expects two 1-D tensors of one size; got shapes {self.shape} and "
                f"{other.shape}"
            )
        need_number(self, "dot")
        return matmul(self, other)

    def bmm(self: TensorSelf, mat2: Any) -> Tensor:
        """The product of two 3-D tensors batch by batch: (b, n, m) @ (b, m, p), checked as
        PyTorch's (one batch size, no broadcasting)."""
        other = as_tensor(mat2)
        sa, sb = self._array.shape, other._array.shape
        if len(sa) != 3 or len(sb) != 3:
            raise ValueError(
                f"bmm: expects two 3-D tensors; got shapes {self.shape} and {other.shape}"
            )
        if sa[0] != sb[0] or sa[2] != sb[1]:
            raise ValueError(
                f"bmm: expected batch2 of shape ({sa[0]}, {sa[2]}, p) for batch1 of shape "
                f"{self.shape}; got {other.shape}"
            )
        need_number(self, "bmm")
        return _BMM.apply(*_promote(self, other, "matmul"))  # matmul's checks, made above

    def matmul(self: TensorSelf, other: Any) -> Tensor:
        return matmul(self, other)

    def addmm(
        self: TensorSelf, mat1: Any, mat2: Any, *, beta: float = 1, alpha: float = 1
    ) -> Tensor:
        """beta * self + alpha * (mat1 @ mat2), mat1 and mat2 2-D; beta = 0 ignores self (NaN
        and inf included), as PyTorch."""
        return _add_product(self, mat1, mat2, beta, alpha, "addmm")

    def baddbmm(
        self: TensorSelf, batch1: Any, batch2: Any, *, beta: float = 1, alpha: float = 1
    ) -> Tensor:
        """beta * self + alpha * (batch1 @ batch2), batch1 and batch2 3-D with one batch size."""
        return _add_product(self, batch1, batch2, beta, alpha, "baddbmm")


def _kind_of(a: Tensor, b: Tensor, c: Any, op: str) -> str:
    """The kind of dtype addcmul or addcdiv (``op``) computes in; bool refused, as PyTorch's."""
    kind = array.result_type(a, b, c, op=op).kind
    if kind == "b":
        raise TypeError(f"{op}: not implemented for bool tensors, as in PyTorch; got {a.dtype}")
    return kind


def _fused(a: Tensor, b: Any, c: Any, value: Any) -> bool:
    """Whether three operands and a scale take a fused op's one node (addcmul's, lerp's):
    tensors of one floating dtype and a number; others take the composition of its steps,
    which promotes them as each step does."""
    if not (isinstance(b, Core) and isinstance(c, Core) and type(value) in (int, float)):
        return False
    dtype = a._array.dtype
    return array.is_floating(dtype) and b._array.dtype == dtype and c._array.dtype == dtype


def operands(a: Any, b: Any, op: str, floats: bool = False) -> tuple[Any, Any]:
    """The operands of a binary op in the dtype PyTorch computes it in (``result_type``: a
    float32 tensor times 2.5 or a 0-d float64 tensor stays float32, uint8 + 300 is uint8,
    float16 + bfloat16 is float32); with ``floats`` (true division) an integer result is the
    default float instead. Tensors are cast (recorded, so gradients flow back in their own
    dtype); Python numbers stay numbers, an integer wrapped into the dtype's range as
    PyTorch wraps it; lists become tensors."""
    # The most common case first: a float tensor and a Python number, as in x * 0.5 + 1.
    if type(b) in (float, int) and isinstance(a, Core) and a._array.dtype.kind == "f":
        if type(b) is float or -(2**63) <= b < 2**64:  # else result_type refuses it
            return a, b
    if type(b) is int and isinstance(a, Core) and 0 <= b < 128 and not floats:
        if a._array.dtype.kind in "iu":  # an integer tensor and a small int: a's dtype
            return a, b
    ta, tb = isinstance(a, Core), isinstance(b, Core)
    if ta and tb and _same_kind(a._array, b._array) and (not floats or _floats(a, b)):
        return a, b
    a, b = _operand(a, b if tb else a, op), _operand(b, a if ta else b, op)
    dtype = array.result_type(a, b, op=op)
    if floats and not array.is_floating(dtype):
        dtype = array.get_default_dtype()
    return _as_dtype(a, dtype), _as_dtype(b, dtype)


def scalar_for(t: Tensor, value: Any, op: str) -> Any:
    """A number multiplying t (an alpha, a beta) as PyTorch casts it to t's dtype: truncated
    toward 0 for an integer tensor (alpha=1.5 adds once, -1.5 subtracts once), True or False
    for a bool one, refused below 0 for an unsigned one."""
    kind = t._array.dtype.kind
    if kind == "b":
        return bool(value)
    if kind == "u" and value < 0:
        raise ValueError(
            f"{op}: a negative scalar cannot multiply an unsigned tensor, as in PyTorch; got "
            f"{value} for dtype {t.dtype}"
        )
    return int(value) if kind in "iu" and isinstance(value, float) else value


def _no_bool(a: Any, b: Any, op: str, both: bool = False) -> None:
    """Refuse what PyTorch does not define: a subtraction with a bool tensor, a pow of two
    (True ** 2 is 1)."""
    bool_a = isinstance(a, Core) and a._array.dtype.kind == "b"
    bool_b = isinstance(b, Core) and b._array.dtype.kind == "b"
    if bool_a and bool_b or not both and (bool_a or bool_b):
        need_number(a if bool_a else b, op)


def _same_kind(a: Any, b: Any) -> bool:
    """True where NumPy's result dtype is already PyTorch's: one dtype, or a bool mask with
    a float (float32 * bool stays float32), the common case in backward formulas."""
    da, db = a.dtype, b.dtype
    return da == db or (da.kind == "b" and db.kind == "f") or (da.kind == "f" and db.kind == "b")


def _floats(a: Tensor, b: Tensor) -> bool:
    return a._array.dtype.kind == "f" or b._array.dtype.kind == "f"


def _operand(x: Any, ref: Any, op: str) -> Any:
    """One operand as a Tensor, an array of ``ref``'s device or a Python number."""
    if isinstance(x, xp.generic):  # a NumPy number (np.float64 is a float too): a number
        return x.item()
    if isinstance(x, Core) or isinstance(x, (bool, int, float)):
        return x
    device = ref.device if isinstance(ref, Core) else None
    if isinstance(x, array.ndarray):
        if isinstance(ref, Core) and type(x) is not type(ref._array):  # another device's
            where = "NumPy array" if type(x) is HOST_ARRAY else f"{array.device_of(x)} array"
            raise TypeError(
                f"{op}: a {where} meets a tensor on {ref.device}; got shape {x.shape}; make "
                f"it a tensor on {ref.device} first (cr.tensor(x, device=...) moves it)"
            )
        return make(x)
    if isinstance(x, (list, tuple)):
        return make(array.from_data(x, None, device))
    raise TypeError(f"{op}: unsupported operand of type {type(x).__name__} with a Tensor")


def _as_dtype(x: Any, dtype: Any) -> Any:
    if isinstance(x, Core):
        return x if x._array.dtype == dtype else x.to(dtype)
    if dtype.kind in "iu" and isinstance(x, int) and not isinstance(x, bool):
        info = xp.iinfo(dtype)
        if not info.min <= x <= info.max:  # wrapped, as PyTorch: uint8 + 300 adds 44
            x = (x - info.min) % (int(info.max) - int(info.min) + 1) + info.min
    return x


def _promote(a: Tensor, b: Tensor, op: str) -> tuple[Tensor, Tensor]:
    """Two tensors in the dtype PyTorch's promotion gives them."""
    if a._array.dtype == b._array.dtype:
        return a, b
    dtype = array.promote_types(a._array.dtype, b._array.dtype, op)
    return _as_dtype(a, dtype), _as_dtype(b, dtype)


def _logical(t: Tensor, fn: Any, dim: Any, keepdim: bool, op: str) -> Tensor:
    if dim is None:
        return make(array.result_array(fn(t._array)))
    axes = normalize_dims(dim, t, op)
    return make(array.result_array(fn(t._array, axis=axes, keepdims=keepdim)))


def false_mask(t: Tensor) -> Any:
    """An all-False mask of t's shape: where(false_mask(t), t, v) is v made t's shape, with a
    zero gradient for t (how fill_, copy_ and the random fills record)."""
    return xp.zeros(t.shape, dtype=bool, like=t._array)


def floating(t: Tensor) -> Tensor:
    """The input of a floating op (division, exp, sigmoid, softmax, ...): an integer or bool
    tensor becomes the default float, float32, as in PyTorch (NumPy would compute in int64,
    or make float64); a floating one, bfloat16 too, keeps its dtype."""
    return t if array.is_floating(t._array.dtype) else t.to(array.get_default_dtype())


def _floor_divide(a: Any, b: Any, rounding_mode: str | None = None) -> Tensor:
    """a // b rounded toward minus infinity, as PyTorch's floor_divide, which has no
    gradient: on a tensor that requires grad it is recorded, and backward through it is
    PyTorch's error (not a gradient silently left out). With a rounding_mode, div's: 'floor'
    or 'trunc' (toward zero), whose gradients are zeros."""
    op = "floor_divide" if rounding_mode is None else "div"
    x, y = operands(a, b, op)
    xa, ya = (t._array if isinstance(t, Core) else t for t in (x, y))
    if xp.result_type(xa, ya).kind in "biu" and not xp.all(ya):
        raise RuntimeError(f"{op}: integer division by zero")
    return elementwise.FloorDivide.apply(x, y, rounding_mode=rounding_mode)


def _clamp(x: Tensor, lo: Any, hi: Any, op: str) -> Tensor:
    """clamp, clamp_min and clamp_max: number bounds are constants of the node; with a
    tensor bound, the bounds are its inputs (a number beside a tensor one, as a 0-d tensor
    would be), all in the dtype result_type gives them, as PyTorch's tensor overload."""
    clamp_bounds(x, lo, hi, op)
    if not isinstance(lo, Core) and not isinstance(hi, Core):
        floats = isinstance(lo, float) or isinstance(hi, float)
        if floats and not array.is_floating(x._array.dtype):
            x = x.to(array.get_default_dtype())  # an integer tensor to a float bound
        return elementwise.Clamp.apply(x, lo=lo, hi=hi, op=op)
    dtype = array.result_type(*(t for t in (x, lo, hi) if t is not None), op=op)
    x, lo, hi = (_as_dtype(t, dtype) for t in (x, lo, hi))
    broadcast_shape(op, *(t.shape for t in (x, lo, hi) if isinstance(t, Core)))
    return elementwise.Clamp.apply(x, lo, hi, op=op)


def _remainder(a: Any, b: Any) -> Tensor:
    """a % b with the divisor's sign, as Python's and PyTorch's remainder (C's fmod takes the
    dividend's). Gradient: 1 for a, -floor(a / b) for b."""
    a, b = operands(a, b, "remainder")
    x, y = (t._array if isinstance(t, Core) else t for t in (a, b))
    if xp.result_type(x, y).kind in "biu" and not xp.all(y):
        raise RuntimeError("remainder: integer division by zero")
    if isinstance(a, Core):  # one node, PyTorch's: of a tensor or a number divisor
        return _REMAINDER[isinstance(b, Core)].apply(a, b)
    # float x % 0 is NaN, its warning ignored (array/modules.py), as Remainder's
    value = xp.fmod(x, y)  # PyTorch's rule: fmod, then + b where the signs differ
    value = xp.where((value != 0) & ((value < 0) != (y < 0)), value + y, value)
    quotient = xp.floor_divide(x, y)
    if not any(isinstance(t, Core) and t.requires_grad for t in (a, b)) and not carries((a, b)):
        return make(value)  # nothing to differentiate, forward or backward
    # the gradient is that of a - floor(a / b) * b with the floor a constant; the value is
    # PyTorch's (the composite may differ in the last bit): a constant makes it so
    out = a - make(array.result_array(quotient)) * b
    return out + make(value - out._array)


_LOGICAL = {
    "bitwise_and": xp.logical_and,
    "bitwise_or": xp.logical_or,
    "bitwise_xor": xp.logical_xor,
}


def _bitwise(a: Any, b: Any, op: str) -> Tensor:
    """A bitwise op of two operands, bool or integer tensors or numbers, in the dtype
    result_type gives them; a shift by a negative amount or by the dtype's width or more
    gives 0 (-1 for a negative number shifted right), as PyTorch's."""
    if op in _LOGICAL and _is_bool(a) and _is_bool(b):
        return _compare(_LOGICAL[op], *((a, b) if isinstance(a, Core) else (b, a)))
    x, y = operands(a, b, op)
    for t in (x, y):
        if isinstance(t, Core) and t._array.dtype.kind not in "biu":
            dtypes = " and ".join(
                str(v.dtype) if isinstance(v, Core) else type(v).__name__ for v in (a, b)
            )
            raise TypeError(f"{op}: needs bool or integer tensors; got {dtypes}")
    shape = broadcast_shape(op, *(t.shape for t in (x, y) if isinstance(t, Core)))
    xa, ya = (t._array if isinstance(t, Core) else t for t in (x, y))
    if op in ("bitwise_left_shift", "bitwise_right_shift"):
        dtype = xp.result_type(xa, ya)
        if isinstance(xa, array.ndarray):  # on its device, as the shift's other operand
            xa = xa.astype(dtype, copy=False)
        else:
            xa = xp.asarray(xa, dtype=dtype, like=ya)
        if not isinstance(ya, array.ndarray):
            ya = xp.asarray(ya, like=xa)
        need_number(make(xa), op)  # PyTorch shifts no bools
        bits = xa.dtype.itemsize * 8
        wide = (ya < 0) | (ya >= bits)
        shift = xp.where(wide, 0, ya).astype(xa.dtype)
        if op == "bitwise_left_shift":
            out = xp.where(wide, 0, xa << shift)
        else:
            out = xp.where(wide, xp.where(xa < 0, -1, 0), xa >> shift)
        return make(array.result_array(out.astype(xa.dtype, copy=False)).reshape(shape))
    fn = {"bitwise_and": xp.bitwise_and, "bitwise_or": xp.bitwise_or}.get(op, xp.bitwise_xor)
    return make(array.result_array(fn(xa, ya)))


def _is_bool(x: Any) -> bool:
    return isinstance(x, bool) or isinstance(x, Core) and x._array.dtype.kind == "b"


def _compare(fn: Any, a: Tensor, b: Any) -> Tensor:
    if isinstance(b, Core) or type(b) is int:  # the dtypes must meet, as for arithmetic
        dtype = array.result_type(a, b, op=fn.__name__)
        if type(b) is int:  # wrapped into that dtype first, as PyTorch: uint8 > -1 is 255 > ...
            b = _as_dtype(b, dtype)
    b = b._array if isinstance(b, Core) else b
    try:
        return make(fn(a._array, b))
    except ValueError:
        raise ValueError(
            f"{fn.__name__}: shapes {a.shape} and {xp.shape(b)} cannot be broadcast together"
        ) from None
    except TypeError:
        raise TypeError(
            f"{fn.__name__}: cannot compare a tensor of dtype {a.dtype} with {type(b).__name__}"
        ) from None


def _add_product(t: Tensor, a: Any, b: Any, beta: float, alpha: float, op: str) -> Tensor:
    """addmm's and baddbmm's beta * t + alpha * (a @ b), the shapes checked for op."""
    a, b = as_tensor(a), as_tensor(b)
    need_number(a, op)
    ndim = 2 if op == "addmm" else 3
    sa, sb = a._array.shape, b._array.shape
    if len(sa) != ndim or len(sb) != ndim:
        raise ValueError(f"{op}: needs two {ndim}-D tensors; got shapes {a.shape} and {b.shape}")
    if sa[-1] != sb[-2] or sa[:-2] != sb[:-2]:
        raise ValueError(
            f"{op}: batch sizes or inner dimensions differ; got shapes {a.shape} and {b.shape}"
        )
    shape = sa[:-1] + sb[-1:]  # (..., m, n)
    if t._array.shape != shape and not broadcasts_to(t._array.shape, shape):
        raise ValueError(
            f"{op}: input of shape {t.shape} cannot be broadcast to the product's shape "
            f"{tuple(shape)}; got shapes {a.shape} and {b.shape}"
        )
    if not t._array.dtype == a._array.dtype == b._array.dtype:
        raise TypeError(
            f"{op}: input tensors must have the same dtype; got {t.dtype}, {a.dtype} and {b.dtype}"
        )
    alpha, beta = scalar_for(t, alpha, op), scalar_for(t, beta, op)
    kind = linalg.Addmm if op == "addmm" else linalg.Baddbmm
    return kind.apply(t, a, b, beta=beta, alpha=alpha)


def matmul(a: Any, b: Any, op: Any = linalg.MatMul) -> Tensor:
    """a @ b, checked; ``op``: the product named as the method calling it (bmm's, vdot's)."""
    a, b = _promote(as_tensor(a), as_tensor(b), "matmul")
    need_number(a, "matmul")
    sa, sb = a._array.shape, b._array.shape
    if not sa or not sb:
        raise ValueError(f"matmul: both operands need at least 1 dim; got shapes {sa} and {sb}")
    if sa[-1] != (sb[0] if len(sb) == 1 else sb[-2]):
        raise ValueError(f"matmul: inner dimensions differ; got shapes {sa} and {sb}")
    if (len(sa) > 2 or len(sb) > 2) and sa[:-2] != sb[:-2]:
        try:
            xp.broadcast_shapes(sa[:-2], sb[:-2])
        except ValueError:
            raise ValueError(
                f"matmul: batch dimensions cannot be broadcast; got shapes {sa} and {sb}"
            ) from None
    return op.apply(a, b)


def where(condition: Any, input: Any, other: Any, op: Any = elementwise.Where) -> Tensor:
    """input where condition, else other; ``op``: the choice named as the method calling it."""
    cond = condition._array if isinstance(condition, Core) else condition
    if not isinstance(cond, array.ndarray):
        cond = xp.asarray(cond)
    if cond.dtype != array.bool_:
        raise TypeError(f"where: condition must be a bool tensor; got dtype {cond.dtype}")
    x = input if isinstance(input, (Core, float, int)) else as_tensor(input)
    y = other if isinstance(other, (Core, float, int)) else as_tensor(other)
    if not isinstance(x, Core) and not isinstance(y, Core):
        x = as_tensor(x)  # two numbers: the dtype of a tensor made of them (float32 for floats)
    return op.apply(cond, *operands(x, y, "where"))


# The primitives as the methods above name their nodes, PyTorch's (Function.named)
_RSUB = elementwise.Sub.named("RsubBackward1")  # a number minus a tensor
_RDIV = elementwise.Div.named("MulBackward0")  # a number over a tensor: a reciprocal times it
_RSQRT = elementwise.Pow.named("RsqrtBackward0")
_BMM = linalg.MatMul.named("BmmBackward0")
# by whether the weight, the divisor, the fill is a tensor (0: a number)
_LERP = tuple(fused.Lerp.named(f"LerpBackward{k}") for k in (0, 1))
_REMAINDER = tuple(fused.Remainder.named(f"RemainderBackward{k}") for k in (0, 1))
_MASKED_FILL = tuple(elementwise.Where.named(f"MaskedFillBackward{k}") for k in (0, 1))
_ROUNDED = {
    s: fused.Rounded.named(s.title() + "Backward0") for s in ("floor", "ceil", "trunc", "round")
}
_ROUNDED["decimals"] = fused.Rounded.named("RoundBackward1")  # round with decimals given
