"""vmap of max_unpool (1-D, 2-D, 3-D) and embedding_bag (scale_grad_by_freq and
include_last_offset too, mapped along any dim): one call of the primitive on the whole batch,
not one per example, with torch.func.vmap's values and per-example gradients; embedding_bag's
indices and offsets checked in every example, not the first alone."""

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
    # each example's indices counted on their own, by PyTorch's CPU kernel's rule
    "2d, by frequency": dict(mode="sum", scale_grad_by_freq=True),
    "2d, per-example weights, by frequency, padding": dict(
        mode="mean", weight=True, scale_grad_by_freq=True, padding_idx=0
    ),
    "1d, by frequency, shared offsets": dict(
        mode="mean", offsets=True, batched_offsets=False, scale_grad_by_freq=True
    ),
    "1d, per-example weights, by frequency, shared input": dict(
        mode="sum", offsets=True, weight=True, input=False, scale_grad_by_freq=True
    ),
    # each example's last offset its end (the last bag runs to its input's end all the same)
    "1d, last offset": dict(mode="sum", offsets=True, include_last_offset=True),
    "1d, per-example weights, last offset, by frequency, weighted": dict(
        mode="sum", offsets=True, weight=True, psw=True, include_last_offset=True
    )
    | dict(scale_grad_by_freq=True),
    "1d, shared offsets, last offset, max": dict(
        mode="max", offsets=True, batched_offsets=False, include_last_offset=True
    ),
    "2d, last offset (no offsets: no effect)": dict(mode="mean", include_last_offset=True),
}


def _bag_call(lib: Any, call: dict, w: Any, x: Any, offsets: Any, psw: Any) -> Any:
    return lib.nn.functional.embedding_bag(
        x, w, offsets, mode=call["mode"], per_sample_weights=psw,
        padding_idx=call.get("padding_idx"),
        scale_grad_by_freq=call.get("scale_grad_by_freq", False),
        include_last_offset=call.get("include_last_offset", False),
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


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_along_another_dim_runs_once(loops: list[str], calls: Any, mode: str) -> None:
    """Per-example tables, indices and offsets mapped along dim 1, counting by frequency and
    ending each example's bags by its last offset."""
    w = rng.standard_normal((6, 3, 4))  # 3 examples' tables (6, 4)
    x = rng.integers(0, 6, (9, 3))  # 3 examples' 9 indices
    offsets = np.array([[0, 0, 0], [4, 2, 0], [4, 5, 6], [9, 7, 8]])  # each example's 3 bags

    def loss(lib: Any) -> Any:
        def f(w_: Any, x_: Any, o_: Any) -> Any:
            out = lib.nn.functional.embedding_bag(
                x_, w_, o_, mode=mode, scale_grad_by_freq=True, include_last_offset=True
            )
            return (out**3).sum()

        return f

    got = cf.vmap(cf.grad(calls.counted(loss(cr))), 1)(*map(cr.tensor, (w, x, offsets)))
    want = tf.vmap(tf.grad(loss(torch)), 1)(*map(torch.tensor, (w, x, offsets)))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
    assert calls == [1] and loops == []


BAD_BAGS = {
    "index past the last row": (
        IndexError,
        r"^embedding: index 6 is out of range for num_embeddings 6; got input of shape \(8,\)$",
    ),
    "first offset not 0": (
        ValueError,
        r"^embedding_bag: offsets\[0\] must be 0 \(the first bag's start\); got 1$",
    ),
    "offsets decreasing": (
        ValueError,
        r"^embedding_bag: offsets must not decrease; got \[0, 5, 3\]$",
    ),
    "offset past the input": (
        ValueError,
        r"^embedding_bag: offsets\[-1\] can not be greater than input's length 8; got 9$",
    ),
}


@pytest.mark.parametrize("name", list(BAD_BAGS))
def test_embedding_bag_checks_every_example(name: str) -> None:
    w = rng.standard_normal((3, 6, 4))  # per-example tables: a bad index reads another's
    x = rng.integers(0, 6, (3, 8))
    offsets = np.array([[0, 2, 5]] * 3)
    if name == "index past the last row":
        x[1, 7] = 6
    else:
        offsets[1] = {"first offset not 0": [1, 2, 5], "offsets decreasing": [0, 5, 3]}.get(
            name, [0, 2, 9]
        )
    error, message = BAD_BAGS[name]

    def f(w_: Any, x_: Any, o_: Any) -> Any:
        return cr.nn.functional.embedding_bag(x_, w_, o_, mode="sum")

    with pytest.raises(error, match=message):
        cf.vmap(f)(cr.tensor(w), cr.tensor(x), cr.tensor(offsets))
