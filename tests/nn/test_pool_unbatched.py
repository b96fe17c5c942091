"""An unbatched input to a pool of any kind, or to max unpooling, is pooled as it is: one node
with PyTorch's name (no squeeze after an unsqueeze; a 1-D pool's own unsqueeze and squeeze, as
PyTorch's), PyTorch's values, indices and gradients of the first and second order."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr

CASES = {
    "max_pool2d": (
        lambda m, x: m.nn.functional.max_pool2d(x, 3, 2, 1, dilation=(1, 2), ceil_mode=True),
        (2, 7, 8),
    ),
    "avg_pool2d": (
        lambda m, x: m.nn.functional.avg_pool2d(
            x, 3, 2, 1, ceil_mode=True, count_include_pad=False
        ),
        (2, 7, 8),
    ),
    "max_pool1d": (lambda m, x: m.nn.functional.max_pool1d(x, 3, 2, 1), (3, 8)),
    "avg_pool1d": (
        lambda m, x: m.nn.functional.avg_pool1d(x, 3, 2, 1, count_include_pad=False),
        (3, 8),
    ),
    "max_pool3d": (
        lambda m, x: m.nn.functional.max_pool3d(x, 2, (1, 2, 1), 1, ceil_mode=True),
        (2, 4, 5, 4),
    ),
    "avg_pool3d": (
        lambda m, x: m.nn.functional.avg_pool3d(x, 3, 2, 1, count_include_pad=False),
        (2, 4, 5, 4),
    ),
    "avg_pool3d_divisor": (
        lambda m, x: m.nn.functional.avg_pool3d(x, (1, 2, 3), divisor_override=5),
        (2, 4, 5, 6),
    ),
    "adaptive_avg_pool2d": (lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, (3, 2)), (3, 7, 5)),
    "adaptive_avg_pool3d_one": (
        lambda m, x: m.nn.functional.adaptive_avg_pool3d(x, 1),
        (2, 3, 4, 5),
    ),
    "adaptive_avg_pool1d": (lambda m, x: m.nn.functional.adaptive_avg_pool1d(x, 3), (3, 7)),
    "adaptive_max_pool2d": (lambda m, x: m.nn.functional.adaptive_max_pool2d(x, (3, 2)), (3, 7, 5)),
    "adaptive_max_pool3d": (
        lambda m, x: m.nn.functional.adaptive_max_pool3d(x, (2, 3, 2)),
        (2, 5, 4, 5),
    ),
    "adaptive_max_pool1d": (lambda m, x: m.nn.functional.adaptive_max_pool1d(x, 4), (3, 7)),
    "max_unpool3d": (
        lambda m, x: m.nn.functional.max_unpool3d(
            *m.nn.functional.max_pool3d(x, 2, return_indices=True), 2
        ),
        (2, 4, 4, 6),
    ),
    "max_unpool2d": (
        lambda m, x: m.nn.functional.max_unpool2d(
            *m.nn.functional.max_pool2d(x, 2, return_indices=True), 2
        ),
        (2, 4, 6),
    ),
    "max_unpool1d": (
        lambda m, x: m.nn.functional.max_unpool1d(
            *m.nn.functional.max_pool1d(x, 2, return_indices=True), 2
        ),
        (3, 8),
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_an_unbatched_pool_is_one_node_with_torchs_values(name: str) -> None:
    f, shape = CASES[name]
    x = np.random.default_rng(0).standard_normal(shape)
    ours = cr.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    got, want = f(cr, ours), f(torch, theirs)
    assert got.grad_fn.name() == want.grad_fn.name()
    assert got.shape == tuple(want.shape)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)
    g = np.random.default_rng(1).standard_normal(tuple(want.shape))
    ours_g = cr.tensor(g, requires_grad=True)
    theirs_g = torch.tensor(g, requires_grad=True)
    (gx,) = cr.autograd.grad(got, ours, ours_g, create_graph=True)
    (tx,) = torch.autograd.grad(want, theirs, theirs_g, create_graph=True)
    np.testing.assert_allclose(gx.detach().numpy(), tx.detach().numpy(), rtol=1e-12)
    # the second order: the gradient's own vector-Jacobian product in the upstream gradient
    v = np.random.default_rng(2).standard_normal(shape)
    (ggx,) = cr.autograd.grad(gx, ours_g, cr.tensor(v))
    (tgx,) = torch.autograd.grad(tx, theirs_g, torch.tensor(v))
    np.testing.assert_allclose(ggx.numpy(), tgx.numpy(), rtol=1e-12)


@pytest.mark.parametrize(
    "name",
    ["max_pool3d", "max_pool2d", "max_pool1d", "adaptive_max_pool3d", "adaptive_max_pool1d"],
)
def test_an_unbatched_max_pools_indices_are_torchs(name: str) -> None:
    shape = {"3": (2, 5, 4, 5), "2": (2, 5, 7), "1": (3, 9)}[name[-2]]
    x = np.random.default_rng(2).standard_normal(shape)
    size = 2 if name.startswith("max_pool") else 3
    _, got = getattr(cr.nn.functional, name)(cr.tensor(x), size, return_indices=True)
    _, want = getattr(torch.nn.functional, name)(torch.tensor(x), size, return_indices=True)
    assert got.dtype == cr.int64
    np.testing.assert_array_equal(got.numpy(), want.numpy())
