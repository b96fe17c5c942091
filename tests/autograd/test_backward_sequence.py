"""cr.autograd.backward with PyTorch's signature: several roots, one gradient each."""

import numpy as np
import pytest
import torch

import chainrule as cr


def _pair(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal(3), rng.standard_normal(3)


def _both(roots, grads=None, **kw):
    """The leaf's gradient after autograd.backward in each library, from the same program."""
    x0, g0 = _pair()
    out = []
    for lib in (cr, torch):
        x = lib.tensor(x0, requires_grad=True)
        made = roots(lib, x)
        given = None if grads is None else grads(lib, lib.tensor(g0))
        lib.autograd.backward(made, given, **kw)
        out.append(x.grad.detach().numpy())
    return out


def test_several_roots_each_with_its_gradient():
    got, want = _both(
        lambda lib, x: [x * 2, (x**2).sum(), x.sin()],
        lambda lib, g: [g, None, g * 3],
    )
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_one_root_and_one_gradient_as_tensors():
    got, want = _both(lambda lib, x: x.exp(), lambda lib, g: g)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_roots_that_share_a_graph_and_a_repeated_root():
    def roots(lib, x):
        y = x.tanh()
        return (y, (y * x).sum(), (y * x).sum())

    got, want = _both(roots, lambda lib, g: (g, None, lib.tensor(2.0, dtype=lib.float64)))
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.filterwarnings("ignore:Using backward:UserWarning")
def test_inputs_and_create_graph():
    for lib in (cr, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([3.0, -1.0], requires_grad=True)
        lib.autograd.backward([(x**3 * w).sum()], inputs=[x], create_graph=True)
        assert w.grad is None
        (gx,) = lib.autograd.grad(x.grad.sum(), [x])
        assert gx.tolist() == [18.0, -12.0]


def test_retain_graph_defaults_to_create_graph():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * x).sum()
    cr.autograd.backward([y], retain_graph=None, create_graph=True)
    cr.autograd.backward([y])  # the graph was kept
    with pytest.raises(RuntimeError, match="backward"):
        cr.autograd.backward([y])  # freed by the pass before


def test_no_roots_is_nothing_to_do():
    cr.autograd.backward([])
    torch.autograd.backward([])


@pytest.mark.parametrize(
    ("roots", "grads", "message"),
    [
        ("two", "one", "backward: got 2 tensors and 1 gradients"),
        ("two", "list1", "backward: got 2 tensors and 1 gradients"),
        ("two", None, "only for outputs with one element; got shape \\(3,\\)"),
        ("detached", None, "backward: element 1 of tensors does not require grad"),
    ],
)
def test_refusals_name_what_is_wrong(roots, grads, message):
    x = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    made = {"two": [x * 2, (x * x).sum()], "detached": [x.sum(), x.detach()]}[roots]
    given = {"one": cr.ones(3), "list1": [cr.ones(3)], None: None}[grads]
    with pytest.raises(RuntimeError, match=message):
        cr.autograd.backward(made, given)
