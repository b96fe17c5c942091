"""Edges of the activations' fast forms, against PyTorch: sigmoid and silu at the ends of
float32 and float64, softshrink's and hardswish's gradients at NaN, one_hot's flat scatter,
leaky_relu at slope 0, the exception an integer input raises, the gradient of an in-place elu,
celu or selu."""

import contextlib

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import fastpath

EXTREMES = [-1e30, -1000.0, -100.0, -95.0, -89.0, -88.0, -20.0, -1.0, 0.0, 1.0, 20.0, 88.0]
EXTREMES += [1000.0, 1e30, np.inf]


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sigmoid_and_silu_at_the_extremes(fast: bool, dtype: str) -> None:
    values = EXTREMES + [-np.inf, np.nan]
    with fastpath.disabled() if not fast else contextlib.nullcontext():
        for name in ("sigmoid", "silu"):
            ours = getattr(cr.nn.functional, name)(cr.tensor(values, dtype=getattr(cr, dtype)))
            theirs = getattr(torch.nn.functional, name)(
                torch.tensor(values, dtype=getattr(torch, dtype))
            )
            np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-37)
            assert np.array_equal(np.isnan(ours.numpy()), np.isnan(theirs.numpy()))
            assert np.array_equal(ours.numpy() == 0, theirs.numpy() == 0)  # 0, not tiny


def test_softshrink_gradient_passes_at_nan() -> None:
    values = [-2.0, -0.5, 0.0, 0.6, np.nan, np.inf]
    a = cr.tensor(values, requires_grad=True)
    b = torch.tensor(values, requires_grad=True)
    cr.nn.functional.softshrink(a, 0.5).sum().backward()
    torch.nn.functional.softshrink(b, 0.5).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_hardswish_gradient_at_nan_is_nan(fast: bool, dtype: str) -> None:
    """NaN, as PyTorch's vector loop gives it (grad * (NaN / 3 + 1/2)); its scalar loop, for
    the last few elements, passes grad. 64 elements: whole vectors, no scalar tail."""
    values = np.tile([-4.0, -3.0, -1.5, 0.0, 2.0, 3.0, 5.0, np.nan], 8).astype(dtype)
    g = np.random.default_rng(3).standard_normal(64).astype(dtype)
    a = cr.tensor(values, requires_grad=True)
    b = torch.tensor(values, requires_grad=True)
    with fastpath.disabled() if not fast else contextlib.nullcontext():
        (ga,) = cr.autograd.grad(cr.nn.functional.hardswish(a), a, cr.tensor(g))
    (gb,) = torch.autograd.grad(torch.nn.functional.hardswish(b), b, torch.tensor(g))
    np.testing.assert_allclose(ga.numpy(), gb.numpy(), rtol=1e-6)  # NaN where PyTorch's is


@pytest.mark.parametrize("shape, classes", [((5,), 3), ((2, 3), -1), ((0,), 4), ((), 5)])
def test_one_hot_as_pytorch(shape: tuple, classes: int) -> None:
    idx = torch.randint(0, 3, shape, generator=torch.Generator().manual_seed(0))
    ours = cr.nn.functional.one_hot(cr.tensor(idx.numpy()), classes)
    theirs = torch.nn.functional.one_hot(idx, classes)
    assert ours.dtype == cr.int64 and tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


SIGNED = [-0.0, 0.0, -0.3, 0.3, -1.0, 1.0, -7.0, 7.0, np.nan, np.inf, -np.inf, -1e-30, 6.0]
RELU_FAMILY = {  # PyTorch's sign of zero here is the same in its scalar and vector loops
    "relu": lambda F, x: F.relu(x),
    "relu_": lambda F, x: F.relu(x.clone(), inplace=True),
    "relu6": lambda F, x: F.relu6(x),
    "hardtanh": lambda F, x: F.hardtanh(x),
    "hardtanh(0, 1)": lambda F, x: F.hardtanh(x, 0.0, 1.0),
    "hardtanh(-1, 0)": lambda F, x: F.hardtanh(x, -1.0, 0.0),
    "leaky_relu": lambda F, x: F.leaky_relu(x),
    "elu": lambda F, x: F.elu(x),
    "elu_": lambda F, x: F.elu(x.clone(), inplace=True),
    "celu": lambda F, x: F.celu(x),
    "selu": lambda F, x: F.selu(x),
    "softplus": lambda F, x: F.softplus(x),
    "threshold": lambda F, x: F.threshold(x, 0.0, 5.0),
    "hardshrink": lambda F, x: F.hardshrink(x),
    "clamp(min=0)": lambda F, x: x.clamp(min=0),
    "clamp(max=0)": lambda F, x: x.clamp(max=0),
    "clamp(0, 0)": lambda F, x: x.clamp(0, 0),
    "clamp_(min=0)": lambda F, x: x.clone().clamp_(min=0),
    "clamp_(max=0)": lambda F, x: x.clone().clamp_(max=0),
    "clamp_min": lambda F, x: x.clamp_min(0),
    "clamp_max": lambda F, x: x.clamp_max(0.0),
}


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("size", [0, 1, 7, 40])
def test_signed_zeros_of_the_relu_family_are_torchs(fast: bool, dtype: str, size: int) -> None:
    """relu, clamp at 0 and elu, celu, selu kept -0.0 as +0.0: PyTorch keeps it (its max
    with the bound keeps the input at a tie; expm1(-0.0) is -0.0); size 0 is a 0-d input."""
    picked = np.random.default_rng(size).choice(SIGNED, max(size, 1))
    picked[0] = -0.0
    values = picked[0] if size == 0 else picked
    with fastpath.disabled() if not fast else contextlib.nullcontext():
        for name, fn in RELU_FAMILY.items():
            ours = fn(cr.nn.functional, cr.tensor(values, dtype=getattr(cr, dtype))).numpy()
            theirs = fn(torch.nn.functional, torch.tensor(values, dtype=getattr(torch, dtype)))
            theirs = theirs.numpy()
            np.testing.assert_allclose(ours, theirs, rtol=1e-6, err_msg=name)
            assert np.array_equal(np.signbit(ours), np.signbit(theirs)), name


@pytest.mark.parametrize("fast", [True, False])
def test_signed_zeros_where_pytorchs_own_loops_differ(fast: bool) -> None:
    """PyTorch's sign of zero depends on the input's length here: its scalar loop (inputs
    shorter than a vector, and the last few elements) gives softshrink's x * 0 (-0.0 for a
    negative x inside [-lambd, lambd]) and keeps x where a tensor bound of clamp ties, its
    vector loop gives +0.0 and the bound. chainrule's is one rule: softshrink's zeros are
    +0.0, and clamp keeps x at a tie, as with number bounds."""
    x = [-0.0, -0.3, 0.0, 0.3, -0.5, 0.5] * 8  # (48,)
    with fastpath.disabled() if not fast else contextlib.nullcontext():
        for lambd in (0.0, 0.5):
            out = cr.nn.functional.softshrink(cr.tensor(x), lambd).numpy()
            assert not np.signbit(out[out == 0]).any()
        zeros = cr.zeros(48)
        for kept in (cr.tensor(x).clamp(min=zeros), cr.tensor(x).clamp(max=zeros)):
            at_zero = np.array(x) == 0
            assert np.array_equal(np.signbit(kept.numpy()[at_zero]), np.signbit(x)[at_zero])


LEAKY_ZERO = {
    "leaky_relu": lambda nn, x: nn.functional.leaky_relu(x, 0.0),
    "leaky_relu(-0.0)": lambda nn, x: nn.functional.leaky_relu(x, -0.0),
    "leaky_relu_": lambda nn, x: nn.functional.leaky_relu_(x.clone(), 0.0),
    "LeakyReLU": lambda nn, x: nn.LeakyReLU(0.0)(x),
}


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_leaky_relu_at_slope_zero_multiplies_as_torch(fast: bool, dtype: str) -> None:
    """leaky_relu with slope 0 is x * 0 below 0, as PyTorch's: -0.0 for a negative x, NaN for
    -inf and NaN; its gradient is grad * 0 there (NaN for an infinite grad), not a select."""
    values = [-2.0, -0.0, 0.0, 1.5, -np.inf, np.inf, np.nan]
    grads = [-1.0, np.inf, 1.0, 2.0, np.nan, -1.0, 1.0]
    with fastpath.disabled() if not fast else contextlib.nullcontext():
        for name, fn in LEAKY_ZERO.items():
            a = cr.tensor(values, dtype=getattr(cr, dtype), requires_grad=True)
            b = torch.tensor(values, dtype=getattr(torch, dtype), requires_grad=True)
            ours, theirs = fn(cr.nn, a), fn(torch.nn, b)
            if not name.endswith("_"):  # PyTorch's in-place node is LeakyReluBackward1
                assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__, name
            (ga,) = cr.autograd.grad(ours, a, cr.tensor(grads, dtype=a.dtype))
            (gb,) = torch.autograd.grad(theirs, b, torch.tensor(grads, dtype=b.dtype))
            for x, y in (
                (ours.detach().numpy(), theirs.detach().numpy()),
                (ga.numpy(), gb.numpy()),
            ):
                np.testing.assert_array_equal(x, y, err_msg=name)
                assert np.array_equal(np.signbit(x), np.signbit(y)), name


FLOAT_ONLY = {
    "leaky_relu": lambda F, x: F.leaky_relu(x),
    "leaky_relu_": lambda F, x: F.leaky_relu_(x),
    "elu": lambda F, x: F.elu(x),
    "softplus": lambda F, x: F.softplus(x),
    "hardshrink": lambda F, x: F.hardshrink(x),
    "softshrink": lambda F, x: F.softshrink(x),
    "tanhshrink": lambda F, x: F.tanhshrink(x),  # integers it takes, bools not
}
REFUSED = [(n, d) for n in FLOAT_ONLY if n != "tanhshrink" for d in ("int64", "uint8", "bool")]


@pytest.mark.parametrize(("name", "dtype"), REFUSED + [("tanhshrink", "bool")])
def test_a_dtype_an_activation_refuses_raises_torchs_type(name: str, dtype: str) -> None:
    """PyTorch has no kernel for it (NotImplementedError, or RuntimeError, its base, for
    tanhshrink); chainrule's error is one too, and a TypeError still, naming the op and the
    dtype."""
    fn = FLOAT_ONLY[name]
    with pytest.raises(Exception) as theirs:
        fn(torch.nn.functional, torch.tensor([1, 0, 1], dtype=getattr(torch, dtype)))
    with pytest.raises(
        TypeError, match=rf"^{name.rstrip('_')}: .*; got dtype chainrule\.{dtype}"
    ) as ours:
        fn(cr.nn.functional, cr.tensor([1, 0, 1], dtype=getattr(cr, dtype)))
    assert isinstance(ours.value, type(theirs.value)), (type(ours.value), type(theirs.value))


ELUS = [("elu", {}), ("elu", {"alpha": 0.5}), ("celu", {"alpha": 0.3}), ("selu", {})]


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize(("name", "options"), ELUS)
def test_elu_family_gradients_in_place(fast: bool, inplace: bool, name: str, options: dict) -> None:
    # an in-place call's slope is read from its result, input_scale (y + alpha scale): for
    # celu, whose input_scale is 1 / float32(alpha), exp(x / float32(alpha)) differs from
    # PyTorch's by up to 4e-7 of the value
    values = [-3.0, -1.2, -0.25, -0.0, 0.0, 1.5, -np.inf, np.inf]
    grads = []
    with fastpath.disabled() if not fast else contextlib.nullcontext():
        for lib in (cr, torch):
            x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
            y = getattr(lib.nn.functional, name)(x.clone(), inplace=inplace, **options)
            y.backward(lib.ones_like(y))
            grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-14, atol=0)
