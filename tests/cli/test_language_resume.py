"""Exact resume for the language recipes (names, gpt, adder): a run killed (SIGKILL) after
any step, or while writing its files, and resumed with --resume ends with a model file
byte-identical to an uninterrupted run's and the same metrics, seconds aside; Ctrl-C
finishes the step, checkpoints, says how to go on and exits 130."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest

import chainrule as cr
from chainrule.tools import cli

RUNS = {
    "names": ["names", "--model", "bigram", "--steps", "12", "--batch-size", "16"],
    "names-mlp": ["names", "--model", "mlp", "--steps", "12", "--batch-size", "16"],
    "adder": ["adder", "--steps", "6", "--batch-size", "16"],
    "gpt": ["gpt", "--steps", "4", "--batch-size", "2"],
}

# Runs the command line in a process that kills itself (SIGKILL, or SIGINT as Ctrl-C does)
# right after optimizer step K, or (K = 0) while writing metrics.json, the run's last file.
KILLER = """
import os, signal, sys
from chainrule.tools import cli
from chainrule.tools.recipes import language, train as t
K, SIG = int(sys.argv[1]), getattr(signal, sys.argv[2])
step_done, strict_json = t.Progress.step_done, language.strict_json
def step_done_then_kill(self, *a, **k):
    step_done(self, *a, **k)
    if self.steps == K:
        os.kill(os.getpid(), SIG)
def kill_while_writing(value):
    os.kill(os.getpid(), SIG)
t.Progress.step_done = step_done_then_kill
if K == 0:
    language.strict_json = kill_while_writing
sys.exit(cli.main(sys.argv[3:]))
"""


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def without_seconds(path) -> list[str]:
    return [line for line in path.read_text().splitlines() if '"seconds"' not in line]


def args(run: str, every: int, out) -> list[str]:
    return ["train", *RUNS[run], "--quiet", "--checkpoint-every", str(every), "--out", str(out)]


def stopped_at(k: int, signal: str, argv: list[str]) -> subprocess.CompletedProcess:
    job = [sys.executable, "-c", KILLER, str(k), signal, *argv]
    return subprocess.run(job, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """Each run's model digest and metrics, trained without a stop."""
    done = {}

    def get(run: str, every: int):
        if (run, every) not in done:
            out = tmp_path_factory.mktemp(run)
            assert cli.main(args(run, every, out)) == 0
            assert not (out / "checkpoint.safetensors").exists()  # a finished run keeps none
            done[run, every] = (
                digest(out / "model.safetensors"),
                without_seconds(out / "metrics.json"),
            )
        return done[run, every]

    return get


def killed_and_resumed(run: str, every: int, k: int, out, uninterrupted) -> None:
    assert stopped_at(k, "SIGKILL", args(run, every, out)).returncode == -9
    assert cli.main([*args(run, every, out), "--resume"]) == 0
    model, metrics = uninterrupted(run, every)
    assert digest(out / "model.safetensors") == model
    assert without_seconds(out / "metrics.json") == metrics
    assert not (out / "checkpoint.safetensors").exists()


# names, bigram, 12 steps, a checkpoint every 5: 3 before the first checkpoint; 5 right
# after one; 0 while writing the run's files, after the last step's checkpoint
@pytest.mark.parametrize("k", [3, 5, 0])
def test_a_killed_names_run_resumed_ends_with_the_same_model_bytes(k, tmp_path, uninterrupted):
    killed_and_resumed("names", 5, k, tmp_path, uninterrupted)


# 8: between two checkpoints; 12: the last step, before its own checkpoint; 11: with a
# checkpoint every step
@pytest.mark.slow
@pytest.mark.parametrize(("run", "every", "k"), [("names", 5, 8), ("names", 5, 12),
                                                 ("names-mlp", 1, 11), ("names-mlp", 5, 7),
                                                 ("adder", 4, 5), ("gpt", 3, 2)])  # fmt: skip
def test_each_language_recipe_resumes_exactly(run, every, k, tmp_path, uninterrupted):
    killed_and_resumed(run, every, k, tmp_path, uninterrupted)


def test_ctrl_c_finishes_the_step_checkpoints_and_exits_130(tmp_path, uninterrupted):
    argv = args("names", 5, tmp_path)
    done = stopped_at(7, "SIGINT", argv)
    assert done.returncode == 130
    hint = done.stderr.strip().splitlines()[-1].split()
    assert hint[:2] == ["chainrule", "train"] and hint[-1] == "--resume"
    assert cr.load(tmp_path / "checkpoint.safetensors")["steps"] == 8  # the next step done
    assert cli.main([*hint[1:]]) == 0  # the command it printed
    assert digest(tmp_path / "model.safetensors") == uninterrupted("names", 5)[0]


def test_resume_refuses_other_settings(tmp_path, capsys) -> None:
    assert stopped_at(6, "SIGKILL", args("names", 5, tmp_path)).returncode == -9
    argv = [*args("names", 5, tmp_path), "--resume", "--steps", "13"]
    assert cli.main(argv) == 2
    assert "is a run of names with" in capsys.readouterr().err


def test_resume_without_a_checkpoint_trains_from_the_start(tmp_path, capsys, uninterrupted):
    assert cli.main([*args("names", 5, tmp_path), "--resume"]) == 0
    assert "no checkpoint in" in capsys.readouterr().err
    assert digest(tmp_path / "model.safetensors") == uninterrupted("names", 5)[0]
