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


def test_a_bit_flipped_anywhere_never_loads_as_other_values(tmp_path) -> None:
    """The digest covers the whole file: the structure's keys, numbers and strings (epochs,
    hyperparameters) as well as the tensors. A flip either fails to load or changes
    nothing (a padding space, say)."""
    import random

    model = cr.nn.Linear(3, 2)
    opt = cr.optim.Adam(model.parameters(), lr=0.01)
    model(cr.ones(1, 3)).sum().backward()
    opt.step()
    obj = {"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 7, "lr": 0.01}
    path = tmp_path / "ck.safetensors"
    cr.save(obj, path)
    raw = path.read_bytes()
    rng = random.Random(0)
    damaged = tmp_path / "damaged.safetensors"
    for _ in range(400):
        flipped = bytearray(raw)
        at = rng.randrange(len(flipped))
        flipped[at] ^= 1 << rng.randrange(8)
        damaged.write_bytes(bytes(flipped))
        try:
            back = cr.load(damaged)
        except ValueError:
            continue
        assert (
            back["epoch"] == 7
            and back["lr"] == 0.01
            and back["opt"]["param_groups"] == (obj["opt"]["param_groups"])
        )
        for k, v in obj["model"].items():
            np.testing.assert_array_equal(back["model"][k].numpy(), v.numpy())


def test_files_with_the_tensor_only_digest_still_load(tmp_path) -> None:
    import json

    import safetensors.numpy as st

    from chainrule import serialization as s

    tensors = {"w": np.arange(3, dtype=np.float32)}
    structure = json.dumps({"dict": [["w", {"tensor": "w"}], ["epoch", 3]]})
    meta = {"chainrule.structure": structure, "chainrule.sha256": s._digests(tensors, "")[0]}
    (tmp_path / "old.st").write_bytes(st.save(tensors, metadata=meta))
    back = cr.load(tmp_path / "old.st")
    assert back["epoch"] == 3 and back["w"].tolist() == [0.0, 1.0, 2.0]
