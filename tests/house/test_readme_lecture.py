"""The README's "Same seed, same numbers" block prints what its comments say: makemore's first
lecture's draws (``torch.rand`` and the five sampled names), which are PyTorch's."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def block() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index("## Same seed, same numbers\n")
    code = re.search(r"```python\n(.*?)```", text[start:], re.S)
    assert code, "README.md, Same seed, same numbers: no python block"
    return code.group(1)


def test_the_readme_lecture_block_prints_the_lecture_numbers() -> None:
    code = block()
    said = re.findall(r"# (tensor\(.*\)|\w+\..*)$", code, re.M)
    assert len(said) == 2, "README.md: the block's two printed lines are stated as comments"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    lines = out.getvalue().splitlines()
    assert lines[0] == said[0]
    assert lines[1:] == said[1].split()


@pytest.mark.slow  # PyTorch counts the 228,146 bigrams one element write at a time too
def test_the_stated_numbers_are_pytorchs() -> None:
    """The comments are PyTorch's own output for the same program."""
    code = block().replace("import chainrule as torch", "import torch\nimport chainrule")
    code = code.replace("torch.datasets.names()", "chainrule.datasets.names()")
    said = re.findall(r"# (tensor\(.*\)|\w+\..*)$", code, re.M)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    lines = out.getvalue().splitlines()
    assert lines[0] == said[0]
    assert lines[1:] == said[1].split()
