"""Whole programs as users write them: a checkpoint holding views of a weight and sparse
state, saved and loaded to train on (programs/checkpoint.py, run on torch and on chainrule
through the import hook that resolves ``import torch`` to chainrule); and a run folder
received from someone else, whose half-done replacement was planted to delete a file outside
it, sampled from with the command line."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import chainrule as cr
from tests.pytorch_programs.programs.aliasing import torch_is_chainrule

PROGRAM = Path(__file__).parent / "programs" / "checkpoint.py"


def run_program(on_chainrule: bool, path: Path, init: Any) -> dict:
    name = f"checkpoint_program_{'chainrule' if on_chainrule else 'torch'}"
    spec = importlib.util.spec_from_file_location(name, PROGRAM)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    if not on_chainrule:
        spec.loader.exec_module(module)
        return module.main(path, init=init)
    with torch_is_chainrule():
        spec.loader.exec_module(module)
        return module.main(path, init=init)


def test_a_checkpoint_with_views_and_sparse_state_trains_on_as_in_pytorch(tmp_path) -> None:
    weights: dict[str, np.ndarray] = {}

    def record(model: Any) -> None:  # torch's initial weights, given to chainrule's model
        weights.update({k: v.detach().numpy().copy() for k, v in model.state_dict().items()})

    def replay(model: Any) -> None:
        model.load_state_dict({k: cr.tensor(v) for k, v in weights.items()})

    theirs = run_program(False, tmp_path / "torch.pt", record)
    ours = run_program(True, tmp_path / "chainrule.safetensors", replay)
    for got in (theirs, ours):
        assert got["resumed"] == got["going_on"]  # the loaded state goes on exactly
        assert got["saved_losses"] == got["losses"]
    for key in ("losses", "going_on", "resumed"):
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-5, atol=1e-6)
    assert ours["views"] == theirs["views"]
    assert ours["views"]["shared"] == [42.0, 42.0, 42.0]  # views of the loaded weight
    assert ours["one_weight_dim"] == theirs["one_weight_dim"] == 0
    assert ours["adjacency"] == theirs["adjacency"]
    assert ours["coalesced"] == theirs["coalesced"]


def chainrule_command(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "chainrule", *args], capture_output=True, text=True, timeout=300
    )


@pytest.mark.slow  # heavy; `make test-all` runs it
def test_a_received_run_with_a_planted_manifest_is_refused_then_samples(tmp_path) -> None:
    sent = tmp_path / "theirs" / "names-run"
    trained = chainrule_command("train", "names", "--model", "bigram", "--steps", "20",
                                "--quiet", "--out", str(sent))  # fmt: skip
    assert trained.returncode == 0, trained.stderr
    # what arrives: their run, and a half-done replacement whose manifest reaches out
    home = tmp_path / "home"
    (home / "notes.txt").parent.mkdir()
    (home / "notes.txt").write_text("my notes")
    received = home / "downloads" / "names-run"
    shutil.copytree(sent, received)
    (received / ".incoming").mkdir()
    (received / ".incoming" / "metrics.json").write_text("{}")
    manifest = {"files": ["metrics.json"], "remove": ["../../notes.txt", "/etc/hostname"]}
    (received / ".incoming" / ".manifest.json").write_text(json.dumps(manifest))
    metrics = (received / "metrics.json").read_text()

    sampled = chainrule_command("sample", str(received), "--num", "3")
    assert sampled.returncode == 2 and sampled.stdout == ""
    assert "'../../notes.txt'" in sampled.stderr and str(received) in sampled.stderr
    assert "nothing was read, moved or removed" in sampled.stderr
    assert f"remove '{received / '.incoming'}'" in sampled.stderr
    assert (home / "notes.txt").read_text() == "my notes"
    assert (received / "metrics.json").read_text() == metrics  # not replaced by theirs
    assert Path("/etc/hostname").exists()

    shutil.rmtree(received / ".incoming")  # as the refusal says, and then it is a run
    sampled = chainrule_command("sample", str(received), "--num", "3")
    assert sampled.returncode == 0, sampled.stderr
    assert sampled.stdout.count("\n") == 3  # three names (one may be empty), one a line
    again = chainrule_command("sample", str(sent), "--num", "3")
    assert again.stdout == sampled.stdout  # the same run, the same names
