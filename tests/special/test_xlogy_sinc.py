"""xlogy at its edges (0 times log 0, NaN, inf, negatives) and sinc at 0, each dtype and
with number operands, against PyTorch's, and with no floating-point warning."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import chainrule as cr

_X = [0.0, 0.0, 0.0, 1.0, -1.0, 2.0, 0.0, np.nan, 1.0, 3.0]
_Y = [0.0, np.nan, np.inf, 0.0, 0.0, np.inf, -1.0, 1.0, -1.0, 0.5]


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_xlogy_edges_are_pytorchs(dtype: str) -> None:
    x, y = np.array(_X, dtype=dtype), np.array(_Y, dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = [
            cr.tensor(x).xlogy(cr.tensor(y)),
            cr.xlogy(cr.tensor(x), 0.0),
            cr.xlogy(0.0, cr.tensor(y)),
            cr.xlogy(cr.tensor(x[0]), cr.tensor(y)),  # a 0-d tensor beside a 1-d one
        ]
    theirs = [
        torch.tensor(x).xlogy(torch.tensor(y)),
        torch.xlogy(torch.tensor(x), 0.0),
        torch.xlogy(0.0, torch.tensor(y)),
        torch.xlogy(torch.tensor(x[0]), torch.tensor(y)),
    ]
    for o, t in zip(ours, theirs, strict=True):
        assert str(o.dtype) == str(t.dtype).replace("torch", "chainrule")
        # the edges exactly (0, NaN and inf in place); a log to a few units in the last
        # place, as the two libraries' log kernels differ from one CPU to another
        rtol = 4 * float(np.finfo(dtype).eps)
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=rtol, atol=0)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
@pytest.mark.parametrize("shape", [(), (2, 3)])
def test_sinc_is_one_at_zero_and_pytorchs_elsewhere(dtype: str, shape: tuple[int, ...]) -> None:
    x = np.zeros(shape, dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        at_zero = cr.tensor(x).sinc()
    assert at_zero.shape == shape and (at_zero.numpy() == 1).all()
    grid = np.linspace(-3, 3, 61).astype(dtype)  # holds 0 and the integers
    np.testing.assert_allclose(
        cr.tensor(grid).sinc().numpy(), torch.tensor(grid).sinc().numpy(), rtol=1e-6, atol=1e-7
    )
