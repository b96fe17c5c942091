"""A run's outputs: --out is checked before any training, a diverged run says so and
exits non-zero with strict JSON metrics, and outputs an earlier run left in the folder
that this run did not write are removed, so the folder holds one run."""

from __future__ import annotations

import json
import shutil
import time

import pytest

from chainrule.tools import cli
from chainrule.tools.recipes import RecipeError


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


def never_trains(monkeypatch) -> None:
    """Make any training a failure of the test: --out must be refused before it."""
    import chainrule.tools.recipes.train as train_module

    def train(*args, **kwargs):
        raise AssertionError("trained before --out was checked")

    monkeypatch.setattr(train_module, "train", train)


@pytest.mark.parametrize(
    "out",
    ["/proc/chainrule-run", "/proc/self", "/proc/self/fdinfo/run", "/sys/chainrule-run"],
)
def test_out_where_nothing_can_be_written_is_refused_before_training(
    out, monkeypatch, capsys
) -> None:
    never_trains(monkeypatch)
    assert cli.main(["train", "moons", "--out", out, "--quiet"]) == 2
    assert f"train: cannot write into the --out folder {out!r}: " in capsys.readouterr().err


def test_an_immutable_out_folder_is_refused_before_training(tmp_path, monkeypatch, capsys):
    import subprocess

    folder = tmp_path / "frozen"
    folder.mkdir()
    if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not permitted here")
    try:
        never_trains(monkeypatch)
        for out in (folder, folder / "run"):
            assert cli.main(["train", "moons", "--out", str(out), "--quiet"]) == 2
            err = capsys.readouterr().err
            assert (
                f"cannot write into the --out folder {str(out)!r}: Operation not permitted" in err
            )
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)
    assert list(folder.iterdir()) == []


def run_files() -> list[str]:
    from chainrule.tools.recipes.train import CHECKPOINT, OUTPUTS

    return [*OUTPUTS, CHECKPOINT]


@pytest.mark.parametrize("name", run_files())
def test_a_folder_where_the_run_writes_a_file_is_refused_before_training(
    tmp_path, monkeypatch, capsys, name
) -> None:
    never_trains(monkeypatch)
    (tmp_path / name / "inside").mkdir(parents=True)
    assert cli.main(["train", "moons", "--out", str(tmp_path), "--quiet"]) == 2
    assert f"holds a folder where the run writes its {name}" in capsys.readouterr().err
    assert (tmp_path / name / "inside").is_dir()


@pytest.mark.parametrize("name", run_files())
def test_a_link_leading_out_where_the_run_writes_is_refused_before_training(
    tmp_path, monkeypatch, capsys, name
) -> None:
    never_trains(monkeypatch)
    (tmp_path / "victim").write_text("mine")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / name).symlink_to(tmp_path / "victim")
    assert cli.main(["train", "moons", "--out", str(tmp_path / "run"), "--quiet"]) == 2
    assert f"got {name!r} (a link to" in capsys.readouterr().err
    assert (tmp_path / "victim").read_text() == "mine"


def test_an_incoming_file_in_out_is_refused_before_training(tmp_path, monkeypatch, capsys):
    never_trains(monkeypatch)
    (tmp_path / ".incoming").write_text("not a folder")
    assert cli.main(["train", "moons", "--out", str(tmp_path), "--quiet"]) == 2
    assert "is not a folder of the run's own; got a file" in capsys.readouterr().err


def test_the_check_of_out_leaves_nothing_behind(tmp_path) -> None:
    from chainrule.tools.recipes.train import check_out

    check_out(str(tmp_path / "a" / "b" / "run"))  # writable: made, tried, and gone again
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "run").mkdir()
    check_out(str(tmp_path / "run"))
    assert list((tmp_path / "run").iterdir()) == []


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


# -- a run's files are replaced as one set ---------------------------------------------------

# Every call that makes a write take effect (a rename into place, a removal): a process
# killed just before the k-th of them, for each k, stopped between any two files.
POINTS = ("replace", "remove", "unlink", "rmdir")


def killed_at(k: int, work) -> int:
    """Run ``work()`` in a forked process that dies (os._exit, as SIGKILL: nothing cleans
    up) just before its k-th write point; its exit status: 9 if killed, 0 if it finished."""
    import os

    pid = os.fork()
    if pid == 0:  # the child
        count = [0]

        def deadly(call):
            def wrapped(*args, **kwargs):
                count[0] += 1
                if count[0] == k:
                    os._exit(9)
                return call(*args, **kwargs)

            return wrapped

        for name in POINTS:
            setattr(os, name, deadly(getattr(os, name)))
        try:
            work()
        finally:
            os._exit(0)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def snapshot(folder) -> dict[str, bytes]:
    """Each file's bytes; metrics.json's without its seconds, which differ from run to run."""
    files = {p.name: p.read_bytes() for p in sorted(folder.iterdir())}
    if "metrics.json" in files:
        lines = files["metrics.json"].splitlines()
        files["metrics.json"] = b"\n".join(x for x in lines if b'"seconds"' not in x)
    return files


def test_a_set_killed_at_every_write_point_is_all_old_or_all_new(tmp_path) -> None:
    from chainrule.serialization import write_atomically
    from chainrule.tools.run_files import finish_replacing, replace_together

    folder = tmp_path / "run"
    folder.mkdir()
    old = {"metrics.json": b"old metrics", "model.safetensors": b"old model",
           "curves.png": b"old curves", "decision_boundary.png": b"old only"}  # fmt: skip
    new = {"metrics.json": b"new metrics", "model.safetensors": b"new model",
           "curves.png": b"new curves"}  # fmt: skip
    (folder / "notes.txt").write_bytes(b"the user's own")  # not a run's file: left alone

    def write_new() -> None:
        with replace_together(folder, old) as incoming:
            for name, data in new.items():
                write_atomically(f"{incoming}/{name}", lambda tmp, d=data: open(tmp, "wb").write(d))

    seen = {"old": 0, "new": 0}
    for k in range(1, 100):
        for name, data in old.items():
            (folder / name).write_bytes(data)
        status = killed_at(k, write_new)
        finish_replacing(folder)  # what the next run or command does first
        files = snapshot(folder)
        assert files.pop("notes.txt") == b"the user's own"
        assert files in (old, new), f"killed at write point {k}: a mixed set {files}"
        seen["old" if files == old else "new"] += 1
        if status == 0:  # it finished: k passed every write point
            break
        assert status == 9
    assert seen["old"] >= 3 and seen["new"] >= 3, seen  # kills on both sides of the manifest


def test_an_error_while_writing_the_set_leaves_the_old_one(tmp_path) -> None:
    from chainrule.tools.run_files import replace_together

    (tmp_path / "metrics.json").write_text("old")
    with pytest.raises(RuntimeError, match="plot failed"):
        with replace_together(tmp_path, ["metrics.json"]) as incoming:
            (tmp_path / incoming / "metrics.json").write_text("new")
            raise RuntimeError("plot failed")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["metrics.json"]
    assert (tmp_path / "metrics.json").read_text() == "old"


@pytest.mark.slow  # heavy; `make test-all` runs it
def test_a_run_killed_while_replacing_an_earlier_runs_files_leaves_one_run(tmp_path) -> None:
    """An earlier moons run's files, replaced by a names run killed at each write point
    after its training (the checkpoint, the outputs, the moves): the folder then holds the
    moons run or the names run, whole, as the next command sees it."""
    import hashlib

    out = tmp_path / "run"
    names = ["train", "names", "--model", "bigram", "--steps", "2", "--quiet", "--out", str(out)]
    assert cli.main(["train", "moons", "--epochs", "1", "--quiet", "--out", str(out)]) == 0
    moons = snapshot(out)
    whole = tmp_path / "whole"
    assert cli.main([*names[:-1], str(whole)]) == 0
    runs = {"moons": moons, "names": snapshot(whole)}
    digest = hashlib.sha256(runs["names"]["model.safetensors"]).hexdigest()
    seen = set()
    for k in range(1, 100):
        shutil.rmtree(out)
        out.mkdir()
        for name, data in moons.items():
            (out / name).write_bytes(data)
        status = killed_at(k, lambda: cli.main(names))
        assert cli.main(["sample", str(out)]) in (0, 2)  # a reader completes or undoes it
        files = {
            n: d
            for n, d in snapshot(out).items()  # a run's files, not its checkpoint's
            if n != "checkpoint.safetensors" and not n.startswith(".checkpoint")
        }
        recipe = json.loads(files["metrics.json"])["recipe"]
        assert files == runs[recipe], f"killed at write point {k}: a mixed set"
        if recipe == "names":
            assert hashlib.sha256(files["model.safetensors"]).hexdigest() == digest
        seen.add(recipe)
        if status == 0:
            break
    assert seen == {"moons", "names"}


def test_the_ranks_of_a_job_checking_out_at_once_keep_the_folder(tmp_path) -> None:
    """An MPI job's ranks each check --out at once: one must not remove the folder another
    is trying (the other's try then failed, and the job hung), so a passed try keeps it."""
    from chainrule.tools.recipes.train import check_out

    check_out(str(tmp_path / "a" / "run"), alone=False)
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["run"]
    assert list((tmp_path / "a" / "run").iterdir()) == []
    (tmp_path / "file").write_text("in the way")
    with pytest.raises(RecipeError, match="is a file"):  # and still refuses what it did
        check_out(str(tmp_path / "file" / "run"), alone=False)
