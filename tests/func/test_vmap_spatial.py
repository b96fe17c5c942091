"""vmap of the spatial ops with their own batching rules (nn/spatial_batching.py): grid_sample,
unfold and fold, the pixel and channel shuffles, and interpolate's resamplings run their
primitive once on the whole batch, not once per example, with torch.func.vmap's values and
per-example gradients."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest
import torch
import torch.func as tf

import chainrule as cr
import chainrule.func as cf
from chainrule.ops import conv as conv_ops
from chainrule.ops import grid as grid_ops
from chainrule.ops import resample as resample_ops
from chainrule.ops import shuffle as shuffle_ops


def _f(m: Any) -> Any:
    return m.nn.functional


# name: (the call on one example, each input's example shape, the primitive it runs)
CASES: dict[str, tuple[Any, tuple, type]] = {
    "grid_sample": (
        lambda m, x, g: _f(m).grid_sample(x, g.tanh(), align_corners=False),
        ((2, 3, 4, 5), (2, 3, 2, 2)),
        grid_ops.GridSampler2d,
    ),
    "grid_sample_3d_reflection": (
        lambda m, x, g: _f(m).grid_sample(
            x, g.tanh() * 1.4, padding_mode="reflection", align_corners=True
        ),
        ((1, 2, 3, 2, 3), (1, 2, 2, 1, 3)),
        grid_ops.GridSampler3d,
    ),
    "unfold": (
        lambda m, x: _f(m).unfold(x, (2, 2), padding=1, stride=(1, 2)),
        ((2, 3, 4, 5),),
        conv_ops.Im2Col,
    ),
    "unfold_unbatched": (
        lambda m, x: _f(m).unfold(x, 2),
        ((3, 4, 5),),
        conv_ops.Im2Col,
    ),
    "fold": (
        lambda m, x: _f(m).fold(x, (4, 5), (2, 2), padding=1, stride=(1, 2)),
        ((2, 12, 15),),
        conv_ops.Col2Im,
    ),
    "fold_unbatched": (
        lambda m, x: _f(m).fold(x, (3, 4), 2),
        ((8, 6),),
        conv_ops.Col2Im,
    ),
    "pixel_shuffle": (
        lambda m, x: _f(m).pixel_shuffle(x, 2),
        ((8, 2, 3),),
        shuffle_ops.PixelShuffle,
    ),
    "pixel_unshuffle": (
        lambda m, x: _f(m).pixel_unshuffle(x, 2),
        ((2, 2, 4, 6),),
        shuffle_ops.PixelUnshuffle,
    ),
    "channel_shuffle": (
        lambda m, x: _f(m).channel_shuffle(x, 3),
        ((2, 6, 2, 2),),
        shuffle_ops.ChannelShuffle,
    ),
    "interpolate_nearest": (
        lambda m, x: _f(m).interpolate(x, scale_factor=(1.5, 2)),
        ((2, 3, 3, 2),),
        resample_ops.UpsampleNearest2d,
    ),
    "interpolate_bilinear": (
        lambda m, x: _f(m).interpolate(x, size=(5, 3), mode="bilinear"),
        ((2, 3, 3, 4),),
        resample_ops.UpsampleBilinear2d,
    ),
}


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The primitives' forward calls, by class, in order."""
    seen: list[str] = []
    # the classes that define the forwards the cases run (a subclass may inherit its own)
    owners = {next(k for k in case[2].__mro__ if "forward" in vars(k)) for case in CASES.values()}
    for cls in owners:
        forward = cls.forward

        @functools.wraps(forward)  # the signature vmap binds the arguments by
        def counted(self, *args, _forward=forward, **kwargs):  # type: ignore[no-untyped-def]
            seen.append(type(self).primitive.__name__)  # the op, under its node's name
            return _forward(self, *args, **kwargs)

        monkeypatch.setattr(cls, "forward", counted)
    return seen


def _inputs(shapes: tuple, batch: int) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.standard_normal((batch, *shape)) for shape in shapes]


@pytest.mark.parametrize("name", list(CASES))
def test_the_primitive_runs_once_on_the_batch(calls: list[str], name: str) -> None:
    f, shapes, op = CASES[name]
    xs = _inputs(shapes, 3)
    got = cf.vmap(lambda *a: f(cr, *a))(*map(cr.tensor, xs))
    assert calls == [op.__name__]  # once, on all three examples: no per-example loop
    want = tf.vmap(lambda *a: f(torch, *a))(*map(torch.tensor, xs))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["grid_sample", "fold", "pixel_shuffle", "interpolate_nearest"])
def test_per_example_gradients_are_torchs(name: str) -> None:
    f, shapes, _ = CASES[name]
    xs = _inputs(shapes, 3)
    n = len(xs)
    got = cf.vmap(cf.grad(lambda *a: (f(cr, *a) ** 2).sum(), argnums=tuple(range(n))))(
        *map(cr.tensor, xs)
    )
    want = tf.vmap(tf.grad(lambda *a: (f(torch, *a) ** 2).sum(), argnums=tuple(range(n))))(
        *map(torch.tensor, xs)
    )
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-10, atol=1e-10)


def test_grid_sample_with_one_grid_for_every_example(calls: list[str]) -> None:
    """Only the input batched: the grid is repeated along the batch, still one call."""
    x, g = _inputs(((2, 3, 4, 5), (2, 3, 2, 2)), 4)
    g = g[0]
    f = CASES["grid_sample"][0]
    got = cf.vmap(lambda a: f(cr, a, cr.tensor(g)))(cr.tensor(x))
    want = tf.vmap(lambda a: f(torch, a, torch.tensor(g)))(torch.tensor(x))
    assert calls == ["GridSampler2d"]
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
