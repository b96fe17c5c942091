"""Reductions over a leading run of axes of many short rows (fastpath/passes.py halves them
with the fast path on): values, dtypes and gradients against torch, in either mode."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.fastpath import passes
from tests.helpers import assert_value_and_grad_like_torch, fast_path_on

CALLS: list[tuple[str, Callable[[Any], Any]]] = [
    ("sum_0", lambda x: x.sum(0)),
    ("sum_0_2", lambda x: x.sum((0, 2), keepdim=True)),
    ("sum_0_1", lambda x: x.sum((0, 1))),
    ("mean_0_2", lambda x: x.mean((0, 2))),
    ("var_0_2", lambda x: x.var((0, 2), keepdim=True)),
    ("std_0", lambda x: x.std(0)),
    ("amax_0_2", lambda x: x.amax((0, 2))),
    ("amin_0", lambda x: x.amin(0, keepdim=True)),
    ("aminmax_0", lambda x: x.aminmax(dim=0)),
    ("logsumexp_0_2", lambda x: x.logsumexp((0, 2))),
    ("var_mean_0", lambda x: torch_or_cr(x).var_mean(x, 0)),
]


def torch_or_cr(x: Any) -> Any:
    return cr if isinstance(x, cr.Tensor) else torch


@pytest.mark.parametrize(("name", "call"), CALLS, ids=[name for name, _ in CALLS])
def test_reductions_over_leading_axes_match_torch(name: str, call: Callable) -> None:
    """(1025, 3, 4): 1,025 leading rows (odd, so a row is left over at the first halving) of
    12, values rounded to halves so the extremes tie."""
    rng = np.random.default_rng(len(name))
    x = np.round(rng.standard_normal((1025, 3, 4)) * 2) / 2
    ours, theirs = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    got, want = call(ours), call(theirs)
    if isinstance(want, tuple):
        got, want = cr.stack(list(got)), torch.stack(list(want))
    assert got.shape == tuple(want.shape) and str(got.dtype)[10:] == str(want.dtype)[6:]
    assert_value_and_grad_like_torch(got, want, ours, theirs, rng)


def test_halving_is_the_ufuncs_reduce_where_it_applies_and_where_not() -> None:
    """Halved where the leading run has ROWS_MIN rows or more of 2 to ROW_MAX elements; the
    ufunc's reduce on every other case: the same values, a float32 sum rounding pairwise."""
    rng = np.random.default_rng(0)
    cases = [
        ((4099, 3, 4), (0, 2)), ((2048, 16), (0,)), ((1500, 2, 3), (0, 1)),
        ((1024, 5), (0,)), ((1023, 5), (0,)), ((3000, 17), (0,)), ((3000, 1), (0,)),
        ((3000, 4), (1,)), ((3000, 4), None), ((0, 4), (0,)),
    ]  # fmt: skip
    with fast_path_on():
        for shape, dims in cases:
            a = rng.standard_normal(shape).astype(np.float32)
            for ufunc in (np.add, np.maximum, np.minimum):
                for keep in (False, True):
                    if ufunc is not np.add and not a.size:
                        continue  # no identity: both raise
                    want = ufunc.reduce(a.astype(np.float64), axis=dims, keepdims=keep)
                    got = passes.reduce(ufunc, a, dims, keep)
                    assert got.shape == want.shape and got.dtype == np.float32
                    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-4)
    # one dim given as an int, as softmax's shift gives it
    a = rng.standard_normal((2048, 3)).astype(np.float32)
    with fast_path_on():
        np.testing.assert_array_equal(
            passes.reduce(np.maximum, a, 0, True), a.max(0, keepdims=True)
        )
    # integer sums keep NumPy's int64 (the reduce itself), and their exact values
    n = np.arange(4096 * 3, dtype=np.int32).reshape(4096, 3)
    assert passes.reduce(np.add, n, (0,), False).dtype == np.int64
    np.testing.assert_array_equal(passes.reduce(np.maximum, n, (0,), False), n[-1])


def test_a_halved_float32_sum_rounds_as_a_pairwise_sum() -> None:
    """Over 2^17 rows a row-after-row float32 sum drifts by about 1e-5 of the total; the halved
    sum stays within a few ulps, as PyTorch's cascade sum does."""
    x = np.random.default_rng(1).random((1 << 17, 4)).astype(np.float32)
    exact = x.astype(np.float64).sum(0)
    with fast_path_on():
        got = cr.tensor(x).sum(0).numpy()
    assert np.abs(got - exact).max() / exact.max() < 1e-6
