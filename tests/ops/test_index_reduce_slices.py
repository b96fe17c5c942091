"""index_reduce of long slices (ScatterReduce reduces them in one slice at a time with the fast
path on): values and gradients against torch, in either mode, with repeated indices, without
self, and with a NaN; index_select's slices (one take along the dim) in C order, and a few
columns of 1,024 rows or more (copied a column at a time with the fast path on)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr

CASES = [
    ((600, 3), 1, [0, 2, 0]),
    ((300, 5, 4), 1, [4, 0, 4, 2]),
    ((3, 400), 0, [1, 1]),
]


@pytest.mark.parametrize("reduce", ["prod", "amax", "amin", "mean"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize(("shape", "dim", "index"), CASES)
def test_index_reduce_of_long_slices_matches_torch(
    shape: tuple, dim: int, index: list, reduce: str, include_self: bool
) -> None:
    rng = np.random.default_rng(len(shape) + dim)
    x = np.round(rng.uniform(0.5, 1.5, shape), 1)  # ties among the extremes
    src_shape = shape[:dim] + (len(index),) + shape[dim + 1 :]
    s = np.round(rng.uniform(0.5, 1.5, src_shape), 1)
    ours = [cr.tensor(x, requires_grad=True), cr.tensor(s, requires_grad=True)]
    theirs = [torch.tensor(x, requires_grad=True), torch.tensor(s, requires_grad=True)]
    got = ours[0].index_reduce(dim, cr.tensor(index), ours[1], reduce, include_self=include_self)
    want = theirs[0].index_reduce(
        dim, torch.tensor(index), theirs[1], reduce, include_self=include_self
    )
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)
    v = rng.standard_normal(shape)
    g = cr.grad(got, ours, cr.tensor(v))
    tg = torch.autograd.grad(want, theirs, torch.tensor(v))
    for a, b in zip(g, tg, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)


def test_index_reduce_of_long_slices_carries_a_nan() -> None:
    x = np.ones((600, 3), np.float32)
    s = np.ones((600, 2), np.float32)
    s[5, 1] = np.nan
    for reduce in ("prod", "amax"):
        got = cr.tensor(x).index_reduce(1, cr.tensor([2, 2]), cr.tensor(s), reduce).numpy()
        want = torch.tensor(x).index_reduce(1, torch.tensor([2, 2]), torch.tensor(s), reduce)
        np.testing.assert_array_equal(got, want.numpy())


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_select_takes_slices_in_c_order_as_torch(dim: int) -> None:
    x = np.random.default_rng(6).standard_normal((40, 5, 4))
    index = [3, 0, 3, 1]
    ours, theirs = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    got = ours.index_select(dim, cr.tensor(index))
    want = theirs.index_select(dim, torch.tensor(index))
    assert got.is_contiguous() and got.numpy().flags.c_contiguous
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    v = np.random.default_rng(7).standard_normal(got.shape)
    (g,) = cr.grad(got, ours, cr.tensor(v))
    (tg,) = torch.autograd.grad(want, theirs, torch.tensor(v))
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-12)


@pytest.mark.parametrize("index", [[4, 0, 4], [-1], [2, -5], [1, 3, 0, 2]])
def test_a_few_columns_of_many_rows_are_picked_as_torch(index: list) -> None:
    x = np.random.default_rng(8).standard_normal((2, 600, 5))
    ours, theirs = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    got, want = ours[:, :, index], theirs[:, :, index]
    assert got.numpy().flags.c_contiguous
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    v = np.random.default_rng(9).standard_normal(got.shape)
    (g,) = cr.grad(got, ours, cr.tensor(v))
    (tg,) = torch.autograd.grad(want, theirs, torch.tensor(v))
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-12)
    picked = ours.detach().index_select(-1, cr.tensor([i % 5 for i in index]))
    np.testing.assert_array_equal(picked.numpy(), want.detach().numpy())
