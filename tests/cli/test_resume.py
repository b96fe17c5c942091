"""Exact resume: a run killed at any moment (SIGKILL) and resumed with --resume ends with
a model file byte-identical to an uninterrupted run's; Ctrl-C finishes the step,
checkpoints, says how to resume and exits 130; the random state can be saved and put
back, as torch.get_rng_state / set_rng_state and Generator.get_state / set_state."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest

import chainrule as cr
from chainrule.tools import cli

ARGS = ["train", "digits-mlp", "--quiet", "--epochs", "2", "--checkpoint-every", "7"]

# Runs the command line in a process that kills itself (SIGKILL, or SIGINT as Ctrl-C
# does) right after optimizer step K.
KILLER = """
import os, signal, sys
from chainrule.tools import cli
from chainrule.tools.recipes import train as t
K, SIG = int(sys.argv[1]), getattr(signal, sys.argv[2])
orig = t.Progress.step_done
def step_done(self, *a, **k):
    orig(self, *a, **k)
    if self.steps == K:
        os.kill(os.getpid(), SIG)
t.Progress.step_done = step_done
sys.exit(cli.main(sys.argv[3:]))
"""


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    out = tmp_path_factory.mktemp("whole")
    assert cli.main([*ARGS, "--out", str(out)]) == 0
    assert not (out / "checkpoint.safetensors").exists()  # a finished run keeps none
    return digest(out / "model.safetensors"), (out / "metrics.json").read_text()


def stopped_at(k: int, signal: str, out) -> int:
    job = [sys.executable, "-c", KILLER, str(k), signal, *ARGS, "--out", str(out)]
    return subprocess.run(job, capture_output=True, timeout=300).returncode


# 3: before the first checkpoint; 7: right after one; 30: between two, mid-epoch; 45: the
# first epoch's last step, its end-of-epoch checkpoint being written next
@pytest.mark.parametrize("k", [3, 7, 30, 45])
def test_a_killed_run_resumed_ends_with_the_same_model_bytes(k, tmp_path, uninterrupted):
    assert stopped_at(k, "SIGKILL", tmp_path) == -9
    assert cli.main([*ARGS, "--out", str(tmp_path), "--resume"]) == 0
    model, metrics = uninterrupted
    assert digest(tmp_path / "model.safetensors") == model
    strip = [line for line in metrics.splitlines() if '"seconds"' not in line]
    again = (tmp_path / "metrics.json").read_text().splitlines()
    assert [line for line in again if '"seconds"' not in line] == strip


def test_ctrl_c_finishes_the_step_checkpoints_and_exits_130(tmp_path, uninterrupted):
    job = [sys.executable, "-c", KILLER, "20", "SIGINT", *ARGS, "--out", str(tmp_path)]
    done = subprocess.run(job, capture_output=True, text=True, timeout=300)
    assert done.returncode == 130
    assert "--resume" in done.stderr and (tmp_path / "checkpoint.safetensors").exists()
    assert cr.load(tmp_path / "checkpoint.safetensors")["steps"] == 21  # the next step done
    assert cli.main([*ARGS, "--out", str(tmp_path), "--resume"]) == 0
    assert digest(tmp_path / "model.safetensors") == uninterrupted[0]


def test_resume_refuses_other_settings(tmp_path, capsys) -> None:
    assert stopped_at(10, "SIGKILL", tmp_path) == -9
    assert cli.main([*ARGS, "--out", str(tmp_path), "--resume", "--lr", "0.5"]) == 2
    assert "is a run of digits-mlp with" in capsys.readouterr().err


def test_rng_state_round_trips_as_in_torch() -> None:
    cr.manual_seed(3)
    cr.rand(5)
    state = cr.get_rng_state()
    first = cr.rand(4).tolist()
    cr.set_rng_state(state)
    assert cr.rand(4).tolist() == first and state.dtype == cr.uint8
    g = cr.Generator().manual_seed(1)
    saved = g.get_state()
    assert isinstance(saved, cr.Tensor) and saved.dtype == cr.uint8 and saved.device.type == "cpu"
    import torch

    assert type(torch.Generator().get_state()) is torch.Tensor  # as PyTorch's: a ByteTensor
    draws = cr.randn(3, generator=g).tolist()
    assert g.set_state(saved) is g and cr.randn(3, generator=g).tolist() == draws
    order = cr.randperm(10, generator=g.set_state(saved)).tolist()
    assert cr.randperm(10, generator=g.set_state(saved)).tolist() == order
    with pytest.raises(ValueError, match=r"^Generator.set_state: not a state that get_state"):
        cr.set_rng_state(cr.zeros(3, dtype=cr.uint8))
