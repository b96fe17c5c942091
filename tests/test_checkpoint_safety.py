"""Checkpoints lose nothing: load_state_dict checks every entry before it writes any,
save refuses what load would refuse, a cycle is a clear error, a symlink's target is
written, and a save killed mid-write leaves no temporary file behind for good."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import chainrule as cr


def test_load_state_dict_checks_every_entry_before_writing_any() -> None:
    model = cr.nn.Sequential(cr.nn.Linear(2, 2), cr.nn.Linear(2, 2))
    before = [p.numpy().copy() for p in model.parameters()]
    state = dict(model.state_dict())
    state["0.weight"] = cr.ones(2, 2)  # valid, and first: it must not be written either
    state["1.bias"] = np.array(["a", "b"])
    with pytest.raises(RuntimeError, match=r"cannot load 1.bias: a value of dtype <U1"):
        model.load_state_dict(state)
    for p, old in zip(model.parameters(), before, strict=True):
        np.testing.assert_array_equal(p.numpy(), old)


def test_save_refuses_a_key_load_would_refuse(tmp_path) -> None:
    path = tmp_path / "m.safetensors"
    cr.save({"w": cr.ones(2)}, path)
    with pytest.raises(ValueError, match=r"^save: an entry may not be named '__metadata__'"):
        cr.save({"__metadata__": cr.ones(1)}, path)
    assert cr.load(path)["w"].tolist() == [1.0, 1.0]  # the old file is intact


def test_a_cycle_is_a_clear_error_and_shared_leaves_are_fine(tmp_path) -> None:
    looped: dict = {"a": 1}
    looped["again"] = [looped]
    with pytest.raises(ValueError, match=r"^save: the object contains itself at 'again.0'"):
        cr.save(looped, tmp_path / "c.st")
    t = cr.arange(3.0)
    cr.save({"x": [t, t], "y": (1, [2, None], "s")}, tmp_path / "ok.st")
    back = cr.load(tmp_path / "ok.st")
    assert back["x"][1].tolist() == [0.0, 1.0, 2.0] and back["y"] == (1, [2, None], "s")


def test_saving_through_a_symlink_writes_its_target(tmp_path) -> None:
    target, link = tmp_path / "target.st", tmp_path / "link.st"
    cr.save({"x": cr.ones(2)}, target)
    link.symlink_to(target)
    cr.save({"x": cr.zeros(3)}, link)
    assert link.is_symlink() and cr.load(target)["x"].shape == (3,)


def test_the_next_save_clears_the_orphans_of_a_killed_one(tmp_path) -> None:
    path = tmp_path / "model.st"
    script = (
        "import os, chainrule as cr, chainrule.serialization as s\n"
        "def die(f, payload):\n"
        "    f.write(payload[:10]); f.flush(); os._exit(9)\n"
        "s._write = die\n"
        f"cr.save({{'w': cr.ones(1000)}}, {str(path)!r})\n"
    )
    done = subprocess.run([sys.executable, "-c", script], timeout=120)
    assert done.returncode == 9
    orphans = [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert len(orphans) == 1 and not path.exists()
    keep = tmp_path / f".model.st.{os.getppid()}.0000.tmp"  # a live process's: left alone
    keep.write_bytes(b"x")
    cr.save({"w": cr.zeros(2)}, path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["model.st", keep.name])
    assert cr.load(path)["w"].tolist() == [0.0, 0.0]
