"""topk over long lines (tensor/reductions.py _first_k, a partial sort): the values and indices
of torch's stable sort's first k, ties the lower index first and NaN the largest, in any dim."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.tensor.reductions import _first_k, _sort_order


def _stable_first_k(x: np.ndarray, k: int, dim: int, largest: bool) -> tuple:
    """torch's stable sort (NaN first when descending, last when ascending), its first k."""
    values, indices = torch.sort(torch.from_numpy(x), dim=dim, descending=largest, stable=True)
    return values.narrow(dim, 0, k).numpy(), indices.narrow(dim, 0, k).numpy()


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize(
    ("shape", "dim", "k", "dtype"),
    [((3, 3000), 1, 7, np.float32), ((2000, 3), 0, 5, np.float64), ((4, 1500, 2), 1, 40, np.int64)],
)
def test_ties_and_nans_take_torchs_stable_order(
    shape: tuple, dim: int, k: int, dtype: type, largest: bool
) -> None:
    rng = np.random.default_rng(k)
    x = rng.integers(0, 12, shape).astype(dtype)  # many ties at every k-th value
    if dtype != np.int64:
        x[rng.random(shape) < 0.002] = np.nan
    values, indices = cr.tensor(x).topk(k, dim, largest)
    want_values, want_indices = _stable_first_k(x, k, dim, largest)
    np.testing.assert_array_equal(values.numpy(), want_values)
    np.testing.assert_array_equal(indices.numpy(), want_indices)
    assert indices.numpy().flags.c_contiguous and indices.dtype == cr.int64


def test_distinct_values_match_torch_with_the_gradient() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 2000))
    ours, theirs = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (values, indices), (want, want_indices) = ours.topk(9), theirs.topk(9)
    np.testing.assert_array_equal(values.detach().numpy(), want.detach().numpy())
    np.testing.assert_array_equal(indices.numpy(), want_indices.numpy())
    v = rng.standard_normal((5, 9))
    (g,) = cr.grad(values, ours, cr.tensor(v))
    (tg,) = torch.autograd.grad(want, theirs, torch.tensor(v))
    np.testing.assert_array_equal(g.numpy(), tg.numpy())
    assert values.grad_fn.name() == want.grad_fn.name() == "TopkBackward0"


def test_a_partial_sort_gives_the_whole_sorts_first_k_on_small_lines_too() -> None:
    """_first_k on lines of every length from 2, ties and NaN, any dim, against the sort."""
    rng = np.random.default_rng(1)
    for n in range(2, 9):
        x = rng.integers(0, 3, (3, n, 2)).astype(np.float32)
        x[rng.random(x.shape) < 0.2] = np.nan
        for k in range(1, n):
            for largest in (True, False):
                want = np.take(_sort_order(x, 1, largest), np.arange(k), axis=1)
                np.testing.assert_array_equal(_first_k(x, 1, k, largest), want)
