"""vmap of group_norm (nn/normalization.py's rule for NativeGroupNorm): the batch folded into the
samples, one call, against torch.func.vmap; per-example weights (vmap over grad's) batched
too; layer_norm likewise."""

import numpy as np
import pytest
import torch
import torch.func as tf

import chainrule as cr
import chainrule.func as cf
from chainrule import batching

RNG = np.random.default_rng(0)


def _close(ours, theirs, tol=1e-10):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)


def _counted(monkeypatch):
    """The ops that reach the per-example loop, recorded (and still run)."""
    looped, loop = [], batching.loop

    def counted(cls, *rest):
        looped.append(cls.__name__)
        return loop(cls, *rest)

    monkeypatch.setattr(batching, "loop", counted)
    return looped


def test_group_norm_is_batched_by_the_rule_not_the_loop(monkeypatch):
    looped = _counted(monkeypatch)
    x, w, b = RNG.standard_normal((5, 2, 4, 3, 2)), RNG.standard_normal(4), RNG.standard_normal(4)

    def f(lib):
        return lambda xi: lib.nn.functional.group_norm(xi, 2, lib.tensor(w), lib.tensor(b))

    got = cf.vmap(f(cr))(cr.tensor(x))
    assert looped == []
    _close(got, tf.vmap(f(torch))(torch.tensor(x)))


def test_per_sample_gradients_through_group_norm_equal_torch_func(monkeypatch):
    looped = _counted(monkeypatch)
    x, w, b = RNG.standard_normal((3, 2, 6, 4)), RNG.standard_normal(6), RNG.standard_normal(6)
    up = RNG.standard_normal((2, 6, 4))

    def loss(lib):
        def one(weight, bias, xi):
            y = lib.nn.functional.group_norm(xi, 3, weight, bias, eps=1e-3)
            return (y * lib.tensor(up)).sum()

        return one

    got = cf.vmap(cf.grad(loss(cr), argnums=(0, 1)), in_dims=(None, None, 0))(
        cr.tensor(w), cr.tensor(b), cr.tensor(x)
    )
    want = tf.vmap(tf.grad(loss(torch), argnums=(0, 1)), in_dims=(None, None, 0))(
        torch.tensor(w), torch.tensor(b), torch.tensor(x)
    )
    assert "NativeGroupNorm" not in looped
    for ours, theirs in zip(got, want, strict=True):
        _close(ours, theirs)


@pytest.mark.parametrize("with_bias", [True, False])
def test_per_example_weights_are_batched_too(monkeypatch, with_bias):
    looped = _counted(monkeypatch)
    x, w, b = RNG.standard_normal((3, 2, 4, 3)), RNG.standard_normal((3, 4)), RNG.standard_normal(4)

    def f(lib):
        bias = lib.tensor(b) if with_bias else None
        return lambda xi, wi: lib.nn.functional.group_norm(xi, 2, wi, bias)

    got = cf.vmap(f(cr))(cr.tensor(x), cr.tensor(w))
    assert looped == []
    _close(got, tf.vmap(f(torch))(torch.tensor(x), torch.tensor(w)))


def test_per_sample_gradients_through_layer_norm_equal_torch_func(monkeypatch):
    looped = _counted(monkeypatch)
    x, w, b = RNG.standard_normal((4, 5, 2, 3)), RNG.standard_normal((2, 3)), RNG.standard_normal(3)

    def loss(lib):
        def one(weight, xi):
            y = lib.nn.functional.layer_norm(xi, (2, 3), weight, None)
            return (y * y.tanh()).sum() + lib.nn.functional.layer_norm(
                xi, (3,), None, lib.tensor(b)
            ).exp().sum()

        return one

    got = cf.vmap(cf.grad(loss(cr)), in_dims=(None, 0))(cr.tensor(w), cr.tensor(x))
    want = tf.vmap(tf.grad(loss(torch)), in_dims=(None, 0))(torch.tensor(w), torch.tensor(x))
    assert "LayerNorm" not in looped
    _close(got, want)


def test_one_input_under_per_example_weights(monkeypatch):
    """x not batched, weight batched: x repeated for each example, still one call."""
    looped = _counted(monkeypatch)
    x, w = RNG.standard_normal((2, 4, 3)), RNG.standard_normal((5, 3))

    def f(lib):
        return lambda xi, wi: lib.nn.functional.layer_norm(xi, (3,), wi)

    got = cf.vmap(f(cr), in_dims=(None, 0))(cr.tensor(x), cr.tensor(w))
    assert looped == []
    _close(got, tf.vmap(f(torch), in_dims=(None, 0))(torch.tensor(x), torch.tensor(w)))
