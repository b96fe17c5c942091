"""The README's own training loop resumes exactly: its code, run as written, ends with
the same weights, bit for bit, as an uninterrupted run wherever it is stopped; and each
piece of state it keeps is needed (left out, the weights differ)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import chainrule as cr

README = Path(__file__).resolve().parents[2] / "README.md"
SECTION = "## Resuming your own loop exactly"


def the_loop(drop: str | None = None) -> dict:
    """The section's python block run in a fresh namespace, without the line holding
    ``drop`` if given; its names (train among them)."""
    text = README.read_text()
    section = text[text.index(SECTION) :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    if drop is not None:
        assert drop in code
        code = "\n".join(line for line in code.splitlines() if drop not in line)
    namespace: dict = {"__name__": "readme"}
    exec(compile(code, str(README), "exec"), namespace)
    return namespace


def same(a, b) -> bool:
    return all(cr.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))


@pytest.fixture(scope="module")
def loop(tmp_path_factory):
    import os

    folder = tmp_path_factory.mktemp("readme")
    here = os.getcwd()
    os.chdir(folder)  # the block saves its checkpoints in the working directory
    try:
        names = the_loop()
    finally:
        os.chdir(here)
    return names, names["train"](str(folder / "whole.safetensors"))


# 1: in the first step; 5: right after a checkpoint; 13: an epoch's last step; 24: mid-epoch;
# 39: the last step, after which nothing remains to do
@pytest.mark.parametrize("stop", [1, 5, 13, 24, 39])
def test_the_readme_loop_stopped_anywhere_resumes_exactly(loop, stop, tmp_path):
    names, straight = loop
    path = str(tmp_path / "run.safetensors")
    names["train"](path, stop_after=stop)
    assert same(names["train"](path), straight)


@pytest.mark.parametrize("drop", ["order.set_state", "cr.set_rng_state", "opt.load_state_dict"])
def test_each_piece_of_state_the_readme_keeps_is_needed(loop, drop, tmp_path, monkeypatch):
    _, straight = loop
    monkeypatch.chdir(tmp_path)
    names = the_loop(drop)
    path = str(tmp_path / "run.safetensors")
    names["train"](path, stop_after=24)
    assert not same(names["train"](path), straight)
