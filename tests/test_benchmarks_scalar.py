"""benchmarks/scalar_demo.py runs end to end in its quick mode (no timing is asserted)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "scalar_demo.py"


def test_scalar_demo_benchmark_quick(capsys) -> None:
    spec = importlib.util.spec_from_file_location("scalar_demo_benchmark", SCRIPT)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "chainrule, collector paused" in out and "micrograd / chainrule:" in out
    assert "largest relative difference of the losses over common steps: 0.0e+00" in out
    assert "chainrule, written out, on" in out
    assert "largest relative difference of the losses, written out or not: 0.0e+00" in out
