"""benchmarks/scalar_demo.py runs end to end in its quick mode (no timing is asserted)."""

from __future__ import annotations

from tests.helpers import load_benchmark


def test_scalar_demo_benchmark_quick(capsys, monkeypatch) -> None:
    bench = load_benchmark("scalar_demo.py", monkeypatch)
    assert bench.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "chainrule, collector paused" in out and "micrograd / chainrule:" in out
    assert "largest relative difference of the losses over common steps: 0.0e+00" in out
    assert "chainrule, written out, on" in out
    assert "largest relative difference of the losses, written out or not: 0.0e+00" in out
