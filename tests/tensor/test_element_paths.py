"""The paths of makemore's loops on tensors that record nothing: multinomial's weight checks
row by row, element reads and writes by Python ints, and arithmetic on 0-d tensors, each
against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr


@pytest.mark.parametrize(
    "bad", [[1.0, -0.5, 2.0], [0.0, 0.0, 0.0], [1.0, np.nan, 1.0], [1.0, np.inf, 1.0]]
)
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_multinomial_checks_every_row(bad, dtype) -> None:
    weights = [[0.2, 0.3, 0.5], bad, [1.0, 1.0, 1.0]]
    with pytest.raises(RuntimeError):
        torch.tensor(weights, dtype=getattr(torch, dtype)).multinomial(1)
    with pytest.raises(ValueError, match="multinomial: weights must be finite, non-negative"):
        cr.tensor(weights, dtype=getattr(cr, dtype)).multinomial(1)


def test_multinomial_takes_rows_that_sum_above_zero_and_no_rows() -> None:
    tiny = cr.tensor([[0.0, 1e-30, 0.0], [3.0, 0.0, 0.0]], dtype=cr.float64)
    assert cr.multinomial(tiny, 2, True).tolist() == [[1, 1], [0, 0]]
    assert cr.multinomial(cr.ones(0, 3), 1, True).shape == (0, 1)


def test_sampled_letters_are_torchs() -> None:
    """makemore's sampling loop: a row of P, one draw, .item(), until index 0."""
    counts = np.random.default_rng(0).integers(1, 50, (27, 27)).astype(np.float32)

    def names(lib) -> list[list[int]]:
        P = lib.tensor(counts)
        P /= P.sum(1, keepdims=True)
        g = lib.Generator().manual_seed(2147483647)
        out = []
        for _ in range(5):
            ix, name = 0, []
            while True:
                ix = lib.multinomial(P[ix], num_samples=1, replacement=True, generator=g).item()
                name.append(ix)
                if ix == 0:
                    break
            out.append(name)
        return out

    assert names(cr) == names(torch)
