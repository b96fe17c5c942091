"""benchmarks/ddp_scaling.py runs in its quick mode: chainrule's DDP under mpiexec and
PyTorch's over gloo, at 2 ranks each (no timing is asserted)."""

from __future__ import annotations

import pytest

from tests.helpers import load_benchmark


def test_ddp_scaling_benchmark_quick(capsys, monkeypatch) -> None:
    pytest.importorskip("mpi4py")
    pytest.importorskip("torch")
    bench = load_benchmark("ddp_scaling.py", monkeypatch)
    results = bench.main(["--quick", "--ranks", "2"])
    assert set(results) == {"chainrule", "pytorch"}
    for by_ranks in results.values():
        assert set(by_ranks[2]) == {"ddp", "plain", "wait", "cpu"} and by_ranks[2]["ddp"] > 0
    assert results["chainrule"][2]["wait"] >= 0
    out = capsys.readouterr().out
    assert "MLP 784-512-512-10 SGD step, batch 8 per rank" in out
