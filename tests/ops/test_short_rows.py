"""Reductions over a short last axis of an N-D tensor (the layout ops/reduce.py _column_major
copies to with the fast path on): values and gradients against torch, in either mode."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.helpers import assert_value_and_grad_like_torch, fast_path_on

CALLS: list[tuple[str, Callable[[Any], Any]]] = [
    ("amin", lambda x: x.amin(-1)),
    ("amax", lambda x: x.amax(2, keepdim=True)),
    ("aminmax", lambda x: x.aminmax(dim=-1)),
    ("sum", lambda x: x.sum(-1)),
    ("mean", lambda x: x.mean(-1, keepdim=True)),
    ("var", lambda x: x.var(-1)),
    ("logsumexp", lambda x: x.logsumexp(-1)),
    ("softmax", lambda x: x.softmax(-1)),
    ("log_softmax", lambda x: x.log_softmax(-1)),
]


@pytest.mark.parametrize(("name", "call"), CALLS, ids=[name for name, _ in CALLS])
def test_reductions_over_a_short_last_axis_match_torch(name: str, call: Callable) -> None:
    """(10, 4, 5): 40 rows of 5, with ties (values rounded to halves) for the extremes."""
    rng = np.random.default_rng(len(name))
    x = np.round(rng.standard_normal((10, 4, 5)) * 2) / 2
    ours, theirs = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    got, want = call(ours), call(theirs)
    got, want = (got, want) if name != "aminmax" else (cr.stack(got), torch.stack(want))
    assert got.shape == tuple(want.shape)
    assert got.detach().numpy().flags.c_contiguous == want.is_contiguous()
    assert_value_and_grad_like_torch(got, want, ours, theirs, rng)


def test_a_short_last_axis_of_many_rows_takes_the_copy() -> None:
    """The copy is made from 32 rows of at most 16 (the product of the leading dims), for a
    reduction over the last axis alone; the copy holds the same values in a's shape."""
    from chainrule.ops.reduce import _column_major

    a = np.arange(8 * 4 * 10, dtype=np.float32).reshape(8, 4, 10)
    with fast_path_on():
        copy = _column_major(a, (2,))
        assert copy.shape == a.shape and np.array_equal(copy, a)
        assert copy.strides == (16, 4, 128)  # float32: the last axis outermost
        for other, dims in ((a[:3], (2,)), (a, (1,)), (a, (1, 2)), (a, None),
                            (np.zeros((8, 4, 17)), 2), (a.transpose(1, 0, 2), (2,))):  # fmt: skip
            assert _column_major(other, dims) is other
