"""vmap of the pools of ops/pool.py (3-D, adaptive) and of the average pools weighted by an
array of divisors: one call of the primitive on the examples folded into the batch dim, not
one per example, with torch.func.vmap's values and per-example gradients; the max pools'
return_indices found for the whole batch at once, and max_unpool's indices checked in every
example, not the first alone."""

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
from chainrule.ops import pool as pool_ops

rng = np.random.default_rng(0)
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


# the max pools with return_indices: max or adaptive, spatial dims, an example's leading dims
# ((N, C) or unbatched (C,)) and the dim vmap maps
WITH_INDICES = [
    (kind, spatial, examples, dim)
    for kind in ("max", "adaptive")
    for spatial in (1, 2, 3)
    for examples in ((2, 3), (3,))
    for dim in (0, 1)
]


def _pool(kind: str, spatial: int) -> Any:
    if kind == "max":
        return lambda m, a: getattr(m.nn.functional, f"max_pool{spatial}d")(
            a, 2, 1, 1, return_indices=True
        )
    return lambda m, a: getattr(m.nn.functional, f"adaptive_max_pool{spatial}d")(
        a, 3, return_indices=True
    )


@pytest.mark.parametrize(
    "kind, spatial, examples, dim",
    WITH_INDICES,
    ids=[f"{k}{s}d-{len(e) + s}d-dim{d}" for k, s, e, d in WITH_INDICES],
)
def test_max_pool_indices_run_once_on_the_batch(
    loops: list[str], calls: Any, kind: str, spatial: int, examples: tuple, dim: int
) -> None:
    shape = [*examples, *(5,) * spatial]
    shape.insert(dim, 4)
    x = rng.standard_normal(shape)
    pool = _pool(kind, spatial)

    def loss(lib: Any) -> Any:
        def f(a: Any) -> Any:
            out, idx = pool(lib, a)
            return (out**2).sum(), idx  # the indices as the gradient's aux

        return f

    out, idx = cf.vmap(calls.counted(lambda a: pool(cr, a)), dim)(cr.tensor(x))
    want, want_idx = tf.vmap(lambda a: pool(torch, a), dim)(torch.tensor(x))
    np.testing.assert_array_equal(out.numpy(), want.numpy())
    np.testing.assert_array_equal(idx.numpy(), want_idx.numpy())
    assert idx.dtype == cr.int64
    grads, aux = cf.vmap(cf.grad(calls.counted(loss(cr)), has_aux=True), dim)(cr.tensor(x))
    expected, _ = tf.vmap(tf.grad(loss(torch), has_aux=True), dim)(torch.tensor(x))
    np.testing.assert_allclose(grads.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(aux.numpy(), want_idx.numpy())
    assert calls == [1, 1] and loops == []


def test_max_pool_indices_in_nested_vmaps_and_through_max_unpool(
    loops: list[str], calls: Any
) -> None:
    """The indices of two levels, each example's own, put the values back by max_unpool."""
    x = rng.standard_normal((2, 3, 4, 6, 6))  # two levels of examples (4, 6, 6)

    def f(lib: Any) -> Any:
        def round_trip(a: Any) -> Any:
            out, idx = lib.nn.functional.max_pool2d(a, 2, return_indices=True)
            return lib.nn.functional.max_unpool2d(out * 3, idx, 2)

        return round_trip

    got = cf.vmap(cf.vmap(calls.counted(f(cr))))(cr.tensor(x))
    want = tf.vmap(tf.vmap(f(torch)))(torch.tensor(x))
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    grads = cf.vmap(cf.vmap(cf.grad(lambda a: (f(cr)(a) ** 2).sum())))(cr.tensor(x))
    expected = tf.vmap(tf.vmap(tf.grad(lambda a: (f(torch)(a) ** 2).sum())))(torch.tensor(x))
    np.testing.assert_allclose(grads.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)
    assert calls == [1] and loops == []


@pytest.mark.parametrize("bad", [-1, 16], ids=["negative", "past the plane"])
def test_max_unpool_checks_every_example(bad: int) -> None:
    x = rng.standard_normal((3, 2, 2, 2))
    idx = np.tile(np.array([[0, 3], [8, 15]]), (3, 2, 1, 1))  # places in a 4 x 4 plane
    idx[1, 1, 0, 1] = bad  # the middle example's (it would land in another plane)
    unpool = cf.vmap(lambda v, i: cr.nn.functional.max_unpool2d(v, i, 2))
    with pytest.raises(
        ValueError,
        match=rf"^max_unpool2d: indices must lie in \[0, 16\) for the output size \(4, 4\); got "
        rf"indices from {min(bad, 0)} to {max(bad, 15)}$",
    ):
        unpool(cr.tensor(x), cr.tensor(idx))
