"""torchviz's make_dot draws chainrule's graphs as PyTorch's: the same small programs (an MLP
with its loss, a broadcast bias, pow, clone, an in-place op) drawn with torchviz on torch and on
chainrule (``import torch`` aliased to chainrule, as a learner's notebook would) give the same
graph: the same node labels (node names, saved attributes, tensor names and shapes) joined by
the same edges, up to the ids, which differ."""

from __future__ import annotations

import re
import sys
import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

import networkx as nx
import numpy as np
import pytest
import torch

import chainrule as cr
from tests.pytorch_programs.programs.aliasing import torch_is_chainrule

pytest.importorskip("torchviz")


def _fresh_torchviz() -> ModuleType:
    for name in [n for n in sys.modules if n == "torchviz" or n.startswith("torchviz.")]:
        del sys.modules[name]
    import torchviz.dot

    return torchviz.dot


def _dots() -> dict[Any, ModuleType]:
    """torchviz's dot module imported twice: on torch, and with torch resolved to chainrule."""
    with torch_is_chainrule():
        ours = _fresh_torchviz()
    return {cr: ours, torch: _fresh_torchviz()}


DOTS = _dots()


def mlp(lib: Any, x: Any, w: Any) -> tuple[Any, dict[str, Any]]:
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 5), lib.nn.ReLU(), lib.nn.Linear(5, 2))
    loss = ((model(x) - 1) ** 2).mean()
    return loss, dict(model.named_parameters())


def broadcast_bias(lib: Any, x: Any, w: Any) -> tuple[Any, dict[str, Any]]:
    b = lib.zeros(4, requires_grad=True)
    return (x @ w.transpose(0, 1) + b).tanh().sum(1), {"w": w, "b": b}


def power_and_clone(lib: Any, x: Any, w: Any) -> tuple[Any, dict[str, Any]]:
    return (w**2).clone().exp().sum(0) / 3, {"w": w}


def in_place(lib: Any, x: Any, w: Any) -> tuple[Any, dict[str, Any]]:
    v = w * 1
    v.mul_(2)
    v.add_(1)
    return v.softmax(1)[:, 0].log(), {"w": w}


def split(lib: Any, x: Any, w: Any) -> tuple[Any, dict[str, Any]]:
    a, b = w.split(2)
    return a.sum() * b.sum(), {"w": w}


def custom_function(lib: Any, x: Any, w: Any) -> tuple[Any, dict[str, Any]]:
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: Any) -> Any:
            ctx.save_for_backward(a)
            return a**3

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            (a,) = ctx.saved_tensors
            return grad * 3 * a**2

    return Cube.apply(w * 2).sum(), {"w": w}


def unbind_and_chunk(lib: Any, x: Any, w: Any) -> tuple[Any, dict[str, Any]]:
    rows = w.unbind(0)
    left, right = (w * 2).chunk(2, dim=1)
    uneven = w.split([1, 3])
    return rows[0] * rows[3] + left.sum() * right.sum() + uneven[1].sum(), {"w": w}


def custom_function_with_two_outputs(lib: Any, x: Any, w: Any) -> tuple[Any, dict[str, Any]]:
    class SinCos(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: Any) -> Any:
            ctx.save_for_backward(a)
            return a.sin(), a.cos()

        @staticmethod
        def backward(ctx: Any, grad_sin: Any, grad_cos: Any) -> Any:
            (a,) = ctx.saved_tensors
            return grad_sin * a.cos() - grad_cos * a.sin()

    s, c = SinCos.apply(w * 2)
    return (s * c).sum(), {"w": w}


PROGRAMS: dict[str, Callable[..., tuple[Any, dict[str, Any]]]] = {
    "mlp": mlp,
    "broadcast_bias": broadcast_bias,
    "power_and_clone": power_and_clone,
    "in_place": in_place,
    "custom_function": custom_function,
    "split": split,
    "unbind_and_chunk": unbind_and_chunk,
    "custom_function_with_two_outputs": custom_function_with_two_outputs,
}


def _inputs(lib: Any) -> tuple[Any, Any]:
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((4, 3)), dtype=lib.float32)
    w = lib.tensor(rng.standard_normal((4, 3)), dtype=lib.float32, requires_grad=True)
    return x, w


def graph(source: str) -> nx.DiGraph:
    """A Digraph source as a graph: each node by its label and fill colour, each edge by its
    attributes (``dir=none`` joins a saved tensor to its node); the ids dropped."""
    g = nx.DiGraph()
    for statement in source.split("\n\t")[1:]:
        statement = statement.rstrip("}\n")
        edge = re.fullmatch(r"(\d+) -> (\d+)(?: \[(.*)\])?", statement)
        if edge:
            g.add_edge(edge[1], edge[2], attrs=edge[3] or "")
            continue
        node = re.fullmatch(r"(\d+) \[label=(\"(?:[^\"\\]|\\.)*\"|\S+)(.*)\]", statement, re.S)
        if node:
            g.add_node(node[1], label=node[2].strip('"'), attrs=node[3].strip())
    return g


def draw(program: Callable[..., Any], lib: Any, **options: Any) -> nx.DiGraph:
    out, params = program(lib, *_inputs(lib))
    with warnings.catch_warnings():  # torchviz compares versions with distutils' LooseVersion
        warnings.simplefilter("ignore")
        return graph(DOTS[lib].make_dot(out, params=params, **options).source)


@pytest.mark.parametrize("options", [{}, {"show_attrs": True, "show_saved": True}], ids=str)
@pytest.mark.parametrize("program", list(PROGRAMS.values()), ids=list(PROGRAMS))
def test_make_dot_draws_the_graph_as_torchs(program: Any, options: dict) -> None:
    theirs, ours = draw(program, torch, **options), draw(program, cr, **options)
    labels = sorted(d["label"] for _, d in theirs.nodes(data=True))
    assert sorted(d["label"] for _, d in ours.nodes(data=True)) == labels
    assert nx.is_isomorphic(ours, theirs, node_match=lambda a, b: a == b, edge_match=dict.__eq__)


def test_the_comparison_sees_a_missing_edge() -> None:
    """The check above fails where one edge differs."""
    theirs = draw(mlp, torch)
    ours = theirs.copy()
    ours.remove_edge(*next(iter(ours.edges)))
    assert not nx.is_isomorphic(ours, theirs, node_match=dict.__eq__, edge_match=dict.__eq__)


def test_the_labels_name_nodes_and_shapes_as_torchs() -> None:
    labels = {d["label"] for _, d in draw(mlp, cr).nodes(data=True)}
    assert {"AddmmBackward0", "TBackward0", "ReluBackward0", "AccumulateGrad"} <= labels
    assert "0.weight\n (5, 3)" in labels and "\n ()" in labels
