"""benchmarks/cnn_step.py runs in its quick mode and times the same step on both frameworks
(no timing is asserted)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers import load_benchmark


@pytest.fixture
def bench(monkeypatch):
    return load_benchmark("cnn_step.py", monkeypatch)


def test_cnn_step_benchmark_quick(bench, capsys) -> None:
    medians = bench.main(["--quick"])
    assert set(medians) == {"chainrule", "pytorch"}
    out = capsys.readouterr().out
    assert "CNN conv-relu-pool x2 + linear, SGD step, batch 4, float32" in out
    assert "chainrule / this" in out


def test_cnn_step_benchmark_runs_the_same_step_on_both(bench) -> None:
    """Same weights and data: the losses agree step after step, so the timing compares the
    same computation."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, 3).astype(np.int64)
    weights = bench.init_weights()
    ours, theirs = bench.chainrule_step_fn(weights, x, y), bench.torch_step_fn(weights, x, y)
    for _ in range(3):
        assert abs(ours() - theirs()) < 1e-4
