"""polygamma(1, x) of float32 and float16 tensors holding no x below 1/2 (no reflection) against
PyTorch's, its large values and infinities included, with no floating-point warning: as a few
values (SciPy's zeta(2, x) with the fast path on) and as one array (PyTorch's steps)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.tolerances import tol

_X = np.concatenate([np.linspace(0.5, 8.0, 61), [1.0, 30.0, 1e4, 6e4, np.inf, np.nan]])


@pytest.mark.parametrize("size", [8, None], ids=["few", "all"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_trigamma_above_one_half_agrees_with_pytorch(dtype: str, size: int | None) -> None:
    x = _X.astype(dtype)
    pieces = [x] if size is None else np.array_split(x, -(-len(x) // size))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = cr.cat([cr.tensor(p).polygamma(1) for p in pieces])
    theirs = torch.tensor(x).polygamma(1)
    assert ours.dtype == getattr(cr, dtype)
    np.testing.assert_allclose(
        ours.numpy().astype("float32"),
        theirs.numpy().astype("float32"),
        **tol("float32"),
        equal_nan=True,
    )


def test_trigamma_gradient_above_one_half_agrees_with_pytorch() -> None:
    x = np.linspace(0.5, 4.0, 8).astype("float32")
    ours, theirs = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ours.polygamma(1).sum().backward()
    theirs.polygamma(1).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), **tol("float32"))
