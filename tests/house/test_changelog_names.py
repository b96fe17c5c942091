"""The CHANGELOG names what exists: every file it puts in backticks is in the tree (unless it
says the file *was* so named), and every ``cr.*`` or ``chainrule.*`` name it gives resolves."""

from __future__ import annotations

import functools
import importlib
import re
from pathlib import Path
from typing import Any

import chainrule as cr

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "chainrule"
FILE = re.compile(r"`([\w/.-]+\.py)`")
NAME = re.compile(r"`(?:cr|chainrule)\.([A-Za-z_][\w.]*)")
FORMER = re.compile(r"(?:was|were|formerly|renamed from|replaces|replaced)\W*$")
BECAME = re.compile(r"^\W*(?:is now|is the package|became|moved to|is split)")


def _exists(path: str) -> bool:
    """A path as the CHANGELOG writes it: from the repository's root, from src/chainrule/,
    or a bare file name somewhere under src/, benchmarks/ or tests/."""
    if (ROOT / path).is_file() or (SRC / path).is_file():
        return True
    return "/" not in path and path in _file_names()


@functools.cache
def _file_names() -> set[str]:
    return {p.name for top in ("src", "benchmarks", "tests") for p in (ROOT / top).rglob("*.py")}


def _resolves(dotted: str) -> bool:
    obj: Any = cr
    for part in dotted.rstrip(".").split("."):
        if hasattr(obj, part):
            obj = getattr(obj, part)
            continue
        try:
            obj = importlib.import_module(f"{obj.__name__}.{part}")
        except (AttributeError, ImportError):
            return False
    return True


def files_named(text: str) -> list[str]:
    """The files the text names as present (not those it says were so named before)."""
    return [
        m[1]
        for m in FILE.finditer(text)
        if not FORMER.search(text[max(0, m.start() - 24) : m.start()])
        and not BECAME.search(text[m.end() : m.end() + 24])
    ]


def test_every_file_the_changelog_names_exists() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    missing = sorted({p for p in files_named(text) if not _exists(p)})
    assert missing == [], (
        "CHANGELOG.md names files that are not in the tree: write their present names (or "
        f"'(was `old.py`)' after the new one): {missing}"
    )


def test_every_chainrule_name_in_the_changelog_resolves() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    names = set(NAME.findall(text))
    assert len(names) > 20
    missing = sorted(n for n in names if not _resolves(n))
    assert missing == [], f"CHANGELOG.md names what chainrule does not have: {missing}"


def test_a_former_name_is_not_taken_for_a_present_one() -> None:
    text = "`restricted_unpickler.py` (was `weights_only.py`); `old.py` is now `new.py`; `a/b.py`"
    assert files_named(text) == ["restricted_unpickler.py", "new.py", "a/b.py"]
    assert not _exists("nn/nowhere.py") and _exists("nn/functional.py") and _exists("core.py")
    assert _exists("gpt_step.py") and not _resolves("nn.NoSuchLayer") and _resolves("nn.Linear")
