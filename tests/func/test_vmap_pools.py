"""vmap of the pools of ops/pool.py (3-D, adaptive) and of the average pools weighted by an
array of divisors: one call of the primitive on the examples folded into the batch dim, not
one per example, with torch.func.vmap's values and per-example gradients."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch
import torch.func as tf

import chainrule as cr
import chainrule.func as cf
from chainrule.ops import conv as conv_ops
from chainrule.ops import pool as pool_ops

POOLS = {
    "max_pool3d": lambda m, a: m.nn.functional.max_pool3d(a, 2, 1, 1),
    "max_pool3d_unbatched": lambda m, a: m.nn.functional.max_pool3d(a[0], 2, ceil_mode=True),
    "avg_pool3d": lambda m, a: m.nn.functional.avg_pool3d(
        a, 3, 2, 1, ceil_mode=True, count_include_pad=False
    ),
    "adaptive_avg_pool3d": lambda m, a: m.nn.functional.adaptive_avg_pool3d(a, (2, 3, 2)),
    "adaptive_avg_pool2d": lambda m, a: m.nn.functional.adaptive_avg_pool2d(a[:, :, 0], (3, 2)),
    "adaptive_max_pool3d": lambda m, a: m.nn.functional.adaptive_max_pool3d(a, (2, 3, 2)),
    "adaptive_max_pool1d": lambda m, a: m.nn.functional.adaptive_max_pool1d(a[:, :, 0, 0], 3),
    "avg_pool1d_each_windows_divisor": lambda m, a: m.nn.functional.avg_pool1d(
        a[:, :, 0, 0], 3, 2, 1, ceil_mode=True, count_include_pad=False
    ),
}


@pytest.fixture
def shapes(monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    """The shapes every pool primitive's forward runs on, in order."""
    seen: list[tuple] = []
    for cls in (pool_ops.AvgPool3d, pool_ops._WindowMax, pool_ops._AxisMaps, conv_ops.AvgPool2d):
        forward = cls.forward

        @functools.wraps(forward)  # the signature vmap binds the arguments by
        def counted(self, x, *args, _forward=forward, **kwargs):  # type: ignore[no-untyped-def]
            seen.append(x.shape)
            return _forward(self, x, *args, **kwargs)

        monkeypatch.setattr(cls, "forward", counted)
    return seen


@pytest.mark.parametrize("name", list(POOLS))
def test_a_pool_runs_once_on_the_folded_batch(shapes: list[tuple], name: str) -> None:
    f = POOLS[name]
    x = np.random.default_rng(0).standard_normal((3, 2, 2, 4, 5, 4))
    got = cf.vmap(lambda a: f(cr, a))(cr.tensor(x))
    assert len(shapes) == 1 and shapes[0][0] in (3, 6)  # B * N examples' planes in one call
    want = tf.vmap(lambda a: f(torch, a))(torch.tensor(x))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
    shapes.clear()
    grads = cf.vmap(cf.grad(lambda a: (f(cr, a) ** 2).sum()))(cr.tensor(x))
    assert shapes[0][0] in (3, 6)
    expected = tf.vmap(tf.grad(lambda a: (f(torch, a) ** 2).sum()))(torch.tensor(x))
    np.testing.assert_allclose(grads.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)
