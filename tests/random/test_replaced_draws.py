"""multinomial with replacement searches the running sums for the smallest sum whose quotient
by the total reaches u, instead of dividing every sum: the same bins as PyTorch's divided
cumulative distribution, for weights of every scale, with zeros (runs of equal sums), and for
uniforms landing exactly on a bin's edge or one unit either side of it."""

from __future__ import annotations

import numpy as np
import pytest

from chainrule.array import torch_streams as ts


@pytest.fixture(autouse=True)
def searched_at_every_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ts, "SEARCHED", 0)


def divided(weights: np.ndarray, u: np.ndarray) -> np.ndarray:
    return ts.leftmost_bin(ts.cumulative_bins(weights), u)


def weights_of(kind: str, n: int, dtype: type, rng: np.random.Generator) -> np.ndarray:
    w = rng.random(n).astype(dtype)
    if kind == "zeros":
        w[rng.random(n) < 0.7] = 0
    elif kind == "wide":
        w = np.exp(rng.normal(0, 10, n)).astype(dtype)
    elif kind == "tiny":
        w = (w * (1e-40 if dtype == np.float32 else 1e-310)).astype(dtype)
    if not w.max() > 0:
        w[0] = 1
    return w


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["uniform", "zeros", "wide", "tiny"])
def test_same_bins_as_the_divided_sums(dtype: type, kind: str) -> None:
    rng = np.random.default_rng(7)
    for _ in range(40):
        w = weights_of(kind, int(rng.integers(1, 2000)), dtype, rng)
        edges = ts.cumulative_bins(w).astype(np.float64)
        edges = edges[edges < 1]
        u = np.concatenate(
            [rng.random(100), [0.0, 2.0**-53, 0.5, 1 - 2.0**-53], edges]
            + [np.nextafter(edges, 2.0), np.nextafter(edges, -1.0)]
        )
        u = u[(u >= 0) & (u < 1)]
        assert (ts.replaced_draws(w, u) == divided(w, u)).all()


def test_a_row_whose_running_sum_overflows_takes_the_divided_path() -> None:
    w = np.full(4, 3e38, np.float32)  # the float32 running sum reaches inf
    u = np.array([0.1, 0.4, 0.9])
    with np.errstate(over="ignore", invalid="ignore"):
        assert (ts.replaced_draws(w, u) == divided(w, u)).all()
