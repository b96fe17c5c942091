"""quantile and cov of Tensor, composed from its ops in PyTorch's steps (the Tensor methods,
and corrcoef over cov, are in reductions.py)."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from .. import array
from ..arguments import normalize_dim
from ..autograd.node import named
from ..ops import movement, reduce
from .arithmetic import where
from .core import Core, as_tensor, make

if TYPE_CHECKING:  # Tensor in annotations alone (core.py says why)
    from . import Tensor

xp = array.xp
INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def quantile_of(
    t: Tensor,
    q: Tensor | float | list[float],
    dim: Any,
    keepdim: bool,
    how: str,
    ignore_nan: bool,
    op: str,
) -> Tensor:
    """quantile's steps, PyTorch's: sort each line, the rank of q (of the values that are not
    NaN, or the last where a line holds a NaN), the values at the ranks around it, lerp."""
    if t._array.dtype.char not in "fd":  # float32 or float64
        raise TypeError(f"{op}: needs a float32 or float64 tensor; got dtype {t.dtype}")
    if how not in INTERPOLATIONS:
        raise ValueError(f"{op}: interpolation must be one of {INTERPOLATIONS}; got {how!r}")
    if not t.numel():
        raise ValueError(f"{op}: the tensor is empty; got shape {t.shape}")
    if isinstance(q, Core):
        if q.ndim > 1 or q.dtype != t.dtype:
            raise ValueError(
                f"{op}: q must be a number or a 0-d or 1-d tensor of the input's dtype; got "
                f"shape {q.shape} of dtype {q.dtype} for an input of dtype {t.dtype}"
            )
        qs = q
    else:
        qs = make(array.on_device_of(q, t._array, t.dtype))
    qa = qs._array
    if not ((qa >= 0) & (qa <= 1)).all():
        raise ValueError(f"{op}: q must be in [0, 1]; got {q if qa.ndim == 0 else qa.tolist()}")
    if dim is None:
        x = t.reshape(-1)  # (n,)
        out_shape = (1,) * t.ndim if keepdim else ()
    else:
        d = normalize_dim(dim, t.ndim, op, t.shape)
        x = t.reshape(1) if not t.ndim else t.permute(*[i for i in range(t.ndim) if i != d], d)
        out_shape = t.shape[:d] + ((1,) if keepdim else ()) + t.shape[d + 1 :] if t.ndim else ()
    rest, n = x._array.shape[:-1], x._array.shape[-1]  # x: (*rest, n), the lines last
    m = qa.size
    order = x._array.argsort(axis=-1, kind="stable")  # (*rest, n): ascending, NaN last
    nans = xp.isnan(x._array)[None]  # (1, *rest, n)
    if isinstance(q, Core):  # the ranks a Tensor, for the derivatives q may carry
        qv = movement.viewed(movement.Reshape, qs, shape=(m,) + (1,) * (len(rest) + 1))
        if ignore_nan:
            count = (~nans).sum(axis=-1, keepdims=True)  # (1, *rest, 1)
            ranks: Any = qv * make((count - 1).astype(t._array.dtype))
            ranks = where(ranks._array < 0, 0.0, ranks)
        else:  # (m, 1.., 1), or (m, *rest, 1) where a line holds a NaN
            ranks = qv * float(n - 1)
            if xp.count_nonzero(nans):  # (a count of all: cheaper than any() of each line)
                ranks = where(nans.any(axis=-1, keepdims=True), float(n - 1), ranks)
        r = ranks._array
    else:  # the ranks an array: no op to record
        qr = qa.reshape((m,) + (1,) * (len(rest) + 1))  # (m, 1.., 1)
        if ignore_nan:
            count = (~nans).sum(axis=-1, keepdims=True)  # (1, *rest, 1)
            r = xp.maximum(qr * (count - 1).astype(qa.dtype), 0.0).astype(qa.dtype)
        else:  # (m, 1.., 1), or (m, *rest, 1) where a line holds a NaN
            r = qr * float(n - 1)
            if xp.count_nonzero(nans):  # the last rank in each line holding a NaN
                r = xp.where(nans.any(axis=-1, keepdims=True), float(n - 1), r)
            r = r.astype(qa.dtype, copy=False)
        ranks = r
    r = {"lower": xp.floor, "higher": xp.ceil, "nearest": xp.round}.get(how, lambda v: v)(r)
    # the places in x of the sorted values at the ranks: order's element there, per line
    rows = xp.arange(order.size // n, like=order)  # (lines,)
    flat = order.reshape(-1, n)  # (lines, n)
    rank_shape = (m, *rest, 1)

    def at(rank: Any) -> Any:
        """The positions in x of the sorted values at ``rank`` (m, *rest, 1), as the index
        of the gather: (m, *rest, 1), or (*rest, 1) for a 0-d q."""
        ranks_of_lines = rank.reshape(m, -1).astype(array.int64)  # (m, lines) or (m, 1)
        places = flat[rows, ranks_of_lines]  # (m, lines): the index broadcast to every line
        return places.reshape(rank_shape if qs.ndim else rank_shape[1:])

    lines = movement.viewed(movement.Expand, x, shape=(m, *rest, n)) if qs.ndim else x
    # lines: (m, *rest, n), or x's (*rest, n) for a 0-d q
    below = xp.floor(r) if how in ("linear", "midpoint") else r  # (m, *rest, 1)
    out = movement.Gather.apply(lines, at(below), dim=lines.ndim - 1)
    if how in ("linear", "midpoint"):
        above = movement.Gather.apply(lines, at(xp.ceil(r)), dim=lines.ndim - 1)
        weight: Any = 0.5  # midpoint's
        if how == "linear":
            weight = ranks - make(below.astype(r.dtype)) if isinstance(ranks, Core) else r - below
            weight = make(weight) if not isinstance(weight, Core) else weight
            if not qs.ndim:  # (*rest, 1) or (1.., 1), as the gathered values broadcast
                weight = weight.reshape(weight._array.shape[1:])
        out = out.lerp(above, weight)
    shape = ((m,) if qs.ndim else ()) + out_shape
    # PyTorch's last step squeezes the values' last dim, of size 1: its node, one reshape's
    out = movement.viewed(movement.Reshape, out, shape=shape)  # (m, *out_shape) or out_shape
    return named(out, "SqueezeBackward4", dim=-1, sizes=(*shape, 1))


def cov_of(t: Tensor, correction: Any, fweights: Any, aweights: Any) -> Tensor:
    """torch.cov's steps: the weighted mean of each row, the rows less it, their products
    weighted, over the weights' sum less the correction."""
    if t.ndim > 2:
        raise ValueError(f"cov: needs at most 2 dims; got shape {t.shape}")
    if t._array.dtype.kind == "b":
        raise TypeError("cov: not defined for bool tensors, as in PyTorch; got dtype bool")
    if t.ndim < 2:  # one variable
        t = movement.viewed(movement.Reshape, t, shape=(1, t._array.size))
    x = t  # (variables, observations)
    n = x.shape[1]
    w = None
    for name, weights in (("fweights", fweights), ("aweights", aweights)):
        if weights is None:
            continue
        wt = as_tensor(weights)
        kind_ok = (
            wt._array.dtype.kind in "iu"
            if name == "fweights"
            else array.is_floating(wt._array.dtype)
        )
        if wt.ndim > 1 or wt.numel() != n or not kind_ok:
            want = "integer" if name == "fweights" else "floating-point"
            raise ValueError(
                f"cov: {name} must be {want} with one value per observation ({n}); got shape "
                f"{wt.shape} of dtype {wt.dtype}"
            )
        if n and (wt._array < 0).any():
            raise ValueError(f"cov: {name} cannot be negative; got {wt._array.tolist()}")
        w = wt if w is None else w * wt
    if w is None:
        w_sum: Any = n
        if x._array.dtype.char in "fd":  # sum / n in one op, kept as a column
            avg = reduce.Mean.apply(x, dims=(1,), keepdim=True)  # (variables, 1)
        else:
            avg = (x.sum(1) / n).unsqueeze(1)
    else:
        w_sum = w.sum()
        if not w_sum._array.any():
            raise ValueError("cov: the weights sum to zero; got weights summing to 0")
        avg = ((x * w).sum(1) / w_sum).unsqueeze(1)
    if w is not None and aweights is not None and correction != 0:
        norm = w_sum - correction * (w * as_tensor(aweights)).sum() / w_sum
    else:
        norm = w_sum - correction
    if float(norm._array if isinstance(norm, Core) else norm) <= 0:
        warnings.warn(
            "cov: degrees of freedom <= 0; correction should be less than the number of "
            "observations",
            UserWarning,
            stacklevel=4,
        )
        norm = norm * 0
        with array.errstate(divide="ignore", invalid="ignore"):  # no degrees of freedom
            return _products(x - avg, w) / norm
    return _products(x - avg, w) / norm


def _products(centred: Tensor, w: Any) -> Tensor:
    """The weighted products of the centred rows (variables, observations): (variables,
    variables), or a 0-d tensor for one variable."""
    c = centred.matmul((centred if w is None else centred * w).t())  # (variables, variables)
    return c.reshape(()) if c._array.size == 1 else c
