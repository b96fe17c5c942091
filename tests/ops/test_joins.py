"""hstack, vstack, dstack and column_stack: one cat node over inputs read with more dims,
under vmap and with gradients back in each input's own shape, as PyTorch's."""

import numpy as np
import pytest
import torch

import chainrule as cr

rng = np.random.default_rng(0)


@pytest.mark.parametrize("name", ["hstack", "vstack", "dstack"])
def test_a_join_under_vmap_is_torchs(name):
    a = rng.standard_normal((4, 3))
    got = cr.func.vmap(lambda x: getattr(cr, name)([x, x * 2]))(cr.tensor(a))
    want = torch.func.vmap(lambda x: getattr(torch, name)([x, x * 2]))(torch.tensor(a))
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy())


@pytest.mark.parametrize("name", ["hstack", "vstack", "dstack", "column_stack"])
def test_a_join_is_one_cat_node_with_gradients_in_each_inputs_shape(name):
    shapes = [(), (1,), (1, 1)] if name != "hstack" else [(), (2,), (1,)]
    arrays = [rng.standard_normal(s) for s in shapes]
    ours = [cr.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    got, want = getattr(cr, name)(ours), getattr(torch, name)(theirs)
    assert got.grad_fn.name() == want.grad_fn.name() == "CatBackward0"
    assert all(p.name().endswith("AccumulateGrad") for p, _ in got.grad_fn.next_functions)
    g = rng.standard_normal(tuple(want.shape))
    got.backward(cr.tensor(g))
    want.backward(torch.tensor(g))
    for x, y in zip(ours, theirs, strict=True):
        assert tuple(x.grad.shape) == tuple(y.grad.shape)
        np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy())
