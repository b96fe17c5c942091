"""Draws whose order follows a tensor's layout, as PyTorch's: bernoulli(p) fills a contiguous
result in its order, whatever p's layout; multinomial's keys are drawn into a tensor laid out
as the weights (a transposed 2-D tensor's column by column). Same seed, same numbers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr

LAYOUTS: dict[str, Callable[[Any], Any]] = {
    "contiguous": lambda t: t,
    "transposed": lambda t: t.t(),
    "sliced": lambda t: t[:, ::2],
    "transposed and sliced": lambda t: t.t()[:, ::2],
    "a row of the transposed": lambda t: t.t()[1],
    "a column of the transposed": lambda t: t.t()[:, 1:2],
}


def _draws(lib: Any, weights: np.ndarray, layout: str, seed: int) -> list[Any]:
    lib.manual_seed(seed)
    t = LAYOUTS[layout](lib.tensor(weights))
    b = lib.bernoulli(t)
    k = t.shape[-1]
    return [
        b.numpy(),
        tuple(b.stride()),
        lib.multinomial(t, 1).numpy(),
        lib.multinomial(t, min(2, k)).numpy(),
        lib.multinomial(t, 3, replacement=True).numpy(),
        lib.rand(2).numpy(),  # the stream goes on where PyTorch's does
    ]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_bernoulli_and_multinomial_draw_as_torch_in_every_layout(layout: str, dtype: Any) -> None:
    weights = np.random.default_rng(0).random((4, 5)).astype(dtype)
    for seed in (0, 1337):
        ours, theirs = _draws(cr, weights, layout, seed), _draws(torch, weights, layout, seed)
        for a, b in zip(ours, theirs, strict=True):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_bernoulli_of_a_number_draws_as_torch(layout: str) -> None:
    """bernoulli(input, p) with a number p: a contiguous result of input's shape and dtype."""
    x = np.random.default_rng(1).random((3, 4)).astype(np.float32)
    got = []
    for lib in (cr, torch):
        lib.manual_seed(5)
        t = LAYOUTS[layout](lib.tensor(x))
        a, b = lib.bernoulli(t, 0.3), t.bernoulli(p=0.6)
        c = lib.bernoulli(lib.zeros(2, 3, dtype=lib.int64), 0.5)
        got.append([a.numpy(), b.numpy(), tuple(b.stride()), c.numpy(), lib.rand(2).numpy()])
    for a, b in zip(*got, strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(TypeError, match="bernoulli: p must be a number"):
        cr.bernoulli(cr.zeros(2), cr.tensor([0.5, 0.5]))
