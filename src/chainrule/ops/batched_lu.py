"""LU, inverse and Cholesky factor of many small matrices by LAPACK's own steps (getrf's,
potf2's), each column's step taken over the whole batch at once (NumPy's linalg and SciPy's
LAPACK calls loop over matrices, which for a batch of 3x3 costs ten times PyTorch's time);
lapack.py decides when they serve."""

from __future__ import annotations

import math
from typing import Any

from ..array import host

LARGEST = 8  # the largest order taken by columns: its calls grow as the order squared


def serves(a: Any, many: int, largest: int = LARGEST) -> bool:
    """Whether a batch a (..., m, n) of host floats is taken by columns: matrices of order
    largest at most, at least many order^2 of them, all finite (getrf's search for the
    largest |a| passes over a NaN, a comparison here would not)."""
    order = max(a.shape[-2:])
    count = math.prod(a.shape[:-2])
    return (
        a.ndim > 2
        and a.size > 0
        and order <= largest
        and count >= many * order**2
        and bool(host.isfinite(a).all())
    )


def lu_factor(a: Any) -> tuple[Any, Any, Any]:
    """(LU, 0-based pivots, info) of each matrix of a (..., m, n), as lapack.lu_factor's."""
    lu = _columns_first(a)  # (m, n, batch)
    piv, info = _factor(lu)
    batch = a.shape[:-2]
    return _batch_first(lu, a.shape), _batch_first(piv, (*batch, -1)), info.reshape(batch)


def diagonal(a: Any) -> tuple[Any, Any]:
    """(U's diagonal (..., k), 0-based pivots (..., k)) of each matrix of a (..., m, n): what a
    determinant reads of lu_factor's, the factor itself left in columns-first order."""
    lu = _columns_first(a)  # (m, n, batch)
    piv, _ = _factor(lu)
    batch = a.shape[:-2]
    diag = lu.diagonal(axis1=0, axis2=1)  # (batch, k): the batch first already
    return diag.reshape(*batch, -1), _batch_first(piv, (*batch, -1))


def inv(a: Any) -> Any:
    """A^-1 of each matrix of a (..., n, n), from its LU factor by forward and back
    substitution over the identity's columns; a singular matrix is LinAlgError, as NumPy's."""
    lu = _columns_first(a)  # (n, n, batch)
    piv, info = _factor(lu)
    if info.any():
        raise host.linalg.LinAlgError("Singular matrix")
    n = lu.shape[0]
    perm = host.arange(n, dtype=piv.dtype)[:, None] + host.zeros_like(piv[0])  # (n, batch)
    for j, p in enumerate(piv):
        _swap_rows(perm, j, p)  # row i of P^T A is row perm[i] of A
    x = (perm[:, None] == host.arange(n, dtype=piv.dtype)[:, None]).astype(lu.dtype)  # P^T
    for j in range(n - 1):  # L y = P^T I, L's diagonal ones
        x[j + 1 :] -= lu[j + 1 :, j, None] * x[j]
    for j in range(n - 1, -1, -1):  # U x = y
        x[j] /= lu[j, j]
        x[:j] -= lu[:j, j, None] * x[j]
    return _batch_first(x, a.shape)


def cholesky(a: Any) -> Any:
    """L with L L^T = a for each matrix of a (..., n, n), from its lower triangle by potf2's
    steps: for each column j, L[j, j] = sqrt(a[j, j] - L[j, :j] . L[j, :j]) and below it
    (a[i, j] - L[i, :j] . L[j, :j]) / L[j, j]; a matrix not positive definite is
    LinAlgError, as NumPy's."""
    c = _columns_first(a)  # (n, n, batch)
    out = host.zeros_like(c)
    for j in range(len(c)):
        row = out[j, :j]  # (j, batch): L[j, :j]
        top = c[j, j] - (row * row).sum(0)
        if not (top > 0).all():  # potf2's test, NaN included
            raise host.linalg.LinAlgError("Matrix is not positive definite")
        top = host.sqrt(top)
        out[j, j] = top
        below = c[j + 1 :, j] - (out[j + 1 :, :j] * row).sum(1)  # (n - j - 1, batch)
        below *= 1 / top  # as potf2 scales
        out[j + 1 :, j] = below
    return _batch_first(out, a.shape)


def _columns_first(a: Any) -> Any:
    """A C-ordered copy (m, n, batch) of a (..., m, n): each entry's values over the batch in
    one row, which each step reads and writes whole (a copy even where the transpose is
    C-ordered already, as for 1x1 matrices: the steps write over it)."""
    return host.array(a.reshape(-1, *a.shape[-2:]).transpose(1, 2, 0), order="C")


def _batch_first(a: Any, shape: tuple[int, ...]) -> Any:
    """(m, n, batch) or (k, batch) back to a C-ordered array of shape (..., m, n) or (..., k)."""
    return host.ascontiguousarray(host.moveaxis(a, -1, 0)).reshape(shape)


def _factor(lu: Any) -> tuple[Any, Any]:
    """(pivots (k, batch), info (batch,)) of getrf's LU of lu (m, n, batch), written over lu:
    for each column j, the first row at or below j with the largest |a| is the pivot, its row
    swaps with row j, the column below it is scaled by its reciprocal (divided by it where
    that overflows; left where it is 0, and info names the first such column) and the rest
    updated by the outer product."""
    m, n, count = lu.shape
    bits = lu.view(f"i{lu.itemsize}")  # the values' bits, which a swap moves exactly
    piv = host.empty((min(m, n), count), dtype=host.int32)
    info = host.zeros(count, dtype=host.int32)
    tiny = host.finfo(lu.dtype).tiny
    for j, p in enumerate(piv):
        size = host.abs(lu[j:, j])  # (m - j, batch)
        top = size.max(0)
        p.fill(m - 1)
        for r in range(m - 2, j - 1, -1):  # upwards, so that the first largest is kept
            p += (r - p) * (size[r - j] == top)
        _swap_rows(bits, j, p)
        pivot, below = lu[j, j], lu[j + 1 :, j]  # (batch,), (m - j - 1, batch)
        small = host.abs(pivot) < tiny  # getf2 divides by such a pivot (by none if 0)
        if small.any():
            zero = pivot == 0
            info[(info == 0) & zero] = j + 1
            below /= host.where(small & ~zero, pivot, 1)
            pivot = host.where(small, 1, pivot)
        below *= 1 / pivot  # as getf2 scales
        lu[j + 1 :, j + 1 :] -= below[:, None] * lu[j, None, j + 1 :]
    return piv, info


def _swap_rows(bits: Any, j: int, p: Any) -> None:
    """Swap row j of an integer array (m, ..., batch) with row p[b] at each place b of the
    batch, in place, by exclusive or (masked copies take ten times as long)."""
    for r in range(j + 1, len(bits)):
        mask = -(p == r).astype(bits.dtype)  # all ones where row r is the pivot's
        change = (bits[j] ^ bits[r]) & mask
        bits[j] ^= change
        bits[r] ^= change
