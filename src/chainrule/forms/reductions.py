"""The function forms of the reductions, scans, sorts and normalisations: ``cr.sum(x, 0)``
is ``x.sum(0)``, ``input`` made a Tensor first."""

from __future__ import annotations

from typing import Any

from ..tensor import Histogram, Tensor, ValuesIndices, as_tensor
from ..tensor.reductions import MinMax

__all__ = [
    "histogram",
    "histc",
    "unique",
    "bincount",
    "prod",
    "sum",
    "mean",
    "var",
    "std",
    "amax",
    "amin",
    "max",
    "min",
    "argmax",
    "argmin",
    "logsumexp",
    "softmax",
    "log_softmax",
    "norm",
    "cumsum",
    "cumprod",
    "sort",
    "argsort",
    "topk",
    "all",
    "any",
    "cummax",
    "cummin",
    "logcumsumexp",
    "nansum",
    "nanmean",
    "count_nonzero",
    "aminmax",
    "median",
    "nanmedian",
    "kthvalue",
    "mode",
    "quantile",
    "nanquantile",
    "diff",
    "cov",
    "corrcoef",
    "msort",
]


def histogram(
    input: Tensor, bins: Any = 100, *, range: Any = None, weight: Any = None, density: bool = False
) -> Histogram:
    """The function form of Tensor.histogram."""
    return as_tensor(input).histogram(bins, range=range, weight=weight, density=density)


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
    """The function form of Tensor.histc."""
    return as_tensor(input).histc(bins, min, max)


def unique(
    input: Tensor,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Any:
    """The function form of Tensor.unique."""
    return as_tensor(input).unique(sorted, return_inverse, return_counts, dim)


def bincount(input: Tensor, weights: Any = None, minlength: int = 0) -> Tensor:
    """The function form of Tensor.bincount."""
    return as_tensor(input).bincount(weights, minlength)


def prod(
    input: Tensor, dim: int | None = None, keepdim: bool = False, *, dtype: Any = None
) -> Tensor:
    """The function form of Tensor.prod."""
    return as_tensor(input).prod(dim, keepdim, dtype=dtype)


def sum(
    input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None, **np_names: Any
) -> Tensor:
    """The function form of Tensor.sum."""
    return as_tensor(input).sum(dim, keepdim, dtype=dtype, **np_names)


def mean(
    input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None, **np_names: Any
) -> Tensor:
    """The function form of Tensor.mean."""
    return as_tensor(input).mean(dim, keepdim, dtype=dtype, **np_names)


def var(
    input: Tensor,
    dim: Any = None,
    unbiased: bool | None = None,
    keepdim: bool = False,
    *,
    correction: float | None = None,
    **np_names: Any,
) -> Tensor:
    """The function form of Tensor.var."""
    return as_tensor(input).var(dim, unbiased, keepdim, correction=correction, **np_names)


def std(
    input: Tensor,
    dim: Any = None,
    unbiased: bool | None = None,
    keepdim: bool = False,
    *,
    correction: float | None = None,
    **np_names: Any,
) -> Tensor:
    """The function form of Tensor.std."""
    return as_tensor(input).std(dim, unbiased, keepdim, correction=correction, **np_names)


def amax(input: Tensor, dim: Any = None, keepdim: bool = False, **np_names: Any) -> Tensor:
    """The function form of Tensor.amax."""
    return as_tensor(input).amax(dim, keepdim, **np_names)


def amin(input: Tensor, dim: Any = None, keepdim: bool = False, **np_names: Any) -> Tensor:
    """The function form of Tensor.amin."""
    return as_tensor(input).amin(dim, keepdim, **np_names)


def max(input: Tensor, dim: Any = None, keepdim: bool = False, **np_names: Any) -> Any:
    """The function form of Tensor.max."""
    return as_tensor(input).max(dim, keepdim, **np_names)


def min(input: Tensor, dim: Any = None, keepdim: bool = False, **np_names: Any) -> Any:
    """The function form of Tensor.min."""
    return as_tensor(input).min(dim, keepdim, **np_names)


def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False, **np_names: Any) -> Tensor:
    """The function form of Tensor.argmax."""
    return as_tensor(input).argmax(dim, keepdim, **np_names)


def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False, **np_names: Any) -> Tensor:
    """The function form of Tensor.argmin."""
    return as_tensor(input).argmin(dim, keepdim, **np_names)


def logsumexp(input: Tensor, dim: Any = None, keepdim: bool = False, **np_names: Any) -> Tensor:
    """The function form of Tensor.logsumexp."""
    return as_tensor(input).logsumexp(dim, keepdim, **np_names)


def softmax(input: Tensor, dim: int = -1, dtype: Any = None, **np_names: Any) -> Tensor:
    """The function form of Tensor.softmax."""
    return as_tensor(input).softmax(dim, dtype, **np_names)


def log_softmax(input: Tensor, dim: int = -1, dtype: Any = None, **np_names: Any) -> Tensor:
    """The function form of Tensor.log_softmax."""
    return as_tensor(input).log_softmax(dim, dtype, **np_names)


def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False) -> Tensor:
    """The function form of Tensor.norm."""
    return as_tensor(input).norm(p, dim, keepdim)


def cumsum(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """The function form of Tensor.cumsum."""
    return as_tensor(input).cumsum(dim, dtype=dtype)


def cumprod(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """The function form of Tensor.cumprod."""
    return as_tensor(input).cumprod(dim, dtype=dtype)


def sort(
    input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False
) -> ValuesIndices:
    """The function form of Tensor.sort."""
    return as_tensor(input).sort(dim, descending, stable=stable)


def argsort(
    input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False
) -> Tensor:
    """The function form of Tensor.argsort."""
    return as_tensor(input).argsort(dim, descending, stable=stable)


def topk(
    input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True
) -> ValuesIndices:
    """The function form of Tensor.topk."""
    return as_tensor(input).topk(k, dim, largest, sorted)


def all(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """The function form of Tensor.all."""
    return as_tensor(input).all(dim, keepdim)


def any(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """The function form of Tensor.any."""
    return as_tensor(input).any(dim, keepdim)


def cummax(input: Tensor, dim: int) -> ValuesIndices:
    """The function form of Tensor.cummax."""
    return as_tensor(input).cummax(dim)


def cummin(input: Tensor, dim: int) -> ValuesIndices:
    """The function form of Tensor.cummin."""
    return as_tensor(input).cummin(dim)


def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """The function form of Tensor.logcumsumexp."""
    return as_tensor(input).logcumsumexp(dim)


def nansum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """The function form of Tensor.nansum."""
    return as_tensor(input).nansum(dim, keepdim, dtype=dtype)


def nanmean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """The function form of Tensor.nanmean."""
    return as_tensor(input).nanmean(dim, keepdim, dtype=dtype)


def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:
    """The function form of Tensor.count_nonzero."""
    return as_tensor(input).count_nonzero(dim)


def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False) -> MinMax:
    """The function form of Tensor.aminmax."""
    return as_tensor(input).aminmax(dim=dim, keepdim=keepdim)


def median(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """The function form of Tensor.median."""
    return as_tensor(input).median(dim, keepdim)


def nanmedian(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """The function form of Tensor.nanmedian."""
    return as_tensor(input).nanmedian(dim, keepdim)


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
    """The function form of Tensor.kthvalue."""
    return as_tensor(input).kthvalue(k, dim, keepdim)


def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
    """The function form of Tensor.mode."""
    return as_tensor(input).mode(dim, keepdim)


def quantile(
    input: Tensor,
    q: Any,
    dim: int | None = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
) -> Tensor:
    """The function form of Tensor.quantile."""
    return as_tensor(input).quantile(q, dim, keepdim, interpolation=interpolation)


def nanquantile(
    input: Tensor,
    q: Any,
    dim: int | None = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
) -> Tensor:
    """The function form of Tensor.nanquantile."""
    return as_tensor(input).nanquantile(q, dim, keepdim, interpolation=interpolation)


def diff(
    input: Tensor, n: int = 1, dim: int = -1, prepend: Any = None, append: Any = None
) -> Tensor:
    """The function form of Tensor.diff."""
    return as_tensor(input).diff(n, dim, prepend, append)


def cov(
    input: Tensor, *, correction: float = 1, fweights: Any = None, aweights: Any = None
) -> Tensor:
    """The function form of Tensor.cov."""
    return as_tensor(input).cov(correction=correction, fweights=fweights, aweights=aweights)


def corrcoef(input: Tensor) -> Tensor:
    """The function form of Tensor.corrcoef."""
    return as_tensor(input).corrcoef()


def msort(input: Tensor) -> Tensor:
    """The function form of Tensor.msort."""
    return as_tensor(input).msort()
