"""Sums along the rows of a matrix as a BLAS product with ones (LayerNorm, attention's
softmax, the Monitor's column sums); with the switch off, NumPy's sum (fastpath/table.py)."""

from __future__ import annotations

from typing import Any

from ..array import xp
from .switch import state

# Below this many elements making the ones costs more than the product saves.
BLAS_MIN = 2048


def row_sums(rows: Any) -> Any:
    """(M, 1) sums of the rows of an (M, n) array."""
    if state.on and rows.size > BLAS_MIN:
        return (rows @ xp.ones(rows.shape[1], rows.dtype, like=rows))[:, None]
    return xp.add.reduce(rows, axis=-1, keepdims=True)  # the ufunc: no Python wrapper
