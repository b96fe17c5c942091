"""The products written as one primitive each (cross, and the add-products addmm, addmv, addr,
addbmm, baddbmm): PyTorch's refusals, node names and values where the catalog rows do not
reach; kron of inputs in any layout."""

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


KRON_LAYOUTS = {  # (a, b) from (2, 3) and (3, 4) arrays; True where PyTorch refuses
    "a transposed": (lambda a, b: (a.t(), b), True),
    "b transposed": (lambda a, b: (a, b.t()), True),
    "a transposed, b 1-D": (lambda a, b: (a.t(), b[0]), True),
    "both transposed": (lambda a, b: (a.t(), b.t()), False),
    "a sliced": (lambda a, b: (a[:, ::2], b), False),
    "a expanded": (lambda a, b: (a[:, :1].expand(2, 3), b), False),
}


@pytest.mark.parametrize("layout", KRON_LAYOUTS)
def test_kron_of_any_layout_is_the_kron_of_its_values(layout):
    """PyTorch's kron views its product as the result, so it refuses ("view size is not
    compatible with input tensor's size and stride") where the product's layout, which
    follows the inputs', cannot be viewed so: one input's dims out of order, not both, and
    not a slice or an expansion; the same values made contiguous it takes. chainrule takes
    every layout (the values decide the result, as for every other op): PyTorch's kron of
    the contiguous inputs."""
    pick, refused = KRON_LAYOUTS[layout]
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    ta, tb = pick(torch.tensor(a), torch.tensor(b))
    if refused:
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            torch.kron(ta, tb)
    want = torch.kron(ta.contiguous(), tb.contiguous()).numpy()
    x, y = cr.tensor(a, requires_grad=True), cr.tensor(b, requires_grad=True)
    got = cr.kron(*pick(x, y))
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-12)
    g = rng.standard_normal(want.shape)
    got.backward(cr.tensor(g))
    tx, ty = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    ta, tb = pick(tx, ty)
    torch.kron(ta.contiguous(), tb.contiguous()).backward(torch.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(y.grad.numpy(), ty.grad.numpy(), rtol=1e-12)
