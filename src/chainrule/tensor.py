"""Tensor: an array, its gradient, and the node that made it; constructors and one-line ops.

Every method normalises its arguments with the shared helpers below and calls a primitive
from ops/ (or composes them). Graph recording and the backward walk belong to autograd.py.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

from . import backend as B
from .autograd import engine
from .autograd.function import Function, register_tensor_type
from .autograd.mode import is_grad_enabled
from .ops import elementwise as E
from .ops import linalg as L
from .ops import movement as M
from .ops import reduce as R

xp = B.xp
Number = (int, float, bool)


class Tensor:
    """An n-dimensional array that can record the operations made on it.

    ``data`` is the underlying ``numpy.ndarray``; ``grad`` is a Tensor (or None) filled by
    ``backward()``; ``grad_fn`` is the node that produced it (None for leaves).
    """

    __slots__ = ("data", "grad", "requires_grad", "grad_fn", "__dict__", "__weakref__")
    __array_ufunc__ = None  # NumPy defers to our reflected operators: array * Tensor works
    __hash__ = object.__hash__  # by identity, as == is elementwise
    _retains_grad = False  # retain_grad() sets it on the instance

    data: Any
    grad: Tensor | None
    requires_grad: bool
    grad_fn: Function | None

    def __init__(self, data: Any, dtype: Any = None, requires_grad: bool = False) -> None:
        if isinstance(data, Tensor):
            data = data.data
        self.data = B.to_array(data, dtype)
        self.grad = None
        self.grad_fn = None
        self.requires_grad = False
        if requires_grad:
            self.requires_grad_(True)

    @staticmethod
    def _make(data: Any, requires_grad: bool = False) -> Tensor:
        """Wrap an array an op made (no copy, no checks): the hot path of every op."""
        t = object.__new__(Tensor)
        t.data = data if type(data) is xp.ndarray else xp.asarray(data)
        t.grad = None
        t.grad_fn = None
        t.requires_grad = requires_grad
        return t

    # -- properties ------------------------------------------------------------------------

    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    @property
    def dtype(self) -> Any:
        return self.data.dtype

    @property
    def ndim(self) -> int:
        return self.data.ndim

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def device(self) -> str:
        return "cpu"

    @property
    def T(self) -> Tensor:
        return self.permute(*reversed(range(self.ndim)))

    @property
    def mT(self) -> Tensor:
        _need_dims(self, 2, "mT")
        return self.transpose(-2, -1)

    def dim(self) -> int:
        return self.data.ndim

    def numel(self) -> int:
        return int(self.data.size)

    def size(self, dim: int | None = None) -> Any:
        if dim is None:
            return self.shape
        return self.shape[_dim(dim, self.ndim, "size", self.shape)]

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len: a 0-d tensor has no len()")
        return self.shape[0]

    # -- conversion ------------------------------------------------------------------------

    def numpy(self) -> Any:
        return self.data

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        return self.data if dtype is None else self.data.astype(dtype)

    def item(self) -> Any:
        if self.data.size != 1:
            raise ValueError(f"item: only one-element tensors have an item; got shape {self.shape}")
        return self.data.item()

    def tolist(self) -> Any:
        return self.data.tolist()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __bool__(self) -> bool:
        if self.data.size != 1:
            raise RuntimeError(
                f"bool: the truth value of a tensor of shape {self.shape} is ambiguous; use "
                ".any() or .all()"
            )
        return bool(self.data)

    def __iter__(self) -> Iterator[Tensor]:
        return (self[i] for i in range(len(self)))

    def __repr__(self) -> str:
        """PyTorch's layout: 4 decimals (or none for whole numbers, or scientific for wide
        ranges), one width for all entries, and the dtype where it is not the default."""
        body = xp.array2string(
            self.data,
            separator=", ",
            prefix="tensor(",
            max_line_width=81,  # 8 entries of 4 decimals a line, as PyTorch
            formatter=_float_formatter(self.data),
        )
        extras = []
        empty = self.data.size == 0
        if empty and self.shape != (0,):
            extras.append(f"size={self.shape}")
        if self.dtype not in (B.float32, B.int64, B.bool_) or empty and self.dtype != B.float32:
            extras.append(f"dtype={self.dtype}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.name}Backward>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return "tensor(" + ", ".join([body, *extras]) + ")"

    # -- graph -----------------------------------------------------------------------------

    def backward(
        self, gradient: Any = None, retain_graph: bool = False, create_graph: bool = False
    ) -> None:
        """Accumulate d(self)/d(leaf) into every leaf's ``.grad``.

        ``gradient`` is required unless self has one element. The graph's saved values are
        freed afterwards unless ``retain_graph`` (or ``create_graph``) is set; with
        ``create_graph`` the backward pass is itself recorded, for higher-order gradients.
        """
        engine.backward(self, gradient, retain_graph, create_graph)

    def detach(self) -> Tensor:
        """The same data (shared, not copied), cut from the graph."""
        return Tensor._make(self.data, False)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if requires_grad and self.data.dtype.kind != "f":
            raise TypeError(
                f"requires_grad: only floating-point tensors can require grad; got dtype "
                f"{self.dtype}"
            )
        if not self.is_leaf and not requires_grad:
            raise RuntimeError(
                "requires_grad_: a non-leaf tensor's requires_grad cannot be turned off; "
                "use detach()"
            )
        self.requires_grad = bool(requires_grad)
        return self

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in ``.grad`` after backward."""
        if not self.requires_grad:
            raise RuntimeError("retain_grad: the tensor does not require grad")
        self._retains_grad = True

    def zero_(self) -> Tensor:
        self.data[...] = 0
        return self

    def fill_(self, value: float) -> Tensor:
        self.data[...] = value
        return self

    def __setitem__(self, index: Any, value: Any) -> None:
        if self.requires_grad and is_grad_enabled():
            raise RuntimeError(
                "setitem: in-place assignment to a tensor that requires grad; do it under "
                "cr.no_grad() (or on .data)"
            )
        self.data[_index(index)] = value.data if isinstance(value, Tensor) else value

    # -- dtype -----------------------------------------------------------------------------

    def to(self, dtype: Any = None, device: Any = None) -> Tensor:
        """A tensor of another dtype (differentiable between float dtypes). The only device
        is "cpu", so ``to("cpu")`` and ``to(device="cpu")`` return the tensor itself."""
        if isinstance(dtype, str) and dtype not in B.DTYPE_NAMES:  # to("cpu"): a device
            dtype, device = None, dtype
        if device is not None and str(device).split(":")[0] != "cpu":
            raise ValueError(f"to: the only device is 'cpu'; got {device!r}")
        if dtype is None:
            return self
        dtype = B.as_dtype(dtype)
        if dtype == self.dtype:
            return self
        if dtype.kind != "f":  # integer and bool tensors cannot require grad: off the graph
            return Tensor._make(self.data.astype(dtype))
        return E.Cast.apply(self, dtype=dtype)

    def clone(self) -> Tensor:
        return E.Cast.apply(self, dtype=self.dtype)

    def contiguous(self) -> Tensor:
        return self

    # -- arithmetic ------------------------------------------------------------------------

    def __add__(self, other: Any) -> Tensor:
        return E.Add.apply(*_pair(self, other, "add"))

    def __radd__(self, other: Any) -> Tensor:
        return E.Add.apply(*_pair(other, self, "add"))

    def __sub__(self, other: Any) -> Tensor:
        return E.Sub.apply(*_pair(self, other, "sub"))

    def __rsub__(self, other: Any) -> Tensor:
        return E.Sub.apply(*_pair(other, self, "sub"))

    def __mul__(self, other: Any) -> Tensor:
        return E.Mul.apply(*_pair(self, other, "mul"))

    def __rmul__(self, other: Any) -> Tensor:
        return E.Mul.apply(*_pair(other, self, "mul"))

    def __truediv__(self, other: Any) -> Tensor:
        return E.Div.apply(*_pair(_true_div(self), other, "div"))

    def __rtruediv__(self, other: Any) -> Tensor:
        return E.Div.apply(*_pair(other, _true_div(self), "div"))

    def __pow__(self, other: Any) -> Tensor:
        return E.Pow.apply(*_pair(self, other, "pow"))

    def __rpow__(self, other: Any) -> Tensor:
        return E.Pow.apply(*_pair(other, self, "pow"))

    def __neg__(self) -> Tensor:
        return E.Neg.apply(self)

    def __pos__(self) -> Tensor:
        return self

    def __abs__(self) -> Tensor:
        return self.abs()

    def __matmul__(self, other: Any) -> Tensor:
        return matmul(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return matmul(other, self)

    add = __add__
    sub = __sub__
    mul = __mul__
    div = __truediv__
    pow = __pow__
    neg = __neg__

    # comparisons make bool tensors and record nothing
    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        return _compare(xp.equal, self, other)

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        return _compare(xp.not_equal, self, other)

    def __lt__(self, other: Any) -> Tensor:
        return _compare(xp.less, self, other)

    def __le__(self, other: Any) -> Tensor:
        return _compare(xp.less_equal, self, other)

    def __gt__(self, other: Any) -> Tensor:
        return _compare(xp.greater, self, other)

    def __ge__(self, other: Any) -> Tensor:
        return _compare(xp.greater_equal, self, other)

    def __invert__(self) -> Tensor:
        if self.dtype.kind not in "biu":
            raise TypeError(f"invert: needs a bool or integer tensor; got dtype {self.dtype}")
        return Tensor._make(~self.data)

    def __and__(self, other: Any) -> Tensor:
        return _compare(xp.logical_and, self, other)

    def __or__(self, other: Any) -> Tensor:
        return _compare(xp.logical_or, self, other)

    eq, ne, lt, le, gt, ge = __eq__, __ne__, __lt__, __le__, __gt__, __ge__

    def any(self) -> Tensor:
        return Tensor._make(xp.any(self.data))

    def all(self) -> Tensor:
        return Tensor._make(xp.all(self.data))

    # -- elementwise math ------------------------------------------------------------------

    def abs(self) -> Tensor:
        return E.Abs.apply(self)

    def sign(self) -> Tensor:
        return E.Sign.apply(self)

    def exp(self) -> Tensor:
        return E.Exp.apply(self)

    def log(self) -> Tensor:
        return E.Log.apply(self)

    def sqrt(self) -> Tensor:
        return E.Sqrt.apply(self)

    def sin(self) -> Tensor:
        return E.Sin.apply(self)

    def cos(self) -> Tensor:
        return E.Cos.apply(self)

    def tanh(self) -> Tensor:
        return E.Tanh.apply(self)

    def sigmoid(self) -> Tensor:
        return E.Sigmoid.apply(self)

    def relu(self) -> Tensor:
        return E.Relu.apply(self)

    def erf(self) -> Tensor:
        return E.Erf.apply(self)

    def square(self) -> Tensor:
        return E.Mul.apply(self, self)

    def clamp(self, min: Any = None, max: Any = None) -> Tensor:
        """Bounds are numbers or tensors (constants: no gradient flows to them)."""
        if min is None and max is None:
            raise ValueError("clamp: at least one of min and max must be given")
        lo = min.data if isinstance(min, Tensor) else min
        hi = max.data if isinstance(max, Tensor) else max
        x = self
        if x.data.dtype.kind != "f" and (isinstance(lo, float) or isinstance(hi, float)):
            x = x.to(B.float32)  # an integer tensor clamped to a float bound becomes float32
        return E.Clamp.apply(x, lo=lo, hi=hi)

    clip = clamp

    def where(self, condition: Any, other: Any) -> Tensor:
        """self where condition, else other: cr.where(condition, self, other)."""
        return where(condition, self, other)

    def maximum(self, other: Any) -> Tensor:
        return E.Maximum.apply(*_pair(self, other, "maximum"))

    def minimum(self, other: Any) -> Tensor:
        return E.Minimum.apply(*_pair(self, other, "minimum"))

    def masked_fill(self, mask: Any, value: float) -> Tensor:
        return where(mask, value, self)

    # -- reductions ------------------------------------------------------------------------

    def sum(self, dim: Any = None, keepdim: bool = False, **np_names: Any) -> Tensor:
        dim, keepdim = _np_names(dim, keepdim, np_names, "sum")
        return R.Sum.apply(self, dims=_dims(dim, self, "sum"), keepdim=keepdim)

    def mean(self, dim: Any = None, keepdim: bool = False, **np_names: Any) -> Tensor:
        dim, keepdim = _np_names(dim, keepdim, np_names, "mean")
        _need_float(self, "mean")
        return R.Mean.apply(self, dims=_dims(dim, self, "mean"), keepdim=keepdim)

    def var(
        self, dim: Any = None, *, correction: int = 1, keepdim: bool = False, **np_names: Any
    ) -> Tensor:
        """Variance with Bessel's correction by default (``correction=1``), as PyTorch."""
        return _variance(self, dim, correction, keepdim, np_names, "var")

    def std(
        self, dim: Any = None, *, correction: int = 1, keepdim: bool = False, **np_names: Any
    ) -> Tensor:
        return _root(_variance(self, dim, correction, keepdim, np_names, "std"), 2)

    def amax(self, dim: Any = None, keepdim: bool = False, **np_names: Any) -> Tensor:
        dim, keepdim = _np_names(dim, keepdim, np_names, "amax")
        dims = _dims(dim, self, "amax")
        _need_elements(self, "amax", dims)
        return R.Amax.apply(self, dims=dims, keepdim=keepdim)

    def amin(self, dim: Any = None, keepdim: bool = False, **np_names: Any) -> Tensor:
        dim, keepdim = _np_names(dim, keepdim, np_names, "amin")
        dims = _dims(dim, self, "amin")
        _need_elements(self, "amin", dims)
        return R.Amin.apply(self, dims=dims, keepdim=keepdim)

    def max(self, dim: Any = None, keepdim: bool = False, **np_names: Any) -> Any:
        """No dim: the largest value (ties share the gradient). With dim: (values, indices),
        the gradient going to the index returned, as PyTorch. max(other Tensor): maximum."""
        if isinstance(dim, Tensor):
            return self.maximum(dim)
        dim, keepdim = _np_names(dim, keepdim, np_names, "max")
        if dim is None:  # amax, but with PyTorch's gradient at NaN (see Amax)
            _need_elements(self, "max", None)
            return R.Amax.apply(self, dims=None, keepdim=False, nan_ties=True)
        return _select(self, dim, keepdim, xp.argmax, "max")

    def min(self, dim: Any = None, keepdim: bool = False, **np_names: Any) -> Any:
        if isinstance(dim, Tensor):
            return self.minimum(dim)
        dim, keepdim = _np_names(dim, keepdim, np_names, "min")
        if dim is None:
            _need_elements(self, "min", None)
            return R.Amin.apply(self, dims=None, keepdim=False, nan_ties=True)
        return _select(self, dim, keepdim, xp.argmin, "min")

    def argmax(self, dim: int | None = None, keepdim: bool = False, **np_names: Any) -> Tensor:
        dim, keepdim = _np_names(dim, keepdim, np_names, "argmax")
        return _arg(self, dim, keepdim, xp.argmax, "argmax")

    def argmin(self, dim: int | None = None, keepdim: bool = False, **np_names: Any) -> Tensor:
        dim, keepdim = _np_names(dim, keepdim, np_names, "argmin")
        return _arg(self, dim, keepdim, xp.argmin, "argmin")

    def logsumexp(self, dim: Any = None, keepdim: bool = False, **np_names: Any) -> Tensor:
        dim, keepdim = _np_names(dim, keepdim, np_names, "logsumexp")
        return R.LogSumExp.apply(self, dims=_dims(dim, self, "logsumexp"), keepdim=keepdim)

    def softmax(self, dim: int = -1, **np_names: Any) -> Tensor:
        dim, _ = _np_names(dim, False, np_names, "softmax")
        return R.Softmax.apply(self, dim=_dim(dim, self.ndim, "softmax", self.shape))

    def log_softmax(self, dim: int = -1, **np_names: Any) -> Tensor:
        dim, _ = _np_names(dim, False, np_names, "log_softmax")
        return R.LogSoftmax.apply(self, dim=_dim(dim, self.ndim, "log_softmax", self.shape))

    def norm(self, p: float = 2, dim: Any = None, keepdim: bool = False) -> Tensor:
        """The vector p-norm over dim (all dims for None), as torch.norm: (sum |x|^p)^(1/p),
        with gradient 0 where the norm is 0 and, for 0 < p < 1, at each x = 0; for p = inf
        or -inf the largest or smallest |x| (ties share the gradient); for p = 0 the number
        of nonzero elements, a constant."""
        if p == 2:
            return _root((self * self).sum(dim, keepdim=keepdim), 2)
        if p in (math.inf, -math.inf):
            a = self.abs()
            return a.amax(dim, keepdim) if p > 0 else a.amin(dim, keepdim)
        if p == 0:
            nonzero = (self.data != 0).sum(axis=_dims(dim, self, "norm"), keepdims=keepdim)
            return Tensor._make(xp.asarray(nonzero, dtype=self.dtype))
        a = self.abs()
        zero = a.data == 0
        if 0 < p < 1 and zero.any():  # |x|^p has an infinite slope at 0: keep it out
            powered = where(zero, 0.0, where(zero, 1.0, a) ** p)
        else:
            powered = a**p
        return _root(powered.sum(dim, keepdim=keepdim), p)

    # -- shape -----------------------------------------------------------------------------

    def reshape(self, *shape: Any) -> Tensor:
        shape = _shape_arg(shape)
        data = self.data
        try:  # NumPy infers -1 and checks the size: a view of contiguous data costs little
            ok = data.flags.c_contiguous and min(shape, default=0) >= -1  # NumPy takes -2 too
            new = data.reshape(shape).shape if ok else None
        except (ValueError, TypeError):
            new = None
        if new is None:
            new = _infer_shape(shape, self.shape, "reshape")  # raises, naming both shapes
        return self if new == self.shape else M.Reshape.apply(self, shape=new)

    view = reshape

    def view_as(self, other: Tensor) -> Tensor:
        return self.reshape(other.shape)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        if self.ndim == 0:
            return self.reshape(1)
        s = _dim(start_dim, self.ndim, "flatten", self.shape)
        e = _dim(end_dim, self.ndim, "flatten", self.shape)
        if s > e:
            raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
        # the merged size spelled out, not -1, which an empty tensor cannot resolve
        return self.reshape(*self.shape[:s], math.prod(self.shape[s : e + 1]), *self.shape[e + 1 :])

    def squeeze(self, dim: Any = None) -> Tensor:
        if dim is None:
            dims = [d for d, n in enumerate(self.shape) if n == 1]
        else:
            dims = list(_dims(dim, self, "squeeze") or ())
        kept = tuple(n for d, n in enumerate(self.shape) if not (d in dims and n == 1))
        return self.reshape(kept)

    def unsqueeze(self, dim: int) -> Tensor:
        d = _dim(dim, self.ndim + 1, "unsqueeze", self.shape)
        return self.reshape(self.shape[:d] + (1,) + self.shape[d:])  # a 1 inserted at d

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        order = list(range(self.ndim))
        a = _dim(dim0, self.ndim, "transpose", self.shape)
        b = _dim(dim1, self.ndim, "transpose", self.shape)
        if a == b:  # also the only transpose a 0-d tensor has
            return self
        order[a], order[b] = order[b], order[a]
        return M.Permute.apply(self, dims=tuple(order))  # dims already checked

    swapaxes = transpose

    def permute(self, *dims: Any) -> Tensor:
        dims = _shape_arg(dims)
        norm = tuple(_dim(d, self.ndim, "permute", self.shape) for d in dims)
        if sorted(norm) != list(range(self.ndim)):
            raise ValueError(
                f"permute: dims {tuple(dims)} are not a permutation of the {self.ndim} dims of a "
                f"tensor of shape {self.shape}"
            )
        return self if norm == tuple(range(self.ndim)) else M.Permute.apply(self, dims=norm)

    def expand(self, *sizes: Any) -> Tensor:
        sizes = _shape_arg(sizes)
        lead = len(sizes) - self.ndim
        if lead < 0:
            raise ValueError(
                f"expand: cannot expand shape {self.shape} to fewer dims {tuple(sizes)}"
            )
        shape = tuple(
            self.shape[i - lead] if n == -1 and i >= lead else n for i, n in enumerate(sizes)
        )
        return self.broadcast_to(shape)

    def broadcast_to(self, shape: Sequence[int]) -> Tensor:
        shape = tuple(shape)
        if shape == self.shape:
            return self
        try:
            xp.broadcast_shapes(self.shape, shape)
            ok = len(shape) >= self.ndim and all(
                a == b or a == 1 for a, b in zip(self.shape[::-1], shape[::-1], strict=False)
            )
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"expand: shape {self.shape} cannot be broadcast to {shape}")
        return M.Expand.apply(self, shape=shape)

    def expand_as(self, other: Tensor) -> Tensor:
        return self.broadcast_to(other.shape)

    def split(self, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
        _need_dims(self, 1, "split")
        d = _dim(dim, self.ndim, "split", self.shape)
        n = self.shape[d]
        if isinstance(split_size_or_sections, int):
            step = split_size_or_sections
            if step <= 0:
                raise ValueError(f"split: split_size must be positive; got {step}")
            sizes = [min(step, n - i) for i in range(0, n, step)] or [0]
        else:
            sizes = list(split_size_or_sections)
            if sum(sizes) != n:
                raise ValueError(
                    f"split: sections {sizes} sum to {sum(sizes)}, not to dim {dim}'s size {n}; "
                    f"got shape {self.shape}"
                )
        lead = (slice(None),) * d
        out, start = [], 0
        for s in sizes:
            out.append(self[lead + (slice(start, start + s),)])
            start += s
        return tuple(out)

    def chunk(self, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
        if chunks <= 0:
            raise ValueError(f"chunk: chunks must be positive; got {chunks}")
        _need_dims(self, 1, "chunk")
        n = self.shape[_dim(dim, self.ndim, "chunk", self.shape)]
        return self.split(max(1, -(-n // chunks)), dim)

    def __getitem__(self, index: Any) -> Tensor:
        return M.GetItem.apply(self, index=_index(index))

    def gather(self, dim: int, index: Any) -> Tensor:
        d = _dim(dim, self.ndim, "gather", self.shape)
        idx = index.data if isinstance(index, Tensor) else xp.asarray(index)
        if idx.dtype.kind not in "iu" or idx.ndim != self.ndim:
            raise ValueError(
                f"gather: index must be an integer tensor with {self.ndim} dims; got dtype "
                f"{idx.dtype} and shape {idx.shape}"
            )
        return M.Gather.apply(self, idx, dim=d)

    take_along_dim = gather

    def matmul(self, other: Any) -> Tensor:
        return matmul(self, other)

    # Last in the class: these names shadow the builtins for the rest of its body.

    def float(self) -> Tensor:
        return self.to(B.float32)

    def double(self) -> Tensor:
        return self.to(B.float64)

    def long(self) -> Tensor:
        return self.to(B.int64)

    def int(self) -> Tensor:
        return self.to(B.int32)

    def bool(self) -> Tensor:
        return self.to(B.bool_)


def _float_formatter(data: Any) -> Any:
    """The formatter of a float array's repr, one format for all entries: whole numbers as
    ``3.``, else ``3.1416``, or ``3.1416e+00`` when the magnitudes span over 1000x, pass 1e8
    or (for fractions) go below 1e-4."""
    if data.dtype.kind != "f" or data.size == 0:
        return None
    if data.size > 1000:  # summarised: only 3 entries at each end of each dim are shown
        for ax, n in enumerate(data.shape):
            if n > 6:
                data = xp.take(data, [0, 1, 2, n - 3, n - 2, n - 1], axis=ax)
    finite = data[xp.isfinite(data)]
    mags = xp.abs(finite[finite != 0]).astype(B.float64)
    whole = bool(xp.all(finite == xp.round(finite)))
    sci = mags.size > 0 and bool(
        mags.max() / mags.min() > 1000 or mags.max() > 1e8 or not whole and mags.min() < 1e-4
    )
    fmt = "{:.4e}" if sci else "{:.0f}." if whole else "{:.4f}"

    def one(v: Any) -> str:
        return fmt.format(v) if xp.isfinite(v) else str(v)

    width = max(len(one(v)) for v in data.flat)
    return {"float_kind": lambda v: one(v).rjust(width)}


class MinMax(NamedTuple):
    """What max/min with a dim return, as PyTorch: values and indices."""

    values: Tensor
    indices: Tensor


# ---------------------------------------------------------------------------------------
# Shared argument helpers: one place for dims, shapes, indexes and operand coercion.


def as_tensor(x: Any, dtype: Any = None) -> Tensor:
    if isinstance(x, Tensor):
        return x if dtype is None else x.to(dtype)
    return Tensor(x, dtype=dtype)


def _pair(a: Any, b: Any, op: str) -> tuple[Any, Any]:
    """Coerce the operands of a binary op: Tensors pass; Python numbers stay plain (the
    tensor's dtype wins, so float32 * 2.5 stays float32); lists become Tensors; an integer
    operand meeting a float one takes its dtype (see _promote)."""
    # The most common case first: a float tensor and a Python number, as in x * 0.5 + 1.
    if type(a) is Tensor and type(b) in (float, int) and a.data.dtype.kind == "f":
        return a, b
    ta, tb = isinstance(a, Tensor), isinstance(b, Tensor)
    if ta and tb:
        return (a, b) if _same_kind(a.data, b.data) else _promote(a, b)
    t, o = (a, b) if ta else (b, a)
    if isinstance(o, xp.generic):
        o = o.item()
    if isinstance(o, Number):
        if isinstance(o, float) and t.data.dtype.kind != "f":
            t = t.to(B.float32)
    elif isinstance(o, xp.ndarray):
        if not _same_kind(o, t.data):
            t, o = _promote(t, Tensor._make(o))
    elif isinstance(o, (list, tuple)):
        t, o = _promote(t, Tensor(o))
    else:
        raise TypeError(f"{op}: unsupported operand of type {type(o).__name__} with a Tensor")
    return (t, o) if ta else (o, t)


def _same_kind(a: Any, b: Any) -> bool:
    """True where NumPy's result dtype is already PyTorch's: equal kinds, or a bool mask
    with a float (float32 * bool stays float32), the common case in backward formulas."""
    ka, kb = a.dtype.kind, b.dtype.kind
    return ka == kb or (ka == "b" and kb == "f") or (ka == "f" and kb == "b")


def _promote(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """PyTorch's rule where NumPy's differs: an integer or bool tensor meeting a float one
    takes the float's dtype (NumPy makes int64 * float32 float64, PyTorch float32)."""
    if a.data.dtype.kind == "f" and b.data.dtype.kind != "f":
        return a, b.to(a.dtype)
    if b.data.dtype.kind == "f" and a.data.dtype.kind != "f":
        return a.to(b.dtype), b
    return a, b


def _true_div(t: Tensor) -> Tensor:
    """Division of integers makes floats: float32, as PyTorch (NumPy would make float64)."""
    return t if t.data.dtype.kind == "f" else t.to(B.float32)


def _compare(fn: Any, a: Tensor, b: Any) -> Tensor:
    b = b.data if isinstance(b, Tensor) else b
    try:
        return Tensor._make(fn(a.data, b))
    except ValueError:
        raise ValueError(
            f"{fn.__name__}: shapes {a.shape} and {xp.shape(b)} cannot be broadcast together"
        ) from None
    except TypeError:
        raise TypeError(
            f"{fn.__name__}: cannot compare a tensor of dtype {a.dtype} with "
            f"{type(b).__name__}"
        ) from None


def _np_names(dim: Any, keepdim: bool, names: dict, op: str) -> tuple[Any, bool]:
    """Accept NumPy's axis/keepdims beside PyTorch's dim/keepdim."""
    if names:
        unknown = set(names) - {"axis", "keepdims"}
        if unknown:
            raise TypeError(f"{op}: unexpected keyword arguments {sorted(unknown)}")
        dim = names.get("axis", dim)
        keepdim = names.get("keepdims", keepdim)
    return dim, bool(keepdim)


def _dim(dim: int, ndim: int, op: str, shape: tuple[int, ...]) -> int:
    """Normalise one dim to [0, ndim); the error names the op, the dim and the shape."""
    if not isinstance(dim, (int, xp.integer)) or isinstance(dim, bool):
        raise TypeError(f"{op}: dim must be an int; got {type(dim).__name__}")
    lo = -max(ndim, 1)
    if not lo <= dim < max(ndim, 1):
        raise IndexError(
            f"{op}: dim {dim} is out of range for a tensor of shape {shape} (expected a dim in "
            f"[{lo}, {max(ndim, 1) - 1}])"
        )
    return int(dim) % max(ndim, 1)


def _dims(dim: Any, t: Tensor, op: str) -> tuple[int, ...] | None:
    """None for all dims, else a sorted tuple of distinct normalised dims."""
    if dim is None:
        return None
    if type(dim) is int and -t.data.ndim <= dim < t.data.ndim:  # the common case, fast
        return (dim % t.data.ndim,)
    if isinstance(dim, (int, xp.integer)):
        dims: tuple = (dim,)
    elif isinstance(dim, (tuple, list)):
        dims = tuple(dim)
    else:
        raise TypeError(f"{op}: dim must be an int or a tuple of ints; got {type(dim).__name__}")
    if not dims:  # PyTorch's dim=(): every dim
        return None
    if t.ndim == 0:
        for d in dims:
            _dim(d, 0, op, t.shape)
        return None
    norm = tuple(sorted(_dim(d, t.ndim, op, t.shape) for d in dims))
    if len(set(norm)) != len(norm):
        raise ValueError(f"{op}: dim {tuple(dims)} repeats a dim; got shape {t.shape}")
    return norm


def _shape_arg(args: tuple) -> tuple:
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


def _infer_shape(shape: tuple, old: tuple[int, ...], op: str) -> tuple[int, ...]:
    size = math.prod(old)
    unknown = [i for i, n in enumerate(shape) if n == -1]
    known = math.prod(n for n in shape if n != -1)
    bad = len(unknown) > 1 or any(n < -1 for n in shape)
    if not bad and unknown:
        bad = known == 0 or size % known != 0
        if not bad:
            shape = tuple(size // known if n == -1 else n for n in shape)
    if bad or math.prod(shape) != size:
        raise ValueError(
            f"{op}: shape {tuple(shape)} is invalid for a tensor of shape {old} ({size} elements)"
        )
    return tuple(int(n) for n in shape)


def _variance(t: Tensor, dim: Any, correction: int, keepdim: bool, names: dict, op: str) -> Tensor:
    """var's arguments, PyTorch's or NumPy's names (and ``unbiased``), checked for ``op``."""
    if "unbiased" in names:
        correction = int(names.pop("unbiased"))
    dim, keepdim = _np_names(dim, keepdim, names, op)
    _need_float(t, op)
    dims = _dims(dim, t, op)
    return R.Var.apply(t, dims=dims, correction=correction, keepdim=keepdim, op=op)


def _root(s: Tensor, p: float) -> Tensor:
    """s ** (1/p) for s >= 0 (std, norm), with gradient 0 where s is 0, as PyTorch, instead of
    inf * 0 = NaN; the inner where keeps the branch not taken finite."""
    zero = s.data == 0
    if not zero.any():
        return s.sqrt() if p == 2 else s ** (1.0 / p)
    safe = where(zero, 1.0, s)
    return where(zero, 0.0, safe.sqrt() if p == 2 else safe ** (1.0 / p))


def _need_dims(t: Tensor, n: int, op: str) -> None:
    if t.ndim < n:
        raise ValueError(f"{op}: needs a tensor of at least {n} dims; got shape {t.shape}")


def _need_float(t: Tensor, op: str) -> None:
    if t.dtype.kind != "f":
        raise TypeError(f"{op}: needs a floating-point tensor; got dtype {t.dtype}")


def _need_elements(t: Tensor, op: str, dims: tuple[int, ...] | None = None) -> None:
    """A max or min has no value over nothing: each dim reduced (all for None) must have
    elements; an empty tensor reduced over its non-empty dims gives an empty result."""
    if t.data.size:
        return
    for d in range(t.ndim) if dims is None else dims:
        if t.shape[d] == 0:
            where = "" if dims is None else f" over dim {d}, which has size 0"
            raise ValueError(f"{op}: the tensor is empty{where}; got shape {t.shape}")


def _index(index: Any) -> Any:
    """Turn an index into one NumPy takes: Tensors and lists become arrays. A bad position
    or shape is reported by GetItem's forward (Function.apply names the op and shape)."""
    if not isinstance(index, tuple):
        index = (index,)
    out = []
    for i in index:
        if isinstance(i, Tensor):
            i = i.data
        elif isinstance(i, list):
            i = xp.asarray(i)
            if i.size == 0:  # [] picks nothing (NumPy would make it a float array)
                i = i.astype(B.int64)
        if isinstance(i, xp.ndarray) and i.dtype.kind not in "iub":
            raise IndexError(f"getitem: index arrays must be integer or bool; got dtype {i.dtype}")
        out.append(i)
    return tuple(out)


def _arg(t: Tensor, dim: Any, keepdim: bool, fn: Any, op: str) -> Tensor:
    if dim is None:
        _need_elements(t, op)
        out = fn(t.data)
        shape = (1,) * t.ndim if keepdim else ()
        return Tensor._make(xp.asarray(out, dtype=B.int64).reshape(shape))
    d = _dim(dim, t.ndim, op, t.shape)
    _need_elements(t, op, (d,) if t.ndim else None)
    return Tensor._make(fn(t.data, axis=d, keepdims=keepdim).astype(B.int64, copy=False))


def _select(t: Tensor, dim: int, keepdim: bool, fn: Any, op: str) -> MinMax:
    d = _dim(dim, t.ndim, op, t.shape)
    _need_elements(t, op, (d,) if t.ndim else None)
    if t.ndim == 0:  # its only dim is itself: the value, at index 0
        values = M.Reshape.apply(t, shape=())  # a new tensor (reshape would return t)
        return MinMax(values, Tensor._make(xp.zeros((), dtype=B.int64)))
    idx = fn(t.data, axis=d, keepdims=True)  # (.., 1, ..)
    values = M.Gather.apply(t, idx, dim=d)
    indices = Tensor._make(idx.astype(B.int64, copy=False))
    if not keepdim:
        values, indices = values.squeeze(d), indices.squeeze(d)
    return MinMax(values, indices)


# ---------------------------------------------------------------------------------------
# Functions of several tensors.


def matmul(a: Any, b: Any) -> Tensor:
    a, b = _promote(as_tensor(a), as_tensor(b))
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(
            f"matmul: both operands need at least 1 dim; got shapes {a.shape} and {b.shape}"
        )
    k_a = a.shape[-1]
    k_b = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if k_a != k_b:
        raise ValueError(f"matmul: inner dimensions differ; got shapes {a.shape} and {b.shape}")
    if a.ndim > 2 or b.ndim > 2:
        try:
            xp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        except ValueError:
            raise ValueError(
                f"matmul: batch dimensions cannot be broadcast; got shapes {a.shape} and {b.shape}"
            ) from None
    return L.MatMul.apply(a, b)


def einsum(equation: str, *operands: Any) -> Tensor:
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return L.Einsum.apply(*[as_tensor(x) for x in operands], equation=equation)


def cat(tensors: Sequence[Any], dim: int = 0) -> Tensor:
    ts = [as_tensor(t) for t in tensors]
    if not ts:
        raise ValueError("cat: expected a non-empty sequence of tensors")
    d = _dim(dim, ts[0].ndim, "cat", ts[0].shape)
    first = ts[0].shape
    for t in ts[1:]:
        pairs = enumerate(zip(t.shape, first, strict=False))
        if t.ndim != len(first) or any(a != b for i, (a, b) in pairs if i != d):
            raise ValueError(
                f"cat: shapes must match except in dim {dim}; got shapes {[x.shape for x in ts]}"
            )
    return M.Cat.apply(*ts, dim=d)


def stack(tensors: Sequence[Any], dim: int = 0) -> Tensor:
    ts = [as_tensor(t) for t in tensors]
    if not ts:
        raise ValueError("stack: expected a non-empty sequence of tensors")
    if any(t.shape != ts[0].shape for t in ts):
        raise ValueError(
            f"stack: all tensors must have one shape; got shapes {[t.shape for t in ts]}"
        )
    d = _dim(dim, ts[0].ndim + 1, "stack", ts[0].shape)
    return cat([t.unsqueeze(d) for t in ts], d)


def where(condition: Any, input: Any, other: Any) -> Tensor:
    cond = condition.data if isinstance(condition, Tensor) else xp.asarray(condition)
    if cond.dtype != B.bool_:
        raise TypeError(f"where: condition must be a bool tensor; got dtype {cond.dtype}")
    x = input if isinstance(input, (Tensor, float, int)) else as_tensor(input)
    y = other if isinstance(other, (Tensor, float, int)) else as_tensor(other)
    if not isinstance(x, Tensor) and not isinstance(y, Tensor):
        x = as_tensor(x)  # two numbers: the dtype of a tensor made of them (float32 for floats)
    return E.Where.apply(cond, *_pair(x, y, "where"))


def maximum(a: Any, b: Any) -> Tensor:
    return E.Maximum.apply(*_pair(*_one_tensor(a, b), "maximum"))


def minimum(a: Any, b: Any) -> Tensor:
    return E.Minimum.apply(*_pair(*_one_tensor(a, b), "minimum"))


def _one_tensor(a: Any, b: Any) -> tuple[Any, Any]:
    """For _pair: a number beside a Tensor stays a number (it takes the tensor's dtype)."""
    return (a, b) if isinstance(a, Tensor) or isinstance(b, Tensor) else (as_tensor(a), b)


_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: float = 0.0) -> Tensor:
    """Pad the last dims, PyTorch's way: ``pad`` = (left, right, top, bottom, ...) starting
    from the last dim. ``mode``: 'constant' (``value``), or 'reflect' (mirrored, the edge not
    repeated), 'replicate' (the edge repeated) or 'circular' (wrapped around), which pad the
    last 1, 2 or 3 dims of an input with one or two more dims, as PyTorch's.

    The non-constant modes index the input with an array of source positions per padded
    dim, so their gradient sums what each position lent to the padding (any order)."""
    if mode not in _PAD_MODES:
        modes = ", ".join(map(repr, _PAD_MODES))
        raise ValueError(f"pad: mode must be one of {modes}; got {mode!r}")
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise ValueError(
            f"pad: pad {tuple(pad)} must have an even length of at most 2*ndim; got shape "
            f"{input.shape}"
        )
    if any(p < 0 for p in pad):
        raise ValueError(f"pad: negative padding is not supported; got {tuple(pad)}")
    k = len(pad) // 2
    if mode == "constant":
        widths = [(0, 0)] * input.ndim
        for i in range(k):
            widths[input.ndim - 1 - i] = (int(pad[2 * i]), int(pad[2 * i + 1]))
        return M.Pad.apply(input, widths=tuple(widths), value=value)
    if k not in (1, 2, 3) or input.ndim not in (k + 1, k + 2):
        raise ValueError(
            f"pad: mode={mode!r} pads the last 1, 2 or 3 dims of an input with one or two "
            f"dims more (2 or 3 dims for 1, 3 or 4 for 2, 4 or 5 for 3); got pad {tuple(pad)} "
            f"for shape {input.shape}"
        )
    out = input
    for i in range(k):
        dim = input.ndim - 1 - i
        lo, hi, n = int(pad[2 * i]), int(pad[2 * i + 1]), input.shape[dim]
        if not (lo or hi):
            continue
        need = {
            "reflect": ("each padding smaller than the size of the dim it pads", n - 1),
            "circular": ("each padding at most the size of the dim it pads", n),
            "replicate": ("a dim that is not empty", math.inf if n else -1),
        }[mode]
        if max(lo, hi) > need[1]:
            raise ValueError(
                f"pad: mode={mode!r} needs {need[0]}; got padding ({lo}, {hi}) for dim {dim} of "
                f"size {n} (shape {input.shape})"
            )
        out = out[(slice(None),) * dim + (_pad_index(n, lo, hi, mode),)]
    return out


def _pad_index(n: int, lo: int, hi: int, mode: str) -> Any:
    """The source position of each of the lo + n + hi positions along a padded dim."""
    i = xp.arange(-lo, n + hi)
    if mode == "reflect":
        i = xp.abs(i)
        return xp.where(i > n - 1, 2 * (n - 1) - i, i)
    if mode == "replicate":
        return xp.clip(i, 0, n - 1)
    return i % n  # circular


# ---------------------------------------------------------------------------------------
# Constructors.


def tensor(data: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    return Tensor(data, dtype=dtype, requires_grad=requires_grad)


def _make_new(arr: Any, requires_grad: bool) -> Tensor:
    t = Tensor._make(arr)
    return t.requires_grad_() if requires_grad else t


def _float(dtype: Any) -> Any:
    return B.as_dtype(dtype) or B.default_float


def zeros(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    return _make_new(xp.zeros(_shape_arg(size), dtype=_float(dtype)), requires_grad)


def ones(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    return _make_new(xp.ones(_shape_arg(size), dtype=_float(dtype)), requires_grad)


def empty(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    return _make_new(xp.empty(_shape_arg(size), dtype=_float(dtype)), requires_grad)


def full(
    size: Sequence[int], fill_value: Any, dtype: Any = None, requires_grad: bool = False
) -> Tensor:
    if dtype is None:
        dtype = B.to_array(fill_value).dtype
    return _make_new(xp.full(tuple(size), fill_value, dtype=B.as_dtype(dtype)), requires_grad)


def rand(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    arr = B.generator().random(_shape_arg(size)).astype(_float(dtype))
    return _make_new(arr, requires_grad)


def randn(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    arr = B.generator().standard_normal(_shape_arg(size)).astype(_float(dtype))
    return _make_new(arr, requires_grad)


def randint(low: int, high: int, size: Sequence[int], dtype: Any = None) -> Tensor:
    draws = B.generator().integers(low, high, tuple(size))
    return Tensor._make(draws.astype(B.as_dtype(dtype) or B.int64))


def arange(start: float, end: float | None = None, step: float = 1, dtype: Any = None,
           requires_grad: bool = False) -> Tensor:
    if end is None:
        start, end = 0, start
    if dtype is None:
        ints = all(isinstance(v, int) for v in (start, end, step))
        dtype = B.int64 if ints else B.default_float
    return _make_new(xp.arange(start, end, step, dtype=B.as_dtype(dtype)), requires_grad)


def linspace(
    start: float, end: float, steps: int, dtype: Any = None, requires_grad: bool = False
) -> Tensor:
    return _make_new(xp.linspace(start, end, steps, dtype=_float(dtype)), requires_grad)


def eye(n: int, m: int | None = None, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    return _make_new(xp.eye(n, m, dtype=_float(dtype)), requires_grad)


def _like(fn: Any) -> Any:
    def like(input: Tensor, dtype: Any = None, requires_grad: bool = False) -> Tensor:
        return fn(*input.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)

    like.__name__ = fn.__name__ + "_like"
    like.__doc__ = f"{fn.__name__} with the shape (and, by default, the dtype) of input."
    return like


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)
rand_like = _like(rand)
randn_like = _like(randn)


def full_like(
    input: Tensor, fill_value: Any, dtype: Any = None, requires_grad: bool = False
) -> Tensor:
    return full(input.shape, fill_value, dtype=dtype or input.dtype, requires_grad=requires_grad)


register_tensor_type(Tensor)
