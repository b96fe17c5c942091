"""Every output file the tools write for a user (the walkthrough page, the Monitor's JSON and
plot, an ONNX export, the Projector's files) is written beside the old file and renamed over
it: a disk that fills up midway leaves the old file whole and no temporary file behind.
TensorBoard's event files are left out: they are appended to, by TensorBoard's writer."""

from __future__ import annotations

import ast
import builtins
import errno
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import chainrule as cr
from chainrule import nn
from chainrule.tools.outputs import write_output

ROOM = 100  # bytes a temporary file takes before the disk is full


class FullDisk:
    """A file that takes ROOM bytes (characters, in text mode) and then fails with ENOSPC,
    as a write to a full disk does."""

    def __init__(self, f: Any) -> None:
        self.f, self.written = f, 0

    def write(self, data: Any) -> int:
        left = ROOM - self.written
        if len(data) > left:
            self.f.write(data[: max(left, 0)])
            self.written = ROOM
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.written += len(data)
        return self.f.write(data)

    def __enter__(self) -> FullDisk:
        return self

    def __exit__(self, *exc: object) -> None:
        self.f.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.f, name)


@pytest.fixture
def full_disk(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """From here on, a new file opened for writing fills the disk after ROOM bytes; the
    names of those opened are listed (the temporary files, never the outputs themselves)."""
    opened: list[str] = []
    real_open = builtins.open

    def open_(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        f = real_open(file, mode, *args, **kwargs)
        if isinstance(file, (str, os.PathLike)) and any(c in mode for c in "wxa+"):
            opened.append(os.path.basename(os.fspath(file)))
            return FullDisk(f)
        return f

    monkeypatch.setattr(builtins, "open", open_)
    return opened


def trained_monitor() -> Any:
    cr.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    opt = cr.optim.SGD(model.parameters(), lr=0.1)
    monitor = cr.viz.Monitor(model, opt)
    for _ in range(2):
        opt.zero_grad()
        (model(cr.randn(5, 3)) ** 2).mean().backward()
        opt.step()
    return monitor


def walkthrough(folder: Path, k: int) -> None:
    x = cr.randn(k + 2, requires_grad=True)
    cr.viz.walkthrough((x * x).sum(), str(folder / "page.html"), params={"x": x})


def monitor_json(folder: Path, k: int) -> None:
    monitor = trained_monitor()
    monitor.steps_done += k  # a different file each time
    monitor.to_json(folder / "monitor.json")


def monitor_plot(folder: Path, k: int) -> None:
    pytest.importorskip("matplotlib")
    monitor = trained_monitor()
    monitor.recorded.append(monitor.recorded[-1] + k)
    monitor.plot(folder / "monitor.png")


def onnx_export(folder: Path, k: int) -> None:
    pytest.importorskip("onnx")
    cr.manual_seed(k)
    cr.onnx.export(nn.Linear(3, 2), cr.randn(1, 3), str(folder / "model.onnx"))


def projector(folder: Path, k: int) -> None:
    pytest.importorskip("tensorboard")
    from chainrule.utils.tensorboard import SummaryWriter

    with SummaryWriter(str(folder / "run")) as w:
        w.add_embedding(cr.randn(4, 3), metadata=[f"p{k}{i}" for i in range(4)],
                        label_img=cr.rand(4, 1, 2, 2))  # fmt: skip


def graph_command(folder: Path, k: int) -> None:
    pytest.importorskip("graphviz")
    from chainrule.tools import cli

    recipe = ["regression", "breast-cancer"][k - 1]  # a different drawing each time
    assert cli.main(["graph", recipe, "--out", str(folder / "g.dot")]) == 0


WRITERS: dict[str, Callable[[Path, int], None]] = {
    f.__name__: f
    for f in (walkthrough, monitor_json, monitor_plot, onnx_export, projector, graph_command)
}


def contents(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` but event files (each writer appends to one of its own)."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file() and not p.name.startswith("events.out.tfevents.")
    }


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_full_disk_leaves_the_old_file_whole(
    writer: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    WRITERS[writer](tmp_path, 1)
    old = contents(tmp_path)
    assert old
    opened = request.getfixturevalue("full_disk")
    with pytest.raises(OSError) as caught:
        WRITERS[writer](tmp_path, 2)
    assert caught.value.errno == errno.ENOSPC
    assert opened and all(name.startswith(".") and ".tmp" in name for name in opened), opened
    assert contents(tmp_path) == old  # the old files as they were, nothing beside them
    if "matplotlib.pyplot" in sys.modules:
        assert sys.modules["matplotlib.pyplot"].get_fignums() == []  # nor a figure left open


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_second_write_replaces_the_file(writer: str, tmp_path: Path) -> None:
    WRITERS[writer](tmp_path, 1)
    old = contents(tmp_path)
    WRITERS[writer](tmp_path, 2)
    new = contents(tmp_path)
    assert set(new) == set(old) and new != old


def test_a_drawing_leaves_the_file_named_like_it_alone(tmp_path: Path) -> None:
    """graphviz's render() wrote the DOT source to FILE before drawing FILE.svg (and kept it
    when `dot` was missing); the command draws in memory and writes FILE.svg alone."""
    pytest.importorskip("graphviz")
    from chainrule.tools import cli

    (tmp_path / "step").write_text("mine")
    code = cli.main(["graph", "regression", "--out", str(tmp_path / "step.svg")])
    assert (tmp_path / "step").read_text() == "mine"
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == (["step", "step.svg"] if code == 0 else ["step"])  # 1: no `dot`


def test_a_missing_folder_is_named_not_the_temporary_file(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "page.html"
    with pytest.raises(FileNotFoundError, match=f"walkthrough: the folder '{missing.parent}'"):
        write_output(missing, "text", "walkthrough")
    assert not (tmp_path / "no").exists()


# The modules whose writers the table covers, and the command line that calls them; every
# file one of them opens for writing goes through write_output or write_atomically (a module
# added to these folders is read too). A recipe writes a run's files into the folder that
# run_files.replace_together then moves into place as one set.
ROOT = Path(cr.__file__).parent
TOOLS = [
    *["viz.py", "tools/walkthrough.py", "tools/monitor.py", "tools/cli.py", "datasets.py"],
    *["onnx", "utils", "data"],
]
WRITING = {"savefig", "render", "write_text", "write_bytes", "tofile"}


def _writes(call: ast.Call) -> bool:
    func = call.func
    if isinstance(func, ast.Name) and func.id == "open":
        mode = call.args[1] if len(call.args) > 1 else None
        mode = next((k.value for k in call.keywords if k.arg == "mode"), mode)
        return isinstance(mode, ast.Constant) and any(c in str(mode.value) for c in "wxa+")
    return isinstance(func, ast.Attribute) and func.attr in WRITING


def unguarded_writes(path: Path) -> list[str]:
    """The lines of ``path`` that write a file other than inside a write_atomically or
    write_output call."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    guarded: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") in (
            "write_atomically",
            "write_output",
        ):
            guarded |= {id(n) for n in ast.walk(node)}
    return [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and _writes(node) and id(node) not in guarded
    ]


def test_every_file_the_tools_write_is_written_atomically() -> None:
    files = [
        p for t in TOOLS for p in ([ROOT / t] if t.endswith(".py") else (ROOT / t).rglob("*.py"))
    ]
    assert len(files) > len(TOOLS)
    found = [line for p in files for line in unguarded_writes(p)]
    assert found == [], f"write these through chainrule.tools.outputs.write_output: {found}"
