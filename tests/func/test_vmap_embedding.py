"""vmap of embedding (scale_grad_by_freq and padding_idx too, one table or each example's
own, mapped along any dim): one lookup of the whole batch, never once per example, with
torch.func.vmap's values and per-example gradients; the indices of every example checked,
not the first alone."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import torch.func as tf

import chainrule as cr
import chainrule.func as cf

rng = np.random.default_rng(0)


# embedding: its options, and which of (weight, input) vmap maps over along which dim
LOOKUPS = [
    (options, dims)
    for options in (
        {},
        {"scale_grad_by_freq": True},
        {"padding_idx": 2},
        {"scale_grad_by_freq": True, "padding_idx": -1},
    )
    for dims in ((None, 0), (0, 0), (0, None), (1, 1))
]


def _lookup_args(dims: tuple) -> tuple[np.ndarray, np.ndarray]:
    """A weight (6, 4) and indices (5, 2) of 3 examples, batched along ``dims``."""
    w = rng.standard_normal((3, 6, 4))
    x = rng.integers(0, 6, (3, 5, 2))
    x[:, 0] = 2  # repeats, and the padding row
    w = w[0] if dims[0] is None else np.moveaxis(w, 0, dims[0]).copy()
    x = x[0] if dims[1] is None else np.moveaxis(x, 0, dims[1]).copy()
    return w, x


@pytest.mark.parametrize(
    "options, dims", LOOKUPS, ids=[f"{'-'.join(o) or 'plain'}-{d}" for o, d in LOOKUPS]
)
def test_embedding_runs_once_on_the_batch(
    loops: list[str], calls: Any, options: dict, dims: tuple
) -> None:
    w, x = _lookup_args(dims)

    def f(lib: Any) -> Any:
        return lambda w_, x_: lib.nn.functional.embedding(x_, w_, **options)

    def loss(lib: Any) -> Any:
        return lambda w_, x_: (f(lib)(w_, x_) ** 3).sum()

    got = cf.vmap(calls.counted(f(cr)), dims)(cr.tensor(w), cr.tensor(x))
    want = tf.vmap(f(torch), dims)(torch.tensor(w), torch.tensor(x))
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    grads = cf.vmap(cf.grad(calls.counted(loss(cr))), dims)(cr.tensor(w), cr.tensor(x))
    expected = tf.vmap(tf.grad(loss(torch)), dims)(torch.tensor(w), torch.tensor(x))
    np.testing.assert_allclose(grads.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)
    assert calls == [1, 1] and loops == []


def test_embedding_gradient_by_frequency_counts_each_example() -> None:
    """Each example's repeats alone scale its gradient: each row's plain gradient over the
    count of its index in that example."""
    w = rng.standard_normal((4, 3))
    x = np.array([[0, 0, 1], [0, 2, 3]])  # index 0: twice in the first example, once after

    def loss(w_: Any, x_: Any) -> Any:
        return (cr.nn.functional.embedding(x_, w_, scale_grad_by_freq=True) ** 2).sum()

    got = cf.vmap(cf.grad(loss), (None, 0))(cr.tensor(w), cr.tensor(x)).numpy()
    for b in range(2):  # scaled by 1/count: the plain gradient's rows over their counts
        plain = np.zeros_like(w)
        for i in x[b]:
            plain[i] += 2 * w[i] / np.count_nonzero(x[b] == i)
        np.testing.assert_allclose(got[b], plain, rtol=1e-12)


@pytest.mark.parametrize("bad", [-1, 6], ids=["negative", "past the last row"])
@pytest.mark.parametrize("weights", [None, 0], ids=["one table", "per-example tables"])
def test_embedding_checks_every_example(bad: int, weights: int | None) -> None:
    w = rng.standard_normal((3, 6, 4) if weights == 0 else (6, 4))
    x = rng.integers(0, 6, (3, 5))
    x[2, 1] = bad  # the last example's (its rows would be another's, or wrap round)
    lookup = cf.vmap(lambda w_, x_: cr.nn.functional.embedding(x_, w_), (weights, 0))
    with pytest.raises(
        IndexError,
        match=rf"^embedding: index {bad} is out of range for num_embeddings 6; got indices of "
        r"shape \(5,\)$",
    ):
        lookup(cr.tensor(w), cr.tensor(x))
