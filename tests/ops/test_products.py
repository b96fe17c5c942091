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


ADD_PRODUCTS = [
    ("addmm", (3, 5), (3, 4), (4, 5), "AddmmBackward0"),
    ("baddbmm", (2, 3, 5), (2, 3, 4), (2, 4, 5), "BaddbmmBackward0"),
    ("addmv", (3,), (3, 4), (4,), "AddmvBackward0"),
    ("addr", (3, 4), (3,), (4,), "AddrBackward0"),
    ("addbmm", (3, 5), (2, 3, 4), (2, 4, 5), "AddbmmBackward0"),
]


@pytest.mark.parametrize("op,ts,as_,bs,node", ADD_PRODUCTS, ids=[p[0] for p in ADD_PRODUCTS])
def test_an_add_product_is_one_node_with_torchs_gradients(op, ts, as_, bs, node):
    arrays = [rng.standard_normal(s) for s in (ts, as_, bs)]
    ours = [cr.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    got = getattr(cr, op)(*(x * 1 for x in ours), beta=0.5, alpha=-2)
    want = getattr(torch, op)(*(x * 1 for x in theirs), beta=0.5, alpha=-2)
    assert got.grad_fn.name() == want.grad_fn.name() == node
    assert len(got.grad_fn.next_functions) == len(want.grad_fn.next_functions) == 3
    g = rng.standard_normal(want.shape)
    got.backward(cr.tensor(g))
    want.backward(torch.tensor(g))
    for x, y in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_addmm_allows_writing_the_added_term_but_not_a_factor_before_backward():
    t, a, b = (cr.ones(2, 2, requires_grad=True) * 1 for _ in range(3))
    out = cr.addmm(t, a, b)
    t.add_(1)  # PyTorch's node does not keep t
    out.sum().backward()
    out = cr.addmm(t.detach(), a, b)
    a.add_(1)  # b's gradient reads a
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


@pytest.mark.parametrize("op", ["addmm", "baddbmm"])
def test_an_add_product_refuses_two_dtypes_as_torch(op):
    shapes = [(2, 2), (2, 2), (2, 2)] if op == "addmm" else [(1, 2, 2)] * 3
    for lib in (torch, cr):
        t, a, b = (lib.ones(s) for s in shapes)
        with pytest.raises((RuntimeError, TypeError)):
            getattr(lib, op)(t.double(), a, b)
    with pytest.raises(TypeError, match=f"{op}: input tensors must have the same dtype"):
        getattr(cr, op)(*(cr.ones(s) for s in shapes[:2]), cr.ones(shapes[2]).double())
