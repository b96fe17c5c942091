"""benchmarks/makemore_bigram.py runs in its quick mode, and each part of makemore's first
lecture gives PyTorch's numbers on chainrule: the same counts, log-likelihood, sampled names
and trained loss (no timing is asserted)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.helpers import load_benchmark


@pytest.fixture
def bench(monkeypatch):
    return load_benchmark("makemore_bigram.py", monkeypatch)


@pytest.mark.slow  # a process per framework, part and threading: about a minute
def test_makemore_bigram_benchmark_quick(bench, capsys) -> None:
    results = bench.main(["--quick"])
    assert len(results) == 2 * len(bench.PARTS)
    assert all(set(medians) == {"chainrule", "pytorch"} for medians in results.values())
    out = capsys.readouterr().out
    assert "these parts together" in out and "threads pinned to 1" in out


def test_each_part_of_the_lecture_gives_torchs_numbers(bench) -> None:
    words = cr.datasets.names()[:300]
    count, theirs_count = (bench.lecture(lib, words, "count bigrams")() for lib in (cr, torch))
    np.testing.assert_array_equal(count.numpy(), theirs_count.numpy())
    assert count.dtype == cr.int32
    nll = [bench.lecture(lib, words, "log-likelihood")().item() for lib in (cr, torch)]
    assert nll[0] == pytest.approx(nll[1], rel=1e-6)
    names = [bench.lecture(lib, words, "sample 20 names")() for lib in (cr, torch)]
    assert names[0] == names[1]
