"""SummaryWriter.add_graph against PyTorch's: the same models written by both writers, the
GraphDefs read back by TensorBoard's EventAccumulator, and compared by their scopes (the module
paths TensorBoard draws as boxes), their input and output nodes and their op kinds."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tensorboard")

from tensorboard.backend.event_processing import event_accumulator as ea  # noqa: E402

import chainrule as cr  # noqa: E402
from chainrule.utils.tensorboard import SummaryWriter  # noqa: E402
from tests.pytorch_programs.programs.aliasing import torch_is_chainrule  # noqa: E402

# Kinds PyTorch's trace has and chainrule's graph does not, each with its counterpart and why.
KIND_DIFFERENCES = {
    # flatten is a reshape in chainrule, recorded as the reshape it is (ViewBackward0 in
    # PyTorch's autograd graph too)
    "aten::flatten": "aten::reshape",
}


def mlp() -> Any:
    import torch

    return torch.nn.Sequential(
        torch.nn.Linear(3, 5), torch.nn.ReLU(), torch.nn.Linear(5, 2)
    ), torch.randn(2, 3)


def cnn() -> Any:
    import torch
    from torch import nn

    class CNN(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(1, 2, 3)
            self.pool = nn.MaxPool2d(2)
            self.fc = nn.Linear(2 * 3 * 3, 3)

        def forward(self, x: Any) -> Any:
            return self.fc(self.pool(torch.relu(self.conv(x))).flatten(1))

    return CNN(), torch.randn(2, 1, 8, 8)


def nested() -> Any:
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.act = nn.Tanh()

        def forward(self, x: Any) -> Any:
            return self.act(self.fc(x)) + x  # the add is the block's own op

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.blocks = nn.ModuleList([Block(), Block()])
            self.head = nn.Sequential(nn.Linear(4, 2), nn.Sigmoid())

        def forward(self, x: Any) -> Any:
            for block in self.blocks:
                x = block(x)
            return self.head(x)

    return Net(), torch.randn(2, 4)


def graph_of(make: Callable[[], Any], log_dir: Path) -> Any:
    from torch.utils.tensorboard import SummaryWriter

    model, x = make()
    with SummaryWriter(str(log_dir)) as w:
        w.add_graph(model, x)
    return graph_at(log_dir)


def scopes(graph: Any) -> set[str]:
    """Every box TensorBoard draws: each prefix of a node's name up to a /."""
    out = set()
    for node in graph.node:
        parts = node.name.split("/")
        out |= {"/".join(parts[:k]) for k in range(1, len(parts))}
    return out


def io_nodes(graph: Any) -> dict[str, tuple[int, list[int]]]:
    """Each input and output node: how many inputs it has and its shape."""
    return {
        n.name: (len(n.input), [d.size for d in n.attr["_output_shapes"].list.shape[0].dim])
        for n in graph.node
        if n.op == "IO Node"
    }


def op_kinds(graph: Any) -> set[tuple[str, str]]:
    """(scope, kind) of every op, leaving out TorchScript's prim:: plumbing (attribute reads,
    literal arguments, lists of them), which a graph of tensors has no counterpart for."""
    out = set()
    for n in graph.node:
        if n.op != "IO Node" and not n.op.startswith("prim::"):
            out.add((n.name.rsplit("/", 1)[0], KIND_DIFFERENCES.get(n.op, n.op)))
    return out


@pytest.mark.slow  # PyTorch's jit.trace takes seconds to start; the pinned test below is fast
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch's add_graph: jit.trace
@pytest.mark.parametrize("make", [mlp, cnn, nested], ids=["mlp", "cnn", "nested"])
def test_the_graph_nests_as_pytorchs(make: Callable[[], Any], tmp_path: Path) -> None:
    theirs = graph_of(make, tmp_path / "torch")
    with torch_is_chainrule():
        ours = graph_of(make, tmp_path / "chainrule")
    assert scopes(ours) == scopes(theirs)
    assert io_nodes(ours) == io_nodes(theirs)
    assert op_kinds(ours) == op_kinds(theirs)
    params = {n.name for n in ours.node if n.op == "prim::GetAttr"}
    assert params == {n.name.rsplit(".", 1)[0] for n in theirs.node if n.op == "prim::GetAttr"}
    names = {n.name for n in ours.node}
    assert all(source in names for n in ours.node for source in n.input)


# What PyTorch 2's add_graph writes for nested(), as the test above reads it: its ops by the
# module calls that made them (the ModuleList is never called, so it is no box of theirs), its
# parameters by their attribute paths (through the ModuleList).
NESTED_SCOPES = {
    "input",
    "output",
    "Net",
    *(f"Net/Block[{i}]{sub}" for i in (0, 1) for sub in ("", "/Linear[fc]", "/Tanh[act]")),
    "Net/ModuleList[blocks]",
    *(
        f"Net/ModuleList[blocks]/Block[{i}]{sub}"
        for i in (0, 1)
        for sub in ("", "/Linear[fc]", "/Linear[fc]/weight", "/Linear[fc]/bias")
    ),
    "Net/Sequential[head]",
    "Net/Sequential[head]/Linear[0]",
    "Net/Sequential[head]/Linear[0]/weight",
    "Net/Sequential[head]/Linear[0]/bias",
    "Net/Sequential[head]/Sigmoid[1]",
}


def test_a_nested_model_has_pytorchs_scopes(tmp_path: Path) -> None:
    with torch_is_chainrule():
        graph = graph_of(nested, tmp_path)
    assert scopes(graph) == NESTED_SCOPES
    assert io_nodes(graph) == {"input/x": (0, [2, 4]), "output/output.1": (1, [2, 2])}
    assert ("Net/Block[1]", "aten::add") in op_kinds(graph)


def test_an_mlp_reads_as_its_modules(tmp_path: Path) -> None:
    model = cr.nn.Sequential(cr.nn.Linear(3, 5), cr.nn.ReLU(), cr.nn.Linear(5, 2))
    with SummaryWriter(str(tmp_path)) as w:
        w.add_graph(model, cr.randn(4, 3))
    nodes = {n.name: n for n in graph_at(tmp_path).node}
    assert list(nodes["Sequential/ReLU[1]/relu"].input) == ["Sequential/Linear[0]/linear"]
    assert list(nodes["Sequential/Linear[0]/linear"].input) == [
        "input/input.1",
        "Sequential/Linear[0]/weight/weight",
        "Sequential/Linear[0]/bias/bias",
    ]
    assert list(nodes["output/output.1"].input) == ["Sequential/Linear[2]/linear"]
    assert model.training  # traced in eval mode, as PyTorch traces, and put back


def graph_at(log_dir: Path) -> Any:
    guidance = {kind: 0 for kind in ea.DEFAULT_SIZE_GUIDANCE}
    return ea.EventAccumulator(str(log_dir), size_guidance=guidance).Reload().Graph()


class Pair(cr.nn.Module):
    """Two outputs, a buffer, a user's Function, an op before any module and a constant."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = cr.nn.Linear(2, 2)
        self.register_buffer("shift", cr.ones(2))

    def forward(self, x: cr.Tensor, scale: cr.Tensor) -> tuple[cr.Tensor, cr.Tensor]:
        h = Double.apply(self.lin(x * 3)) + self.shift
        return h, h[cr.tensor([0, 2])] * cr.tensor(2.0) * scale


class Double(cr.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: cr.Tensor) -> cr.Tensor:
        return x * 2

    @staticmethod
    def backward(ctx: Any, grad: cr.Tensor) -> cr.Tensor:
        return grad * 2


def test_tuples_buffers_functions_and_constants(tmp_path: Path, capsys: Any) -> None:
    x = cr.randn(3, 2)
    with SummaryWriter(str(tmp_path)) as w:
        w.add_graph(Pair(), (x, cr.tensor(3.0)), verbose=True)
    graph = graph_at(tmp_path)
    kinds = {n.name: n.op for n in graph.node}
    assert kinds["input/x"] == kinds["input/scale"] == "IO Node"
    assert kinds["Pair/shift/shift"] == "prim::GetAttr"
    assert kinds["Pair/mul"] == "aten::mul"
    assert kinds["Pair/PythonOp"] == "prim::PythonOp"
    assert kinds["Pair/index"] == "aten::index"
    assert kinds["Pair/constant"] == "prim::Constant"
    [out] = [n for n in graph.node if n.name.startswith("output/")]
    assert out.name == "output/output.1" and list(out.input) == ["Pair/TupleConstruct"]
    assert kinds["Pair/TupleConstruct"] == "prim::TupleConstruct"
    python_op = next(n for n in graph.node if n.op == "prim::PythonOp")
    assert b"DoubleBackward" in python_op.attr["attr"].s
    assert x.grad_fn is None and not x.requires_grad  # the caller's input is untouched
    assert "Pair/Linear[lin]/linear = aten::linear(Pair/mul, " in capsys.readouterr().out


def test_an_input_read_as_an_index_is_shown(tmp_path: Path) -> None:
    model = cr.nn.Sequential(cr.nn.Embedding(5, 3), cr.nn.Linear(3, 2))
    with SummaryWriter(str(tmp_path)) as w:
        w.add_graph(model, cr.tensor([[1, 4]]))
    nodes = {n.name: n for n in graph_at(tmp_path).node}
    assert nodes["input/input.1"].op == "IO Node"
    lookup = nodes["Sequential/Embedding[0]/embedding"]  # one node, as PyTorch's
    assert lookup.op == "aten::embedding"
    assert list(lookup.input) == ["Sequential/Embedding[0]/weight/weight"]


def test_a_batchnorms_running_statistics_are_drawn(tmp_path: Path) -> None:
    model = cr.nn.Sequential(cr.nn.Linear(3, 4), cr.nn.BatchNorm1d(4))
    with SummaryWriter(str(tmp_path)) as w:
        w.add_graph(model, cr.randn(5, 3))
    names = {n.name for n in graph_at(tmp_path).node}
    norm = "Sequential/BatchNorm1d[1]"
    assert {f"{norm}/running_mean/running_mean", f"{norm}/running_var/running_var"} < names
    assert not any("num_batches_tracked" in n for n in names)  # eval mode reads it not
    assert not any(b.requires_grad for b in model.buffers())  # put back as they were


def test_a_name_with_a_slash_opens_no_scope(tmp_path: Path) -> None:
    model = cr.nn.Module()
    setattr(model, "a/b", cr.nn.Linear(2, 1))
    model.forward = lambda x: getattr(model, "a/b")(x)  # type: ignore[method-assign]
    with SummaryWriter(str(tmp_path)) as w:
        w.add_graph(model, cr.randn(1, 2))
    names = {n.name for n in graph_at(tmp_path).node}
    assert "Module/Linear[a%2fb]/linear" in names
    assert not any(re.match(r"Module/Linear\[a/", n) for n in names)


def test_hooks_are_removed_when_forward_raises(tmp_path: Path) -> None:
    model = cr.nn.Sequential(cr.nn.Linear(3, 2))
    with SummaryWriter(str(tmp_path)) as w:
        with pytest.raises(ValueError, match="in_features"):
            w.add_graph(model, cr.randn(4, 5))
    assert not model[0]._hooks and not model._hooks and model.training


def test_a_model_without_a_tensor_output_is_refused(tmp_path: Path) -> None:
    with SummaryWriter(str(tmp_path)) as w:
        with pytest.raises(TypeError, match=r"add_graph: .*; got float"):
            w.add_graph(lambda x: 1.0, cr.ones(2))
