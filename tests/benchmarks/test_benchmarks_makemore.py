"""benchmarks/makemore_step.py runs in its quick mode, and its models compute the same
losses on both frameworks from the same weights (no timing is asserted)."""

from __future__ import annotations

import pytest
import torch

import chainrule as cr
from tests.helpers import load_benchmark


@pytest.fixture
def bench(monkeypatch):
    return load_benchmark("makemore_step.py", monkeypatch)


def test_makemore_step_benchmark_quick(bench, capsys) -> None:
    results = bench.main(["--quick"])
    assert set(results) == {"mlp", "transformer"}
    for medians in results.values():
        assert set(medians) == {"chainrule", "chainrule, former paths", "pytorch"}
    out = capsys.readouterr().out
    assert "makemore transformer SGD step, batch 4, float32" in out


@pytest.mark.parametrize("kind", ["mlp", "transformer"])
def test_makemore_models_agree_with_torch(bench, kind) -> None:
    make, x, y = bench.workload(kind, 4, quick=True)
    ours, theirs = bench.step_fn(cr, make, x, y), bench.step_fn(torch, make, x, y)
    for _ in range(3):
        assert ours() == pytest.approx(theirs(), rel=1e-5)
