"""benchmarks/small_ops.py runs every op in its quick mode (no timing is asserted). Slow:
each op and framework runs in a process of its own, about 50 in all (100 s here)."""

from __future__ import annotations

import math

import pytest

from tests.helpers import load_benchmark


@pytest.mark.slow
def test_small_ops_benchmark_quick(capsys, monkeypatch) -> None:
    bench = load_benchmark("small_ops.py", monkeypatch)
    results = bench.main(["--quick"])
    assert "x[i], fwd + bwd" in results and ".item() (0-d), fwd" in results
    assert ".item() (0-d), fwd + bwd" not in results  # .item() has no backward
    assert "row loop, per row, fwd + bwd" in results
    for medians in results.values():
        assert set(medians) == {"chainrule", "pytorch", "numpy (by hand)"}
        assert all(math.isfinite(t) and t > 0 for t in medians.values())
    out = capsys.readouterr().out
    assert "us per op" in out and "chainrule / pytorch" in out
