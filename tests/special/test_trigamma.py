"""polygamma(1, x) against PyTorch's on both sides of 1/2 (where it reflects), at the poles
and beyond them, in each float dtype, both as a few values at a time (float32's may take
SciPy's exact zeta(2, x) with the fast path on) and as one array (PyTorch's steps): each must
land within the dtype's tolerance of PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.tolerances import OP, tol

_X = np.concatenate(
    [np.linspace(-4.9, 6.0, 221), [0.0, -1.0, -2.0, 1e-3, 0.4999, 0.5, 30.0, 1e4, np.inf]]
)

# Far and near: large values (whose x^2 overflows float32), tiny ones, negatives far out
# (where float32's sin(pi x) is no longer near 0 at the integers), -inf and NaN.
_WIDE = np.concatenate(
    [
        10.0 ** np.linspace(-30, 30, 61),
        -(10.0 ** np.linspace(-30, 30, 61)),
        [1e19, 2e19, 3e38, -7.5, -100.25, -1e6 - 0.5, -np.inf, np.nan, 0.5 - 1e-7],
    ]
)


def _pieces(x: np.ndarray, size: int | None) -> list[np.ndarray]:
    return [x] if size is None else np.array_split(x, -(-len(x) // size))


@pytest.mark.parametrize("size", [8, None], ids=["few", "all"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_trigamma_agrees_with_pytorch_across_the_reflection(dtype: str, size: int | None) -> None:
    for x in _pieces(_X.astype(dtype), size):
        ours = cr.tensor(x).polygamma(1)
        theirs = torch.tensor(x).polygamma(1)
        assert ours.dtype == getattr(cr, dtype)
        wide = "float32" if dtype == "float16" else dtype  # float16 rounds once more, as PyTorch
        np.testing.assert_allclose(
            ours.numpy().astype(wide), theirs.numpy().astype(wide), **tol(wide), equal_nan=True
        )


@pytest.mark.parametrize("size", [8, None], ids=["few", "all"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_trigamma_agrees_with_pytorch_far_out(dtype: str, size: int | None) -> None:
    with np.errstate(over="ignore"):  # 3e38 is float32's; -1e6 - 0.5 rounds in float32
        x = _WIDE.astype(dtype)
    for piece in _pieces(x, size):
        ours = cr.tensor(piece).polygamma(1).numpy()
        theirs = torch.tensor(piece).polygamma(1).numpy()
        np.testing.assert_allclose(ours, theirs, **tol(dtype, OP), equal_nan=True)
