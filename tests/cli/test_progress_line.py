"""A finished training run leaves its progress bar's last state as a printed line: the bar
itself goes (a notebook's widget shows nothing once saved), the line stays in the output."""

from __future__ import annotations

from pathlib import Path

import pytest

from chainrule.tools import cli
from chainrule.tools.recipes.train import print_finished


def test_a_finished_bar_is_closed_and_printed(capsys: pytest.CaptureFixture) -> None:
    from tqdm.auto import tqdm

    bar = tqdm(range(3), desc="run", leave=False)
    for _ in bar:
        bar.set_postfix(loss="0.5")
    print_finished(bar)
    captured = capsys.readouterr()
    [line] = captured.out.splitlines()
    assert line.startswith("run: 100%|") and "3/3 [" in line and "loss=0.5]" in line
    assert bar.disable  # closed: nothing more is drawn


@pytest.mark.slow  # a whole run of a recipe, with its plots
def test_the_finished_bar_stays_as_a_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    args = ["train", "moons", "--epochs", "1", "--seed", "0", "--out", str(tmp_path / "run")]
    assert cli.main(args) == 0
    out = capsys.readouterr().out.splitlines()
    [line] = [s for s in out if s.startswith("moons: ")]
    assert "100%" in line and "1/1 [" in line and "loss=" in line and "test_accuracy=" in line
    assert out.index(line) < next(i for i, s in enumerate(out) if s.startswith("test accuracy"))


@pytest.mark.slow
def test_a_quiet_run_prints_no_bar(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    args = ["train", "moons", "--epochs", "1", "--quiet", "--out", str(tmp_path / "run")]
    assert cli.main(args) == 0
    assert "moons: " not in capsys.readouterr().out


@pytest.mark.slow  # two short runs of recipes with their own training loops
@pytest.mark.parametrize(
    "args",
    [["names", "--model", "bigram", "--steps", "2"], ["moons-scalar", "--epochs", "1"]],
    ids=["names", "moons-scalar"],
)
def test_the_recipes_with_their_own_loops_leave_the_line_too(
    args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    assert cli.main(["train", *args, "--out", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out.splitlines()
    [line] = [s for s in out if s.startswith(f"{args[0]}: ")]
    assert "100%" in line
