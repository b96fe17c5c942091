"""chainrule.autograd.functional against torch.autograd.functional: each function, with a
Tensor or a tuple in and out, create_graph, strict, vectorize and both strategies, and
PyTorch's errors."""

import numpy as np
import pytest
import torch
import torch.autograd.functional as TF

import chainrule as cr
import chainrule.autograd.functional as CF

RNG = np.random.default_rng(0)
A, B, V = RNG.standard_normal(3), RNG.standard_normal((2, 3)), RNG.standard_normal(3)


def same(ours, theirs, graph=True):
    if isinstance(theirs, (tuple, list)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs, strict=True):
            same(a, b, graph)
        return
    assert isinstance(ours, cr.Tensor)
    if graph:
        assert ours.requires_grad == theirs.requires_grad
    np.testing.assert_allclose(ours.detach()._array, theirs.detach().numpy(), rtol=1e-10)


def inputs(lib, pair):
    a, b = lib.tensor(A), lib.tensor(B)
    return (a, b) if pair else a


def two_out(x, y):
    return (x.sin() * y).sum(0), (x * x).sum()


def one_out(x):
    return x.exp() * x


def scalar2(x, y):
    return (x.exp() * y).sum() + (x**3).sum()


def scalar1(x):
    return (x.sin() * x).sum()


def both(call, graph=True):
    """call(F, lib) for PyTorch's and ours, compared (with graph, which results require
    grad too: PyTorch's vectorized paths leave a graph on some results they need not)."""
    same(call(CF, cr), call(TF, torch), graph)


@pytest.mark.parametrize("create_graph", [False, True])
def test_vjp_and_jvp(create_graph):
    kw = {"create_graph": create_graph}
    both(lambda F, L: F.vjp(two_out, inputs(L, True), (L.tensor(V), L.tensor(2.0)), **kw))
    both(lambda F, L: F.vjp(one_out, inputs(L, False), L.tensor(V), **kw))
    both(lambda F, L: F.vjp(scalar1, inputs(L, False), **kw))
    both(lambda F, L: F.jvp(two_out, inputs(L, True), (L.tensor(V), L.tensor(B)), **kw))
    both(lambda F, L: F.jvp(one_out, inputs(L, False), L.tensor(V), **kw))


@pytest.mark.parametrize("create_graph", [False, True])
def test_hvp_and_vhp(create_graph):
    kw = {"create_graph": create_graph}
    for name in ("hvp", "vhp"):
        both(
            lambda F, L, n=name: getattr(F, n)(
                scalar2, inputs(L, True), (L.tensor(V), L.tensor(B)), **kw
            )
        )
        both(lambda F, L, n=name: getattr(F, n)(scalar1, inputs(L, False), L.tensor(V), **kw))


@pytest.mark.parametrize("vectorize", [False, True])
@pytest.mark.parametrize("pair", [False, True])
def test_jacobian_both_strategies(vectorize, pair):
    f = two_out if pair else one_out
    both(lambda F, L: F.jacobian(f, inputs(L, pair), vectorize=vectorize))
    if vectorize:
        both(lambda F, L: F.jacobian(f, inputs(L, pair), vectorize=True, strategy="forward-mode"))
    both(
        lambda F, L: F.jacobian(f, inputs(L, pair), create_graph=True, vectorize=vectorize),
        graph=not vectorize,
    )


@pytest.mark.parametrize("pair", [False, True])
def test_hessian(pair):
    f = scalar2 if pair else scalar1
    both(lambda F, L: F.hessian(f, inputs(L, pair)))
    both(lambda F, L: F.hessian(f, inputs(L, pair), create_graph=True))
    both(lambda F, L: F.hessian(f, inputs(L, pair), vectorize=True))
    both(
        lambda F, L: F.hessian(
            f, inputs(L, pair), vectorize=True, outer_jacobian_strategy="forward-mode"
        ),
        graph=False,
    )


def test_create_graph_differentiates_back_to_a_requires_grad_input():
    a, ta = cr.tensor(A, requires_grad=True), torch.tensor(A, requires_grad=True)
    _, g = CF.vjp(scalar1, a, create_graph=True)
    _, tg = TF.vjp(scalar1, ta, create_graph=True)
    (gg,), (tgg,) = cr.autograd.grad(g.sum(), a), torch.autograd.grad(tg.sum(), ta)
    np.testing.assert_allclose(gg._array, tgg.numpy())


def errors(call):
    """The same exception type and message from PyTorch's and ours."""
    with pytest.raises(Exception) as theirs:
        call(TF, torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(CF, cr)
    assert str(ours.value) == str(theirs.value).replace("torch.Size", "chainrule.Size")


def test_errors_match_torch():
    errors(lambda F, L: F.vjp(one_out, inputs(L, False)))
    errors(lambda F, L: F.vjp(one_out, [L.tensor(A)], L.tensor(V)))
    errors(lambda F, L: F.vjp(one_out, inputs(L, False), L.tensor(B)))
    errors(lambda F, L: F.vjp(two_out, inputs(L, True), (L.tensor(V),)))
    errors(lambda F, L: F.jvp(one_out, inputs(L, False)))
    errors(lambda F, L: F.vjp(lambda x, y: x * 2, inputs(L, True), L.tensor(V), strict=True))
    errors(lambda F, L: F.vjp(lambda x: x.detach(), inputs(L, False), L.tensor(V), strict=True))
    errors(lambda F, L: F.hvp(one_out, inputs(L, False), L.tensor(V)))
    errors(lambda F, L: F.vhp(two_out, inputs(L, True), (L.tensor(V), L.tensor(B))))
    errors(lambda F, L: F.hessian(one_out, inputs(L, False)))
    errors(lambda F, L: F.jacobian(one_out, inputs(L, False), strategy="forward-mode"))
    errors(lambda F, L: F.jacobian(one_out, inputs(L, False), strategy="sideways"))
    errors(
        lambda F, L: F.jacobian(
            one_out, inputs(L, False), create_graph=True, vectorize=True, strategy="forward-mode"
        )
    )
    errors(lambda F, L: F.jacobian(one_out, inputs(L, False), strict=True, vectorize=True))
    errors(lambda F, L: F.jacobian(lambda x, y: x * 2, inputs(L, True), strict=True))


def test_unused_inputs_give_zeros():
    both(lambda F, L: F.vjp(lambda x, y: x * 2, inputs(L, True), L.tensor(V)))
    both(lambda F, L: F.jacobian(lambda x, y: x * 2, inputs(L, True)))
