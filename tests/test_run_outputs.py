"""A run's outputs: --out is checked before any training, a diverged run says so and
exits non-zero with strict JSON metrics, and outputs an earlier run left in the folder
that this run did not write are removed, so the folder holds one run."""

from __future__ import annotations

import json
import time

import pytest

from chainrule import cli


def strict(path):
    def refuse(name: str) -> None:
        raise ValueError(f"not strict JSON: {name}")

    return json.loads(path.read_text(), parse_constant=refuse)


def test_a_file_in_the_way_of_out_is_a_usage_error_before_training(tmp_path, capsys) -> None:
    blocker = tmp_path / "taken"
    blocker.write_text("mine")
    start = time.perf_counter()
    assert cli.main(["train", "digits-cnn", "--out", str(blocker), "--quiet"]) == 2
    assert time.perf_counter() - start < 5  # digits-cnn would train for seconds first
    assert "--out" in capsys.readouterr().err and blocker.read_text() == "mine"


def test_out_that_cannot_be_made_is_a_usage_error(tmp_path, capsys) -> None:
    (tmp_path / "file").write_text("x")
    assert cli.main(["train", "moons", "--out", str(tmp_path / "file" / "sub"), "--quiet"]) == 2
    assert "cannot make the --out folder" in capsys.readouterr().err


def test_a_diverged_run_exits_non_zero_with_strict_json(tmp_path, capsys) -> None:
    out = tmp_path / "run"
    args = ["train", "regression", "--out", str(out), "--quiet", "--epochs", "3"]
    with pytest.warns(RuntimeWarning):  # NumPy's overflow, on the way to NaN
        code = cli.main([*args, "--optimizer", "sgd", "--lr", "100"])
    assert code == 1
    assert "the run diverged" in capsys.readouterr().err
    metrics = strict(out / "metrics.json")
    assert metrics["final"]["train_loss"] is None and len(metrics["history"]) == 1


def test_outputs_of_an_earlier_run_that_this_one_did_not_write_are_removed(tmp_path, capsys):
    out = tmp_path / "run"
    assert cli.main(["train", "moons", "--out", str(out), "--quiet", "--epochs", "2"]) == 0
    assert (out / "decision_boundary.png").exists()
    args = ["train", "breast-cancer", "--out", str(out), "--quiet", "--epochs", "2"]
    assert cli.main(args) == 0
    assert not (out / "decision_boundary.png").exists()
    assert "removed what an earlier run left there" in capsys.readouterr().out
    assert strict(out / "metrics.json")["recipe"] == "breast-cancer"
