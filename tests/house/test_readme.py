"""The README's "Reading the code" stays true: every file it names exists, and the size it
gives a file is that file's, within 5% (a size is "about N lines")."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "chainrule"

# `path` ... (... N lines ...): the first count in the parentheses that follow the path
SIZED = re.compile(r"`(?P<path>[\w/]+\.py)`(?:\]\([^)]*\))?\s*\((?P<note>[^)]*?(\d+) lines)")


def section(text: str, title: str) -> str:
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else len(text)]


def sizes(text: str) -> list[tuple[str, int]]:
    return [(m["path"], int(m.group(3))) for m in SIZED.finditer(text)]


def test_reading_the_code_names_real_files_with_their_sizes() -> None:
    text = section((ROOT / "README.md").read_text(), "Reading the code")
    named = re.findall(r"`([\w/]+\.py)`", text)
    assert len(named) >= 4
    missing = [p for p in named if not (SRC / p).is_file()]
    assert not missing, f"README.md, Reading the code: no such file under src/chainrule: {missing}"
    sized = sizes(text)
    assert len(sized) >= 3, "README.md, Reading the code: give the size of the files it names"
    wrong = []
    for path, said in sized:
        real = len((SRC / path).read_text().splitlines())
        if abs(real - said) > 0.05 * real:
            wrong.append(f"{path}: says {said} lines, has {real}")
    assert not wrong, "README.md, Reading the code: fix the sizes: " + "; ".join(wrong)


def test_the_sizes_are_read_from_the_sentences_the_readme_writes() -> None:
    text = (
        "[`autograd/reference.py`](src/chainrule/autograd/reference.py) (101 lines: a walk), "
        "`tensor/core.py` (what a Tensor is, about 596 lines), `ops/elementwise.py`, one op"
    )
    assert sizes(text) == [("autograd/reference.py", 101), ("tensor/core.py", 596)]
