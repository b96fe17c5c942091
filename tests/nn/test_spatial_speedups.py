"""The shortcuts of the spatial ops agree with their full computation: a max pool that finds
its maxima alone (no node to record) finds its winners again when asked, and the pads that
index each dim directly keep PyTorch's values and the indexing node."""

from __future__ import annotations

import numpy as np
import torch

import chainrule as cr
from chainrule.ops import conv as conv_ops

F = cr.nn.functional


def test_max_pool_without_winners_finds_them_again_for_backward() -> None:
    rng = np.random.default_rng(0)
    data = rng.standard_normal((2, 3, 5, 7)).astype(np.float32)
    data[0, 0, 1, 1] = data[0, 0, 1, 2]  # a tie: the first maximum wins
    x = cr.tensor(data, requires_grad=True)
    geometry = dict(kernel=(2, 3), stride=(1, 2), padding=((1, 1), (1, 1)), dilation=(1, 1))
    out = conv_ops.MaxPool2d.apply(x, winners=False, **geometry)
    g = rng.standard_normal(out.shape).astype(np.float32)
    out.backward(cr.tensor(g))
    t = torch.tensor(data, requires_grad=True)
    expected = torch.nn.functional.max_pool2d(t, (2, 3), (1, 2), 1)
    expected.backward(torch.tensor(g))
    np.testing.assert_array_equal(out.numpy(), expected.detach().numpy())
    # overlapping windows add their gradients in another order: equal to rounding
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-6, atol=1e-6)


def test_max_pool_maxima_alone_equal_the_full_pass() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 2, 6, 9))
    x[0, 1, 2, 3] = np.nan  # NaN wins its windows either way
    for kernel, stride, dil in (((1, 3), (1, 2), (1, 1)), ((3, 2), (2, 1), (2, 1))):
        pad = ((1, 1), (0, 1))
        full = conv_ops.pool_max(x, kernel, stride, pad, dil)[0]
        alone = conv_ops.pool_max(x, kernel, stride, pad, dil, winners=False)[0]
        np.testing.assert_array_equal(alone, full)
    ints = rng.integers(-5, 5, (1, 2, 4, 4)).astype(np.int32)
    once = ((0, 0), (0, 0))
    full = conv_ops.pool_max(ints, (1, 1), (1, 1), once, (1, 1))[0]
    alone = conv_ops.pool_max(ints, (1, 1), (1, 1), once, (1, 1), winners=False)[0]
    assert not np.shares_memory(alone, ints)  # a kernel of one copies, never a view
    np.testing.assert_array_equal(alone, full)


def test_max_pool_indices_without_grad_match_pytorch() -> None:
    x = np.random.default_rng(2).standard_normal((2, 3, 9)).astype(np.float32)
    with cr.no_grad():
        out, idx = F.max_pool1d(cr.tensor(x), 3, 2, 1, ceil_mode=True, return_indices=True)
    t_out, t_idx = torch.nn.functional.max_pool1d(
        torch.tensor(x), 3, 2, 1, ceil_mode=True, return_indices=True
    )
    np.testing.assert_array_equal(out.numpy(), t_out.numpy())
    np.testing.assert_array_equal(idx.numpy(), t_idx.numpy())


def test_reflect_replicate_and_circular_pads_name_their_node_as_torch() -> None:
    x = np.random.default_rng(3).standard_normal((2, 3, 4, 5))
    for mode in ("reflect", "replicate", "circular"):
        ours = F.pad(cr.tensor(x, requires_grad=True), (1, 2, 3, 0), mode=mode)
        theirs = torch.nn.functional.pad(
            torch.tensor(x, requires_grad=True), (1, 2, 3, 0), mode=mode
        )
        assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__  # one node, as torch's
        np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())


def test_three_d_pools_by_offset_match_pytorch() -> None:
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 5, 7, 6))
    ints = rng.integers(-50, 50, (2, 3, 5, 7, 6))
    calls = [
        lambda m, v: m.nn.functional.max_pool3d(v, (2, 3, 2), (1, 2, 2), (1, 1, 0)),
        lambda m, v: m.nn.functional.max_pool3d(v, 2, dilation=(2, 1, 1), ceil_mode=True),
        lambda m, v: m.nn.functional.adaptive_max_pool3d(v, (3, 4, 4)),  # uneven windows
        lambda m, v: m.nn.functional.avg_pool3d(v, 3, 2, 1, ceil_mode=True),
        lambda m, v: m.nn.functional.avg_pool3d(v, (1, 2, 3), divisor_override=5),
        lambda m, v: m.nn.functional.avg_pool3d(v, (1, 1, 1)),  # nothing added: a copy
    ]
    for call in calls:
        with cr.no_grad():
            ours = call(cr, cr.tensor(x))
        np.testing.assert_allclose(ours.numpy(), call(torch, torch.tensor(x)).numpy(), 1e-12)
    for call in calls[3:5]:  # integer sums, divided toward zero
        ours = call(cr, cr.tensor(ints))
        np.testing.assert_array_equal(ours.numpy(), call(torch, torch.tensor(ints)).numpy())
    source = cr.tensor(x)
    out = calls[-1](cr, source)
    assert not np.shares_memory(out.numpy(), source.numpy())


def test_affine_grid_called_again_agrees_with_pytorch() -> None:
    theta = np.random.default_rng(5).standard_normal((2, 2, 3)).astype(np.float32)
    for corners in (False, True, False):  # the second False: the kept base grid
        ours = cr.tensor(theta, requires_grad=True)
        out = F.affine_grid(ours, [2, 3, 4, 5], align_corners=corners)
        out.sum().backward()
        t = torch.tensor(theta, requires_grad=True)
        expected = torch.nn.functional.affine_grid(t, [2, 3, 4, 5], align_corners=corners)
        expected.sum().backward()
        np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), 1e-6, 1e-6)
        np.testing.assert_allclose(ours.grad.numpy(), t.grad.numpy(), 1e-5, 1e-5)
