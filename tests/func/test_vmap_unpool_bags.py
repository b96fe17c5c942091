"""vmap of max_unpool (1-D, 2-D, 3-D) and embedding_bag: one call of the primitive on the
whole batch, not one per example, with torch.func.vmap's values and per-example gradients."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest
import torch
import torch.func as tf

import chainrule as cr
import chainrule.func as cf
from chainrule.ops import bags as bag_ops
from chainrule.ops import pool as pool_ops

# torch.func.vmap runs both ops per example, and says so
pytestmark = pytest.mark.filterwarnings("ignore:There is a performance drop:UserWarning")
rng = np.random.default_rng(0)


def _counted(monkeypatch: pytest.MonkeyPatch, cls: Any) -> list[tuple]:
    """The shapes of the first input each forward of ``cls`` runs on, in order."""
    seen: list[tuple] = []
    forward = cls.forward

    @functools.wraps(forward)  # the signature vmap binds the arguments by
    def counted(self, x, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(x.shape)
        return forward(self, x, *args, **kwargs)

    monkeypatch.setattr(cls, "forward", counted)
    return seen


def _pooled(spatial: int, batch: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Values and max_pool's indices (kernel 2), for ``batch`` examples' shapes (B, ...)."""
    x = torch.tensor(rng.standard_normal((*batch, *(4,) * spatial)))
    flat = x.reshape(-1, *x.shape[len(batch) - 1 :]) if len(batch) > 2 else x
    pool = getattr(torch.nn.functional, f"max_pool{spatial}d")
    values, idx = pool(flat, 2, return_indices=True)
    shape = (*batch, *values.shape[-spatial:])
    return values.reshape(shape).numpy(), idx.reshape(shape).numpy()


UNPOOLS = [(s, batch) for s in (1, 2, 3) for batch in ((3, 2, 2), (3, 2))]


@pytest.mark.parametrize("in_dims", [(0, 0), (0, None)])
@pytest.mark.parametrize("spatial, batch", UNPOOLS, ids=[f"{s}d{len(b)}" for s, b in UNPOOLS])
def test_max_unpool_runs_once_on_the_batch(
    monkeypatch: pytest.MonkeyPatch, spatial: int, batch: tuple, in_dims: tuple
) -> None:
    values, idx = _pooled(spatial, batch)
    if in_dims[1] is None:
        idx = idx[0]
    name = f"max_unpool{spatial}d"
    kind = pool_ops.MaxUnpool3d if spatial == 3 else pool_ops.MaxUnpool2d
    shapes = _counted(monkeypatch, kind)

    def f(m: Any, v: Any, i: Any) -> Any:
        return getattr(m.nn.functional, name)(v * 2, i, 2)

    got = cf.vmap(lambda v, i: f(cr, v, i), in_dims)(cr.tensor(values), cr.tensor(idx))
    want = tf.vmap(lambda v, i: f(torch, v, i), in_dims)(torch.tensor(values), torch.tensor(idx))
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    per = 3 * batch[1] if len(batch) == 3 else 3  # B * N examples' planes, or the B examples
    assert [s[0] for s in shapes] == [per]  # one call on the whole batch
    shapes.clear()
    grads = cf.vmap(cf.grad(lambda v, i: (f(cr, v, i) ** 2).sum()), in_dims)(
        cr.tensor(values), cr.tensor(idx)
    )
    expected = tf.vmap(tf.grad(lambda v, i: (f(torch, v, i) ** 2).sum()), in_dims)(
        torch.tensor(values), torch.tensor(idx)
    )
    np.testing.assert_allclose(grads.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)
    assert [s[0] for s in shapes] == [per]


# embedding_bag: (input, offsets) of each example and which arguments vmap maps over
BAG_INPUT_2D = rng.integers(0, 6, (3, 4, 5))  # 3 examples of 4 bags of 5
BAG_INPUT_1D = rng.integers(0, 6, (3, 10))  # 3 examples of 10 indices in runs
BAG_OFFSETS = np.array([[0, 3, 3, 7], [0, 0, 5, 9], [0, 2, 4, 6]])
BAGS = {
    "2d, sum": dict(mode="sum"),
    "2d, mean, padding": dict(mode="mean", padding_idx=2),
    "2d, max": dict(mode="max"),
    "2d, weighted": dict(mode="sum", psw=True),
    "2d, per-example weights": dict(mode="mean", weight=True),
    "2d, per-example weights, max": dict(mode="max", weight=True),
    "2d, per-example weights, weighted, shared input": dict(
        mode="sum", weight=True, psw=True, input=False
    ),
    "1d, offsets": dict(mode="sum", offsets=True),
    "1d, shared offsets, max": dict(mode="max", offsets=True, batched_offsets=False),
    "1d, per-example weights and offsets, weighted": dict(
        mode="sum", offsets=True, weight=True, psw=True
    ),
}


def _bag_call(lib: Any, call: dict, w: Any, x: Any, offsets: Any, psw: Any) -> Any:
    return lib.nn.functional.embedding_bag(
        x, w, offsets, mode=call["mode"], per_sample_weights=psw,
        padding_idx=call.get("padding_idx"),
    )  # fmt: skip


@pytest.mark.parametrize("name", list(BAGS))
def test_embedding_bag_runs_once_on_the_batch(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    call = BAGS[name]
    x = BAG_INPUT_1D if call.get("offsets") else BAG_INPUT_2D
    offsets = BAG_OFFSETS if call.get("batched_offsets", True) else BAG_OFFSETS[0]
    w = rng.standard_normal((3, 6, 4) if call.get("weight") else (6, 4))
    psw = rng.standard_normal(x.shape)
    if not call.get("input", True):
        x = x[0]
    mapped = (
        0 if call.get("weight") else None,
        0 if call.get("input", True) else None,
        (0 if call.get("batched_offsets", True) else None) if call.get("offsets") else None,
        0 if call.get("psw") else None,
    )
    args = [w, x, offsets if call.get("offsets") else None, psw if call.get("psw") else None]
    shapes = _counted(monkeypatch, bag_ops.EmbeddingBag)

    def run(lib: Any, transform: Any, f: Any) -> Any:
        given = [None if a is None else lib.tensor(a) for a in args]
        return transform.vmap(f, in_dims=mapped)(*given)

    def f_of(lib: Any) -> Any:
        return lambda w_, x_, o_, p_: _bag_call(lib, call, w_, x_, o_, p_)

    got = run(cr, cf, f_of(cr))
    want = run(torch, tf, f_of(torch))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
    assert len(shapes) == 1  # one call on the whole batch
    shapes.clear()

    def loss_of(lib: Any) -> Any:
        return lambda w_, x_, o_, p_: (f_of(lib)(w_, x_, o_, p_) ** 2).sum()

    argnums = (0, 3) if call.get("psw") else 0
    grads = run(cr, cf, cf.grad(loss_of(cr), argnums=argnums))
    expected = run(torch, tf, tf.grad(loss_of(torch), argnums=argnums))
    for g, e in zip(
        grads if call.get("psw") else [grads],
        expected if call.get("psw") else [expected],
        strict=True,
    ):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-12, atol=1e-12)
    assert len(shapes) == 1


@pytest.mark.parametrize("call", [dict(scale_grad_by_freq=True), dict(include_last_offset=True)])
def test_embedding_bag_counting_across_examples_runs_per_example(call: dict) -> None:
    """scale_grad_by_freq counts an example's indices, include_last_offset ends its last bag:
    once per example, with torch.func.vmap's per-example gradients."""
    offsets = BAG_OFFSETS[:, :3] if call.get("include_last_offset") else BAG_OFFSETS
    w = rng.standard_normal((6, 4))

    def loss(lib: Any) -> Any:
        def f(w_: Any, x_: Any, o_: Any) -> Any:
            out = lib.nn.functional.embedding_bag(x_, w_, o_, mode="mean", **call)
            return (out**2).sum()

        return f

    mapped = (None, 0, 0)
    got = cf.vmap(cf.grad(loss(cr)), in_dims=mapped)(*map(cr.tensor, (w, BAG_INPUT_1D, offsets)))
    want = tf.vmap(tf.grad(loss(torch)), in_dims=mapped)(
        *map(torch.tensor, (w, BAG_INPUT_1D, offsets))
    )
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
