"""chainrule in Jupyter: docs/tutorial.ipynb is what docs/make_notebook.py makes of
docs/tutorial.md and runs in a real kernel printing what it shows; each drawing is a cell's
output, inline (SVG, or a clear text where `dot` is missing), in the saved notebook and in the
executed one, and no cell writes a file; the recipes' progress bars are tqdm.auto's;
the module reprs a cell shows read as PyTorch's.
"""

from __future__ import annotations

import importlib.util
import json
import pickle
import re
import shutil
from pathlib import Path
from types import ModuleType

import pytest
import torch

import chainrule as cr
from chainrule import nn
from tests.helpers import kernel_of_this_interpreter
from tests.house.test_tutorial import ALL, TUTORIAL, available

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "docs" / "tutorial.ipynb"
NO_DOT = "draw_graph: the graphviz `dot` program"

# Run after the tutorial's cells: a drawing as a cell's last expression, shown by the kernel.
SHOW = "cr.viz.draw_graph(cr.tensor([1.0, 2.0], requires_grad=True).exp().sum())"


def make_notebook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_notebook", ROOT / "docs/make_notebook.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def committed() -> dict:
    return json.loads(NOTEBOOK.read_text(encoding="utf-8"))


def code_cells(nb: dict) -> list[dict]:
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def stdout(cell: dict) -> list[str]:
    """What a cell printed, compared as test_tutorial compares: trailing blanks dropped."""
    text = "".join(
        "".join(o["text"])
        for o in cell["outputs"]
        if o["output_type"] == "stream" and o["name"] == "stdout"
    )
    return [line.rstrip() for line in text.rstrip("\n").splitlines()]


# -- the notebook is the tutorial ---------------------------------------------------------


def test_the_committed_notebook_is_what_make_notebook_writes() -> None:
    want = make_notebook().notebook(TUTORIAL.read_text(encoding="utf-8"))
    assert NOTEBOOK.read_text(encoding="utf-8") == want, (
        "docs/tutorial.ipynb differs from docs/tutorial.md; run python docs/make_notebook.py"
    )


def test_each_python_block_is_a_code_cell_with_its_output() -> None:
    nb = committed()
    cells = code_cells(nb)
    assert len(cells) == len(ALL) >= 10
    for cell, block in zip(cells, ALL, strict=True):
        assert "".join(cell["source"]) == block.code.rstrip("\n")
        want = [line.rstrip() for line in (block.output or "").rstrip("\n").splitlines()]
        assert stdout(cell) == want
        shown = [o["data"] for o in cell["outputs"] if o["output_type"] == "execute_result"]
        if block.picture:  # the drawing inline, as dot drew the docs' picture
            [data] = shown
            assert "".join(data["image/svg+xml"]).count('style="max-width: 100%;') == 1
        else:
            assert shown == []
    prose = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert "```" not in prose  # every fence of the tutorial is a cell or a cell's output
    assert prose.startswith("# From a Value to a Tensor")
    if available("nbformat"):
        import nbformat

        nbformat.validate(nbformat.reads(NOTEBOOK.read_text(encoding="utf-8"), as_version=4))


def test_make_notebook_keeps_other_fences_in_the_prose() -> None:
    text = "Intro\n\n```bash\nmake test\n```\n\n```text\nnot an output\n```\n\n```python\n1\n```\n"
    cells = make_notebook().cells(text)
    assert [c["cell_type"] for c in cells] == ["markdown", "code"]
    assert "make test" in "".join(cells[0]["source"]) and "not an output" in "".join(
        cells[0]["source"]
    )
    assert cells[1]["outputs"] == [] and [c["id"] for c in cells] == ["cell-00", "cell-01"]


def test_the_notebook_runs_in_a_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for module in ("nbclient", "nbformat", "ipykernel", "graphviz"):
        if not available(module):
            pytest.skip(f"running the notebook needs {module}: pip install 'chainrule[notebook]'")
    for module in sorted({m for b in ALL for m in b.needs}):
        if not available(module):
            pytest.skip(f"the tutorial needs {module}, not there yet")
    import nbformat
    from nbclient import NotebookClient

    kernel_of_this_interpreter(tmp_path, monkeypatch)

    nb = nbformat.reads(NOTEBOOK.read_text(encoding="utf-8"), as_version=4)
    want = [stdout(c) for c in code_cells(nb)]
    nb.cells.append(nbformat.v4.new_code_cell(SHOW))
    run = tmp_path / "run"  # the working directory, where the pictures land
    run.mkdir()
    client = NotebookClient(
        nb, timeout=60, startup_timeout=60, kernel_name="chainrule",
        resources={"metadata": {"path": str(run)}},
    )  # fmt: skip
    client.execute()  # raises CellExecutionError, naming the cell, on any error

    cells = code_cells(nb)
    assert [stdout(c) for c in cells[:-1]] == want  # the printed outputs, as committed
    assert list(run.iterdir()) == []  # the drawings are the cells' outputs, not files
    drawings = [c for c, b in zip(cells, ALL, strict=False) if b.picture] + cells[-1:]
    assert len(drawings) == 1 + sum(1 for b in ALL if b.picture) > 1
    for cell in drawings:
        outputs = [o for o in cell["outputs"] if o["output_type"] != "stream"]
        assert [o["output_type"] for o in outputs] == ["execute_result"], outputs  # no traceback
        shown = outputs[0]["data"]
        if shutil.which("dot") is None:
            assert shown["text/plain"].startswith(NO_DOT)
        else:
            assert 'style="max-width: 100%; height: auto"' in shown["image/svg+xml"]


# -- a drawing in a notebook --------------------------------------------------------------


def drawing():  # noqa: ANN201 (a graphviz.Digraph)
    pytest.importorskip("graphviz", reason="draw_graph needs the graphviz package")
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    return cr.viz.draw_graph((x * x).sum(), params={"x": x})


def test_without_dot_a_drawing_shows_as_text(monkeypatch: pytest.MonkeyPatch) -> None:
    g = drawing()
    monkeypatch.setenv("PATH", "")  # no `dot` to be found
    bundle = g._repr_mimebundle_()
    assert list(bundle) == ["text/plain"]
    assert bundle["text/plain"].startswith(NO_DOT) and bundle["text/plain"].endswith(g.source)
    assert "apt-get install graphviz" in bundle["text/plain"]
    if available("IPython"):  # what a notebook shows: the text, and no formatter traceback
        from IPython.core.formatters import DisplayFormatter

        data, _ = DisplayFormatter().format(g)
        assert list(data) == ["text/plain"] and data["text/plain"].startswith(NO_DOT)


def test_with_dot_a_drawing_shows_as_svg() -> None:
    if shutil.which("dot") is None:
        pytest.skip("needs the graphviz `dot` program (apt-get install graphviz)")
    g = drawing()
    svg = g._repr_mimebundle_()["image/svg+xml"]
    assert "<svg" in svg and ">x<" in svg  # the leaf's name, drawn
    assert g._repr_mimebundle_(include=["image/png"])["image/png"].startswith(b"\x89PNG")


def test_a_drawing_is_still_a_digraph_and_pickles() -> None:
    import graphviz

    g = drawing()
    assert isinstance(g, graphviz.Digraph)
    back = pickle.loads(pickle.dumps(g))
    assert type(back) is type(g) and back.source == g.source
    assert type(g.copy()) is type(g)


# -- progress bars ------------------------------------------------------------------------


def test_progress_bars_are_tqdm_auto() -> None:
    """tqdm.auto: a widget in a notebook, a text bar in a terminal."""
    imports = []
    for path in sorted((ROOT / "src" / "chainrule").rglob("*.py")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if re.match(r"\s*(from tqdm\b|import tqdm\b)", line):
                imports.append((path.relative_to(ROOT).as_posix(), line.strip()))
    assert imports  # the recipes have progress bars
    assert all(line == "from tqdm.auto import tqdm" for _, line in imports), imports


# -- reprs --------------------------------------------------------------------------------


def test_module_lists_fold_repeated_children_as_pytorch() -> None:
    def gpt(torch_nn):  # noqa: ANN001, ANN202
        class Block(torch_nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.ln = torch_nn.LayerNorm(4)
                self.fc = torch_nn.Linear(4, 4)

        class GPT(torch_nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.h = torch_nn.ModuleList([Block() for _ in range(3)])
                self.ln_f = torch_nn.LayerNorm(4)

        return GPT()

    ours, theirs = gpt(nn), gpt(torch.nn)
    assert repr(ours) == repr(theirs)
    assert "(0-2): 3 x Block(" in repr(ours)

    def mixed(torch_nn):  # noqa: ANN001, ANN202
        layers = [torch_nn.ReLU(), torch_nn.ReLU(), torch_nn.Tanh(), torch_nn.Linear(2, 2)]
        return torch_nn.ModuleList(layers + [torch_nn.Linear(2, 2), torch_nn.Linear(2, 3)])

    assert repr(mixed(nn)) == repr(mixed(torch.nn))
    assert repr(nn.ModuleList([nn.ReLU()])) == repr(torch.nn.ModuleList([torch.nn.ReLU()]))
    assert repr(nn.ModuleList()) == repr(torch.nn.ModuleList())
    # only ModuleList folds, as in PyTorch: a Sequential lists each child
    seq = [nn.Linear(3, 3) for _ in range(3)]
    seq_theirs = [torch.nn.Linear(3, 3) for _ in range(3)]
    assert repr(nn.Sequential(*seq)) == repr(torch.nn.Sequential(*seq_theirs))
