"""`chainrule graph`: which way the drawing runs (--rankdir, top to bottom by default for a long
graph), and a drawing that cannot be made refused before the step runs, leaving no file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from chainrule.tools import cli

pytest.importorskip("graphviz")


def rankdir(source: str) -> str:
    [line] = [s for s in source.splitlines() if "rankdir" in s]
    return line.split("rankdir=")[1].rstrip("]")


def test_a_short_graph_runs_left_to_right_unless_asked(tmp_path: Path) -> None:
    out = tmp_path / "step.dot"
    assert cli.main(["graph", "moons", "--out", str(out)]) == 0
    assert rankdir(out.read_text()) == "LR"
    assert cli.main(["graph", "moons", "--out", str(out), "--rankdir", "TB"]) == 0
    assert rankdir(out.read_text()) == "TB"


@pytest.mark.slow  # a GPT's training step: a few seconds
def test_a_gpt_runs_top_to_bottom(tmp_path: Path) -> None:
    out = tmp_path / "gpt.dot"
    assert cli.main(["graph", "gpt", "--out", str(out)]) == 0
    assert rankdir(out.read_text()) == "TB"
    assert cli.main(["graph", "gpt", "--out", str(out), "--rankdir", "LR"]) == 0
    assert rankdir(out.read_text()) == "LR"


def test_a_missing_dot_is_named_and_nothing_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.chdir(tmp_path)
    for out in ("step.svg", "step.png", "step"):
        assert cli.main(["graph", "moons", "--out", out]) == 2
        err = capsys.readouterr().err
        assert "the `dot` program (Graphviz) is not installed" in err
        assert "--out FILE.dot" in err
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_format_is_refused_before_the_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["graph", "moons", "--out", str(tmp_path / "step.xyz")]) == 2
    assert "--out must end in a format graphviz draws" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_a_failing_dot_leaves_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import graphviz

    def fail(self: object, format: str) -> bytes:
        raise graphviz.CalledProcessError(1, ["dot"], "", "out of memory")

    monkeypatch.setattr(shutil, "which", lambda name: "/usr/bin/dot")
    monkeypatch.setattr(graphviz.Digraph, "pipe", fail)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["graph", "moons", "--out", "step.svg"]) == 1
    assert "`dot` could not draw the graph" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
