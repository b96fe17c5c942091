"""nn.init: gains equal PyTorch's; draws are checked by their statistics (bounds, mean, std),
as the generators differ; every function works in place and returns its tensor."""

import inspect
import math

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import nn
from chainrule.nn import init

GAINS = [
    ("linear", None),
    ("conv1d", None),
    ("conv2d", None),
    ("sigmoid", None),
    ("tanh", None),
    ("relu", None),
    ("leaky_relu", None),
    ("leaky_relu", 0.2),
    ("leaky_relu", 0),
    ("selu", None),
]


@pytest.mark.parametrize("nonlinearity, param", GAINS)
def test_calculate_gain_matches_torch(nonlinearity, param):
    ours = init.calculate_gain(nonlinearity, param)
    assert ours == pytest.approx(torch.nn.init.calculate_gain(nonlinearity, param), rel=1e-15)


def test_calculate_gain_errors():
    with pytest.raises(ValueError, match="calculate_gain: unsupported nonlinearity 'swish'"):
        init.calculate_gain("swish")
    with pytest.raises(ValueError, match="negative_slope 'x' is not a valid number"):
        init.calculate_gain("leaky_relu", "x")


def draw(fn, shape, *args, **kwargs):
    t = cr.empty(*shape, dtype=cr.float64)
    array = t.numpy()
    out = fn(t, *args, **kwargs)
    assert out is t and t.numpy() is array  # in place, returns the tensor
    return t.numpy()


SHAPE = (300, 200, 3)  # fan_in 600, fan_out 900


def test_uniform_normal_constant():
    cr.manual_seed(0)
    x = draw(init.uniform_, SHAPE, -2.0, 3.0)
    assert x.min() >= -2 and x.max() <= 3 and x.min() < -1.99 and x.max() > 2.99
    assert x.mean() == pytest.approx(0.5, abs=0.02)
    x = draw(init.uniform_, SHAPE)
    assert x.min() >= 0 and x.max() <= 1  # defaults a=0, b=1
    x = draw(init.normal_, SHAPE, mean=1.5, std=0.3)
    assert x.mean() == pytest.approx(1.5, abs=0.003) and x.std() == pytest.approx(0.3, rel=0.01)
    x = draw(init.normal_, SHAPE)
    assert x.mean() == pytest.approx(0, abs=0.01) and x.std() == pytest.approx(1, rel=0.01)
    assert (draw(init.constant_, (2, 3), 0.25) == 0.25).all()
    assert (draw(init.zeros_, (2, 3)) == 0).all()
    assert (draw(init.ones_, (2, 3)) == 1).all()


@pytest.mark.parametrize("gain", [1.0, 2.0])
def test_xavier(gain):
    cr.manual_seed(1)
    fan_in, fan_out = 600, 900
    std = gain * math.sqrt(2 / (fan_in + fan_out))
    x = draw(init.xavier_uniform_, SHAPE, gain=gain)
    bound = math.sqrt(3) * std
    assert np.abs(x).max() <= bound and np.abs(x).max() > 0.99 * bound
    assert x.std() == pytest.approx(std, rel=0.01)
    x = draw(init.xavier_normal_, SHAPE, gain=gain)
    assert x.std() == pytest.approx(std, rel=0.01) and x.mean() == pytest.approx(0, abs=0.01 * std)


@pytest.mark.parametrize("mode, fan", [("fan_in", 600), ("fan_out", 900)])
@pytest.mark.parametrize(
    "a, nonlinearity", [(0, "leaky_relu"), (math.sqrt(5), "leaky_relu"), (0, "relu"), (0, "tanh")]
)
def test_kaiming(mode, fan, a, nonlinearity):
    cr.manual_seed(2)
    std = torch.nn.init.calculate_gain(nonlinearity, a) / math.sqrt(fan)
    x = draw(init.kaiming_uniform_, SHAPE, a=a, mode=mode, nonlinearity=nonlinearity)
    bound = math.sqrt(3) * std
    assert np.abs(x).max() <= bound and np.abs(x).max() > 0.99 * bound
    assert x.std() == pytest.approx(std, rel=0.01)
    x = draw(init.kaiming_normal_, SHAPE, a=a, mode=mode, nonlinearity=nonlinearity)
    assert x.std() == pytest.approx(std, rel=0.01)


def test_kaiming_defaults_and_torch_agree_on_bounds():
    # the same weight shape: our draw stays inside PyTorch's bound and nearly reaches it
    t = torch.empty(64, 32, 3, 3)
    torch.nn.init.kaiming_uniform_(t)
    ours = cr.empty(64, 32, 3, 3)
    init.kaiming_uniform_(ours)
    bound = math.sqrt(2.0) * math.sqrt(3.0 / (32 * 9))  # gain sqrt(2) for leaky_relu with a=0
    for x in (t.numpy(), ours.numpy()):
        assert np.abs(x).max() <= bound and np.abs(x).max() > 0.98 * bound


def test_init_errors_and_dtype_kept():
    with pytest.raises(
        ValueError,
        match=r"xavier_uniform_: fan in and fan out need a tensor of at least 2 dims; "
        r"got shape \(5,\)",
    ):
        init.xavier_uniform_(cr.empty(5))
    with pytest.raises(
        ValueError, match="kaiming_normal_: mode must be 'fan_in' or 'fan_out'; got 'fan_avg'"
    ):
        init.kaiming_normal_(cr.empty(3, 3), mode="fan_avg")
    t = cr.empty(4, 4)
    init.normal_(t)
    assert t.dtype == cr.float32


def test_init_uses_the_global_generator_and_works_on_parameters():
    p = nn.Parameter(cr.empty(50, 40))
    cr.manual_seed(7)
    init.xavier_normal_(p)
    first = p.numpy().copy()
    cr.manual_seed(7)
    init.xavier_normal_(p)
    np.testing.assert_array_equal(p.numpy(), first)
    assert p.requires_grad and isinstance(p, nn.Parameter)
    init.xavier_normal_(p)
    assert not np.array_equal(p.numpy(), first)


GENERATOR_INITS = [
    ("uniform_", dict(a=-0.5, b=2.0)),
    ("normal_", dict(mean=1.0, std=0.3)),
    ("xavier_uniform_", dict(gain=2.0)),
    ("xavier_normal_", dict()),
    ("kaiming_uniform_", dict(a=math.sqrt(5))),
    ("kaiming_normal_", dict(mode="fan_out", nonlinearity="relu")),
]


@pytest.mark.parametrize("name, options", GENERATOR_INITS)
def test_generator_gives_its_own_draws_and_leaves_the_global_one(name, options):
    """generator= as in torch.nn.init: the same seed gives the same values, and the global
    generator is not advanced by a draw from another."""
    ours, theirs = getattr(init, name), getattr(torch.nn.init, name)
    assert list(inspect.signature(ours).parameters) == list(inspect.signature(theirs).parameters)
    cr.manual_seed(0)
    expected_next = cr.rand(3).numpy()
    cr.manual_seed(0)
    a, b = cr.empty(40, 30), cr.empty(40, 30)
    assert ours(a, **options, generator=cr.Generator().manual_seed(5)) is a
    ours(b, **options, generator=cr.Generator().manual_seed(5))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(cr.rand(3).numpy(), expected_next)  # global untouched
    c = cr.empty(40, 30)
    ours(c, **options, generator=cr.Generator().manual_seed(6))
    assert not np.array_equal(a.numpy(), c.numpy())
    # the draws follow torch's distribution: compare the bounds and moments of many
    t = torch.empty(400, 300)
    theirs(t, **options, generator=torch.Generator().manual_seed(5))
    big = cr.empty(400, 300)
    ours(big, **options, generator=cr.Generator().manual_seed(5))
    x, y = big.numpy(), t.numpy()
    assert x.mean() == pytest.approx(y.mean(), abs=0.02 * max(1.0, y.std()))
    assert x.std() == pytest.approx(y.std(), rel=0.02)
    if "uniform" in name:
        assert x.min() >= y.min() - 0.01 * y.std() and x.max() <= y.max() + 0.01 * y.std()


def test_generator_must_be_a_generator():
    with pytest.raises(TypeError, match="normal_: generator must be a numpy.random.Generator"):
        init.normal_(cr.empty(3), generator=5)
