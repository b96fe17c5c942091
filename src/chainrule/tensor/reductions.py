"""Tensor reductions: sums, means, extremes, norms, softmax, cumulative ops, sort and topk."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, NamedTuple

from .. import array, fastpath
from ..arguments import (
    is_int,
    need_elements,
    need_float,
    need_number,
    normalize_dim,
    normalize_dims,
    numpy_dim_names,
)
from ..autograd.forward_ad import carries, set_tangent, tangent_of
from ..autograd.node import UNGIVEN, UNGIVEN_FALSE, named
from ..autograd.outputs import packed_outputs
from ..autograd.saved import record
from ..fastpath import unwatched
from ..ops import decompositions, linalg, movement, reduce, statistics
from .arithmetic import floating, where
from .core import Core, as_tensor, make
from .spread import cov_of, quantile_of

if TYPE_CHECKING:  # Tensor in annotations alone (core.py says why)
    from . import Tensor
    from .core import TensorSelf

xp = array.xp


class Reductions(Core):
    """The reductions of Tensor."""

    __slots__ = ()

    # -- reductions ------------------------------------------------------------------------

    def sum(
        self: TensorSelf,
        dim: Any = UNGIVEN,
        keepdim: bool = False,
        *,
        dtype: Any = None,
        **np_names: Any,
    ) -> Tensor:
        """The sum over dim (all for None); with dtype, of the input cast to it first."""
        given = dim is not UNGIVEN or bool(np_names)
        dim, keepdim = numpy_dim_names(None if dim is UNGIVEN else dim, keepdim, np_names, "sum")
        x = self if dtype is None else self.to(dtype)
        if x._array.dtype.kind == "u":  # PyTorch sums every integer in int64 (NumPy: uint64)
            x = x.to(array.int64)
        dims = normalize_dims(dim, x, "sum")
        if given and dims is None:
            return _over_dims_given(_SUM_GIVEN, x, dim, keepdim)
        return reduce.Sum.apply(x, dims=dims, keepdim=keepdim)

    def mean(
        self: TensorSelf,
        dim: Any = UNGIVEN,
        keepdim: bool = False,
        *,
        dtype: Any = None,
        **np_names: Any,
    ) -> Tensor:
        """The mean over dim (all for None); with dtype, of the input cast to it first."""
        given = dim is not UNGIVEN or bool(np_names)
        dim, keepdim = numpy_dim_names(None if dim is UNGIVEN else dim, keepdim, np_names, "mean")
        x = self if dtype is None else self.to(dtype)
        need_float(x, "mean")
        dims = normalize_dims(dim, x, "mean")
        if given and dims is None:
            return _over_dims_given(_MEAN_GIVEN, x, dim, keepdim)
        return reduce.Mean.apply(x, dims=dims, keepdim=keepdim)

    def prod(
        self: TensorSelf, dim: int | None = None, keepdim: bool = False, *, dtype: Any = None
    ) -> Tensor:
        """The product over dim (all for None), with the gradient exact where elements are 0.
        Integer and bool tensors multiply in int64, as PyTorch, unless a dtype is given; an
        empty product is 1, with the gradient 0."""
        x = self if dtype is None else self.to(dtype)
        if dtype is None and x._array.dtype.kind in "biu":
            x = x.to(array.int64)
        dims = None if dim is None else (normalize_dim(dim, x.ndim, "prod", x.shape),)
        return reduce.Prod.apply(x, dims=dims, keepdim=keepdim)

    def var(
        self: TensorSelf,
        dim: Any = None,
        unbiased: bool | None = None,
        keepdim: bool = False,
        *,
        correction: float | None = None,
        **np_names: Any,
    ) -> Tensor:
        """Variance with Bessel's correction by default (``correction`` None is 1), as PyTorch;
        its older overloads take ``unbiased`` (1 if True, else 0) after dim (``x.var(0,
        False)``) or in dim's place (``x.var(False)``, over all dims)."""
        return variance(self, dim, unbiased, keepdim, correction, np_names, "var")

    def std(
        self: TensorSelf,
        dim: Any = None,
        unbiased: bool | None = None,
        keepdim: bool = False,
        *,
        correction: float | None = None,
        **np_names: Any,
    ) -> Tensor:
        """The square root of var, as one op: its gradient 0 where the deviation is 0."""
        return variance(self, dim, unbiased, keepdim, correction, np_names, "std")

    def amax(self: TensorSelf, dim: Any = None, keepdim: bool = False, **np_names: Any) -> Tensor:
        dim, keepdim = numpy_dim_names(dim, keepdim, np_names, "amax")
        dims = normalize_dims(dim, self, "amax")
        need_elements(self, "amax", dims)
        return reduce.Amax.apply(self, dims=dims, keepdim=keepdim)

    def amin(self: TensorSelf, dim: Any = None, keepdim: bool = False, **np_names: Any) -> Tensor:
        dim, keepdim = numpy_dim_names(dim, keepdim, np_names, "amin")
        dims = normalize_dims(dim, self, "amin")
        need_elements(self, "amin", dims)
        return reduce.Amin.apply(self, dims=dims, keepdim=keepdim)

    def max(self: TensorSelf, dim: Any = None, keepdim: bool = False, **np_names: Any) -> Any:
        """No dim: the largest value (ties share the gradient). With dim: (values, indices),
        the gradient going to the index returned, as PyTorch. max(other Tensor): maximum."""
        if isinstance(dim, Core):
            return self.maximum(dim)
        dim, keepdim = numpy_dim_names(dim, keepdim, np_names, "max")
        if dim is None:  # amax, but with PyTorch's gradient at NaN (see Amax)
            need_elements(self, "max", None)
            return _MAX_ALL.apply(self, dims=None, keepdim=False, nan_ties=True)
        return _select(self, dim, keepdim, "argmax", "max")

    def min(self: TensorSelf, dim: Any = None, keepdim: bool = False, **np_names: Any) -> Any:
        if isinstance(dim, Core):
            return self.minimum(dim)
        dim, keepdim = numpy_dim_names(dim, keepdim, np_names, "min")
        if dim is None:
            need_elements(self, "min", None)
            return _MIN_ALL.apply(self, dims=None, keepdim=False, nan_ties=True)
        return _select(self, dim, keepdim, "argmin", "min")

    def argmax(
        self: TensorSelf, dim: int | None = None, keepdim: bool = False, **np_names: Any
    ) -> Tensor:
        dim, keepdim = numpy_dim_names(dim, keepdim, np_names, "argmax")
        need_number(self, "argmax")
        return _arg(self, dim, keepdim, xp.argmax, "argmax")

    def argmin(
        self: TensorSelf, dim: int | None = None, keepdim: bool = False, **np_names: Any
    ) -> Tensor:
        dim, keepdim = numpy_dim_names(dim, keepdim, np_names, "argmin")
        need_number(self, "argmin")
        return _arg(self, dim, keepdim, xp.argmin, "argmin")

    def logsumexp(
        self: TensorSelf, dim: Any = None, keepdim: bool = False, **np_names: Any
    ) -> Tensor:
        dim, keepdim = numpy_dim_names(dim, keepdim, np_names, "logsumexp")
        dims = normalize_dims(dim, self, "logsumexp")
        return reduce.LogSumExp.apply(floating(self), dims=dims, keepdim=keepdim)

    def softmax(self: TensorSelf, dim: int = -1, dtype: Any = None, **np_names: Any) -> Tensor:
        """exp(x) / sum(exp(x)) along dim; with dtype, of the input cast to it first."""
        return _along(reduce.Softmax, "softmax", self, dim, dtype, np_names)

    def log_softmax(self: TensorSelf, dim: int = -1, dtype: Any = None, **np_names: Any) -> Tensor:
        """x - logsumexp(x) along dim; with dtype, of the input cast to it first."""
        return _along(reduce.LogSoftmax, "log_softmax", self, dim, dtype, np_names)

    def norm(self: TensorSelf, p: Any = "fro", dim: Any = None, keepdim: bool = False) -> Tensor:
        """The vector p-norm over dim (all dims for None), as torch.norm: linalg.vector_norm's
        (sum |x|^p)^(1/p), max or min |x| for p = inf or -inf, the count of nonzeros for 0.
        'fro' is p = 2 over at most 2 dims; 'nuc' the sum of the singular values of the
        matrices over 2 dims (all for None). Integer and bool tensors are refused, as
        PyTorch's linalg.vector_norm refuses them."""
        need_float(self, "norm")
        if isinstance(p, str):
            dims = [dim] if is_int(dim) else None if dim is None else list(dim)
            if p == "fro" and (dims is None or len(dims) <= 2):
                return vector_norm(self, 2, dim, keepdim, "norm")
            return _matrix_norm(self, p, dim, keepdim)
        return vector_norm(self, p, dim, keepdim, "norm")

    def cumsum(self: TensorSelf, dim: int, *, dtype: Any = None) -> Tensor:
        """Sums along dim; integers and bools in int64, as PyTorch, unless a dtype is given,
        which the input is cast to first."""
        d = normalize_dim(dim, self._array.ndim, "cumsum", self._array.shape)
        if dtype is None:
            return reduce.Cumsum.apply(self, dim=d)
        return reduce.Cumsum.apply(self.to(dtype), dim=d, widen=False)

    def sort(
        self: TensorSelf, dim: int = -1, descending: bool = False, *, stable: bool = UNGIVEN_FALSE
    ) -> ValuesIndices:
        """(values, indices) along dim, NaN counted largest, as PyTorch. The sort is always
        stable (equal values keep their order), which ``stable=False`` allows too; stable
        given, True or False, is PyTorch's stable overload (SortBackward1)."""
        name = "SortBackward0" if stable is UNGIVEN_FALSE else "SortBackward1"
        return _top(self, None, dim, descending, "sort", name)

    def msort(self: TensorSelf) -> Tensor:
        """The values sorted along dim 0 (sort(0).values)."""
        return self.sort(0).values

    def argsort(
        self: TensorSelf, dim: int = -1, descending: bool = False, *, stable: bool = False
    ) -> Tensor:
        return self.sort(dim, descending, stable=stable).indices.detach()

    def topk(
        self: TensorSelf, k: int, dim: int = -1, largest: bool = True, sorted: bool = True
    ) -> ValuesIndices:
        """The k largest (or smallest) values along dim and their indices, in order (which
        ``sorted=False`` allows too); the gradient goes to the places they came from."""
        need_number(self, "topk")
        return _top(self, k, dim, largest, "topk", "TopkBackward0")

    def cumprod(self: TensorSelf, dim: int, *, dtype: Any = None) -> Tensor:
        """Products along dim, with cumsum's dtypes."""
        d = normalize_dim(dim, self._array.ndim, "cumprod", self._array.shape)
        if dtype is None:
            return reduce.Cumprod.apply(self, dim=d)
        return reduce.Cumprod.apply(self.to(dtype), dim=d, widen=False)

    def cumsum_(self: TensorSelf, dim: int, *, dtype: Any = None) -> Tensor:
        return self._write("cumsum_", lambda t: t.cumsum(dim, dtype=dtype))

    def cumprod_(self: TensorSelf, dim: int, *, dtype: Any = None) -> Tensor:
        return self._write("cumprod_", lambda t: t.cumprod(dim, dtype=dtype))

    def cummax(self: TensorSelf, dim: int) -> ValuesIndices:
        """(values, indices): the largest value so far along dim and the last place it was
        met (a NaN, once met, stays), as PyTorch; the gradient goes to those places."""
        return _running(self, dim, xp.maximum, "cummax")

    def cummin(self: TensorSelf, dim: int) -> ValuesIndices:
        return _running(self, dim, xp.minimum, "cummin")

    def logcumsumexp(self: TensorSelf, dim: int) -> Tensor:
        """log(cumsum(exp(x))) along dim, computed stably (no exp overflows)."""
        need_float(self, "logcumsumexp")
        d = normalize_dim(dim, self.ndim, "logcumsumexp", self.shape)
        return statistics.LogCumSumExp.apply(self, dim=d)

    # -- statistics ------------------------------------------------------------------------

    def nansum(
        self: TensorSelf, dim: Any = None, keepdim: bool = False, *, dtype: Any = None
    ) -> Tensor:
        """The sum with NaN counted as 0 (its gradient 0 there)."""
        x = self if dtype is None else self.to(dtype)
        if array.is_floating(x._array.dtype):
            nans = xp.isnan(x._array)
            if nans.any():
                x = where(nans, 0.0, x)
        elif x._array.dtype.kind == "u":  # summed in int64, as sum's
            x = x.to(array.int64)
        dims = normalize_dims(dim, x, "nansum")
        if dims is None:
            return _over_dims_given(_NANSUM, x, dim, keepdim)
        return _NANSUM.apply(x, dims=dims, keepdim=keepdim)

    def nanmean(
        self: TensorSelf, dim: Any = None, keepdim: bool = False, *, dtype: Any = None
    ) -> Tensor:
        """The mean of the elements that are not NaN (NaN where there are none)."""
        x = self if dtype is None else self.to(dtype)
        need_float(x, "nanmean")
        dims = normalize_dims(dim, x, "nanmean")
        count = (~xp.isnan(x._array)).sum(axis=dims, keepdims=keepdim)
        return x.nansum(dim, keepdim) / make(array.on_device_of(count, x._array, x.dtype))

    def count_nonzero(self: TensorSelf, dim: Any = None) -> Tensor:
        """The number of nonzero elements over dim (an int or a tuple; all for None), int64."""
        dims = normalize_dims(dim, self, "count_nonzero")
        count = (self._array != 0).sum(axis=dims)
        return make(array.on_device_of(count, self._array, array.int64))

    def aminmax(self: TensorSelf, *, dim: int | None = None, keepdim: bool = False) -> MinMax:
        """(min, max) over dim (all for None), each with amin's and amax's gradient."""
        if dim is not None and not is_int(dim):
            raise TypeError(f"aminmax: dim must be an int or None; got {dim!r}")
        dims = None if dim is None else normalize_dims(dim, self, "aminmax")
        need_elements(self, "aminmax", dims)
        packed = record(reduce.Aminmax.apply(self, dims=dims, keepdim=keepdim), dim=dim)
        return MinMax(*_parts(packed, "Aminmax"))

    def median(self: TensorSelf, dim: int | None = None, keepdim: bool = False) -> Any:
        """No dim: the lower of the two middle values (NaN if any element is), its gradient
        shared evenly among the elements equal to it. With dim: (values, indices), ties
        taken by position, the gradient going to the index, as PyTorch."""
        return _median(self, dim, keepdim, False, "median")

    def nanmedian(self: TensorSelf, dim: int | None = None, keepdim: bool = False) -> Any:
        """median of the elements that are not NaN (NaN where all are)."""
        return _median(self, dim, keepdim, True, "nanmedian")

    def kthvalue(self: TensorSelf, k: int, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
        """(values, indices): the k-th smallest value along dim (NaN largest), with the index
        PyTorch's quickselect picks among equal values (past 2^19 tied elements in a call,
        the index by position among them)."""
        need_number(self, "kthvalue")
        x, d = _lines(self, dim, "kthvalue")
        if not is_int(k) or not 1 <= k <= x._array.shape[d]:
            raise ValueError(
                f"kthvalue: k {k!r} is out of range for dim {dim} of size {x.shape[d]}; "
                f"got shape {self.shape}"
            )
        index, values = _found(x._array, d, statistics.kth_index, k, d)
        return _chosen(self, x, index, d, keepdim, "KthvalueBackward0", values)

    def mode(self: TensorSelf, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
        """(values, indices): the most frequent value along dim (of equally frequent ones the
        smallest) and the index PyTorch's std::sort leaves last among its places (past 2^16
        elements in lines of ties or NaN in a call, its last place)."""
        x, d = _lines(self, dim, "mode")
        need_elements(x, "mode", (d,))
        index, values = _found(x._array, d, statistics.mode_index, d)
        return _chosen(self, x, index, d, keepdim, "ModeBackward0", values)

    def quantile(
        self: TensorSelf,
        q: Any,
        dim: int | None = None,
        keepdim: bool = False,
        *,
        interpolation: str = "linear",
    ) -> Tensor:
        """The q-th quantiles over dim (all for None): q a number or a 0-d or 1-d tensor (whose
        values lead the result's dims), between the sorted values at ranks floor and ceil of
        q * (n - 1) by ``interpolation`` (linear, lower, higher, nearest, midpoint); NaN
        where a line holds one."""
        return quantile_of(self, q, dim, keepdim, interpolation, False, "quantile")

    def nanquantile(
        self: TensorSelf,
        q: Any,
        dim: int | None = None,
        keepdim: bool = False,
        *,
        interpolation: str = "linear",
    ) -> Tensor:
        """quantile of the values that are not NaN (NaN where all are)."""
        return quantile_of(self, q, dim, keepdim, interpolation, True, "nanquantile")

    def diff(
        self: TensorSelf, n: int = 1, dim: int = -1, prepend: Any = None, append: Any = None
    ) -> Tensor:
        """The n-th forward difference along dim (x[1:] - x[:-1], n times; for bools, where
        neighbours differ), prepend and append joined to the ends first."""
        shape = self._array.shape
        if not shape:
            raise ValueError("diff: needs a tensor of at least one dim; got a 0-d tensor")
        if not (type(n) is int or is_int(n)) or n < 0:
            raise ValueError(f"diff: n must be a non-negative int; got {n!r}")
        d = normalize_dim(dim, len(shape), "diff", shape)
        x: Tensor = self
        if prepend is not None or append is not None:
            parts = [as_tensor(p) for p in (prepend, self, append) if p is not None]
            shapes = [p._array.shape for p in parts]
            rest = shape[:d] + shape[d + 1 :]
            # lists, not any() over a generator: on every call's way
            if [s for s in shapes if len(s) != len(shape) or s[:d] + s[d + 1 :] != rest]:
                raise ValueError(
                    f"diff: prepend and append must match the input's shape but in dim "
                    f"{dim}; got shapes {shapes}"
                )
            if n:
                dtypes = [p._array.dtype for p in parts]
                if [t for t in dtypes if t != dtypes[0]]:  # of several dtypes: promoted
                    dtype = array.promote_all(dtypes, "diff")
                    parts = [p if p._array.dtype == dtype else p.to(dtype) for p in parts]
                x = movement.Cat.apply(*parts, dim=d)
        if n == 0:  # the input itself, without prepend and append, copied as PyTorch's
            return named(self.clone(), "CopyBackwards")  # (its copy_ into an empty tensor)
        lead = (slice(None),) * d  # narrow's slices along d, given directly
        for _ in range(min(n, x._array.shape[d])):
            size = x._array.shape[d] - 1
            index = [lead + (slice(1, size + 1),), lead + (slice(0, size),)]
            later, earlier = movement.sliced(movement.GetItem, x, index)
            x = later != earlier if x._array.dtype.kind == "b" else later - earlier
        return x

    def cov(
        self: TensorSelf, *, correction: float = 1, fweights: Any = None, aweights: Any = None
    ) -> Tensor:
        """The covariance matrix of the variables in the rows (observations in the columns), as
        torch.cov: fweights (integer counts) and aweights (floating weights) per observation;
        the sum of the weights less ``correction`` (aweights-adjusted) divides."""
        return cov_of(self, correction, fweights, aweights)

    def corrcoef(self: TensorSelf) -> Tensor:
        """Pearson's correlation coefficients of the rows: cov over the outer product of the
        standard deviations, clipped to [-1, 1]."""
        if self.ndim > 2:
            raise ValueError(f"corrcoef: needs at most 2 dims; got shape {self.shape}")
        c = self.cov()
        with array.errstate(divide="ignore", invalid="ignore"):  # NaN where a variance is 0
            if c.ndim == 0:  # one variable: 1, or NaN where its variance is 0, inf or NaN
                return c / c
            std = c.diagonal().sqrt()  # (variables,)
            rows = movement.viewed(movement.Reshape, std, shape=(std._array.size, 1))
            return (c / rows / std).clamp(-1, 1)  # rows, then columns


class ValuesIndices(NamedTuple):
    """What max/min with a dim, sort and topk return, as PyTorch: values and indices."""

    values: Tensor
    indices: Tensor


class MinMax(NamedTuple):
    """What aminmax returns, as PyTorch: min and max."""

    min: Tensor
    max: Tensor


_MAX_ALL, _MIN_ALL = reduce.Amax.named("MaxBackward1"), reduce.Amin.named("MinBackward1")


def _lines(t: Tensor, dim: int, op: str) -> tuple[Tensor, int]:
    """t and dim normalised for an op over lines along dim: a 0-d tensor as one of 1 value."""
    shape = t._array.shape
    d = normalize_dim(dim, len(shape), op, shape)
    return (t, d) if shape else (movement.viewed(movement.Reshape, t, shape=(1,)), 0)


def _found(a: Any, d: int, find: Any, *args: Any) -> tuple[Any, Any]:
    """``find(a, *args)``: each line's chosen index along d and its value (or None), both
    keepdim-shaped; of lines of one value, that value at index 0, with no search."""
    if a.shape[d] == 1:
        return xp.zeros(a.shape, array.int64, like=a), a.copy()
    return find(a, *args)  # type: ignore[no-any-return]


def _chosen(
    t: Tensor, x: Tensor, index: Any, d: int, keepdim: bool, name: str, values: Any = None
) -> ValuesIndices:
    """The values of x (t's lines) at index (keepdim-shaped) along d (``values``, where found
    with it), and the indices, in t's reduced shape; the node named ``name`` sends the
    gradient to the index."""
    s = x._array.shape
    shape = s[:d] + ((1,) if keepdim else ()) + s[d + 1 :] if t.ndim else ()
    out = _picked(x, index, d, shape, name, values)
    return ValuesIndices(out, make(index.reshape(shape).astype(array.int64, copy=False)))


def _picked(x: Tensor, index: Any, d: int, shape: tuple, name: str, values: Any) -> Tensor:
    """``Select.apply``: x's values at index along d (``values``, where found with it), in
    shape, the node named ``name``; forward's array wrapped directly where fastpath's
    off_graph allows it."""
    if fastpath.off_graph(x):  # the arguments by position: no dict of them to make
        return make(statistics.Select().forward(x._array, index, d, shape, name, values))
    return statistics.Select.apply(
        x, index=index, dim=d, shape=shape, node_name=name, values=values
    )


def _median(t: Tensor, dim: Any, keepdim: bool, ignore_nan: bool, op: str) -> Any:
    """median and nanmedian: of the whole tensor a value, whose gradient the elements equal
    to it share; along dim the values and indices, as PyTorch's CPU kernel picks them."""
    need_number(t, op)
    name = "Nanmedian" if ignore_nan else "Median"
    if dim is None:
        if keepdim:
            raise TypeError(f"{op}: keepdim needs a dim; got dim None")
        if not t.numel() and not array.is_floating(t._array.dtype):
            raise ValueError(f"{op}: the tensor is empty; got shape {t.shape} of dtype {t.dtype}")
        value = statistics.lower_median(t._array, ignore_nan)
        return statistics.EvenlyDistribute.apply(t, value=value, node_name=name + "Backward0")
    x, d = _lines(t, dim, op)
    need_elements(x, op, (d,))
    index, values = _found(x._array, d, statistics.median_index, d, ignore_nan)
    return _chosen(t, x, index, d, keepdim, name + "Backward1", values)


def _running(t: Tensor, dim: int, fn: Any, op: str) -> ValuesIndices:
    """cummax and cummin: fn's running values along dim, and the places they came from."""
    x, d = _lines(t, dim, op)
    a = x._array
    if a.shape[d] > 1:
        out = fn.accumulate(a, axis=d)
        index = statistics.running_index(a, out, d)
    else:  # nothing runs (or nothing is there): each value its own, at index 0
        out, index = a.copy(), xp.zeros(a.shape, array.int64, like=a)
    shape = t._array.shape
    if fastpath.off_graph(x):  # no node: the running values wrapped, in C order as Select's
        values = make(xp.ascontiguousarray(out).reshape(shape))
    else:
        values = statistics.Select.apply(
            x, index=index, dim=d, shape=shape, node_name=op.title() + "Backward0", values=out
        )
    return ValuesIndices(values, make(index if x is t else index.reshape(shape)))


def _over_dims_given(op: Any, x: Tensor, dim: Any, keepdim: bool) -> Tensor:
    """A reduction by ``op`` over every dim that was given its dim (None, (), or 0 of a 0-d
    tensor): PyTorch's node of the overload with dim, which keeps dim as given."""
    given = None if dim is None else tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    return record(op.apply(x, dims=None, keepdim=keepdim), dim=given)


# the reductions' nodes of PyTorch's overloads with dim, and nansum's
_SUM_GIVEN, _MEAN_GIVEN = reduce.Sum.named("SumBackward1"), reduce.Mean.named("MeanBackward1")
_NANSUM = reduce.Sum.named("NansumBackward0")


def _along(op: Any, name: str, t: Tensor, dim: Any, dtype: Any, names: dict) -> Tensor:
    """softmax or log_softmax (``op``, called ``name``) along one dim of t, cast to dtype
    first: the arguments checked, dim normalised by the array's shape (the Tensor's shape
    is an object made at each read, which only an error needs); forward's array wrapped
    where fastpath's off_graph allows it."""
    x = t if dtype is None else t.to(dtype)
    if names:
        dim, _ = numpy_dim_names(dim, False, names, name)
    a = x._array
    n = a.ndim
    if type(dim) is int and -n <= dim < n:  # the common case, as normalize_dim's first
        dim %= n
    else:
        dim = normalize_dim(dim, n, name, a.shape)
    if a.dtype.kind != "f":  # as need_float's own check, which refuses all but bfloat16
        need_float(x, name)
    if fastpath.off_graph(x):  # no node: forward's array wrapped directly
        return make(op().forward(a, dim))
    return op.apply(x, dim=dim)


def variance(
    t: Tensor, dim: Any, unbiased: Any, keepdim: bool, correction: Any, names: dict, op: str
) -> Any:
    """var, std (``op``), or var_mean's and std_mean's pair, one node: the arguments PyTorch's
    (either overload) or NumPy's names, checked for ``op``."""
    if isinstance(dim, bool):  # var(x, True): the overload of unbiased alone, over all dims
        if unbiased is not None:
            raise TypeError(f"{op}: unbiased given twice; got {dim} and {unbiased}")
        dim, unbiased = None, dim
    if unbiased is not None:
        if correction is not None:
            raise TypeError(f"{op}: give unbiased or correction, not both")
        if not isinstance(unbiased, bool):
            raise TypeError(f"{op}: unbiased must be a bool; got {type(unbiased).__name__}")
        correction = int(unbiased)
    if names:
        dim, keepdim = numpy_dim_names(dim, keepdim, names, op)
    need_float(t, op)
    dims = normalize_dims(dim, t, op)
    correction = 1 if correction is None else correction
    if op[-5:] == "_mean" and fastpath.off_graph(t):  # no node: each output made directly
        first, mean = _SPREADS[op]().parts(t._array, dims, correction, keepdim, op)
        return make(first), make(mean)
    out = _SPREADS[op].apply(t, dims=dims, correction=correction, keepdim=keepdim, op=op)
    record(out, correction=correction)  # as given, as PyTorch's node keeps it
    if op in ("var", "std"):
        return out
    return _parts(out, "VarMean" if op == "var_mean" else "StdMean")


_SPREADS = {"var": reduce.Var, "std": reduce.Std, "var_mean": reduce.VarMean}
_SPREADS["std_mean"] = reduce.StdMean


def _parts(packed: Tensor, op: str) -> tuple[Tensor, Tensor]:
    """The two outputs of var_mean, std_mean or aminmax (``op``, the primitive's name),
    packed[0] and packed[1], which share packed's node as PyTorch's two outputs share one;
    with no node, two tensors that are not views, as PyTorch's."""
    if packed.grad_fn is None:  # no node to share
        if unwatched(packed):  # nothing traces the parts: each its part of packed's array
            return make(packed._array[0]), make(packed._array[1])
        first, second = movement.sliced(movement.GetItem, packed, [(0,), (1,)])
        return first, second  # forward mode's tangents (vmap's, an exporter's) are its parts
    parts = []
    for k in (0, 1):  # the rule of each output's place in packed: indexing's
        part = movement.GetItem()
        part.inputs, part.index = (packed,), (k,)
        parts.append(part)
    read = packed.grad_fn.outputs_read
    first, second = packed_outputs(packed, parts, op, op + "Backward0", read)
    if carries((packed,)):  # a dual level is open: each output's tangent is its part
        tangent = tangent_of(packed)
        set_tangent(first, tangent[0])
        set_tangent(second, tangent[1])
    return first, second


def _matrix_norm(t: Tensor, p: str, dim: Any, keepdim: bool) -> Tensor:
    """torch.norm's orders by name over more than 2 dims ('fro': refused) or over a matrix's
    two dims (all of a 2-D tensor for None): 'nuc', the sum of its singular values."""
    dims = [dim] if is_int(dim) else None if dim is None else list(dim)
    if p not in ("fro", "nuc"):
        raise ValueError(f"norm: order {p!r} is not supported; expected 'fro', 'nuc' or a number")
    dims = list(range(t.ndim)) if dims is None else dims
    if len(dims) != 2:
        raise ValueError(
            f"norm: order {p!r} is a matrix norm, over 2 dims; got dim {dim} for shape {t.shape}"
        )
    if t.dtype.itemsize < 4:  # LAPACK has no half precision
        raise TypeError(f"norm: order {p!r} needs float32 or float64; got dtype {t.dtype}")
    rows, cols = (normalize_dim(d, t.ndim, "norm", t.shape) for d in dims)
    if rows == cols:
        raise ValueError(f"norm: dim {dim} names dim {rows} twice; got shape {t.shape}")
    rest = [d for d in range(t.ndim) if d not in (rows, cols)]
    matrices = t.permute(*rest, rows, cols)  # (*rest, m, n)
    out = linalg.LinalgSvd.apply(matrices, part="S").sum(-1)  # (*rest,)
    if keepdim:
        out = out.unsqueeze(min(rows, cols)).unsqueeze(max(rows, cols))
    return out


def vector_norm(t: Tensor, ord: Any, dim: Any, keepdim: bool, op: str) -> Tensor:
    """linalg.vector_norm of a floating t (``op`` names the caller): one node, PyTorch's, which
    keeps ord as given. dim: an int, a sequence (empty for all) or None (all)."""
    dims: tuple[int, ...] | None = None
    if is_int(dim):
        dims = (normalize_dim(dim, max(t.ndim, 1), op, t.shape),)
    elif dim is not None:
        dims = tuple(normalize_dim(d, max(t.ndim, 1), op, t.shape) for d in dim) or None
        if dims is not None and len(set(dims)) != len(dims):
            raise ValueError(f"{op}: dim {tuple(dim)} repeats a dim; got shape {t.shape}")
    if not t.numel() and (ord < 0 or ord == math.inf and dims is None):
        raise ValueError(
            f"{op}: cannot compute the {ord}-norm of an empty tensor because the operation "
            f"does not have an identity; got shape {t.shape}"
        )
    out = decompositions.LinalgVectorNorm.apply(t, p=float(ord), dim=dims, keepdim=keepdim)
    return record(out, ord=ord)  # as given, as PyTorch's node keeps it


def _arg(t: Tensor, dim: Any, keepdim: bool, fn: Any, op: str) -> Tensor:
    if dim is None:
        need_elements(t, op)
        out = fn(t._array)
        shape = (1,) * t.ndim if keepdim else ()
        return make(array.on_device_of(out, t._array, array.int64).reshape(shape))
    d = normalize_dim(dim, t.ndim, op, t.shape)
    need_elements(t, op, (d,) if t.ndim else None)
    return make(fn(t._array, axis=d, keepdims=keepdim).astype(array.int64, copy=False))


def _top(t: Tensor, k: int | None, dim: int, largest: bool, op: str, node: str) -> ValuesIndices:
    """The first k (all for None) values along dim, sorted (largest first if ``largest``), and
    their indices; the values are gathered, so their gradient goes where they came from."""
    shape = t._array.shape
    d = normalize_dim(dim, len(shape), op, shape)
    n = shape[d] if shape else 1  # a 0-d tensor is one value along dim 0
    k = n if k is None else k
    if not is_int(k) or not 0 <= k <= n:
        raise ValueError(
            f"{op}: k {k!r} is out of range for dim {dim} of size {n}; got shape {shape}"
        )
    gather, reshape = _TOP_NODES[node]  # PyTorch's node: the gather's, or a 0-d input's
    if not shape:  # its only value, at index 0 (k 0 or 1): no sort, no gather (k = 0 too:
        # PyTorch's topk of a 0-d tensor gives the value itself for k = 0 and 1)
        return _only_value(t, reshape, dim=dim)
    a = t._array
    if k < n and n >= 64 and a.size >= 4096:  # long lines: the k found by a partial sort
        order = _first_k(a, d, k, largest)
    else:  # short lines, or all of them: a whole sort, cheaper there than a partial one
        order = _sort_order(a, d, largest)
        if k < n:  # the first k of each row, in C order, as PyTorch's
            order = order[(slice(None),) * d + (slice(0, k),)].copy(order="C")
    return ValuesIndices(gather.apply(t, order, dim=d), make(order))


_TOP_NODES = {
    name: (movement.Gather.named(name), movement.Reshape.named(name))
    for name in ("SortBackward0", "SortBackward1", "TopkBackward0")
}


def _sort_order(a: Any, dim: int, descending: bool) -> Any:
    """The positions that sort a along dim (int64), stable, NaN last when ascending and first
    when descending, as PyTorch: descending is the ascending sort of keys in the reverse order
    (~a of integers and bools, -a of floats), so equal values keep their order there too; of
    floats holding a NaN (last in -a too), the ascending sort of a reversed, reversed back."""
    if not descending:  # (the method: NumPy's function adds a Python wrapper)
        return a.argsort(axis=dim, kind="stable").astype(array.int64, copy=False)
    if a.dtype.kind in "biu" or not xp.count_nonzero(xp.isnan(a)):
        keys = ~a if a.dtype.kind in "biu" else -a  # exact: ties stay ties (0.0 and -0.0 too)
        return keys.argsort(axis=dim, kind="stable").astype(array.int64, copy=False)
    flip = (slice(None),) * dim + (slice(None, None, -1),)  # a reversed along dim: a view
    backwards = a[flip].argsort(axis=dim, kind="stable")  # positions in a[flip]
    return (a.shape[dim] - 1 - backwards[flip]).astype(array.int64, copy=False)


def _first_k(a: Any, dim: int, k: int, largest: bool) -> Any:
    """The first k of _sort_order(a, dim, largest) (0 < k < the dim's size n), in C order: the
    k found by a partial sort, then only they sorted; a line where the partition left out an
    element equal to the k-th (ties are the lower index first) sorted whole."""
    x = xp.ascontiguousarray(xp.moveaxis(a, dim, -1))  # (..., n): each line contiguous
    n = x.shape[-1]
    if largest:  # the k largest, NaN the largest (as PyTorch's), at the end
        chosen = xp.argpartition(x, n - k, axis=-1)[..., n - k :]  # (..., k)
    else:
        chosen = xp.argpartition(x, k - 1, axis=-1)[..., :k]  # (..., k)
    chosen.sort(axis=-1)  # their positions in order, so a stable sort keeps ties so
    values = xp.take_along_axis(x, chosen, axis=-1)  # (..., k)
    order = xp.take_along_axis(chosen, _sort_order(values, values.ndim - 1, largest), axis=-1)
    kth = xp.take_along_axis(x, order[..., -1:], axis=-1)  # (..., 1) the k-th value
    left_out = _equal(x, kth).sum(-1) > _equal(values, kth).sum(-1)  # (...,)
    if left_out.any():  # x[left_out]: (lines, n)
        order[left_out] = _sort_order(x[left_out], 1, largest)[:, :k]
    return xp.ascontiguousarray(xp.moveaxis(order, -1, dim)).astype(array.int64, copy=False)


def _equal(a: Any, b: Any) -> Any:
    """a == b, NaN equal to NaN."""
    same = a == b
    if array.is_floating(a.dtype) and xp.isnan(b).any():
        same |= xp.isnan(a) & xp.isnan(b)
    return same


def _select(t: Tensor, dim: int, keepdim: bool, arg: str, op: str) -> ValuesIndices:
    """(values, indices) of max(dim) or min(dim): ``arg``, the array's method that finds the
    place, argmax or argmin; the values gathered from there (squeezed by the node PyTorch's
    name is on, made so), the indices a fresh array."""
    shape = t._array.shape
    d = normalize_dim(dim, len(shape), op, shape)
    need_elements(t, op, (d,) if shape else None)
    gather, squeeze = _SELECT_NODES[op]
    if not shape:  # its only dim is itself
        return _only_value(t, squeeze, dim=dim, keepdim=keepdim)
    idx = getattr(t._array, arg)(axis=d, keepdims=True).astype(array.int64, copy=False)
    if keepdim:  # (.., 1, ..)
        return ValuesIndices(gather.apply(t, idx, dim=d), make(idx))
    kept = shape[:d] + shape[d + 1 :]  # the dim dropped
    values = movement.viewed(squeeze, movement.Gather.apply(t, idx, dim=d), shape=kept)
    indices = make(idx.reshape(kept))
    record(values, dim=dim, keepdim=keepdim, sizes=t.shape, indices=indices._array)
    return ValuesIndices(values, indices)


def _only_value(t: Tensor, reshape: Any, **call: Any) -> ValuesIndices:
    """A 0-d tensor's (values, indices) along its dim: the value, by ``reshape`` (the node
    PyTorch's name is on, keeping the ``call``), at index 0."""
    values = reshape.apply(t, shape=())  # a new tensor (t.reshape would return t)
    indices = make(xp.zeros((), array.int64, like=t._array))
    return ValuesIndices(record(values, sizes=(), indices=indices._array, **call), indices)


# max(dim)'s and min(dim)'s nodes: with keepdim the gather's, else the squeeze after it
_SELECT_NODES = {
    op: (movement.Gather.named(f"{name}Backward0"), movement.Reshape.named(f"{name}Backward0"))
    for op, name in (("max", "Max"), ("min", "Min"))
}
