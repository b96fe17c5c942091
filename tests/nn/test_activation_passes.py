"""The activations' passes past a selection's size (fastpath/rules.py's SELECT_MIN) and with
negative slopes, against PyTorch: a selection's values bit for bit (NaN, inf and the sign of
zero included, a NaN's sign not), both modes; the smooth ones to float32 rounding."""

import contextlib

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import fastpath

SPECIAL = [-0.0, 0.0, np.nan, np.inf, -np.inf, 0.5, -0.5, 0.1, -3.0, 3.0, 4.0, 1e-30, -1e-30]
SIZE = 1536  # past SELECT_MIN, and whole vectors of PyTorch's loop (no scalar tail)


def _values(dtype: str) -> np.ndarray:
    """SPECIAL spread among random values of either sign, (SIZE,)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(SIZE) * 3
    x[rng.choice(SIZE, 8 * len(SPECIAL), replace=False)] = np.repeat(SPECIAL, 8)
    return x.astype(dtype)


SELECTIONS = {
    "leaky_relu(-0.3)": lambda F, x: F.leaky_relu(x, -0.3),
    "leaky_relu(-2.5)": lambda F, x: F.leaky_relu(x, -2.5),
    "leaky_relu(2.5)": lambda F, x: F.leaky_relu(x, 2.5),
    "leaky_relu(0.1)": lambda F, x: F.leaky_relu(x, 0.1),
    "prelu(-0.25)": lambda F, x: F.prelu(x, x.new_full((1,), -0.25)),
    "prelu(0.25)": lambda F, x: F.prelu(x, x.new_full((1,), 0.25)),
    "prelu(-inf)": lambda F, x: F.prelu(x, x.new_full((1,), -np.inf)),
    "rrelu": lambda F, x: F.rrelu(x, 0.1, 0.3),
    "threshold": lambda F, x: F.threshold(x, 0.1, -2.0),
    "hardshrink": lambda F, x: F.hardshrink(x, 0.5),
    "hardshrink(0)": lambda F, x: F.hardshrink(x, 0.0),
    "softshrink": lambda F, x: F.softshrink(x, 0.5),
    "softshrink(0)": lambda F, x: F.softshrink(x, 0.0),
    "hardsigmoid": lambda F, x: F.hardsigmoid(x),
    "hardswish": lambda F, x: F.hardswish(x),
}


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(SELECTIONS))
def test_selections_are_torchs_bit_for_bit(fast: bool, dtype: str, name: str) -> None:
    x = _values(dtype)
    fn = SELECTIONS[name]
    with fastpath.disabled() if not fast else contextlib.nullcontext():
        ours = fn(cr.nn.functional, cr.tensor(x)).numpy()
    theirs = fn(torch.nn.functional, torch.tensor(x)).numpy()
    np.testing.assert_array_equal(ours, theirs, err_msg=name)  # NaN where PyTorch's is
    number = ~np.isnan(theirs)  # a NaN's sign bit is no part of its value
    assert np.array_equal(np.signbit(ours[number]), np.signbit(theirs[number])), name


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("beta, threshold", [(1.0, 20.0), (2.0, 4.0), (0.5, 1.0)])
def test_softplus_takes_x_past_its_threshold(
    fast: bool, dtype: str, beta: float, threshold: float
) -> None:
    """x itself where beta x > threshold (random positions: no run of either side), and the
    gradient there grad itself; the rest to float rounding."""
    x = _values(dtype)
    g = np.random.default_rng(1).standard_normal(SIZE).astype(dtype)
    with fastpath.disabled() if not fast else contextlib.nullcontext():
        a = cr.tensor(x, requires_grad=True)
        out = cr.nn.functional.softplus(a, beta, threshold)
        (ga,) = cr.autograd.grad(out, a, cr.tensor(g))
    b = torch.tensor(x, requires_grad=True)
    ref = torch.nn.functional.softplus(b, beta, threshold)
    (gb,) = torch.autograd.grad(ref, b, torch.tensor(g))
    linear = x * beta > threshold
    np.testing.assert_array_equal(out.detach().numpy()[linear], x[linear])
    np.testing.assert_array_equal(ga.numpy()[linear], g[linear])
    rtol = 1e-6 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=rtol, atol=0)
    np.testing.assert_allclose(ga.numpy(), gb.numpy(), rtol=rtol, atol=1e-30)


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("slope", [-0.3, -2.5, 0.1])
def test_leaky_relu_and_prelu_gradients_of_a_negative_slope(fast: bool, slope: float) -> None:
    x = _values("float64")
    g = np.random.default_rng(2).standard_normal(SIZE)
    with fastpath.disabled() if not fast else contextlib.nullcontext():
        a = cr.tensor(x, requires_grad=True)
        w = cr.tensor([slope], dtype=cr.float64, requires_grad=True)
        out = cr.nn.functional.prelu(a, w) + cr.nn.functional.leaky_relu(a, slope)
        ga, gw = cr.autograd.grad(out, [a, w], cr.tensor(g))
    b = torch.tensor(x, requires_grad=True)
    v = torch.tensor([slope], dtype=torch.float64, requires_grad=True)
    ref = torch.nn.functional.prelu(b, v) + torch.nn.functional.leaky_relu(b, slope)
    gb, gv = torch.autograd.grad(ref, [b, v], torch.tensor(g))
    np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
    np.testing.assert_allclose(ga.numpy(), gb.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gw.numpy(), gv.numpy(), rtol=1e-9)


def test_rrelu_in_eval_saves_zeros_as_its_noise_only_where_it_records() -> None:
    x = cr.tensor(_values("float32")[:6], requires_grad=True)
    out = cr.nn.functional.rrelu(x, 0.1, 0.3)
    np.testing.assert_array_equal(out.grad_fn._saved_noise.numpy(), np.zeros(6, np.float32))
    with cr.no_grad():
        assert cr.nn.functional.rrelu(x, 0.1, 0.3).grad_fn is None


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_a_negative_slope_keeps_the_sign_of_zero_where_ties_differ(dtype: str) -> None:
    """float16's maximum gives the first operand at a tie: a selection keeps PyTorch's signs."""
    x = np.array([-0.0, 0.0, -1.5, 2.0] * 400)
    ours = cr.nn.functional.leaky_relu(cr.tensor(x).to(getattr(cr, dtype)), -0.5)
    theirs = torch.nn.functional.leaky_relu(torch.tensor(x).to(getattr(torch, dtype)), -0.5)
    ours_64, theirs_64 = ours.to(cr.float64).numpy(), theirs.to(torch.float64).numpy()
    np.testing.assert_array_equal(ours_64, theirs_64)
    assert np.array_equal(np.signbit(ours_64), np.signbit(theirs_64))


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("name", ["hardswish", "hardsigmoid", "hardshrink", "softshrink"])
def test_gradients_of_the_hard_activations_past_a_selections_size(fast: bool, name: str) -> None:
    x = _values("float32")
    g = np.random.default_rng(3).standard_normal(SIZE).astype(np.float32)
    with fastpath.disabled() if not fast else contextlib.nullcontext():
        a = cr.tensor(x, requires_grad=True)
        (ga,) = cr.autograd.grad(getattr(cr.nn.functional, name)(a), a, cr.tensor(g))
    b = torch.tensor(x, requires_grad=True)
    (gb,) = torch.autograd.grad(getattr(torch.nn.functional, name)(b), b, torch.tensor(g))
    number = ~np.isnan(x)  # at NaN PyTorch's vector and scalar loops differ (see edges)
    np.testing.assert_allclose(ga.numpy()[number], gb.numpy()[number], rtol=1e-6, atol=0)
    assert np.array_equal(ga.numpy()[number] == 0, gb.numpy()[number] == 0), name


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("eps", [None, 0.3])
def test_logits_gradient_past_a_selections_size(fast: bool, eps: float | None) -> None:
    """0 outside [eps, 1 - eps] at random places (NaN outside [0, 1] without eps)."""
    x = np.random.default_rng(4).uniform(-0.1, 1.1, SIZE).astype(np.float32)
    x[:6] = [0.0, 1.0, 0.3, 0.7, 0.5, np.float32(0.3) * 2]
    g = np.random.default_rng(5).standard_normal(SIZE).astype(np.float32)
    with fastpath.disabled() if not fast else contextlib.nullcontext():
        a = cr.tensor(x, requires_grad=True)
        (ga,) = cr.autograd.grad(a.logit(eps), a, cr.tensor(g))
    b = torch.tensor(x, requires_grad=True)
    (gb,) = torch.autograd.grad(b.logit(eps), b, torch.tensor(g))
    np.testing.assert_allclose(ga.numpy(), gb.numpy(), rtol=1e-6, atol=0)  # NaN where torch's
    assert np.array_equal(ga.numpy() == 0, gb.numpy() == 0)
