"""docs/architecture.md's map is the tree's: every module and package of src/chainrule has a
row, every path a row names exists, and the modules it says import NumPy are the ones that do."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "chainrule"
DOC = ROOT / "docs" / "architecture.md"


def first_column() -> list[str]:
    """The paths named in the first column of the "Which file holds what" table."""
    text = DOC.read_text()
    table = text[text.index("## Which file holds what") : text.index("## The direction")]
    cells = [row.split("|")[1] for row in table.splitlines() if row.startswith("| `")]
    return [p for cell in cells for p in re.findall(r"`([^`]+)`", cell)]


def test_every_module_and_package_has_a_row() -> None:
    named = {p.rstrip("/").split("/")[0] for p in first_column()}
    tree = {p.name for p in SRC.iterdir() if p.suffix == ".py" or (p / "__init__.py").is_file()}
    tree -= {"__init__.py"}
    missing = sorted(tree - named)
    assert not missing, f"docs/architecture.md: give each a row in its file table: {missing}"


def test_every_path_a_row_names_exists() -> None:
    stray = [p for p in first_column() if not (SRC / p.rstrip("/")).exists()]
    assert not stray, f"docs/architecture.md names paths that are not in src/chainrule: {stray}"


def test_the_modules_said_to_import_numpy_are_the_ones_that_do() -> None:
    text = DOC.read_text()
    sentence = text[text.index("of the tools, ") : text.index("import it for their own")]
    said = set(re.findall(r"`([\w/]+\.py)`", sentence))
    pattern = re.compile(r"^\s*(import numpy|from numpy)", re.MULTILINE)
    real = {
        str(p.relative_to(SRC))
        for p in SRC.rglob("*.py")
        if "array" not in p.relative_to(SRC).parts and pattern.search(p.read_text())
    }
    assert said == real, (
        f"docs/architecture.md, the array row: NumPy is imported outside array/ by {sorted(real)}, "
        f"the row says {sorted(said)}"
    )


def _parts() -> list[tuple[list[str], int]]:
    """Each row of the "four parts" table: its modules and the lines it says they hold."""
    text = DOC.read_text()
    table = text[text.index("## The four parts") : text.index("## The direction")]
    rows = [r.split("|") for r in table.splitlines() if r.startswith("| the ")]
    return [(re.findall(r"`([^`]+)`", r[2]), int(r[3].strip().replace(",", ""))) for r in rows]


def _lines(name: str) -> int:
    path = SRC / name.rstrip("/")
    files = [path] if path.is_file() else list(path.rglob("*.py"))
    return sum(len(f.read_text().splitlines()) for f in files)


def test_the_four_parts_hold_every_module_once_at_their_sizes() -> None:
    parts = _parts()
    assert len(parts) == 4
    named = [m.rstrip("/") for modules, _ in parts for m in modules]
    tree = {p.name for p in SRC.iterdir() if p.suffix == ".py" or (p / "__init__.py").is_file()}
    assert sorted(named) == sorted(tree - {"__init__.py"}), (
        "docs/architecture.md, the four parts: name every top-level module once"
    )
    for modules, said in parts:
        real = sum(_lines(m) for m in modules)
        assert abs(real - said) <= 0.15 * said, (
            f"docs/architecture.md, the four parts: {modules[0]}... hold {real} lines; "
            f"the table says {said}"
        )
