"""What a saved file means when loaded, as PyTorch: a tensor held twice (tied weights) comes
back as one, Parameters and tensors that require grad come back so, whole objects are
pickled only in a file of their own kind and load only with weights_only=False, and a killed
save's temporary file is cleared by the next save or load."""

import io
import json
import os
import pickle
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import serialization
from chainrule.tools import cli
from tests.pytorch_programs.programs.aliasing import load as load_program
from tests.pytorch_programs.programs.aliasing import torch_is_chainrule


def round_trip(save, load, obj):
    f = io.BytesIO()
    save(obj, f)
    f.seek(0)
    return load(f)


def tied_pair(lib):
    """A model whose output layer shares the embedding's weight, as language models do."""
    emb, out = lib.nn.Embedding(5, 3), lib.nn.Linear(3, 5, bias=False)
    out.weight = emb.weight
    return lib.nn.Sequential(emb, out)


def sharing(loaded):
    """For each pair of keys: (the same object, the same memory); and each value's kind."""
    keys = sorted(loaded)
    pairs = {
        (a, b): (loaded[a] is loaded[b], loaded[a].data_ptr() == loaded[b].data_ptr())
        for a in keys
        for b in keys
        if a < b
    }
    kinds = {k: (type(v).__name__, v.requires_grad) for k, v in loaded.items()}
    return pairs, kinds


def saved_objects(lib):
    lin = lib.nn.Linear(2, 2)
    sd = lin.state_dict()
    return {
        "w": lin.weight,
        "w_again": lin.weight,
        "sd.weight": sd["weight"],
        "sd.weight_again": lin.state_dict()["weight"],
        "grad": lib.ones(3, requires_grad=True),
        "frozen": lib.nn.Parameter(lib.ones(2), requires_grad=False),
        "plain": lib.zeros(2),
    }


def test_aliases_parameters_and_requires_grad_come_back_as_torchs():
    ours = round_trip(cr.save, cr.load, saved_objects(cr))
    theirs = round_trip(torch.save, torch.load, saved_objects(torch))
    assert sharing(ours) == sharing(theirs)


def test_tied_weights_load_tied_and_train_tied(tmp_path):
    model = tied_pair(cr)
    cr.save(model.state_dict(), tmp_path / "m.safetensors")
    back = cr.load(tmp_path / "m.safetensors")
    theirs = round_trip(torch.save, torch.load, tied_pair(torch).state_dict())
    assert sharing(back) == sharing(theirs)
    with open(tmp_path / "m.safetensors", "rb") as f:  # the tied weight is written once
        assert len(serialization._read(f, "m")[0]) == 1
    fresh = tied_pair(cr)
    fresh.load_state_dict(back)
    np.testing.assert_array_equal(fresh[1].weight.numpy(), model[0].weight.numpy())


def test_a_file_without_alias_records_still_loads(tmp_path):
    """A file from before aliases were recorded: two keys, two copies, plain entries."""
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    tensors = {"a": w, "b": w.copy()}
    text = json.dumps({"dict": [["a", {"tensor": "a"}], ["b", {"tensor": "b"}]]})
    digest, whole = serialization._digests(tensors, text)
    metadata = {serialization._STRUCTURE: text, serialization._DIGEST: digest,
                serialization._DIGEST_ALL: whole}  # fmt: skip
    header, order = serialization._header(tensors, metadata)
    path = tmp_path / "old.safetensors"
    path.write_bytes(header + b"".join(tensors[k].tobytes() for k in order))
    back = cr.load(path)
    assert type(back["a"]) is cr.Tensor and not back["a"].requires_grad
    assert back["a"].data_ptr() != back["b"].data_ptr()
    np.testing.assert_array_equal(back["b"].numpy(), w)


@pytest.mark.parametrize("entries", [
    [{"tensor_of": {"key": "a", "alias": "memory"}}, {"tensor": "a"}],  # before its tensor
    [{"tensor": "a"}, {"tensor_of": {"key": "a", "alias": "elsewhere"}}],
    [{"tensor": "a"}, {"tensor": "a"}],  # twice, and not as an alias
])  # fmt: skip
def test_a_damaged_alias_is_refused(tmp_path, entries):
    tensors = {"a": np.zeros(2, np.float32)}
    text = json.dumps({"list": entries})
    digest, whole = serialization._digests(tensors, text)
    metadata = {serialization._STRUCTURE: text, serialization._DIGEST: digest,
                serialization._DIGEST_ALL: whole}  # fmt: skip
    header, order = serialization._header(tensors, metadata)
    path = tmp_path / "bad.safetensors"
    path.write_bytes(header + tensors["a"].tobytes())
    with pytest.raises(ValueError, match="damaged structure"):
        cr.load(path)


# -- whole objects: pickled, in a file of their own kind ------------------------------------


def wordlm(lib):
    """pytorch/examples' word language model (tests/pytorch_programs/programs/wordlm.py) on
    ``lib``, its module findable by name as a pickled model's class must be."""
    if lib is torch:
        return load_program("wordlm", on_chainrule=False)
    with torch_is_chainrule():
        return load_program("wordlm", on_chainrule=True)


def evaluate(prog, model, data):
    """The program's evaluation: the validation loss over its bptt chunks."""
    lib = prog.torch
    model.eval()
    hidden, total = model.init_hidden(2), 0.0
    with lib.no_grad():
        for i in range(0, data.size(0) - 1, 8):
            x, targets = prog.get_batch(data, i, 8)
            output, hidden = model(x, hidden)
            total += len(x) * lib.nn.NLLLoss()(output, targets).item()
    return total / (len(data) - 1)


@pytest.mark.parametrize("lib", [torch, cr], ids=["torch", "chainrule"])
def test_a_model_saved_whole_loads_only_with_weights_only_false(tmp_path, monkeypatch, lib):
    prog = wordlm(lib)
    monkeypatch.setitem(sys.modules, prog.__name__, prog)
    lib.manual_seed(0)
    corpus = prog.Corpus(prog.TEXT)
    val = prog.batchify(corpus.valid, 2)
    model = prog.RNNModel("LSTM", len(corpus.dictionary), 16, 16, 2, tie_weights=True)
    path = tmp_path / "model.pt"
    with open(path, "wb") as f:
        lib.save(model, f)
    with pytest.raises(pickle.UnpicklingError, match="(?i)weights only load failed") as info:
        lib.load(path)
    assert "weights_only" in str(info.value) and "False" in str(info.value)  # the way out
    with open(path, "rb") as f:
        back = lib.load(f, weights_only=False)
    assert type(back) is prog.RNNModel and back.decoder.weight is back.encoder.weight
    assert evaluate(prog, back, val) == evaluate(prog, model, val)


@pytest.mark.parametrize("lib", [torch, cr], ids=["torch", "chainrule"])
def test_the_environment_switches_weights_only_as_torchs(tmp_path, monkeypatch, lib):
    path = tmp_path / "m.pt"
    lib.save(lib.nn.Linear(2, 2), path)
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    with pytest.warns(UserWarning, match="TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"):
        assert isinstance(lib.load(path), lib.nn.Linear)
    with pytest.raises(pickle.UnpicklingError):  # given explicitly: the switch does not apply
        lib.load(path, weights_only=True)
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "1")
    with pytest.raises(RuntimeError, match="but both were set"):
        lib.load(path)
    monkeypatch.delenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD")
    with pytest.raises(pickle.UnpicklingError):
        lib.load(path, weights_only=False)


def test_chainrules_own_switch_and_files_of_tensors_never_unpickle(tmp_path, monkeypatch):
    path = tmp_path / "m.pt"
    cr.save({"opt": cr.optim.SGD(cr.nn.Linear(2, 2).parameters(), lr=0.1)}, path)
    assert path.read_bytes().startswith(b"chainrule pickled object\ndict\n")
    monkeypatch.setenv("CHAINRULE_FORCE_NO_WEIGHTS_ONLY_LOAD", "yes")
    with pytest.warns(UserWarning):
        assert isinstance(cr.load(path)["opt"], cr.optim.SGD)
    cr.save(cr.nn.Linear(2, 2).state_dict(), path)  # tensors only: no pickle in the file
    assert b"pickled" not in path.read_bytes()[:64]
    monkeypatch.setattr(pickle, "load", lambda *a, **k: pytest.fail("unpickled"))
    monkeypatch.setattr(pickle, "loads", lambda *a, **k: pytest.fail("unpickled"))
    assert set(cr.load(path, weights_only=False)) == {"weight", "bias"}


def test_an_object_that_cannot_be_pickled_names_save(tmp_path):
    with pytest.raises(TypeError, match=r"^save: pickling failed .*it holds a function at 'f'"):
        cr.save({"f": lambda: 0}, tmp_path / "m.pt")
    assert list(tmp_path.iterdir()) == []


# -- a killed save's temporary file ---------------------------------------------------------


def test_a_save_killed_by_sigkill_is_cleared_by_the_next_load(tmp_path):
    path = tmp_path / "model.safetensors"
    cr.save({"w": cr.ones(2)}, path)
    script = (
        "import os, signal, chainrule as cr, chainrule.serialization as s\n"
        "def die(f, payload):\n"
        "    f.write(bytes(payload)[:10]); f.flush(); os.kill(os.getpid(), signal.SIGKILL)\n"
        "s._write = die\n"
        f"cr.save({{'w': cr.zeros(1000)}}, {str(path)!r})\n"
    )
    done = subprocess.run([sys.executable, "-c", script], timeout=120)
    assert done.returncode == -signal.SIGKILL
    assert len([p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]) == 1
    assert cr.load(path)["w"].tolist() == [1.0, 1.0]  # the old file, and the orphan gone
    assert [p.name for p in tmp_path.iterdir()] == ["model.safetensors"]


def test_only_stale_temporaries_of_that_name_are_removed(tmp_path):
    path = tmp_path / "model.safetensors"
    cr.save({"w": cr.ones(2)}, path)
    hexes = "0123456789abcdef"
    old = time.time() - 120
    files = {
        f".model.safetensors.{hexes}.tmp": (old, False),  # a killed save's: removed
        f".model.safetensors.{os.getpid()}.{hexes}.tmp": (old, False),  # untouched 2 min
        f".model.safetensors.{os.getppid()}.{hexes[::-1]}.tmp": (time.time(), True),  # live
        f".model.safetensors.{hexes[::-1]}.tmp": (time.time(), True),  # being written now
        ".model.safetensors.backup.tmp": (old, True),  # another program's name
        f".other.safetensors.{hexes}.tmp": (old, True),  # another path's
        f"model.safetensors.{hexes}.tmp": (old, True),
    }
    for name, (mtime, _) in files.items():
        (tmp_path / name).write_bytes(b"x")
        os.utime(tmp_path / name, (mtime, mtime))
    for step in (lambda: cr.load(path), lambda: cr.save({"w": cr.zeros(2)}, path)):
        step()
        left = {p.name for p in tmp_path.iterdir()} - {"model.safetensors"}
        assert left == {name for name, (_, kept) in files.items() if kept}


# -- errors that name their cause -----------------------------------------------------------


def test_an_object_array_is_refused_by_save(tmp_path):
    with pytest.raises(TypeError, match=r"^save: cannot save 'a' of dtype object; .*an object "
                       r"array holds Python objects"):  # fmt: skip
        cr.save({"a": np.array([1, "x"], dtype=object)}, tmp_path / "m.st")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("depth", [900, 2000])
@pytest.mark.parametrize("kind", ["list", "dict"])
def test_a_structure_nested_too_deep_is_a_clear_error(tmp_path, depth, kind):
    deep = cr.ones(1)
    for _ in range(depth):
        deep = [deep] if kind == "list" else {"a": deep}
    with pytest.raises(ValueError, match=r"^save: the object nests containers more than 200 "):
        cr.save(deep, tmp_path / "m.st")
    assert list(tmp_path.iterdir()) == []
    nested = cr.ones(1)
    for _ in range(150):  # as deep as any checkpoint, and more: saved and loaded
        nested = [nested]
    cr.save(nested, tmp_path / "ok.st")
    assert cr.load(tmp_path / "ok.st") is not None


def test_resume_from_a_plain_state_dict_names_the_file_and_what_it_lacks(tmp_path, capsys):
    cr.save(cr.nn.Linear(2, 1).state_dict(), tmp_path / "checkpoint.safetensors")
    code = cli.main(["train", "moons", "--resume", "--out", str(tmp_path), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert "checkpoint.safetensors' is not a run's checkpoint (it lacks recipe" in err
    assert "it holds ['bias', 'weight']" in err and "KeyError" not in err


@pytest.mark.parametrize("text", ["garbage{", "[1, 2]", '{"recipe": "nope"}'])
def test_export_of_a_garbled_metrics_json_names_the_file(tmp_path, capsys, text):
    (tmp_path / "metrics.json").write_text(text)
    assert cli.main(["export", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "export: RUN_DIR is not a run `chainrule train` wrote" in err
    assert f"{tmp_path / 'metrics.json'} cannot be read" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--lr", "nan"], "argument --lr: must be a positive finite number; got nan"),
        (["--lr", "inf"], "argument --lr: must be a positive finite number; got inf"),
        (["--seed", "-1"], "argument --seed: must be an int from 0 to 4294967295; got -1"),
        (["--seed", "1.5"], "argument --seed: expected an int; got '1.5'"),
    ],
)
def test_a_bad_lr_or_seed_is_a_usage_error(capsys, args, message):
    with pytest.raises(SystemExit) as e:
        cli.main(["train", "moons", *args])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "usage:" in err and message in err
