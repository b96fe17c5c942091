"""benchmarks/gpt_step.py runs in its quick mode, and times the same step on both frameworks
(no timing is asserted)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers import load_benchmark


@pytest.fixture
def bench(monkeypatch):
    return load_benchmark("gpt_step.py", monkeypatch)


def test_gpt_step_benchmark_quick(bench, capsys) -> None:
    medians = bench.main(["--quick", "--batch", "2"])
    assert set(medians) == {"chainrule", "pytorch"}
    out = capsys.readouterr().out
    assert "GPT 4 layers, 4 heads, n_embd 128, block 64, vocab 65: AdamW step, batch 2" in out
    assert "chainrule / this" in out
    assert "peak RSS growth over 2 steps" in out


def test_gpt_step_benchmark_runs_the_same_step_on_both(bench) -> None:
    """Same weights and batch: the losses agree step after step, so the timing compares the
    same computation."""
    x, y = bench.batch(3)
    ours, theirs = bench.chainrule_step_fn(x, y), bench.torch_step_fn(x, y)
    for _ in range(3):
        assert ours() == pytest.approx(theirs(), rel=1e-5)
    assert np.log(65) == pytest.approx(bench.chainrule_step_fn(x, y)(), rel=0.05)
