"""The one table of tolerances for comparing chainrule with PyTorch (or another library) when
the two sides run different code: by dtype and by how deep the computation is. Tests that
need bit-equality (both sides running the same code) use assert_array_equal, not this."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

OP = "op"  # one op: an elementwise function, a matmul, a reduction, a convolution's pieces
LAYER = "layer"  # a layer or a loss: a few ops, forward and backward
STACK = "stack"  # a stack of layers: a Transformer encoder and decoder, a whole model

TOLERANCES: dict[str, dict[str, dict[str, float]]] = {
    OP: {
        # float64 keeps ~16 digits; one op that sums in another order (OpenBLAS against MKL,
        # pairwise against sequential) differs in the last few: 1e-10 leaves room for sums of
        # thousands of terms, and atol 1e-12 for results that cancel to ~0.
        "float64": dict(rtol=1e-10, atol=1e-12),
        # float32 keeps ~7 digits (eps 1.2e-7); a sum of a few hundred terms in another
        # order drifts by ~1e-6 relative; atol for values that cancel near 0.
        "float32": dict(rtol=1e-5, atol=2e-6),
    },
    LAYER: {
        # A few ops chained, forward and backward: the errors of each add up, and a gradient
        # that is a difference of large products can land near 0, hence atol = rtol.
        "float64": dict(rtol=1e-10, atol=1e-10),
        # Each float32 op rounds at ~1e-7 and a layer's backward goes through a dozen of them
        # (softmax, normalisations, a log of a sum): ~1e-5 relative, 10x margin on top.
        "float32": dict(rtol=1e-4, atol=1e-5),
    },
    STACK: {
        # Many layers (residual sums, attention, normalisations, steps of a recurrence): the
        # rounding of each layer is amplified by the ones after it, one more digit lost.
        "float64": dict(rtol=1e-9, atol=1e-10),
        # The same amplification on float32's ~1e-7: twice the layer's value, what the
        # gradients of a Transformer's every parameter (attention, two norms, feed-forward,
        # in an encoder and a decoder) need.
        "float32": dict(rtol=2e-4, atol=2e-5),
    },
}


def _name(dtype: Any) -> str:
    """A floating dtype's name ("float32") from a NumPy dtype or type, a chainrule or torch
    dtype, or the name itself."""
    if isinstance(dtype, torch.dtype):
        return str(dtype).removeprefix("torch.")
    return np.dtype(dtype).name


def tol(dtype: Any, depth: str = LAYER) -> dict[str, float]:
    """rtol and atol (a dict for ``assert_allclose(..., **tol(dtype))``) for comparing a
    computation of ``depth`` (OP, LAYER or STACK) in ``dtype``."""
    if depth not in TOLERANCES:
        raise ValueError(f"tol: unknown depth {depth!r}; expected one of {list(TOLERANCES)}")
    name = _name(dtype)
    by_dtype = TOLERANCES[depth]
    if name not in by_dtype:
        raise ValueError(f"tol: no tolerance for dtype {name!r}; expected one of {list(by_dtype)}")
    return dict(by_dtype[name])
