"""The function forms of the reductions, scans, sorts and normalisations: ``cr.sum(x, 0)``
is ``x.sum(0)``, ``input`` made a Tensor first."""

from __future__ import annotations

from typing import Any

from ..autograd.node import UNGIVEN, UNGIVEN_FALSE
from ..linalg._checks import with_out
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


@with_out("")
def histogram(
    input: Tensor,
    bins: Any = 100,
    *,
    range: Any = None,
    weight: Any = None,
    density: bool = False,
    out: Any = None,
) -> Histogram:
    """The function form of Tensor.histogram (``out=`` as PyTorch's)."""
    return as_tensor(input).histogram(bins, range=range, weight=weight, density=density)


@with_out("", exact=True)
def histc(
    input: Tensor, bins: int = 100, min: float = 0, max: float = 0, *, out: Any = None
) -> Tensor:
    """The function form of Tensor.histc (``out=`` as PyTorch's)."""
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


@with_out("", dtype_from_out=True)
def prod(
    input: Tensor,
    dim: int | None = None,
    keepdim: bool = False,
    *,
    dtype: Any = None,
    out: Any = None,
) -> Tensor:
    """The function form of Tensor.prod (``out=`` as PyTorch's)."""
    return as_tensor(input).prod(dim, keepdim, dtype=dtype)


@with_out("", dtype_from_out=True)
def sum(
    input: Tensor,
    dim: Any = UNGIVEN,
    keepdim: bool = False,
    *,
    dtype: Any = None,
    out: Any = None,
    **np_names: Any,
) -> Tensor:
    """The function form of Tensor.sum (``out=`` as PyTorch's)."""
    return as_tensor(input).sum(dim, keepdim, dtype=dtype, **np_names)


@with_out("", dtype_from_out=True)
def mean(
    input: Tensor,
    dim: Any = UNGIVEN,
    keepdim: bool = False,
    *,
    dtype: Any = None,
    out: Any = None,
    **np_names: Any,
) -> Tensor:
    """The function form of Tensor.mean (``out=`` as PyTorch's)."""
    return as_tensor(input).mean(dim, keepdim, dtype=dtype, **np_names)


@with_out("")
def var(
    input: Tensor,
    dim: Any = None,
    unbiased: bool | None = None,
    keepdim: bool = False,
    *,
    correction: float | None = None,
    out: Any = None,
    **np_names: Any,
) -> Tensor:
    """The function form of Tensor.var (``out=`` as PyTorch's)."""
    return as_tensor(input).var(dim, unbiased, keepdim, correction=correction, **np_names)


@with_out("")
def std(
    input: Tensor,
    dim: Any = None,
    unbiased: bool | None = None,
    keepdim: bool = False,
    *,
    correction: float | None = None,
    out: Any = None,
    **np_names: Any,
) -> Tensor:
    """The function form of Tensor.std (``out=`` as PyTorch's)."""
    return as_tensor(input).std(dim, unbiased, keepdim, correction=correction, **np_names)


@with_out("", exact=True)
def amax(
    input: Tensor, dim: Any = None, keepdim: bool = False, *, out: Any = None, **np_names: Any
) -> Tensor:
    """The function form of Tensor.amax (``out=`` as PyTorch's)."""
    return as_tensor(input).amax(dim, keepdim, **np_names)


@with_out("", exact=True)
def amin(
    input: Tensor, dim: Any = None, keepdim: bool = False, *, out: Any = None, **np_names: Any
) -> Tensor:
    """The function form of Tensor.amin (``out=`` as PyTorch's)."""
    return as_tensor(input).amin(dim, keepdim, **np_names)


@with_out("")
def max(
    input: Tensor, dim: Any = None, keepdim: bool = False, *, out: Any = None, **np_names: Any
) -> Any:
    """The function form of Tensor.max (``out=`` as PyTorch's)."""
    return as_tensor(input).max(dim, keepdim, **np_names)


@with_out("")
def min(
    input: Tensor, dim: Any = None, keepdim: bool = False, *, out: Any = None, **np_names: Any
) -> Any:
    """The function form of Tensor.min (``out=`` as PyTorch's)."""
    return as_tensor(input).min(dim, keepdim, **np_names)


@with_out("", exact=True)
def argmax(
    input: Tensor,
    dim: int | None = None,
    keepdim: bool = False,
    *,
    out: Any = None,
    **np_names: Any,
) -> Tensor:
    """The function form of Tensor.argmax (``out=`` as PyTorch's)."""
    return as_tensor(input).argmax(dim, keepdim, **np_names)


@with_out("", exact=True)
def argmin(
    input: Tensor,
    dim: int | None = None,
    keepdim: bool = False,
    *,
    out: Any = None,
    **np_names: Any,
) -> Tensor:
    """The function form of Tensor.argmin (``out=`` as PyTorch's)."""
    return as_tensor(input).argmin(dim, keepdim, **np_names)


@with_out("")
def logsumexp(
    input: Tensor, dim: Any = None, keepdim: bool = False, *, out: Any = None, **np_names: Any
) -> Tensor:
    """The function form of Tensor.logsumexp (``out=`` as PyTorch's)."""
    return as_tensor(input).logsumexp(dim, keepdim, **np_names)


@with_out("", exact=True)
def softmax(
    input: Tensor, dim: int = -1, dtype: Any = None, *, out: Any = None, **np_names: Any
) -> Tensor:
    """The function form of Tensor.softmax (``out=`` as PyTorch's)."""
    return as_tensor(input).softmax(dim, dtype, **np_names)


@with_out("", exact=True)
def log_softmax(
    input: Tensor, dim: int = -1, dtype: Any = None, *, out: Any = None, **np_names: Any
) -> Tensor:
    """The function form of Tensor.log_softmax (``out=`` as PyTorch's)."""
    return as_tensor(input).log_softmax(dim, dtype, **np_names)


@with_out("", exact=True)
def norm(
    input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False, out: Any = None
) -> Tensor:
    """The function form of Tensor.norm (``out=`` as PyTorch's, after keepdim as there)."""
    return as_tensor(input).norm(p, dim, keepdim)


@with_out("", dtype_from_out=True)
def cumsum(input: Tensor, dim: int, *, dtype: Any = None, out: Any = None) -> Tensor:
    """The function form of Tensor.cumsum (``out=`` as PyTorch's)."""
    return as_tensor(input).cumsum(dim, dtype=dtype)


@with_out("", dtype_from_out=True)
def cumprod(input: Tensor, dim: int, *, dtype: Any = None, out: Any = None) -> Tensor:
    """The function form of Tensor.cumprod (``out=`` as PyTorch's)."""
    return as_tensor(input).cumprod(dim, dtype=dtype)


@with_out("")
def sort(
    input: Tensor,
    dim: int = -1,
    descending: bool = False,
    *,
    stable: bool = UNGIVEN_FALSE,
    out: Any = None,
) -> ValuesIndices:
    """The function form of Tensor.sort (``out=`` as PyTorch's)."""
    return as_tensor(input).sort(dim, descending, stable=stable)


@with_out("", exact=True)
def argsort(
    input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False, out: Any = None
) -> Tensor:
    """The function form of Tensor.argsort (``out=`` as PyTorch's)."""
    return as_tensor(input).argsort(dim, descending, stable=stable)


@with_out("")
def topk(
    input: Tensor,
    k: int,
    dim: int = -1,
    largest: bool = True,
    sorted: bool = True,
    *,
    out: Any = None,
) -> ValuesIndices:
    """The function form of Tensor.topk (``out=`` as PyTorch's)."""
    return as_tensor(input).topk(k, dim, largest, sorted)


@with_out("", exact=True)
def all(input: Tensor, dim: Any = None, keepdim: bool = False, *, out: Any = None) -> Tensor:
    """The function form of Tensor.all (``out=`` as PyTorch's)."""
    return as_tensor(input).all(dim, keepdim)


@with_out("", exact=True)
def any(input: Tensor, dim: Any = None, keepdim: bool = False, *, out: Any = None) -> Tensor:
    """The function form of Tensor.any (``out=`` as PyTorch's)."""
    return as_tensor(input).any(dim, keepdim)


@with_out("")
def cummax(input: Tensor, dim: int, *, out: Any = None) -> ValuesIndices:
    """The function form of Tensor.cummax (``out=`` as PyTorch's)."""
    return as_tensor(input).cummax(dim)


@with_out("")
def cummin(input: Tensor, dim: int, *, out: Any = None) -> ValuesIndices:
    """The function form of Tensor.cummin (``out=`` as PyTorch's)."""
    return as_tensor(input).cummin(dim)


@with_out("", exact=True)
def logcumsumexp(input: Tensor, dim: int, *, out: Any = None) -> Tensor:
    """The function form of Tensor.logcumsumexp (``out=`` as PyTorch's)."""
    return as_tensor(input).logcumsumexp(dim)


@with_out("", dtype_from_out=True)
def nansum(
    input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None, out: Any = None
) -> Tensor:
    """The function form of Tensor.nansum (``out=`` as PyTorch's)."""
    return as_tensor(input).nansum(dim, keepdim, dtype=dtype)


@with_out("", dtype_from_out=True)
def nanmean(
    input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None, out: Any = None
) -> Tensor:
    """The function form of Tensor.nanmean (``out=`` as PyTorch's)."""
    return as_tensor(input).nanmean(dim, keepdim, dtype=dtype)


def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:
    """The function form of Tensor.count_nonzero."""
    return as_tensor(input).count_nonzero(dim)


@with_out("")
def aminmax(
    input: Tensor, *, dim: int | None = None, keepdim: bool = False, out: Any = None
) -> MinMax:
    """The function form of Tensor.aminmax (``out=`` as PyTorch's)."""
    return as_tensor(input).aminmax(dim=dim, keepdim=keepdim)


@with_out("")
def median(input: Tensor, dim: int | None = None, keepdim: bool = False, *, out: Any = None) -> Any:
    """The function form of Tensor.median (``out=`` as PyTorch's)."""
    return as_tensor(input).median(dim, keepdim)


@with_out("")
def nanmedian(
    input: Tensor, dim: int | None = None, keepdim: bool = False, *, out: Any = None
) -> Any:
    """The function form of Tensor.nanmedian (``out=`` as PyTorch's)."""
    return as_tensor(input).nanmedian(dim, keepdim)


@with_out("")
def kthvalue(
    input: Tensor, k: int, dim: int = -1, keepdim: bool = False, *, out: Any = None
) -> ValuesIndices:
    """The function form of Tensor.kthvalue (``out=`` as PyTorch's)."""
    return as_tensor(input).kthvalue(k, dim, keepdim)


@with_out("")
def mode(input: Tensor, dim: int = -1, keepdim: bool = False, *, out: Any = None) -> ValuesIndices:
    """The function form of Tensor.mode (``out=`` as PyTorch's)."""
    return as_tensor(input).mode(dim, keepdim)


@with_out("", exact=True)
def quantile(
    input: Tensor,
    q: Any,
    dim: int | None = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
    out: Any = None,
) -> Tensor:
    """The function form of Tensor.quantile (``out=`` as PyTorch's)."""
    return as_tensor(input).quantile(q, dim, keepdim, interpolation=interpolation)


@with_out("", exact=True)
def nanquantile(
    input: Tensor,
    q: Any,
    dim: int | None = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
    out: Any = None,
) -> Tensor:
    """The function form of Tensor.nanquantile (``out=`` as PyTorch's)."""
    return as_tensor(input).nanquantile(q, dim, keepdim, interpolation=interpolation)


@with_out("")
def diff(
    input: Tensor,
    n: int = 1,
    dim: int = -1,
    prepend: Any = None,
    append: Any = None,
    *,
    out: Any = None,
) -> Tensor:
    """The function form of Tensor.diff (``out=`` as PyTorch's)."""
    return as_tensor(input).diff(n, dim, prepend, append)


def cov(
    input: Tensor, *, correction: float = 1, fweights: Any = None, aweights: Any = None
) -> Tensor:
    """The function form of Tensor.cov."""
    return as_tensor(input).cov(correction=correction, fweights=fweights, aweights=aweights)


def corrcoef(input: Tensor) -> Tensor:
    """The function form of Tensor.corrcoef."""
    return as_tensor(input).corrcoef()


@with_out("", exact=True)
def msort(input: Tensor, *, out: Any = None) -> Tensor:
    """The function form of Tensor.msort (``out=`` as PyTorch's)."""
    return as_tensor(input).msort()
