"""A max pool's window holding a NaN: the maximum is NaN and its index (where the gradient
goes) is the window's last NaN in row-major order, as PyTorch's scan (a NaN always wins)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr

POOLS = [
    ("max_pool1d", (2, 3, 9), (3, 2, 1)),
    ("max_pool2d", (1, 2, 5, 6), (3, 2, 1)),
    ("max_pool3d", (1, 2, 4, 5, 4), (2, 1, 1)),
    ("adaptive_max_pool1d", (2, 3, 9), (4,)),
    ("adaptive_max_pool2d", (1, 2, 5, 7), ((3, 2),)),
    ("adaptive_max_pool3d", (1, 2, 5, 4, 5), ((2, 3, 2),)),
]


@pytest.mark.parametrize(("name", "shape", "args"), POOLS, ids=[p[0] for p in POOLS])
def test_a_nan_wins_its_window_at_its_last_place(name: str, shape: tuple, args: tuple) -> None:
    rng = np.random.default_rng(0)
    for _ in range(5):
        x = rng.standard_normal(shape)
        x[rng.random(shape) < 0.15] = np.nan  # windows of one, two or more NaNs
        ours = cr.tensor(x, requires_grad=True)
        theirs = torch.tensor(x, requires_grad=True)
        got, got_idx = getattr(cr.nn.functional, name)(ours, *args, return_indices=True)
        want, want_idx = getattr(torch.nn.functional, name)(theirs, *args, return_indices=True)
        np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
        np.testing.assert_array_equal(got_idx.numpy(), want_idx.numpy())
        got.sum().backward()
        want.sum().backward()
        np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())
