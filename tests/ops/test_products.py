"""The products written as one primitive each (cross, and the add-products addmm, addmv, addr,
addbmm, baddbmm): PyTorch's refusals, node names and values where the catalog rows do not
reach."""

import warnings

import numpy as np
import pytest
import torch

import chainrule as cr

rng = np.random.default_rng(0)


@pytest.mark.parametrize(
    "call,message",
    [
        (
            lambda m: m.linalg.cross(m.ones(2, 1), m.ones(2, 3)),
            "linalg.cross: dim -1 must have size 3",
        ),
        (
            lambda m: m.cross(m.ones(2, 1, 3), m.ones(2, 3, 3), dim=1),
            "cross: dim 1 must have size 3",
        ),
        (
            lambda m: m.linalg.cross(m.ones(2, 3), m.ones(2, 3).double()),
            "linalg.cross: expects one dtype",
        ),
        (lambda m: m.cross(m.ones(3), m.ones(1, 3)), "cross: inputs must have the same number"),
    ],
)
def test_cross_refuses_as_torch(call, message):
    with pytest.raises((RuntimeError, ValueError, TypeError, IndexError)):
        call(torch)
    with pytest.raises((ValueError, TypeError)) as err:
        call(cr)
    if message:
        assert str(err.value).startswith(message)


def test_cross_default_dim_is_the_first_of_size_3_and_its_node_is_torchs():
    a, b = rng.standard_normal((2, 3, 3)), rng.standard_normal((1, 3, 3))
    x, y = cr.tensor(a, requires_grad=True), cr.tensor(b, requires_grad=True)
    tx, ty = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.cross without dim is deprecated
        want = torch.cross(tx, ty)
    got = cr.cross(x, y)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)
    assert got.grad_fn.name() == want.grad_fn.name() == "LinalgCrossBackward0"
    g = rng.standard_normal((2, 3, 3))
    got.backward(cr.tensor(g))
    want.backward(torch.tensor(g))
    np.testing.assert_allclose(y.grad.numpy(), ty.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)


def test_cross_of_integers_keeps_the_dtype():
    a, b = [[1, 2, 3]], [[4, 5, 6]]
    got = cr.linalg.cross(cr.tensor(a), cr.tensor(b))
    assert got.dtype == cr.int64
    assert got.tolist() == torch.linalg.cross(torch.tensor(a), torch.tensor(b)).tolist()
