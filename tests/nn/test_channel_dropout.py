"""dropout1d/2d/3d, alpha_dropout and feature_alpha_dropout: whole channels dropped, the
kept ones scaled, alpha dropout's affine map as torch's formula gives it for the same mask,
the masks drawn by bernoulli_ over the shapes PyTorch's implementation uses, the modules."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

import chainrule as cr
import chainrule.nn.functional as F
from tests.tolerances import OP, tol

ALPHA = 1.7580993408473766


@pytest.mark.parametrize(
    "name, shape",
    [
        ("dropout1d", (4, 6, 5)),
        ("dropout1d", (6, 5)),
        ("dropout2d", (4, 6, 3, 2)),
        ("dropout3d", (2, 6, 2, 3, 2)),
        ("dropout3d", (6, 2, 3, 2)),
    ],
)
def test_channel_dropout_zeroes_whole_channels_and_scales_the_rest(name: str, shape: tuple) -> None:
    cr.manual_seed(0)
    x = cr.tensor(np.random.default_rng(0).uniform(1, 2, shape), requires_grad=True)
    y = getattr(F, name)(x, 0.25)
    batched = len(shape) == {"dropout1d": 3, "dropout2d": 4, "dropout3d": 5}[name]
    ratio = (y.detach().numpy() / x.detach().numpy()).reshape(
        shape[:2] + (-1,) if batched else shape[:1] + (-1,)
    )
    channel = ratio[..., :1]
    np.testing.assert_allclose(ratio, np.broadcast_to(channel, ratio.shape))
    assert set(np.unique(np.round(channel, 12))) <= {0.0, round(1 / 0.75, 12)}
    y.backward(cr.ones_like(y))
    np.testing.assert_allclose(x.grad.numpy(), ratio.reshape(shape))


def test_the_mask_is_bernoulli_over_n_c_1_1_as_pytorch_draws_it() -> None:
    x = cr.ones(3, 4, 5, 5)
    cr.manual_seed(7)
    y = F.dropout2d(x, 0.5)
    cr.manual_seed(7)
    mask = cr.empty(3, 4, 1, 1).bernoulli_(0.5)
    np.testing.assert_array_equal(y.numpy(), np.broadcast_to(mask.numpy() * 2.0, (3, 4, 5, 5)))


@pytest.mark.parametrize("feature", [False, True])
def test_alpha_dropout_is_torchs_formula_for_its_mask(feature: bool) -> None:
    p = 0.3
    cr.manual_seed(1)
    x = cr.tensor(np.random.default_rng(0).standard_normal((4, 3, 5)), requires_grad=True)
    fn = F.feature_alpha_dropout if feature else F.alpha_dropout
    y = fn(x, p, training=True)
    cr.manual_seed(1)
    shape = (4, 3, 1) if feature else (4, 3, 5)
    noise = cr.empty(*shape, dtype=cr.float64).bernoulli_(1 - p).numpy()
    a = 1 / math.sqrt((ALPHA**2 * p + 1) * (1 - p))
    b = (noise - 1) * ALPHA * a + ALPHA * a * p
    want = x.detach().numpy() * noise * a + b
    np.testing.assert_allclose(y.detach().numpy(), want, **tol("float64", OP))
    y.backward(cr.ones_like(y))
    np.testing.assert_allclose(x.grad.numpy(), np.broadcast_to(noise * a, (4, 3, 5)))


def test_alpha_dropout_keeps_mean_and_variance() -> None:
    cr.manual_seed(0)
    y = F.alpha_dropout(cr.randn(200000), 0.2, training=True).numpy()
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02


@pytest.mark.parametrize(
    "name", ["dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"]
)
def test_identity_unless_training_and_all_zero_at_p_1(name: str) -> None:
    shape = (2, 3, 4) if name in ("dropout1d", "dropout2d") else (2, 3, 2, 2, 2)
    x = cr.randn(*shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert getattr(F, name)(x, 0.5, training=False) is x
        assert getattr(F, name)(x, 0.0, training=True) is x
        np.testing.assert_array_equal(getattr(F, name)(x, 1.0, training=True).numpy(), 0)
        torch_y = getattr(torch.nn.functional, name)(torch.tensor(x.numpy()), 1.0, training=True)
    np.testing.assert_array_equal(torch_y.numpy(), 0)


def test_inplace_writes_the_input() -> None:
    cr.manual_seed(0)
    x = cr.ones(4, 6, 3)
    assert F.dropout1d(x, 0.5, inplace=True) is x and x._version == 1
    assert set(np.unique(x.numpy())) <= {0.0, 2.0}
    unbatched = cr.ones(6, 3)
    assert F.dropout1d(unbatched, 0.5, inplace=True) is unbatched
    assert (unbatched.numpy() == unbatched.numpy()[:, :1]).all()


def test_errors_and_warnings_name_the_op() -> None:
    with pytest.raises(ValueError, match=r"dropout1d: dropout probability has to be between"):
        F.dropout1d(cr.ones(2, 3), 1.5)
    with pytest.raises(ValueError, match=r"dropout1d: expected an input of 2 dims .* got shape"):
        F.dropout1d(cr.ones(2, 3, 4, 5))
    with pytest.raises(ValueError, match=r"Dropout2d: dropout probability"):
        cr.nn.Dropout2d(-0.1)
    with pytest.raises(TypeError, match=r"dropout2d: needs a floating-point tensor"):
        F.dropout2d(cr.ones(2, 3, 4, 4, dtype=cr.int64), 0.5)
    with pytest.warns(UserWarning, match=r"dropout2d: received a 3D input"):
        F.dropout2d(cr.ones(2, 3, 4))
    with pytest.warns(UserWarning, match=r"dropout3d: received a 3-D input"):
        F.dropout3d(cr.ones(2, 3, 4))


@pytest.mark.parametrize(
    "name", ["Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]
)
def test_modules_follow_training_mode_and_print_as_torch(name: str) -> None:
    ours, theirs = getattr(cr.nn, name)(0.4), getattr(torch.nn, name)(0.4)
    assert repr(ours) == repr(theirs)
    assert ours.state_dict() == {}
    x = cr.randn(*{"Dropout1d": (2, 3, 4), "Dropout3d": (2, 3, 4, 4, 4)}.get(name, (2, 3, 4, 4)))
    assert ours.eval()(x) is x
    ours.train()
    cr.manual_seed(0)
    assert (ours(x).numpy() != x.numpy()).any()
