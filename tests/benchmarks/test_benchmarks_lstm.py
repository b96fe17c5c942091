"""benchmarks/lstm_step.py runs in its quick mode and times the same step on every framework
(no timing is asserted)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers import load_benchmark


@pytest.fixture
def bench(monkeypatch):
    return load_benchmark("lstm_step.py", monkeypatch)


def test_lstm_step_benchmark_quick(bench, capsys) -> None:
    medians = bench.main(["--quick"])
    assert set(medians) == {"chainrule", "chainrule, fast path off", "pytorch"}
    out = capsys.readouterr().out
    assert "LSTM 2 x 16, seq 5, batch 4, + linear, SGD step, float32" in out
    assert "chainrule / this" in out


def test_lstm_step_benchmark_runs_the_same_step_on_every_framework(bench) -> None:
    """Same weights and data: the losses agree step after step, so the timing compares the
    same computation (the fast path's primitive and the per-step cells included)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 3, 8)).astype(np.float32)
    y = rng.integers(0, bench.CLASSES, 18).astype(np.int64)
    weights = bench.init_weights(8, 8)
    steps = [make(weights, x, y) for make in (bench.chainrule_step_fn,
             bench.chainrule_plain_step_fn, bench.torch_step_fn)]  # fmt: skip
    for _ in range(3):
        losses = [step() for step in steps]
        assert losses == pytest.approx([losses[-1]] * 3, rel=1e-5)
