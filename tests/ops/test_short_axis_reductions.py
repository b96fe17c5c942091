"""Reductions along one short axis of many lines (fastpath/passes.py takes them a step at a
time), sums over a last axis (BLAS row sums), products of every element and vector norms over
leading axes (halved), with the fast path on: values, dtypes and gradients against torch, in
either mode, and the ufunc's reduce where the passes apply and where not."""

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
    ("prod_all", lambda x: x.prod()),
    ("prod_middle", lambda x: x.prod(1)),
    ("prod_last", lambda x: x.prod(-1, keepdim=True)),
    ("sum_middle", lambda x: x.sum(1)),
    ("sum_last", lambda x: x.sum(-1)),
    ("mean_last", lambda x: x.mean(-1, keepdim=True)),
    ("amax_last", lambda x: x.amax(-1)),
    ("amin_middle", lambda x: x.amin(1, keepdim=True)),
    ("logsumexp_middle", lambda x: x.logsumexp(1)),
    ("softmax_middle", lambda x: x.softmax(1)),
    ("log_softmax_last", lambda x: x.log_softmax(-1)),
    ("norm_fro_leading_and_last", lambda x: x.norm("fro", (0, 2), True)),
    ("norm_p1_leading", lambda x: x.norm(1, 0)),
]


@pytest.mark.parametrize(("name", "call"), CALLS, ids=[name for name, _ in CALLS])
def test_reductions_along_short_axes_match_torch(name: str, call: Callable) -> None:
    """(1400, 3, 4): 16,800 elements (a product of all of them is halved), 4,200 lines of 4
    along the last axis, 5,600 of 3 along the middle one; factors near 1 so the product of all
    neither overflows nor underflows, rounded so the extremes tie."""
    rng = np.random.default_rng(len(name))
    x = np.round(rng.uniform(0.9, 1.1, (1400, 3, 4)), 2)
    ours, theirs = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    got, want = call(ours), call(theirs)
    assert got.shape == tuple(want.shape) and str(got.dtype) == "chainrule.float64"
    assert_value_and_grad_like_torch(got, want, ours, theirs, rng)


@pytest.mark.parametrize("name", ["prod_all", "prod_last", "sum_last", "amax_last"])
def test_float32_reductions_along_short_axes_match_torch(name: str) -> None:
    call = dict(CALLS)[name]
    x = np.random.default_rng(4).uniform(0.9, 1.1, (1400, 3, 4)).astype(np.float32)
    got, want = call(cr.tensor(x)), call(torch.tensor(x))
    assert str(got.dtype) == "chainrule.float32"
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4)


def test_passes_are_the_ufuncs_reduce_where_they_apply_and_where_not() -> None:
    """Steps over one axis of 2 to STEPS_MAX elements across LINES_MIN lines or more, products
    of every element of a C-ordered array from ROWS_MIN rows of ROW_MAX (a few left over), and
    the ufunc's reduce on every other case: the same values and dtype."""
    rng = np.random.default_rng(0)
    cases = [
        ((1024, 3, 4), (1,)), ((700, 3, 4), (2,)), ((3000, 16), (1,)), ((4, 3000), (0,)),
        ((1023, 2), (1,)), ((3000, 17), (1,)), ((3000, 4), (0, 1)), ((16389,), None),
        ((1025, 4, 4), None), ((16383,), None), ((100, 4), None),
    ]  # fmt: skip
    with fast_path_on():
        for shape, dims in cases:
            a = rng.uniform(0.99, 1.01, shape)
            for ufunc in (np.add, np.multiply, np.maximum, np.minimum):
                for keep in (False, True):
                    want = ufunc.reduce(a, axis=dims, keepdims=keep)
                    got = passes.reduce(ufunc, a, dims, keep)
                    assert got.shape == want.shape and got.dtype == want.dtype
                    np.testing.assert_allclose(got, want, rtol=1e-12)
        # a product of every element of an array that is not C-ordered: the ufunc's own
        a = rng.uniform(0.99, 1.01, (4, 5000)).T
        np.testing.assert_allclose(passes.reduce(np.multiply, a, None, False), a.prod())
        # integer sums and products keep NumPy's int64 (the reduce itself)
        n = np.arange(3 * 4096, dtype=np.int32).reshape(4096, 3) % 3
        assert passes.reduce(np.multiply, n, (1,), False).dtype == np.int64
        assert passes.reduce(np.add, n, (1,), False).dtype == np.int64
        np.testing.assert_array_equal(passes.reduce(np.maximum, n, (1,), False), n.max(1))


def test_nan_and_zero_carry_through_the_passes() -> None:
    """A NaN makes its line's maximum and the whole product NaN; a zero makes the product 0
    and its gradient the product of the others, as torch's."""
    x = np.random.default_rng(5).uniform(0.9, 1.1, (1400, 3, 4))
    x[7, 1, 2] = np.nan
    got, want = cr.tensor(x).amax(-1).numpy(), torch.tensor(x).amax(-1).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.isnan(cr.tensor(x).prod().item())
    x[7, 1, 2] = 0.0
    ours, theirs = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ours.prod().backward()
    theirs.prod().backward()
    assert ours.prod().item() == 0.0
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-10)
