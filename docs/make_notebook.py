"""Write docs/tutorial.ipynb from docs/tutorial.md: each ```python block becomes a code cell,
the prose between them a markdown cell, and a ```text block right after a python block (what
that block prints) the code cell's output. A picture right after a block (``![...](name.svg)``,
the drawing that is the block's last value) is the cell's displayed value, as a kernel shows
it, so that the saved notebook shows each drawing inline. Run it after editing tutorial.md or
redrawing the pictures; a test checks that the committed notebook is what this writes.

    python docs/make_notebook.py
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
TUTORIAL = DOCS / "tutorial.md"
NOTEBOOK = DOCS / "tutorial.ipynb"
# The fences as tests/house/test_tutorial.py reads them: language, info string, body.
FENCE = re.compile(r"^```(\w*)([^\n]*)\n(.*?)^```\s*$", re.M | re.S)
PICTURE = re.compile(r"\s*!\[[^\]]*\]\(([\w.-]+)\)")  # as tests/house/test_tutorial.py reads it


def _lines(text: str) -> list[str]:
    """A cell's source or output as notebooks store it: lines keeping their newlines."""
    return text.splitlines(keepends=True)


def cells(markdown: str) -> list[dict]:
    """The notebook cells of a tutorial written in markdown, in order."""
    found: list[dict] = []
    prose_from = 0  # where the prose not yet in a cell starts
    end = 0  # where the previous fence closed
    for m in FENCE.finditer(markdown):
        lang, body = m.group(1), m.group(3)
        after_code = bool(found) and found[-1]["cell_type"] == "code" and prose_from == end
        if lang == "text" and after_code and markdown[end : m.start()].strip() == "":
            found[-1]["outputs"] = [
                {"name": "stdout", "output_type": "stream", "text": _lines(body)}
            ]
        elif lang == "python":
            prose = markdown[prose_from : m.start()].strip()
            if prose:
                found.append({"cell_type": "markdown", "metadata": {}, "source": _lines(prose)})
            found.append(
                {
                    "cell_type": "code",
                    "execution_count": None,
                    "metadata": {},
                    "outputs": [],
                    "source": _lines(body.rstrip("\n")),
                }
            )
        else:  # any other fence stays in the prose around it
            end = m.end()
            continue
        prose_from = end = m.end()
        picture = PICTURE.match(markdown, end)
        if picture:
            found[-1]["outputs"].append(_drawn(picture.group(1)))
            prose_from = end = picture.end()
    prose = markdown[prose_from:].strip()
    if prose:
        found.append({"cell_type": "markdown", "metadata": {}, "source": _lines(prose)})
    for i, cell in enumerate(found):
        cell["id"] = f"cell-{i:02d}"  # nbformat 4.5 wants ids; by position, so they are stable
    return found


def _drawn(picture: str) -> dict:
    """A drawing the docs hold (an SVG `dot` drew) as the value a kernel displays for it,
    fitted to the cell's width as draw_graph's drawings are."""
    from chainrule.tools.layout import fit_width

    svg = (DOCS / picture).read_text(encoding="utf-8")
    return {
        "data": {
            "image/svg+xml": _lines(fit_width(svg)),
            "text/plain": ["<chainrule.viz.Drawing>"],
        },
        "execution_count": None,
        "metadata": {},
        "output_type": "execute_result",
    }


def notebook(markdown: str) -> str:
    """The notebook's file text as nbformat writes it: keys sorted, one-space indent, no final
    newline."""
    nb = {
        "cells": cells(markdown),
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False)


def main() -> int:
    NOTEBOOK.write_text(notebook(TUTORIAL.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"wrote {NOTEBOOK}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
