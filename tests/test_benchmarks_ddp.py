"""benchmarks/ddp_scaling.py runs in its quick mode: chainrule's DDP under mpiexec and
PyTorch's over gloo, at 2 ranks each (no timing is asserted)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def test_ddp_scaling_benchmark_quick(capsys) -> None:
    pytest.importorskip("mpi4py")
    pytest.importorskip("torch")
    spec = importlib.util.spec_from_file_location("ddp_scaling", BENCHMARKS / "ddp_scaling.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    results = bench.main(["--quick", "--ranks", "2"])
    assert set(results) == {"chainrule", "pytorch"}
    for by_ranks in results.values():
        assert set(by_ranks[2]) == {"ddp", "plain", "wait", "cpu"} and by_ranks[2]["ddp"] > 0
    assert results["chainrule"][2]["wait"] >= 0
    out = capsys.readouterr().out
    assert "MLP 784-512-512-10 SGD step, batch 8 per rank" in out
