"""hardswish, hardsigmoid, the shrinks and rrelu against torch at their kinks, their modules,
rrelu's random slopes, and the functional in-place forms (relu_, elu_, ...)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr
import chainrule.nn.functional as F
from tests.nn.test_functional_dtypes import DTYPES, _outcome, _same_or_refused_alike, _x
from tests.tolerances import OP, tol

KINKS = np.array([-4.0, -3.0, -2.5, -0.5, -0.3, 0.0, 0.3, 0.5, 2.5, 3.0, 4.0])


@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("hardswish", {}),
        ("hardsigmoid", {}),
        ("softshrink", {"lambd": 0.5}),
        ("hardshrink", {"lambd": 0.5}),
        ("tanhshrink", {}),
        ("rrelu", {"lower": 0.1, "upper": 0.4}),
    ],
)
def test_values_and_gradients_at_the_kinks_are_torchs(name: str, kwargs: dict) -> None:
    g = np.linspace(0.5, 1.5, KINKS.size)
    cx, tx = cr.tensor(KINKS, requires_grad=True), torch.tensor(KINKS, requires_grad=True)
    cy, ty = getattr(F, name)(cx, **kwargs), getattr(torch.nn.functional, name)(tx, **kwargs)
    np.testing.assert_allclose(cy.detach().numpy(), ty.detach().numpy(), **tol("float64", OP))
    cy.backward(cr.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(cx.grad.numpy(), tx.grad.numpy(), **tol("float64", OP))


@pytest.mark.parametrize(
    "module, args",
    [
        ("Hardswish", ()),
        ("Hardsigmoid", ()),
        ("Softshrink", (0.2,)),
        ("Hardshrink", (0.2,)),
        ("Tanhshrink", ()),
        ("RReLU", (0.1, 0.3)),
    ],
)
def test_modules_match_torch_in_evaluation(module: str, args: tuple) -> None:
    x = np.random.default_rng(0).standard_normal((2, 3, 4)) * 3
    ours, theirs = getattr(cr.nn, module)(*args).eval(), getattr(torch.nn, module)(*args).eval()
    np.testing.assert_allclose(
        ours(cr.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy(), **tol("float64", OP)
    )
    assert repr(ours) == repr(theirs)


def test_rrelu_training_draws_one_slope_in_range_per_negative_element() -> None:
    cr.manual_seed(0)
    x = cr.tensor(-np.ones((200, 50)), requires_grad=True)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    slopes = -y.detach().numpy()
    assert (slopes >= 0.1).all() and (slopes < 0.3).all()
    assert abs(slopes.mean() - 0.2) < 0.005  # uniform on [0.1, 0.3)
    y.backward(cr.ones_like(y))
    np.testing.assert_array_equal(x.grad.numpy(), slopes)  # the gradient is the slope drawn
    positive = F.rrelu(cr.ones(3), training=True)
    np.testing.assert_array_equal(positive.numpy(), np.ones(3))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("inplace", [False, True])
def test_rrelu_training_draws_torchs_slopes_bit_for_bit(dtype: str, inplace: bool) -> None:
    """A double drawn for each element x <= 0 only (NaN is not one), in memory order; the
    stream after it where PyTorch's is (torch-rng.md's rule for every draw)."""
    values = np.random.default_rng(3).normal(size=(6, 40))
    values[0, :3] = [np.nan, -0.0, 0.0]
    got = []
    for lib in (torch, cr):
        lib.manual_seed(7)
        x = lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)
        t = x * 1 if inplace else x
        y = lib.nn.functional.rrelu(t, 0.1, 0.4, training=True, inplace=inplace)
        y.sum().backward()
        got.append([y.detach().numpy(), x.grad.numpy(), lib.rand(4, dtype=lib.float64).numpy()])
    for ours, theirs in zip(*got, strict=True):
        np.testing.assert_array_equal(ours, theirs)


def test_rrelu_module_draws_in_training_and_averages_in_evaluation() -> None:
    m = cr.nn.RReLU(0.1, 0.3)
    x = cr.tensor(-np.ones(1000))
    assert len(np.unique(m(x).numpy())) > 100
    np.testing.assert_allclose(m.eval()(x).numpy(), -0.2 * np.ones(1000))


@pytest.mark.parametrize(
    "name, args",
    [
        ("relu_", ()),
        ("elu_", (0.7,)),
        ("leaky_relu_", (0.2,)),
        ("hardtanh_", (-0.5, 2.0)),
        ("threshold_", (0.1, 2.0)),
        ("celu_", (1.5,)),
        ("selu_", ()),
        ("rrelu_", (0.2, 0.2, True)),
    ],
)
def test_functional_inplace_forms_write_the_input_as_torch(name: str, args: tuple) -> None:
    x0 = np.random.default_rng(0).standard_normal((3, 4)) * 3
    g = np.random.default_rng(1).standard_normal((3, 4))
    cx, tx = cr.tensor(x0, requires_grad=True), torch.tensor(x0, requires_grad=True)
    cy, ty = cx * 2, tx * 2  # not leaves: a leaf that requires grad is refused
    cz = getattr(F, name)(cy, *args)
    tz = getattr(torch.nn.functional, name)(ty, *args)
    assert cz is cy and cy._version == 1
    np.testing.assert_allclose(cy.detach().numpy(), ty.detach().numpy(), **tol("float64", OP))
    cz.backward(cr.tensor(g))
    tz.backward(torch.tensor(g))
    np.testing.assert_allclose(cx.grad.numpy(), tx.grad.numpy(), **tol("float64", OP))


def test_inplace_hardswish_and_hardsigmoid_write_the_input() -> None:
    x0 = np.linspace(-5, 5, 11)
    for name in ("hardswish", "hardsigmoid"):
        cx, tx = cr.tensor(x0), torch.tensor(x0)
        assert getattr(F, name)(cx, inplace=True) is cx
        getattr(torch.nn.functional, name)(tx, inplace=True)
        np.testing.assert_allclose(cx.numpy(), tx.numpy(), **tol("float64", OP))


def test_errors_name_the_op() -> None:
    with pytest.raises(ValueError, match=r"softshrink: lambd must be at least 0; got -1"):
        F.softshrink(cr.ones(2), -1.0)
    with pytest.raises(ValueError, match=r"rrelu: lower must not exceed upper"):
        F.rrelu(cr.ones(2), 0.5, 0.1)
    with pytest.raises(TypeError, match=r"rrelu: not implemented for float16 when training"):
        F.rrelu(cr.ones(2, dtype=cr.float16), training=True)
    for name in ("hardswish", "hardsigmoid", "softshrink", "hardshrink", "rrelu"):
        with pytest.raises(TypeError, match=name):
            getattr(F, name)(cr.tensor([1, 2]))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "name", ["Hardswish", "Hardsigmoid", "Softshrink", "Hardshrink", "Tanhshrink", "RReLU"]
)
def test_modules_take_or_refuse_a_dtype_as_torch(name: str, dtype: str) -> None:
    ours = _outcome(lambda: getattr(cr.nn, name)().eval()(_x(cr, dtype)))  # RReLU: no draws
    theirs = _outcome(lambda: getattr(torch.nn, name)().eval()(_x(torch, dtype)))
    _same_or_refused_alike(name, ours, theirs, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("threshold, value", [(0.5, -3.0), (0.0, 0.0), (float("inf"), 1.0)])
def test_threshold_keeps_nan_and_passes_its_gradient_as_torch(
    dtype: str, threshold: float, value: float
) -> None:
    # PyTorch replaces x <= threshold, which a NaN is not: the NaN stays, and so does its
    # gradient; a mask of x > threshold would replace it
    xs = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 0.5, -1.0, 2.0], dtype=dtype)
    x, tx = cr.tensor(xs, requires_grad=True), torch.tensor(xs, requires_grad=True)
    out, tout = (
        F.threshold(x, threshold, value),
        torch.nn.functional.threshold(tx, threshold, value),
    )
    out.sum().backward()
    tout.sum().backward()
    np.testing.assert_array_equal(out.detach().numpy(), tout.detach().numpy())
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    y, ty = cr.tensor(xs.copy()), torch.tensor(xs.copy())
    F.threshold_(y, threshold, value)
    torch.nn.functional.threshold_(ty, threshold, value)
    np.testing.assert_array_equal(y.numpy(), ty.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("lambd", [0.5, 0.0, -1.0])
def test_hardshrink_keeps_nan_and_makes_positive_zeros_as_torch(dtype: str, lambd: float) -> None:
    # PyTorch zeroes -lambd <= x <= lambd, which a NaN is not: the NaN stays (its gradient is
    # 0, as PyTorch's vectorised kernel gives it: 16 elements reach it); a dropped -0.3 is +0.0
    xs = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, -0.3, 0.5, -1.0, 2.0] * 2, dtype=dtype)
    x, tx = cr.tensor(xs, requires_grad=True), torch.tensor(xs, requires_grad=True)
    out, tout = F.hardshrink(x, lambd), torch.nn.functional.hardshrink(tx, lambd)
    out.backward(cr.ones_like(out))  # no sum: inf - inf would warn
    tout.backward(torch.ones_like(tout))
    np.testing.assert_array_equal(out.detach().numpy(), tout.detach().numpy())
    np.testing.assert_array_equal(np.signbit(out.detach().numpy()), torch.signbit(tout).numpy())
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
