"""Edges of the activations' fast forms, against PyTorch: sigmoid and silu at the ends of
float32 and float64, softshrink's gradient at NaN, one_hot's flat scatter."""

import contextlib

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import fastpath

EXTREMES = [-1e30, -1000.0, -100.0, -95.0, -89.0, -88.0, -20.0, -1.0, 0.0, 1.0, 20.0, 88.0]
EXTREMES += [1000.0, 1e30, np.inf]


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sigmoid_and_silu_at_the_extremes(fast: bool, dtype: str) -> None:
    values = EXTREMES + [-np.inf, np.nan]
    with fastpath.disabled() if not fast else contextlib.nullcontext():
        for name in ("sigmoid", "silu"):
            ours = getattr(cr.nn.functional, name)(cr.tensor(values, dtype=getattr(cr, dtype)))
            theirs = getattr(torch.nn.functional, name)(
                torch.tensor(values, dtype=getattr(torch, dtype))
            )
            np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-37)
            assert np.array_equal(np.isnan(ours.numpy()), np.isnan(theirs.numpy()))
            assert np.array_equal(ours.numpy() == 0, theirs.numpy() == 0)  # 0, not tiny


def test_softshrink_gradient_passes_at_nan() -> None:
    values = [-2.0, -0.5, 0.0, 0.6, np.nan, np.inf]
    a = cr.tensor(values, requires_grad=True)
    b = torch.tensor(values, requires_grad=True)
    cr.nn.functional.softshrink(a, 0.5).sum().backward()
    torch.nn.functional.softshrink(b, 0.5).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())


@pytest.mark.parametrize("shape, classes", [((5,), 3), ((2, 3), -1), ((0,), 4), ((), 5)])
def test_one_hot_as_pytorch(shape: tuple, classes: int) -> None:
    idx = torch.randint(0, 3, shape, generator=torch.Generator().manual_seed(0))
    ours = cr.nn.functional.one_hot(cr.tensor(idx.numpy()), classes)
    theirs = torch.nn.functional.one_hot(idx, classes)
    assert ours.dtype == cr.int64 and tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
