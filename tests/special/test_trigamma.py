"""polygamma(1, x) against PyTorch's on both sides of 1/2 (where it reflects), at the poles
and beyond them, in each float dtype: float64 takes PyTorch's series, narrower floats the
exact zeta(2, x), and both must land within the dtype's tolerance of PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.tolerances import tol

_X = np.concatenate(
    [np.linspace(-4.9, 6.0, 221), [0.0, -1.0, -2.0, 1e-3, 0.4999, 0.5, 30.0, 1e4, np.inf]]
)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_trigamma_agrees_with_pytorch_across_the_reflection(dtype: str) -> None:
    x = _X.astype(dtype)
    ours = cr.tensor(x).polygamma(1)
    theirs = torch.tensor(x).polygamma(1)
    assert ours.dtype == getattr(cr, dtype)
    wide = "float32" if dtype == "float16" else dtype  # float16 rounds once more, as PyTorch
    np.testing.assert_allclose(
        ours.numpy().astype(wide), theirs.numpy().astype(wide), **tol(wide), equal_nan=True
    )
