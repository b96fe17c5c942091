"""The benchmarks keep working: each runs at a tiny size (no timing is asserted)."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))

import fixed_cost  # noqa: E402
import memory  # noqa: E402
import mlp_step  # noqa: E402
import onnx_inference  # noqa: E402
import per_op  # noqa: E402


def test_mlp_step_runs_on_every_framework(capsys):
    medians = mlp_step.main(["--quick", "--batch", "8"])
    assert set(medians) == {"chainrule", "numpy (by hand)", "pytorch"}
    assert "MLP 784-512-512-10" in capsys.readouterr().out


def test_mlp_step_is_the_same_computation_on_every_framework():
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 784)).astype(np.float32)
    y = rng.integers(0, 10, 16)
    w = mlp_step.init_weights()
    steps = [
        make(w, x, y)
        for make in (mlp_step.chainrule_step_fn, mlp_step.numpy_step_fn, mlp_step.torch_step_fn)
    ]
    for _ in range(3):
        losses = [step() for step in steps]
        assert losses == pytest.approx([losses[0]] * 3, rel=1e-4)


def test_per_op_runs(capsys):
    per_us = per_op.main(["--quick"])
    assert set(per_us) == {"chainrule", "pytorch"}
    assert "us/op" in capsys.readouterr().out


def test_memory_runs(capsys):
    growth = memory.main(["--quick"])
    assert set(growth) == {"chainrule", "numpy (by hand)", "pytorch"}
    assert "Peak RSS" in capsys.readouterr().out


def test_fixed_cost_runs_with_and_without_traffic(capsys):
    results = fixed_cost.main(["--quick", "--stream-mib", "0.5"])
    assert list(results) == ["no other traffic", "after 0.5 MiB"]
    for medians in results.values():
        assert set(medians) == {"chainrule", "numpy (by hand)", "pytorch"}
    assert "MLP 8-8-8-3, batch 4, after 0.5 MiB" in capsys.readouterr().out


def test_onnx_inference_runs_on_both(capsys):
    pytest.importorskip("onnxruntime")
    results = onnx_inference.main(["--quick"])
    assert list(results) == [1, 256]
    for medians in results.values():
        assert set(medians) == {"chainrule", "onnx runtime"}
    assert "digits CNN inference, batch 256" in capsys.readouterr().out


def test_op_catalog_grows_a_batch_and_keeps_a_weight(capsys, monkeypatch):
    import op_catalog

    # the run caps its own address space, which the processes the suite starts later
    # (Chromium's driver among them) would inherit and fail under: not in the suite's process
    monkeypatch.setattr(op_catalog, "_cap_memory", lambda: None)

    rows = {row.name: row for row in op_catalog.catalog.ROWS}
    # an elementwise pair grows together; a conv grows its images, not its weight or bias
    assert op_catalog._grown(rows["add[(2,3)&(2,3)]"], 600)[0] == ((200, 3), (200, 3))
    assert op_catalog._grown(rows["conv2d"], 15_000)[0] == ((200, 3, 5, 5), (4, 3, 3, 3), (4,))
    # a broadcast pair whose first dims differ grows its first input alone
    assert op_catalog._grown(rows["add[(3,1)&(1,4)]"], 300)[0] == ((225, 1), (1, 4))
    results = op_catalog.main(
        ["--only", "conv2d", "--sizes", "10^3", "--repeats", "1", "--block", "0.001"]
    )
    assert "forward 10^3" in results["conv2d"]
    assert "conv2d" in capsys.readouterr().out
