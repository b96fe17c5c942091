"""chainrule.nn.utils against torch.nn.utils: gradient clipping by norm and by value (the
returned norm and the clipped gradients), and parameters to and from one vector."""

import math

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import nn
from chainrule.nn.utils import (
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
    parameters_to_vector,
    vector_to_parameters,
)
from tests.twins import copy_into

SHAPES = [(3, 4), (5,), (2, 3, 2), ()]


def params_with_grads(dtype, scale=1.0, seed=0, none_at=None):
    """The same parameters and gradients in chainrule and in torch; ``none_at`` leaves one
    parameter without a gradient."""
    rng = np.random.default_rng(seed)
    ours, theirs = [], []
    for i, shape in enumerate(SHAPES):
        value = rng.standard_normal(shape).astype(dtype)
        grad = (scale * rng.standard_normal(shape)).astype(dtype)
        p, q = nn.Parameter(cr.tensor(value)), torch.nn.Parameter(torch.tensor(value))
        if i != none_at:
            p.grad, q.grad = cr.tensor(grad), torch.tensor(grad)
        ours.append(p)
        theirs.append(q)
    return ours, theirs


def assert_grads_equal(ours, theirs, rtol):
    for p, q in zip(ours, theirs, strict=True):
        if q.grad is None:
            assert p.grad is None
        else:
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, math.inf, "inf", 0.0, -math.inf])
@pytest.mark.parametrize("max_norm", [0.5, 1e3])
def test_clip_grad_norm_matches_torch(dtype, norm_type, max_norm):
    ours, theirs = params_with_grads(dtype, none_at=1)
    arrays = [p.grad.numpy() for p in ours if p.grad is not None]
    total = clip_grad_norm_(ours, max_norm, norm_type=norm_type)
    expected = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=norm_type)
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    assert isinstance(total, cr.Tensor) and total.shape == ()
    assert total.dtype == np.dtype(dtype)
    np.testing.assert_allclose(total.numpy(), expected.numpy(), rtol=rtol)
    assert_grads_equal(ours, theirs, rtol)
    # in place: each .grad is still the array it was
    after = [p.grad.numpy() for p in ours if p.grad is not None]
    assert all(a is b for a, b in zip(arrays, after, strict=True))


def test_clip_grad_norm_takes_a_single_tensor_a_generator_and_a_module():
    ours, theirs = params_with_grads(np.float64, scale=10.0)
    total = clip_grad_norm_(ours[0], 1.0)
    expected = torch.nn.utils.clip_grad_norm_(theirs[0], 1.0)
    np.testing.assert_allclose(total.numpy(), expected.numpy(), rtol=1e-12)
    assert_grads_equal(ours, theirs, 1e-12)
    clip_grad_norm_((p for p in ours), 2.0)
    torch.nn.utils.clip_grad_norm_((q for q in theirs), 2.0)
    assert_grads_equal(ours, theirs, 1e-12)

    torch.manual_seed(0)
    tlin = torch.nn.Linear(4, 3).double()
    lin = nn.Linear(4, 3).double()
    copy_into(lin, tlin)
    x = np.random.default_rng(1).standard_normal((6, 4))
    (lin(cr.tensor(x)) ** 2).sum().backward()
    (tlin(torch.tensor(x)) ** 2).sum().backward()
    total = clip_grad_norm_(lin.parameters(), 0.1)
    expected = torch.nn.utils.clip_grad_norm_(tlin.parameters(), 0.1)
    np.testing.assert_allclose(total.numpy(), expected.numpy(), rtol=1e-12)
    assert_grads_equal(list(lin.parameters()), list(tlin.parameters()), 1e-12)


def test_clip_grad_norm_without_gradients():
    p = nn.Parameter(cr.ones(3))
    total = clip_grad_norm_([p], 1.0)
    assert total.item() == 0.0 and total.dtype == np.float32 and p.grad is None
    with pytest.warns(UserWarning, match="empty generator"):
        clip_grad_norm_((q for q in []), 1.0)


def test_clip_grad_norm_nonfinite():
    ours, theirs = params_with_grads(np.float64)
    ours[0].grad.numpy()[0, 0] = np.inf
    theirs[0].grad[0, 0] = np.inf
    with pytest.raises(RuntimeError, match="non-finite"):
        clip_grad_norm_(ours, 1.0, error_if_nonfinite=True)
    with pytest.raises(RuntimeError, match="non-finite"):
        torch.nn.utils.clip_grad_norm_(theirs, 1.0, error_if_nonfinite=True)
    # without the check the gradients are scaled by the infinite norm, as in torch
    with np.errstate(invalid="ignore"):
        total = clip_grad_norm_(ours, 1.0)
    expected = torch.nn.utils.clip_grad_norm_(theirs, 1.0)
    assert math.isinf(total.item()) and math.isinf(expected.item())
    for p, q in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())


def test_total_norm_and_clip_with_norm_split_as_torch():
    ours, theirs = params_with_grads(np.float64, scale=3.0)
    total = get_total_norm([p.grad for p in ours], norm_type=3.0)
    expected = torch.nn.utils.get_total_norm([q.grad for q in theirs], norm_type=3.0)
    np.testing.assert_allclose(total.numpy(), expected.numpy(), rtol=1e-12)
    clip_grads_with_norm_(ours, 1.5, total)
    torch.nn.utils.clip_grads_with_norm_(theirs, 1.5, expected)
    assert_grads_equal(ours, theirs, 1e-12)
    assert get_total_norm([]).item() == 0.0


@pytest.mark.parametrize("clip_value", [0.3, 2, 1e9])
def test_clip_grad_value_matches_torch(clip_value):
    ours, theirs = params_with_grads(np.float32, scale=2.0, none_at=2)
    g0 = ours[0].grad.numpy()
    assert clip_grad_value_(ours, clip_value) is None
    torch.nn.utils.clip_grad_value_(theirs, clip_value)
    assert_grads_equal(ours, theirs, 0)
    assert ours[0].grad.numpy() is g0
    clip_grad_value_(ours[0], 0.1)
    torch.nn.utils.clip_grad_value_(theirs[0], 0.1)
    assert_grads_equal(ours, theirs, 0)


def test_parameters_to_vector_and_back():
    ours, theirs = params_with_grads(np.float64)
    vec = parameters_to_vector(ours)
    expected = torch.nn.utils.parameters_to_vector(theirs)
    np.testing.assert_array_equal(vec.numpy(), expected.detach().numpy())
    # the vector is differentiable: its gradient reaches each parameter
    w = np.arange(vec.shape[0], dtype=np.float64)
    (vec * cr.tensor(w)).sum().backward()
    (expected * torch.tensor(w)).sum().backward()
    for p, q in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())

    new = np.random.default_rng(3).standard_normal(vec.shape[0] + 2)  # extra values unused
    arrays = [p.numpy() for p in ours]
    vector_to_parameters(cr.tensor(new), ours)
    torch.nn.utils.vector_to_parameters(torch.tensor(new), theirs)
    for p, q, a in zip(ours, theirs, arrays, strict=True):
        np.testing.assert_array_equal(p.numpy(), q.detach().numpy())
        assert p.numpy() is a  # written in place


def test_vector_to_parameters_errors():
    ours, _ = params_with_grads(np.float64)
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        vector_to_parameters([1.0, 2.0], ours)
    with pytest.raises(ValueError, match="vector_to_parameters: vec holds fewer values"):
        vector_to_parameters(cr.zeros(3), ours)


def test_reached_as_in_torch():
    assert nn.utils.clip_grad_norm_ is clip_grad_norm_
    assert cr.nn.utils.parameters_to_vector is parameters_to_vector
