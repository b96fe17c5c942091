"""docs/tutorial.md runs: its ```python blocks are executed in order in one namespace, and a
```text block right after a python block is that block's output, checked exactly.

A block whose info string says ``needs=mod1,mod2`` runs only where those modules import. A
block followed by a picture (``![...](name.svg)``, after its output if any) ends with the
drawing as its value, as a notebook cell shows it; the run renders it to that file.
Run this file as a script to redraw the tutorial's pictures into docs/ (needs `dot`).
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import os
import re
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
TUTORIAL = DOCS / "tutorial.md"
FENCE = re.compile(r"^```(\w*)([^\n]*)\n(.*?)^```\s*$", re.M | re.S)
IMAGE = re.compile(r"!\[[^\]]*\]\(([\w.-]+)\)")
PICTURE = re.compile(r"\s*!\[[^\]]*\]\(([\w.-]+)\)")  # right after a block: its drawing


@dataclass
class Block:
    line: int  # of the first line of code, 1-based
    code: str
    needs: list[str] = field(default_factory=list)
    output: str | None = None  # the ```text block that follows, if any
    picture: str | None = None  # the file of the picture that follows, drawn by the block


def blocks(text: str) -> list[Block]:
    found: list[Block] = []
    end = 0  # where the previous block closed
    for m in FENCE.finditer(text):
        lang, info, body = m.group(1), m.group(2).strip(), m.group(3)
        line = text.count("\n", 0, m.start()) + 2
        if lang == "python":
            needs = info.split("=", 1)[1].split(",") if info.startswith("needs=") else []
            found.append(Block(line, body, needs))
        elif lang == "text" and found and text[end : m.start()].strip() == "":
            found[-1].output = body  # right after a python block: its output
        else:
            end = m.end()
            continue
        end = m.end()
        picture = PICTURE.match(text, end)
        if picture:
            found[-1].picture = picture.group(1)
    return found


def available(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def run(todo: list[Block], namespace: dict, source: Path = TUTORIAL) -> int:
    """Run the blocks; return how many printed outputs were checked."""
    checked = 0
    for b in todo:
        # Pad with newlines so a traceback points at the line of the markdown file.
        tree = ast.parse("\n" * (b.line - 1) + b.code, str(source))
        last = tree.body.pop() if b.picture and isinstance(tree.body[-1], ast.Expr) else None
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(tree, str(source), "exec"), namespace)
            if b.picture:  # the block's value, as a notebook shows it, drawn into the file
                assert last is not None, f"the block at line {b.line} must end with its drawing"
                drawing = eval(compile(ast.Expression(last.value), str(source), "eval"), namespace)
                stem, fmt = b.picture.rsplit(".", 1)
                drawing.render(stem, format=fmt, cleanup=True)
        if b.output is not None:
            got = [line.rstrip() for line in out.getvalue().rstrip("\n").splitlines()]
            want = [line.rstrip() for line in b.output.rstrip("\n").splitlines()]
            assert got == want, f"the block at {source.name} line {b.line} now prints:\n" + (
                "\n".join(got)
            )
            checked += 1
    return checked


@contextlib.contextmanager
def rendering_into(directory: Path) -> Iterator[None]:
    """Run with ``directory`` as the working directory, where the tutorial's pictures land.
    Without the `dot` program, render() saves the graph's source instead of a picture."""
    import graphviz

    old, saved = Path.cwd(), graphviz.Digraph.render
    if shutil.which("dot") is None:

        def render(self, filename, format=None, **kwargs):  # noqa: A002, ANN001, ANN003, ANN202
            return self.save(f"{filename}.{format}.gv")

        graphviz.Digraph.render = render
    os.chdir(directory)
    try:
        yield
    finally:
        os.chdir(old)
        graphviz.Digraph.render = saved


ALL = blocks(TUTORIAL.read_text())
CORE = ALL[: next((i for i, b in enumerate(ALL) if b.needs), len(ALL))]


def test_the_tutorial_runs_and_prints_what_it_shows(tmp_path: Path) -> None:
    assert len(CORE) >= 10
    with rendering_into(tmp_path):
        checked = run(CORE, {"__name__": "tutorial"})
    assert checked >= 6
    drawn = {p.name.removesuffix(".gv") for p in tmp_path.iterdir()}
    assert drawn == {b.picture for b in ALL if b.picture}


def test_the_tutorial_sections_that_need_more_modules(tmp_path: Path) -> None:
    later = ALL[len(CORE) :]
    assert later and all(b.needs for b in later)
    for module in sorted({m for b in later for m in b.needs}):
        if not available(module):
            pytest.skip(f"tutorial.md from line {later[0].line} needs {module}, not there yet")
    with rendering_into(tmp_path):
        run(ALL, {"__name__": "tutorial"})


# Pictures the tutorial shows but does not draw: screenshots of a page in a browser
SCREENSHOTS = {"walkthrough.png"}  # the walkthrough page (tests/viz/test_walkthrough.py)


def test_every_picture_is_drawn_by_the_tutorial_and_committed() -> None:
    text = TUTORIAL.read_text()
    images = set(IMAGE.findall(text))
    assert images - SCREENSHOTS == {b.picture for b in ALL if b.picture}
    assert "render(" not in "".join(b.code for b in ALL)  # a drawing is a cell's output
    for image in sorted(images):
        assert (DOCS / image).is_file(), f"docs/{image} is missing; run python {__file__}"


def test_the_readme_tour_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    readme = DOCS.parent / "README.md"
    tour = blocks(readme.read_text())
    assert len(tour) >= 3
    monkeypatch.chdir(tmp_path)  # the tour saves a checkpoint in the working directory
    run(tour, {"__name__": "readme"}, readme)
    assert (tmp_path / "digits.safetensors").is_file()


if __name__ == "__main__":
    if shutil.which("dot") is None:
        sys.exit("the graphviz `dot` program is needed to draw the pictures")
    ready = [b for b in ALL if all(available(m) for m in b.needs)]
    with rendering_into(DOCS):
        run(ready, {"__name__": "tutorial"})
    print(f"ran {len(ready)} of {len(ALL)} blocks; pictures in {DOCS}")
