"""The Monitor on runs that go wrong: a diverging MLP (SGD at lr=50, losses past 1e19, then
inf and NaN), NaN gradients, float16 layers and empty batches. It records
what it sees, says first where values overflowed, never raises and never warns, and leaves
the training it watches exactly as it would be unwatched; its cache of ones stays bounded."""

from __future__ import annotations

import json
import warnings
from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule.tools import monitor as mon_module


def _diverging(watch: bool, steps: int = 12) -> tuple[list[float], Any, list[str]]:
    cr.manual_seed(0)
    model = cr.nn.Sequential(cr.nn.Linear(4, 16), cr.nn.ReLU(), cr.nn.Linear(16, 16),
                             cr.nn.Tanh(), cr.nn.Linear(16, 1))  # fmt: skip
    opt = cr.optim.SGD(model.parameters(), lr=50)
    mon = cr.viz.Monitor(model, opt) if watch else None
    x, y = cr.randn(32, 4), cr.randn(32, 1) * 100
    losses = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(steps):
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
            losses.append(float(loss))
    return losses, mon, [f"{w.filename}: {w.message}" for w in caught]


def test_a_diverging_run_is_recorded_and_named_first(tmp_path) -> None:
    losses, mon, caught = _diverging(True)
    assert max(v for v in losses if np.isfinite(v)) > 1e19 and np.isnan(losses[-1])
    first = mon.warnings()[0]
    assert "overflowed at step" in first and first.startswith("layer ")
    step = int(first.split("step ")[1].split()[0])
    assert step <= 6  # the first step whose values overflowed, not a later one
    assert "monitor" not in " ".join(caught)  # the Monitor itself warned of nothing
    json.dumps(mon.to_dict(), allow_nan=False)  # strict JSON, NaN and inf as None
    assert mon.summary()
    mon.plot(tmp_path / "monitor.png")
    assert (tmp_path / "monitor.png").stat().st_size > 0


def test_watching_changes_nothing_in_the_training() -> None:
    unwatched, _, _ = _diverging(False, 8)
    watched, _, _ = _diverging(True, 8)
    np.testing.assert_array_equal(np.array(watched), np.array(unwatched))


def test_nan_gradients_and_float16_layers_and_empty_batches() -> None:
    model = cr.nn.Sequential(cr.nn.Linear(3, 4), cr.nn.ReLU(), cr.nn.Linear(4, 2)).half()
    opt = cr.optim.SGD(model.parameters(), lr=0.1)
    mon = cr.viz.Monitor(model, opt)
    x = cr.randn(5, 3).half()
    out = model(x)
    (out * float("nan")).sum().backward()  # every gradient NaN
    opt.step()
    opt.zero_grad()
    empty = model(cr.zeros(0, 3).half())  # an empty batch: nothing to count, no error
    empty.sum().backward()
    opt.step()
    assert any("gradients overflowed at step 0" in w for w in mon.warnings())
    json.dumps(mon.to_dict(), allow_nan=False)


@pytest.mark.parametrize(
    "values",
    [
        np.array([-3e38, 3e38, 1.0], np.float32),
        np.array([1e308, -1e308, 0.0]),
        np.array([np.nan, np.inf, -np.inf, 2.0, 3.0]),
        np.array([5.0, 5.0, 5.0], np.float16),
    ],
    ids=["float32 extremes", "float64 extremes", "non-finite", "all equal"],
)
def test_histograms_of_extreme_values_count_every_finite_value(values: np.ndarray) -> None:
    with np.errstate(all="raise"):  # nothing in it may overflow
        h = mon_module.histogram(values)
    assert h is not None and sum(h["counts"]) == int(np.isfinite(values).sum())


def test_the_cache_of_ones_stays_bounded() -> None:
    big = np.ones(3 * mon_module.ONES_MAX + 7, np.float32)
    mean, std = mon_module.moments(big)
    assert mean == 1.0 and std == 0.0
    assert all(v.size <= mon_module.ONES_MAX for v in mon_module._ONES.values())


def test_values_equal_at_their_own_scale_make_one_bin():
    """Two values a few ulps apart at 2e16 (a diverging run's activations) are one bin."""
    x = np.array([-2.166415004847309e16, np.nextafter(-2.166415004847309e16, 0.0)])
    got = mon_module.histogram(x)
    assert sum(got["counts"]) == 2 and got["lo"] < x.min() and got["hi"] > x.max()
