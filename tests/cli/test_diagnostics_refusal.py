"""--diagnostics on a recipe with a training loop of its own: the help names those recipes and
the refusal says which they are and how to record such a model anyway."""

from __future__ import annotations

import re

import pytest

from chainrule.tools import cli


def test_the_help_names_the_recipes_with_loops_of_their_own() -> None:
    train = cli.parser()._subparsers._group_actions[0].choices["train"]  # type: ignore[union-attr]
    text = " ".join(train.format_help().split())
    listed = re.search(r"\(not for (.*?), which train with loops of their own", text)
    assert listed is not None, text
    names = re.split(r", | and ", listed.group(1))
    assert names == cli.own_loops() == ["moons-scalar", "names", "gpt", "adder"]


@pytest.mark.parametrize("recipe", ["names", "gpt", "adder"])
def test_the_refusal_says_why_and_what_to_do(
    recipe: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["train", recipe, "--diagnostics"]) == 2
    err = capsys.readouterr().err
    assert f"the {recipe} recipe trains with a loop of its own (as moons-scalar, names" in err
    assert "hint: cr.viz.Monitor(model, optimizer)" in err
