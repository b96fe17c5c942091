"""The smooth activations written as primitives (ops/smooth.py), stack and unbind as one
primitive a call, and the average pools' window sums, at their edges: half precision, 0-d,
infinities and NaN, logits far out on both sides, dtype refusals, and the node PyTorch
names."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import chainrule as cr

EDGES = np.array([-np.inf, -200.0, -30.0, -1.0, -1e-8, -0.0, 0.0, 1e-8, 1.0, 30.0, 200.0, np.inf])
CALLS = {
    "elu": lambda F, x: F.elu(x, alpha=0.5),
    "selu": lambda F, x: F.selu(x),
    "celu": lambda F, x: F.celu(x, alpha=0.7),
    "softplus": lambda F, x: F.softplus(x),
    "softplus_beta": lambda F, x: F.softplus(x, beta=2.0, threshold=5.0),
    "logsigmoid": lambda F, x: F.logsigmoid(x),
    "mish": lambda F, x: F.mish(x),
    "silu": lambda F, x: F.silu(x),
}


@pytest.mark.parametrize("name", list(CALLS))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_far_out_and_at_the_infinities_values_and_gradients_are_torchs(name, dtype) -> None:
    call = CALLS[name]
    ours = cr.tensor(EDGES.astype(dtype), requires_grad=True)
    theirs = torch.tensor(EDGES.astype(dtype), requires_grad=True)
    out, expected = call(cr.nn.functional, ours), call(torch.nn.functional, theirs)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-6)
    g = np.linspace(-1.0, 1.0, EDGES.size).astype(dtype)
    out.backward(cr.tensor(g))
    expected.backward(torch.tensor(g))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-6, atol=1e-30)


@pytest.mark.parametrize("name", list(CALLS))
def test_nan_passes_through_value_and_gradient(name) -> None:
    call = CALLS[name]
    x = cr.tensor([np.nan, 1.0], requires_grad=True)
    out = call(cr.nn.functional, x)
    out.sum().backward()
    assert np.isnan(out.detach().numpy()[0]) and np.isfinite(out.detach().numpy()[1])
    assert np.isnan(x.grad.numpy()[0])


@pytest.mark.parametrize("name", list(CALLS))
def test_forward_at_nan_and_the_infinities_warns_of_nothing_under_warnings_as_errors(
    name,
) -> None:
    call = CALLS[name]
    x = cr.tensor([np.nan, -np.inf, np.inf, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = call(cr.nn.functional, x)
    expected = call(torch.nn.functional, torch.tensor([np.nan, -np.inf, np.inf, 1.0]))
    np.testing.assert_allclose(out.detach().numpy(), expected.numpy(), rtol=1e-6)


@pytest.mark.parametrize("name", list(CALLS))
def test_half_precision_is_computed_wide_and_rounded_once_as_torch(name) -> None:
    call = CALLS[name]
    x = np.linspace(-6.0, 6.0, 41).astype(np.float16)
    out = call(cr.nn.functional, cr.tensor(x))
    expected = call(torch.nn.functional, torch.tensor(x))
    assert out.dtype == cr.float16
    np.testing.assert_allclose(
        out.numpy().astype(np.float32), expected.numpy().astype(np.float32), rtol=2e-3, atol=1e-3
    )


@pytest.mark.parametrize("name", list(CALLS))
def test_zero_dim_inputs_keep_zero_dims(name) -> None:
    x = cr.tensor(-0.75, requires_grad=True)
    out = CALLS[name](cr.nn.functional, x)
    out.backward()
    assert out.shape == () and x.grad.shape == ()


@pytest.mark.parametrize("name", list(CALLS))
def test_integers_are_refused_naming_the_op(name) -> None:
    op = name.split("_")[0]
    with pytest.raises(TypeError, match=op):
        CALLS[name](cr.nn.functional, cr.tensor([1, 2]))


@pytest.mark.parametrize("name", list(CALLS))
def test_one_node_named_as_torchs(name) -> None:
    call = CALLS[name]
    out = call(cr.nn.functional, cr.tensor([0.5, -0.5], requires_grad=True))
    expected = call(torch.nn.functional, torch.tensor([0.5, -0.5], requires_grad=True))
    assert out.grad_fn.name() == expected.grad_fn.name()


def test_elu_in_place_is_one_node_and_torchs_gradient() -> None:
    base = cr.tensor([-2.0, -0.5, 0.5, 2.0], dtype=cr.float64, requires_grad=True)
    theirs = torch.tensor([-2.0, -0.5, 0.5, 2.0], dtype=torch.float64, requires_grad=True)
    x, t = base * 1.0, theirs * 1.0
    cr.nn.functional.elu(x, alpha=0.3, inplace=True).sum().backward()
    torch.nn.functional.elu(t, alpha=0.3, inplace=True).sum().backward()
    np.testing.assert_allclose(x.detach().numpy(), t.detach().numpy())
    np.testing.assert_allclose(base.grad.numpy(), theirs.grad.numpy())


def test_stack_promotes_mixed_dtypes_and_names_every_shape_when_they_differ() -> None:
    a, b = cr.tensor([1, 2]), cr.tensor([0.5, 1.5])
    out = cr.stack([a, b], dim=1)
    assert out.dtype == cr.float32  # as torch.stack([int64, float32]) gives
    np.testing.assert_array_equal(out.numpy(), [[1.0, 0.5], [2.0, 1.5]])
    with pytest.raises(ValueError, match=r"stack: all tensors must have one shape; got shapes"):
        cr.stack([cr.zeros(2, 3), cr.zeros(3, 2)])
    with pytest.raises(IndexError, match="stack: dim 3 is out of range"):
        cr.stack([cr.zeros(2), cr.zeros(2)], dim=3)


def test_stack_and_unbind_are_torchs_nodes_and_unbind_pieces_are_views() -> None:
    x = cr.arange(12.0).reshape(3, 4).requires_grad_()
    assert cr.stack([x, x]).grad_fn.name() == "StackBackward0"
    pieces = x.unbind(1)
    assert len(pieces) == 4 and pieces[0].grad_fn.name() == "UnbindBackward0"
    assert pieces[2]._array.base is not None  # shares x's memory, as PyTorch's views do
    assert cr.zeros(0, 3).unbind(0) == ()


def test_avg_pool_of_integers_divides_toward_zero_and_of_floats_matches_torch() -> None:
    x = np.arange(-18, 18).reshape(1, 1, 6, 6)
    ours = cr.nn.functional.avg_pool2d(cr.tensor(x), 3, stride=2, padding=1)
    expected = torch.nn.functional.avg_pool2d(torch.tensor(x).double(), 3, stride=2, padding=1)
    np.testing.assert_array_equal(ours.numpy(), np.trunc(expected.numpy()))
    xf = cr.tensor(x / 7.0, requires_grad=True)
    tf = torch.tensor(x / 7.0, requires_grad=True)
    cr.nn.functional.avg_pool2d(xf, 3, 2, 1, count_include_pad=False).sum().backward()
    torch.nn.functional.avg_pool2d(tf, 3, 2, 1, count_include_pad=False).sum().backward()
    np.testing.assert_allclose(xf.grad.numpy(), tf.grad.numpy())
