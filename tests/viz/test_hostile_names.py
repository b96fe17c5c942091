"""Every place chainrule writes a name the user chose (a leaf, a parameter, a module, a
Function) into another language (HTML and the JSON in its script, graphviz DOT, matplotlib's
text, TensorBoard's records and folders) escapes it for that language: the output still
parses as it did, and the name shows back as it was given."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

import chainrule as cr
from chainrule import nn

# What ends or changes each language: HTML comments and script ends, quotes, entities, the
# line breaks JavaScript and DOT read, dot's own escapes, an HTML-like DOT label, mathtext,
# matplotlib's hidden labels, a TensorBoard graph's control edge and output index, a JS
# object's prototype keys, and folder names that are not folders inside.
NAMES = [
    "<!--<script>",
    "</script>",
    "'\"",
    "a&amp;b",
    "x\u2028y\u2029z",
    "line\nbreak",
    "back\\Nslash\\",
    "<b>",
    "$x$",
    "_hidden",
    "^a:0",
    "__proto__",
    "constructor",
    "..",
]


def model_named(name: str) -> nn.Module:
    """Linear(2, 3) -> Tanh -> Linear(3, 1), the first layer under ``name``."""
    cr.manual_seed(0)
    model = nn.Module()
    setattr(model, name, nn.Linear(2, 3))
    model.act = nn.Tanh()
    model.out = nn.Linear(3, 1)
    model.forward = lambda x: model.out(model.act(getattr(model, name)(x)))  # type: ignore[method-assign]
    return model


def custom_function(name: str) -> Any:
    """A user's Function whose class is called ``name`` (its node: ``<name>Backward``)."""

    def forward(ctx: Any, x: cr.Tensor) -> cr.Tensor:
        return x * 2

    def backward(ctx: Any, grad: cr.Tensor) -> cr.Tensor:
        return grad * 2

    return type(name, (cr.autograd.Function,), {"forward": staticmethod(forward),
                                                "backward": staticmethod(backward)})  # fmt: skip


# -- the walkthrough page -------------------------------------------------------------------


class Page(HTMLParser):
    """The page as a browser's parser sees its elements: the scripts' texts, the attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[str] = []
        self.attrs: list[dict[str, str | None]] = []
        self.texts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.attrs.append(dict(attrs))
        if tag == "script":
            self._in_script = True
            self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        self._in_script = self._in_script and tag != "script"

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts[-1] += data
        else:
            self.texts.append(data)


def read_page(path: str) -> tuple[dict[str, Any], Page]:
    text = Path(path).read_text(encoding="utf-8")
    page = Page()
    page.feed(text)
    assert len(page.scripts) == 2, "the page has its data block and its script, both whole"
    data = page.scripts[0]
    # HTML's script data states: inside a <script>, these are what the tokenizer acts on
    for markup in ("<!--", "<script", "</script"):
        assert markup not in data.lower(), markup
    assert "\u2028" not in data and "\u2029" not in data
    assert page.scripts[1].startswith("// Steps through the backward pass")
    return json.loads(data), page


def walkthrough_leaf(name: str, tmp_path: Path) -> None:
    x = cr.randn(3, requires_grad=True)
    path = cr.viz.walkthrough((x * x).sum(), str(tmp_path / "p.html"), params={name: x})
    data, page = read_page(path)
    assert [leaf["name"] for leaf in data["leaves"]] == [name]  # its row is built from this


def walkthrough_module(name: str, tmp_path: Path) -> None:
    model = model_named(name)
    path = cr.viz.walkthrough(model(cr.randn(4, 2)).sum(), str(tmp_path / "p.html"), params=model)
    data, page = read_page(path)
    assert name in data["views"]  # its box
    assert f"{name}.weight" in [leaf["name"] for leaf in data["leaves"]]
    assert name in [a.get("data-view") for a in page.attrs]


def walkthrough_function(name: str, tmp_path: Path) -> None:
    x = cr.randn(3, requires_grad=True)
    path = cr.viz.walkthrough(custom_function(name).apply(x).sum(), str(tmp_path / "p.html"))
    data, _ = read_page(path)
    assert f"{name}Backward" in [n["label"] for n in data["nodes"]]


# -- draw_graph's DOT ------------------------------------------------------------------------

_DOT_ESCAPES = {"n": "\n", "l": "\n", "r": "\n"}  # dot's line breaks; any other \c is c


def dot_labels(source: str) -> list[str]:
    """Every node's label as dot shows it: a bare DOT identifier, or a quoted string read and
    then dot's escapes (never an HTML-like <...>, which would be markup)."""
    labels = []
    for m in re.finditer(r'label=("(?:[^"\\]|\\.)*"|<|[^\s"<\]]+)', source, re.S):
        assert m.group(1) != "<", "a label read as HTML-like"
        if not m.group(1).startswith('"'):
            labels.append(m.group(1))
            continue
        raw = m.group(1)[1:-1]
        labels.append(re.sub(r"\\(.)", lambda e: _DOT_ESCAPES.get(e.group(1), e.group(1)), raw))
    return labels


def draw(root: Any, params: Any) -> list[str]:
    pytest.importorskip("graphviz")
    source = cr.viz.draw_graph(root, params=params).source
    # each statement on its own line: a line break inside a name stays inside its quotes
    assert all(line.startswith(("\t", "digraph", "}")) for line in source.split("\n")[:-1]), source
    return dot_labels(source)


def draw_tensor_leaf(name: str, tmp_path: Path) -> None:
    x = cr.randn(3, requires_grad=True)
    labels = draw((x * x).sum(), {name: x})
    assert any(label.split("\n")[: name.count("\n") + 1] == name.split("\n") for label in labels)


def draw_value_leaf(name: str, tmp_path: Path) -> None:
    from chainrule.scalar import Value

    a = Value(2.0)
    labels = draw(a * a, {name: a})
    assert any(label.startswith("{ " + name + " | data") for label in labels), labels


def draw_value_op(name: str, tmp_path: Path) -> None:
    from chainrule.scalar import Value

    a = Value(2.0)
    out = Value(4.0, (a,), name, (2.0,))
    assert name in draw(out, None)


def draw_function(name: str, tmp_path: Path) -> None:
    x = cr.randn(3, requires_grad=True)
    labels = draw(custom_function(name).apply(x), None)
    assert any(label.startswith(f"{name}Backward\n") for label in labels), labels


# -- the Monitor's plot and JSON ------------------------------------------------------------


def monitor_run(name: str, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    model = model_named(name)
    opt = cr.optim.SGD(model.parameters(), lr=0.1)
    with cr.viz.Monitor(model, opt) as monitor:
        for _ in range(2):
            opt.zero_grad()
            (model(cr.randn(4, 2)) ** 2).mean().backward()
            opt.step()
    drawn: list[Figure] = []
    save = Figure.savefig

    def savefig(fig: Figure, *args: Any, **kwargs: Any) -> None:
        drawn.append(fig)
        save(fig, *args, **kwargs)  # mathtext, if a name started it, fails in here

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Figure, "savefig", savefig)
        monitor.plot(tmp_path / "m.png")
    shown = []
    for ax in drawn[0].axes:
        for text in ax.get_legend().get_texts():
            s, math = text._preprocess_math(text.get_text())
            assert not math
            shown.append(s)
    assert f"layer {name} (Linear)" not in shown  # the Tanh is the activation shown
    assert f"{name}.weight" in shown  # the update ratio's line, a leading _ or not
    monitor.to_json(tmp_path / "m.json")
    recorded = json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))
    assert name in recorded["layers"] and f"{name}.weight" in recorded["parameters"]


# -- TensorBoard -----------------------------------------------------------------------------


def tensorboard(log_dir: Path) -> Any:
    from tensorboard.backend.event_processing import event_accumulator as ea

    guidance = {kind: 0 for kind in ea.DEFAULT_SIZE_GUIDANCE}
    return ea.EventAccumulator(str(log_dir), size_guidance=guidance).Reload()


def tensorboard_text(name: str, tmp_path: Path) -> None:
    pytest.importorskip("tensorboard")
    from chainrule.utils.tensorboard import SummaryWriter

    with SummaryWriter(str(tmp_path / "run")) as w:
        w.add_text(name, name, 1)
        w.add_scalar(name, 1.5, 1)
    acc = tensorboard(tmp_path / "run")
    (event,) = acc.Tensors(f"{name}/text_summary")
    assert event.tensor_proto.string_val == [name.encode("utf-8")]
    assert [e.value for e in acc.Scalars(name)] == [1.5]


def tensorboard_embedding(name: str, tmp_path: Path) -> None:
    pytest.importorskip("tensorboard")
    from google.protobuf import text_format
    from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig

    from chainrule.utils.tensorboard import SummaryWriter

    log_dir = tmp_path / "run"
    with SummaryWriter(str(log_dir)) as w:
        if any(c in name for c in "\t\n\r"):  # the projector's TSV cannot hold these
            with pytest.raises(ValueError, match=r"add_embedding: metadata\[1\] holds a tab"):
                w.add_embedding(cr.randn(2, 3), metadata=["ok", name], tag=name)
            assert not os.path.exists(log_dir / "projector_config.pbtxt")
            return
        w.add_embedding(cr.randn(2, 3), metadata=["ok", name], tag=name)
    config = text_format.Parse(
        (log_dir / "projector_config.pbtxt").read_text(encoding="utf-8"), ProjectorConfig()
    )
    (info,) = config.embeddings
    assert info.tensor_name == f"{name}:00000"
    folder = (log_dir / info.tensor_path).parent
    assert folder.resolve().parent == (log_dir / "00000").resolve()  # a folder of its own
    metadata = (log_dir / info.metadata_path).read_text(encoding="utf-8")
    assert metadata == f"ok\n{name}\n"


# TensorBoard's graph reads an input "^x" as a control edge from x and "x:0" as x's output 0
_CONTROL_OR_OUTPUT = re.compile(r"^\^|^([^:]+):((\w+:|)\d+)$")


def tensorboard_graph(name: str, tmp_path: Path) -> None:
    pytest.importorskip("tensorboard")
    from tensorboard.compat.proto import graph_pb2

    from chainrule.utils.tensorboard import SummaryWriter

    model = model_named(name)
    layers, function = model.forward, custom_function(name)
    model.forward = lambda x: function.apply(layers(x))  # type: ignore[method-assign]
    with SummaryWriter(str(tmp_path / "run")) as w:
        w.add_graph(model, cr.randn(4, 2))
    graph = graph_pb2.GraphDef.FromString(tensorboard(tmp_path / "run").Graph().SerializeToString())
    names = {node.name for node in graph.node}
    for node in graph.node:
        for source in node.input:
            assert not _CONTROL_OR_OUTPUT.match(source) and source in names, source

    def decoded(s: str) -> str:
        return re.sub(r"%([0-9a-f]{2})", lambda m: chr(int(m.group(1), 16)), s)

    assert f"Module/Linear[{name}]/weight/weight" in {decoded(n) for n in names}
    assert f"{name}Backward".encode() in {node.attr["attr"].s[10:-2] for node in graph.node}


WRITERS: dict[str, Callable[[str, Path], None]] = {
    f.__name__: f
    for f in (
        walkthrough_leaf,
        walkthrough_module,
        walkthrough_function,
        draw_tensor_leaf,
        draw_value_leaf,
        draw_value_op,
        draw_function,
        monitor_run,
        tensorboard_text,
        tensorboard_embedding,
        tensorboard_graph,
    )
}

# A module or parameter name cannot hold a dot (register_parameter refuses it), a Python
# class name can be anything, a params dict key anything.
_NO_DOTS = {"walkthrough_module", "monitor_run", "tensorboard_graph"}


@pytest.mark.parametrize("name", NAMES, ids=[ascii(n) for n in NAMES])
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_hostile_name_is_written_intact(writer: str, name: str, tmp_path: Path) -> None:
    if writer in _NO_DOTS and "." in name:
        pytest.skip("a module's name holds no dot")
    WRITERS[writer](name, tmp_path)


def test_every_writer_of_names_is_in_the_table() -> None:
    """A module of chainrule that writes HTML, DOT, plots or TensorBoard records has a row."""
    import chainrule

    root = Path(chainrule.__file__).parent
    writers = {
        "tools/walkthrough.py": "walkthrough_",
        "viz.py": "draw_",
        "tools/monitor.py": "monitor_",
        "utils/tensorboard.py": "tensorboard_",
        "utils/tensorboard_graph.py": "tensorboard_",
    }
    marks = re.compile(
        r"^\s*(import html|import graphviz|import matplotlib|from tensorboard)", re.M
    )
    found = {
        str(p.relative_to(root)).replace(os.sep, "/")
        for p in root.rglob("*.py")
        if marks.search(p.read_text(encoding="utf-8"))
    }
    # a recipe's curves are labelled by the recipe's own words, not by names a user chose
    found = {f for f in found if not f.startswith("tools/recipes/")}
    assert found <= set(writers), f"write a row in WRITERS for {sorted(found - set(writers))}"
    for prefix in writers.values():
        assert any(w.startswith(prefix) for w in WRITERS)
