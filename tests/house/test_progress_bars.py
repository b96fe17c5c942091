"""The recipes' progress bars (tqdm.auto, see test_notebook): a Jupyter widget in a notebook
kernel where ipywidgets is installed (the notebook extra brings it), a text bar on stderr in a
kernel without it and in a terminal, and the run completes either way.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import kernel_of_this_interpreter
from tests.house.test_tutorial import available

ROOT = Path(__file__).resolve().parents[2]
WIDGET = "application/vnd.jupyter.widget-view+json"
EPOCHS = 3
# A short run of a recipe with its bar shown (no --quiet), as a notebook user starts one.
TRAIN = f"""\
from chainrule.tools import cli
args = ["train", "breast-cancer", "--epochs", "{EPOCHS}", "--seed", "0", "--out", "run"]
assert cli.main(args) == 0
"""
# Run first, before anything imports tqdm.auto: an environment without ipywidgets.
BLOCK = """\
import sys
assert "tqdm.auto" not in sys.modules and "ipywidgets" not in sys.modules
sys.modules["ipywidgets"] = None  # import ipywidgets raises ImportError
"""


def needs_kernel() -> None:
    for module in ("nbclient", "nbformat", "ipykernel"):
        if not available(module):
            pytest.skip(f"running a kernel needs {module}: pip install 'chainrule[notebook]'")
    pytest.importorskip("sklearn", reason="the breast-cancer recipe's data is scikit-learn's")


def execute(cells: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple:
    """Run ``cells`` in a fresh kernel of this interpreter; the last cell's outputs and the
    notebook's widget state (model id -> model), as nbclient stores them."""
    import nbformat
    from nbclient import NotebookClient

    kernel_of_this_interpreter(tmp_path, monkeypatch)
    for name in list(os.environ):  # tqdm.auto takes these for a Qt console or Spyder: text
        if name == "QT_API" or name.startswith("SPYDER"):
            monkeypatch.delenv(name)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    work = tmp_path / "work"
    work.mkdir()
    client = NotebookClient(
        nb, timeout=120, startup_timeout=120, kernel_name="chainrule",
        resources={"metadata": {"path": str(work)}},
    )  # fmt: skip
    client.execute()  # raises CellExecutionError, naming the cell, on any error
    state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    return nb.cells[-1].outputs, state.get("state", {})


def streamed(outputs: list, name: str) -> str:
    return "".join(o["text"] for o in outputs if o["output_type"] == "stream" and o["name"] == name)


def test_in_a_kernel_with_ipywidgets_the_bar_is_a_widget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    needs_kernel()
    if not available("ipywidgets"):
        pytest.skip("a widget bar needs ipywidgets: pip install 'chainrule[notebook]'")
    outputs, state = execute([TRAIN], tmp_path, monkeypatch)
    kinds = [o["output_type"] for o in outputs]
    assert "error" not in kinds, outputs
    widgets = [o for o in outputs if o["output_type"] == "display_data" and WIDGET in o["data"]]
    assert len(widgets) == 1, f"the bar should be one widget; the cell's outputs: {outputs}"
    assert widgets[0]["data"]["text/plain"].startswith("breast-cancer:")
    assert "breast-cancer:" not in streamed(outputs, "stderr")  # no text bar beside it
    assert "test accuracy:" in streamed(outputs, "stdout")  # the run went to its end
    # The widget is a box of tqdm's label, bar and counts; the bar counted every epoch.
    box = state[widgets[0]["data"][WIDGET]["model_id"]]
    children = [state[ref.removeprefix("IPY_MODEL_")] for ref in box["state"]["children"]]
    bars = [c["state"] for c in children if c["model_name"] == "FloatProgressModel"]
    assert [(b["value"], b["max"]) for b in bars] == [(EPOCHS, EPOCHS)], children


def test_in_a_kernel_without_ipywidgets_the_bar_is_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    needs_kernel()
    outputs, _ = execute([BLOCK, TRAIN], tmp_path, monkeypatch)
    kinds = [o["output_type"] for o in outputs]
    assert "error" not in kinds, outputs
    assert not [o for o in outputs if WIDGET in o.get("data", {})], outputs
    text = streamed(outputs, "stderr")
    assert "\rbreast-cancer:" in text and f"/{EPOCHS} [" in text, text  # tqdm's text bar
    assert "test accuracy:" in streamed(outputs, "stdout")


def test_in_a_terminal_the_bar_is_text(tmp_path: Path) -> None:
    pytest.importorskip("sklearn", reason="the breast-cancer recipe's data is scikit-learn's")
    args = ["train", "breast-cancer", "--epochs", str(EPOCHS), "--seed", "0", "--out", "run"]
    done = subprocess.run(
        [sys.executable, "-m", "chainrule", *args], cwd=tmp_path, capture_output=True
    )
    out, err = done.stdout.decode(), done.stderr.decode()  # bytes: the bar's \r kept as is
    assert done.returncode == 0, err
    assert "\rbreast-cancer:" in err and f"/{EPOCHS} [" in err, err
    assert "test accuracy:" in out and "widget" not in out + err


def test_the_notebook_extra_brings_ipywidgets() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = [r.split(">")[0].split("=")[0] for r in project["optional-dependencies"]["notebook"]]
    assert "ipywidgets" in names, names
