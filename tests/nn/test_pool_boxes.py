"""The 3-D and adaptive max pools' winners found box by box (one gather, one arg-max) agree
with PyTorch's indices and gradients, ties and all; and a pool that records nothing (its
primitive's forward on the bare array) equals the same pool recorded."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr

F = cr.nn.functional

# (name, input shape, args): overlapping, padded, dilated, ceil_mode and unbatched boxes
WINNERS = [
    ("max_pool3d", (2, 2, 4, 5, 4), ((2, 3, 2), (1, 2, 2), (1, 1, 0))),
    ("max_pool3d", (2, 5, 4, 5), (2, 1, 0, (2, 1, 1), True)),
    ("max_pool3d", (1, 3, 5, 5, 6), (3, 2, 1, 1, True)),
    ("adaptive_max_pool2d", (2, 3, 7, 5), ((3, 2),)),
    ("adaptive_max_pool3d", (2, 5, 4, 5), ((2, 3, 2),)),
]


@pytest.mark.parametrize(("name", "shape", "args"), WINNERS)
def test_winners_of_tied_boxes_match_pytorch(name: str, shape: tuple, args: tuple) -> None:
    rng = np.random.default_rng(0)
    x = rng.integers(-2, 3, shape).astype(np.float64)  # few values: ties in every box
    ours, theirs = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    got, got_idx = getattr(F, name)(ours, *args, return_indices=True)
    want, want_idx = getattr(torch.nn.functional, name)(theirs, *args, return_indices=True)
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    np.testing.assert_array_equal(got_idx.numpy(), want_idx.numpy())
    g = rng.standard_normal(got.shape)
    got.backward(cr.tensor(g))
    want.backward(torch.tensor(g))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12, atol=1e-12)
    with cr.no_grad():  # no node: the same winners, found in the forward's one pass
        _, bare_idx = getattr(F, name)(cr.tensor(x), *args, return_indices=True)
    np.testing.assert_array_equal(bare_idx.numpy(), want_idx.numpy())


def test_winners_found_again_for_backward_match_pytorch() -> None:
    x = np.random.default_rng(1).standard_normal((2, 2, 4, 5, 4))
    ours, theirs = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    got = F.max_pool3d(ours, 2, 1, 1)  # no indices asked: backward finds them
    want = torch.nn.functional.max_pool3d(theirs, 2, 1, 1)
    (got * got).sum().backward()
    (want * want).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12, atol=1e-12)


CALLS = [
    ("max_pool1d", (2, 3, 9), (3, 2, 1, 1, True)),
    ("max_pool1d", (3, 9), (2,)),
    ("max_pool2d", (2, 2, 5, 6), (3, 2, 1)),
    ("avg_pool1d", (2, 3, 8), (3, 2, 1, True, False)),
    ("avg_pool1d", (3, 8), (3,)),
    ("avg_pool3d", (2, 2, 5, 6, 5), (3, 2, 1, True, False)),
    ("adaptive_avg_pool1d", (2, 3, 7), (4,)),
    ("adaptive_avg_pool3d", (3, 5, 4, 5), ((3, None, 2),)),
    ("adaptive_max_pool2d", (2, 3, 7, 5), ((3, 2),)),
]


@pytest.mark.parametrize(("name", "shape", "args"), CALLS)
def test_a_pool_off_the_graph_equals_it_recorded(name: str, shape: tuple, args: tuple) -> None:
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    recorded = getattr(F, name)(cr.tensor(x, requires_grad=True), *args)
    with cr.no_grad():
        bare = getattr(F, name)(cr.tensor(x), *args)
    assert bare.grad_fn is None and bare.shape == recorded.shape
    np.testing.assert_array_equal(bare.numpy(), recorded.detach().numpy())
    want = getattr(torch.nn.functional, name)(torch.tensor(x), *args)
    np.testing.assert_allclose(bare.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)


def test_integer_average_off_the_graph_divides_toward_zero() -> None:
    x = np.random.default_rng(3).integers(-9, 9, (2, 3, 8))
    got = F.avg_pool1d(cr.tensor(x), 3, 2, 1, count_include_pad=False)
    want = torch.nn.functional.avg_pool1d(torch.tensor(x), 3, 2, 1, count_include_pad=False)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_anomaly_mode_still_sees_a_pool_make_inf() -> None:
    x = cr.full((1, 1, 4), 3e38)  # float32: each window's sum overflows
    with np.errstate(over="ignore"), cr.no_grad(), cr.detect_anomaly():
        with pytest.raises(RuntimeError, match="(?i)avgpool"):
            cr.nn.functional.avg_pool1d(x, 2)
