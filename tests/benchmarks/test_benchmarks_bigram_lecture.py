"""benchmarks/bigram_lecture.py runs in its quick mode, and the GPT lecture's bigram.py gives
PyTorch's numbers on chainrule: from the same seed, the same batches, so the same estimated
and last losses to float rounding, and the same generated text (no timing is asserted)."""

from __future__ import annotations

import pytest
import torch

import chainrule as cr
from tests.helpers import load_benchmark


@pytest.fixture
def bench(monkeypatch):
    return load_benchmark("bigram_lecture.py", monkeypatch)


@pytest.mark.slow  # a process per framework, part and threading
def test_bigram_lecture_benchmark_quick(bench, capsys) -> None:
    results = bench.main(["--quick"])
    assert len(results) == 2 * len(bench.PARTS)
    assert all(set(medians) == {"chainrule", "pytorch"} for medians in results.values())
    out = capsys.readouterr().out
    assert "the program" in out and "threads pinned to 1" in out


def test_bigram_py_gives_torchs_losses_and_text(bench) -> None:
    text = "\n".join(cr.datasets.names()[:2000])
    runs = []
    for lib in (cr, torch):
        train, generate = bench.lecture(lib, text, iters=12, eval_iters=3, new_tokens=30)
        model, estimates = train()
        runs.append((estimates, generate(model)))
    (ours, our_text), (theirs, their_text) = runs
    assert len(ours) == len(theirs) == 2  # one estimate at step 0, then the last batch's loss
    for mine, other in zip(ours, theirs, strict=True):
        assert mine.keys() == other.keys()
        for key in mine:
            assert mine[key] == pytest.approx(other[key], rel=1e-5)
    assert our_text == their_text
