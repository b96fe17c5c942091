"""Running sums and products along a short axis of many lines (fastpath/passes.py takes them a
step at a time with the fast path on): values, dtypes and gradients against torch, in either
mode, and the same bits as NumPy's accumulate."""

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
    ("cumsum_last", lambda x: x.cumsum(-1)),
    ("cumsum_middle", lambda x: x.cumsum(1)),
    ("cumprod_last", lambda x: x.cumprod(2)),
    ("cumprod_middle", lambda x: x.cumprod(-2)),
    ("logcumsumexp_last", lambda x: x.logcumsumexp(-1)),
]


@pytest.mark.parametrize(("name", "call"), CALLS, ids=[name for name, _ in CALLS])
def test_running_sums_and_products_along_short_axes_match_torch(name: str, call: Callable) -> None:
    """(700, 3, 4): 2,100 lines of 4 along the last axis, 2,800 of 3 along the middle one."""
    rng = np.random.default_rng(len(name))
    x = rng.uniform(0.5, 1.5, (700, 3, 4))
    ours, theirs = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    got, want = call(ours), call(theirs)
    assert got.shape == tuple(want.shape)
    assert_value_and_grad_like_torch(got, want, ours, theirs, rng)


def test_integer_running_sums_widen_as_torchs() -> None:
    x = np.random.default_rng(2).integers(-5, 5, (2000, 3), dtype=np.int32)
    got, want = cr.tensor(x).cumsum(1), torch.tensor(x).cumsum(1)
    assert str(got.dtype) == "chainrule.int64" and want.dtype == torch.int64
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_steps_give_numpys_accumulate_bit_for_bit() -> None:
    """Where steps apply (LINES_MIN lines or more along 2 to STEPS_MAX elements) and where not,
    the same values and dtype as the ufunc's accumulate."""
    rng = np.random.default_rng(3)
    cases = [((1024, 4), 1), ((300, 5, 16), 2), ((2048, 3, 7), 1), ((1023, 4), 1),
             ((2000, 17), 1), ((2000, 1), 1), ((5, 3000), 0), ((4000,), 0)]  # fmt: skip
    with fast_path_on():
        for shape, axis in cases:
            for dtype in (np.float32, np.float16):
                a = rng.standard_normal(shape).astype(dtype)
                for ufunc in (np.add, np.multiply):
                    want = ufunc.accumulate(a, axis=axis, dtype=dtype)
                    got = passes.accumulate(ufunc, a, axis, dtype)
                    assert got.dtype == want.dtype
                    np.testing.assert_array_equal(got, want)
            b = rng.integers(0, 3, shape).astype(bool)
            want = np.add.accumulate(b, axis=axis, dtype=np.int64)
            np.testing.assert_array_equal(passes.accumulate(np.add, b, axis, np.int64), want)
