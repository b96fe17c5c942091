"""A run folder someone sent is untrusted: every name, size and value chainrule reads back
from it (the manifest of a half-done replacement, metrics.json's recipe, model
configuration, vocabulary, settings and seed, the checkpoint's every field, a link where a
file of the run belongs) is checked before it is used. Each field below is planted with
hostile values in turn (the fields are read from honest runs, so a new one is planted too);
the command must refuse with a message naming the folder's file and the field, and no file,
in the folder or outside it, may change."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

import chainrule as cr
from chainrule.tools import cli
from chainrule.tools.recipes import train as train_module

TEXT = "def add(a, b):\n    return a + b\n\n" * 40  # the gpt recipe's text: small and quick


def tree(root: Path) -> dict[str, Any]:
    """Every path under root: a file's bytes, a link's target, a folder's mark."""
    out: dict[str, Any] = {}
    for path in sorted(root.rglob("*")):
        key = str(path.relative_to(root))
        if path.is_symlink():
            out[key] = "-> " + os.readlink(path)
        else:
            out[key] = "dir" if path.is_dir() else path.read_bytes()
    return out


def checkpointed(out: Path, argv: list[str], at: int) -> None:
    """A run stopped after ``at`` steps as Ctrl-C stops it, leaving its checkpoint."""
    original = train_module.Progress.step_done

    def step_done(self, *args: Any, **kwargs: Any) -> None:
        self.stop = self.stop or self.steps + 1 == at
        original(self, *args, **kwargs)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(train_module.Progress, "step_done", step_done)
        assert cli.main([*argv, "--out", str(out), "--quiet"]) == 130
    assert (out / "checkpoint.safetensors").exists()


RESUMED = {  # run -> its command line; each is checkpointed after 2 steps
    "names": ["train", "names", "--model", "bigram", "--steps", "4"],
    "moons": ["train", "moons", "--epochs", "2", "--batch-size", "64"],
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    """Honest runs: names (bigram, mlp, lstm, transformer), gpt and moons, and a names and a
    moons run checkpointed midway."""
    tmp = tmp_path_factory.mktemp("honest")
    (tmp / "text.txt").write_text(TEXT, encoding="utf-8")
    trained = {
        "bigram": ["names", "--model", "bigram", "--steps", "1"],
        "mlp": ["names", "--model", "mlp", "--steps", "1"],
        "lstm": ["names", "--model", "lstm", "--steps", "1"],
        "transformer": ["names", "--model", "transformer", "--steps", "1"],
        "gpt": ["gpt", "--steps", "1", "--batch-size", "2", "--data-file", str(tmp / "text.txt")],
        "moons": ["moons", "--epochs", "1"],
    }
    for name, argv in trained.items():
        assert cli.main(["train", *argv, "--out", str(tmp / name), "--quiet"]) == 0
    for name, argv in RESUMED.items():
        checkpointed(tmp / f"{name}-stopped", argv, at=2)
    return tmp


def world(runs: Path, tmp_path: Path, run: str) -> tuple[Path, Path]:
    """A copy of an honest run in tmp_path/received/run, beside a file of the user's own."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "victim.txt").write_text("the user's own")
    folder = tmp_path / "received" / "run"
    shutil.copytree(runs / run, folder, symlinks=True)
    return folder, tmp_path / "victim.txt"


def refused(capsys, argv: list[str], root: Path, *named: str) -> str:
    """Run the command: it must exit 2 naming every one of ``named``, and leave every file
    under root as it was."""
    before = tree(root)
    capsys.readouterr()
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    for name in named:
        assert name in err, (name, err)
    assert tree(root) == before
    return err


# -- metrics.json: every field of the model's configuration and its vocabulary ------------

SIZES = [10**6, 10**12, True, 0, -3, 2.5, "8", None, [4]]


# the fields each honest run's metrics.json holds: (run, model field), known before the
# runs exist from the models the recipes build
MODEL_KEYS = [(r, k) for r, keys in {
    "bigram": ["kind", "vocab_size"],
    "mlp": ["kind", "vocab_size", "context", "n_embd", "n_hidden"],
    "lstm": ["kind", "vocab_size", "n_embd", "hidden_size"],
    "transformer": ["kind", "vocab_size", "n_layer", "n_head", "n_embd"],
    "gpt": ["kind", "vocab_size", "block_size", "n_layer", "n_head", "n_embd", "dropout"],
}.items() for k in keys]  # fmt: skip


@pytest.mark.parametrize(("run", "key"), MODEL_KEYS, ids=[f"{r}.{k}" for r, k in MODEL_KEYS])
@pytest.mark.parametrize("command", ["sample", "export"])
def test_every_model_field_is_checked_before_a_model_is_built(
    runs, tmp_path, capsys, run, key, command
) -> None:
    metrics = json.loads((runs / run / "metrics.json").read_text())
    assert set(metrics["model"]) == {k for r, k in MODEL_KEYS if r == run}  # the table is whole
    values = ["gpt", "lstm", "../x", 3] if key == "kind" else SIZES
    for value in [v for v in values if v != metrics["model"][key]]:
        folder, _ = world(runs, tmp_path / str(values.index(value)), run)
        planted = json.loads(json.dumps(metrics))
        planted["model"][key] = value
        (folder / "metrics.json").write_text(json.dumps(planted))
        refused(capsys, [command, str(folder)], folder.parents[1], str(folder), key)


def test_a_field_more_or_less_in_the_configuration_is_refused(runs, tmp_path, capsys) -> None:
    for i, change in enumerate([{"extra": 1}, {"n_layer": None}]):
        folder, _ = world(runs, tmp_path / str(i), "gpt")
        metrics = json.loads((folder / "metrics.json").read_text())
        metrics["model"].update(change)
        if change.get("n_layer", 0) is None:
            del metrics["model"]["n_layer"]
        (folder / "metrics.json").write_text(json.dumps(metrics))
        refused(capsys, ["sample", str(folder)], tmp_path / str(i), str(folder), "must hold")


VOCABS = {
    "names": [{"chars": "abc", "end": "."}, {"chars": 5, "end": "."}, None, "abc",
              {"chars": None, "end": None}],
    "gpt": [{"chars": "ab", "end": None}, {"chars": ["a"], "end": None}, None],
}  # fmt: skip


@pytest.mark.parametrize("run", ["transformer", "gpt"])
def test_every_vocabulary_is_checked(runs, tmp_path, capsys, run) -> None:
    honest = json.loads((runs / run / "metrics.json").read_text())
    duplicated = honest["vocab"]["chars"][:-1] + honest["vocab"]["chars"][1]
    for i, vocab in enumerate([*VOCABS["names" if run != "gpt" else "gpt"],
                               {**honest["vocab"], "chars": duplicated}]):  # fmt: skip
        folder, _ = world(runs, tmp_path / str(i), run)
        (folder / "metrics.json").write_text(json.dumps({**honest, "vocab": vocab}))
        refused(capsys, ["sample", str(folder)], tmp_path / str(i), str(folder), "vocab")


@pytest.mark.parametrize("command", ["sample", "export"])
@pytest.mark.parametrize("recipe", [["a list"], 3, None, "../../victim", "no-such-recipe"], ids=str)
def test_a_recipe_no_run_names_is_refused(runs, tmp_path, capsys, command, recipe) -> None:
    folder, _ = world(runs, tmp_path, "bigram")
    metrics = json.loads((folder / "metrics.json").read_text())
    (folder / "metrics.json").write_text(json.dumps({**metrics, "recipe": recipe}))
    refused(capsys, [command, str(folder)], tmp_path, "metrics.json", "no known recipe")


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("settings", None),
        ("settings", ["data_dir"]),
        ("settings", {"data_dir": 3}),
        ("seed", "0"),
        ("seed", -1),
        ("seed", True),
        ("seed", 2**40),
    ],  # fmt: skip
)
def test_a_tensor_runs_settings_are_checked_before_export(runs, tmp_path, capsys, key, value):
    folder, _ = world(runs, tmp_path, "moons")
    metrics = json.loads((folder / "metrics.json").read_text())
    (folder / "metrics.json").write_text(json.dumps({**metrics, key: value}))
    refused(capsys, ["export", str(folder)], tmp_path, str(folder), key)


# -- links and headers where the run's files belong -----------------------------------------


@pytest.mark.parametrize("name", ["metrics.json", "model.safetensors"])
@pytest.mark.parametrize("command", ["sample", "export"])
def test_a_file_of_the_run_linked_outside_is_refused(runs, tmp_path, capsys, name, command):
    folder, _ = world(runs, tmp_path, "bigram")
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(folder, elsewhere)
    (folder / name).unlink()
    (folder / name).symlink_to(elsewhere / name)
    refused(capsys, [command, str(folder)], tmp_path, str(folder), name, "outside the folder")


@pytest.mark.parametrize("run", ["bigram", "moons"])
def test_export_never_writes_through_a_link_leading_out(runs, tmp_path, capsys, run) -> None:
    folder, victim = world(runs, tmp_path, run)
    (folder / "model.onnx").symlink_to(victim)
    refused(capsys, ["export", str(folder)], tmp_path, "model.onnx", "outside the folder")
    assert victim.read_text() == "the user's own"


def test_a_model_file_with_a_header_no_array_can_have_is_refused(runs, tmp_path, capsys):
    import struct

    folder, _ = world(runs, tmp_path, "bigram")
    entry = {"dtype": "F32", "shape": [10**30, 0], "data_offsets": [0, 0]}
    header = json.dumps({"logits.weight": entry}).encode()
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header)
    refused(capsys, ["sample", str(folder)], tmp_path, "model.safetensors", "'logits.weight'")


# -- the manifest of a half-done replacement, in every command that reads a run ------------

MANIFESTS = [
    {"files": [], "remove": ["../../victim.txt"]},
    {"files": ["../../victim.txt"], "remove": []},
    {"files": ["metrics.json"], "remove": ["/etc/hostname"]},
    {"files": [["metrics.json"]], "remove": []},
    ["metrics.json"],
]


@pytest.mark.parametrize("manifest", MANIFESTS, ids=json.dumps)
@pytest.mark.parametrize("command", ["sample", "export", "train"])
def test_a_hostile_manifest_is_refused_by_every_command(runs, tmp_path, capsys, manifest, command):
    folder, victim = world(runs, tmp_path, "bigram")
    (folder / ".incoming").mkdir()
    (folder / ".incoming" / "metrics.json").write_text("{}")
    (folder / ".incoming" / ".manifest.json").write_text(json.dumps(manifest))
    argv = [command, str(folder)]
    if command == "train":
        argv = ["train", "names", "--model", "bigram", "--steps", "1", "--quiet", "--out",
                str(folder)]  # fmt: skip
    refused(capsys, argv, tmp_path, str(folder / ".incoming" / ".manifest.json"))
    assert victim.read_text() == "the user's own"


# -- the checkpoint: every field, of every loop ------------------------------------------

POOL = ["../victim.txt", -1, True, 10**30, None, [1], {"a": "b"}, 2.5]


def hostile_values(kind: str) -> list[Any]:
    """The values of POOL (and a tensor that is no random state) a field of this kind must
    refuse."""
    accepts, _ = train_module.FIELD_KINDS[kind]
    return [v for v in [*POOL, cr.zeros(3)] if not accepts(v)]


def checkpoint_fields(run: str) -> dict[str, str]:
    """Every field of a run's checkpoint and its kind, as the loop that wrote it declares."""
    loops = {"names": {"scheduler": "object", "generator": "random state"},
             "moons": {"epoch": "count", "step_in_epoch": "count",
                       "epoch_rng": "random state or null"}}  # fmt: skip
    return {**train_module.CHECKPOINT_FIELDS, **loops[run]}


FIELDS = [(run, key) for run in RESUMED for key in checkpoint_fields(run)]


@pytest.mark.parametrize(("run", "key"), FIELDS, ids=[f"{r}.{k}" for r, k in FIELDS])
def test_every_checkpoint_field_is_checked_before_training(runs, tmp_path, capsys, run, key):
    honest = cr.load(runs / f"{run}-stopped" / "checkpoint.safetensors")
    assert set(honest) == set(checkpoint_fields(run))  # every field written is in the table
    values = hostile_values(checkpoint_fields(run)[key])
    assert values
    for i, value in enumerate(values):
        folder, _ = world(runs, tmp_path / str(i), f"{run}-stopped")
        cr.save({**honest, key: value}, folder / "checkpoint.safetensors")
        argv = [*RESUMED[run], "--out", str(folder), "--quiet", "--resume"]
        refused(capsys, argv, tmp_path / str(i), "checkpoint.safetensors", key)


@pytest.mark.parametrize(
    ("run", "change"),
    [("moons", {"epoch": 9}), ("moons", {"history": [{"epoch": 1}]}), ("moons", {"step_in_epoch": 1,
     "epoch_rng": None}), ("names", {"steps": 99}), ("names", {"history": [{"step": 1.0}]})],
    ids=str,
)  # fmt: skip
def test_a_checkpoint_no_run_writes_is_refused(runs, tmp_path, capsys, run, change) -> None:
    honest = cr.load(runs / f"{run}-stopped" / "checkpoint.safetensors")
    folder, _ = world(runs, tmp_path, f"{run}-stopped")
    cr.save({**honest, **change}, folder / "checkpoint.safetensors")
    argv = [*RESUMED[run], "--out", str(folder), "--quiet", "--resume"]
    refused(capsys, argv, tmp_path, "checkpoint.safetensors", "altered or damaged")


@pytest.mark.parametrize("name", ["checkpoint.safetensors", "metrics.json", "model.safetensors"])
def test_train_never_writes_through_a_link_leading_out(tmp_path, capsys, name) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's own")
    out = tmp_path / "run"
    out.mkdir()
    (out / name).symlink_to(victim)
    argv = ["train", "moons", "--epochs", "1", "--quiet", "--out", str(out), "--checkpoint-every",
            "1"]  # fmt: skip
    refused(capsys, argv, tmp_path, name, "outside the folder")
