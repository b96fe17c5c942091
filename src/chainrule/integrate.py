"""Integration of samples by the trapezoidal rule, as PyTorch's: ``trapezoid`` (and its old name
``trapz``) and ``cumulative_trapezoid``, composed from Tensor ops (their gradients are the
ops') in PyTorch's order but one step: with sample points, floating terms are halved before
the sum (exact, so the values are PyTorch's); integer terms are summed exactly first, as
PyTorch's, and give floats.
"""

from __future__ import annotations

from typing import Any

from . import array
from .arguments import is_int, normalize_dim
from .autograd.node import named
from .factories import zeros
from .ops import movement, reduce
from .tensor import Tensor, as_tensor

__all__ = ["cumulative_trapezoid", "trapezoid", "trapz"]


def trapezoid(y: Any, x: Tensor | None = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """The integral of ``y`` along ``dim`` by the trapezoidal rule: sum over neighbours of
    (x[i+1] - x[i]) * (y[i+1] + y[i]) / 2, with sample points ``x`` (1-D, of y's length along
    dim, or broadcasting against y) or a constant spacing ``dx`` (1 by default). No samples
    give zeros."""
    y, d, x, dx = _checked("trapezoid", y, x, dx, dim)
    if y.shape[d] == 0:  # PyTorch's: zeros of y's dtype, without dim
        return zeros(y.shape[:d] + y.shape[d + 1 :], dtype=y.dtype, device=y.device)
    if x is None:
        ends = y.select(d, 0) + y.select(d, -1)
        out = (y.sum(d) - ends * 0.5) * dx
        return named(out, "MulBackward1", other=float(dx))  # PyTorch's mul.Scalar, of a float
    later, earlier = _neighbours(y, d)
    terms = _spacing("trapezoid", y, x, d) * (later + earlier)
    if not array.is_floating(terms._array.dtype):  # integers: summed exactly, then halved
        return terms.sum(d) / 2.0
    out = reduce.Sum.apply(terms, dims=(d,), keepdim=False) / 2.0  # halved last, as PyTorch's
    return named(out, "DivBackward1", other=2.0)


def trapz(y: Any, x: Tensor | None = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """trapezoid's older name."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(
    y: Any, x: Tensor | None = None, *, dx: Any = None, dim: int = -1
) -> Tensor:
    """The running integral of ``y`` along ``dim`` by the trapezoidal rule (trapezoid's terms,
    summed cumulatively): one fewer value than y along dim."""
    y, d, x, dx = _checked("cumulative_trapezoid", y, x, dx, dim)
    right, left = _neighbours(y, d)
    if x is None:
        return reduce.Cumsum.apply(dx / 2.0 * (left + right), dim=d)  # a float: no widening
    terms = _spacing("cumulative_trapezoid", y, x, d) * (left + right)
    if not array.is_floating(terms._array.dtype):  # integers: summed exactly, then halved
        return terms.cumsum(d) / 2.0
    out = reduce.Cumsum.apply(terms, dim=d) / 2.0  # halved last, as PyTorch's
    return named(out, "DivBackward1", other=2.0)


def _neighbours(t: Tensor, d: int) -> tuple[Tensor, Tensor]:
    """t[1:] and t[:-1] along dim d, as views (narrow's slices, given directly: no index to
    parse or check); t itself for both where it is empty along d."""
    n = t._array.shape[d] - 1
    if n < 0:
        return t, t
    lead = (slice(None),) * d
    later, earlier = movement.sliced(
        movement.GetItem, t, [lead + (slice(1, n + 1),), lead + (slice(0, n),)]
    )
    return later, earlier


def _checked(op: str, y: Any, x: Any, dx: Any, dim: int) -> tuple[Tensor, int, Any, Any]:
    """The arguments as PyTorch accepts them: y a non-bool tensor of at least one dim, and
    either x (a Tensor) or dx (a real number, 1 by default)."""
    y = as_tensor(y)
    if x is not None and dx is not None:
        raise TypeError(f"{op}: give x (sample points) or dx (a constant spacing), not both")
    if x is not None and not isinstance(x, Tensor):
        raise TypeError(
            f"{op}: x must be a Tensor of sample points; got {type(x).__name__}; give a "
            "constant spacing as dx="
        )
    if y.ndim == 0:
        raise IndexError(f"{op}: y must have at least one dim; got shape {y.shape}")
    for name, t in (("y", y), ("x", x)):
        if t is not None and t._array.dtype.kind == "b":
            raise TypeError(f"{op}: {name} must not be bool; got dtype {t.dtype}")
    if dx is None:
        dx = 1
    elif isinstance(dx, bool) or not (is_int(dx) or isinstance(dx, float)):
        raise TypeError(f"{op}: dx must be a real number; got {dx!r}")
    return y, normalize_dim(dim, y.ndim, op, y.shape), x, dx


def _spacing(op: str, y: Tensor, x: Tensor, d: int) -> Tensor:
    """x[i+1] - x[i] along dim d, x first laid out against y as PyTorch's: a 1-D x along
    dim, a shorter one with leading dims of 1."""
    if x.ndim == 1:
        if x.shape[0] != y.shape[d]:
            raise ValueError(
                f"{op}: x must hold one value for each sample point along dim {d}; got shapes "
                f"{y.shape} and {x.shape}"
            )
        shape = tuple([x.shape[0] if i == d else 1 for i in range(y.ndim)])  # 1 but along d
        x = movement.viewed(movement.Reshape, x, shape=shape)
    elif x.ndim < y.ndim:
        shape = (1,) * (y.ndim - x.ndim) + x._array.shape  # leading dims of 1
        x = movement.viewed(movement.Reshape, x, shape=shape)
    later, earlier = _neighbours(x, d)
    return later - earlier
