"""The code's layout keeps its promises: every op has its cr.* form and its rule text, and
the engine's modules import what the map in docs/architecture.md says."""

from __future__ import annotations

import ast
import pathlib

import torch

import chainrule as cr
from chainrule.autograd import Function

SRC = pathlib.Path(cr.__file__).parent


def test_every_tensor_method_torch_has_as_a_function_has_its_cr_form() -> None:
    methods = [n for n in dir(cr.Tensor) if not n.startswith("_")]
    methods = [n for n in methods if callable(getattr(cr.Tensor, n))]
    public = [n for n in methods if callable(getattr(torch, n, None))]
    assert len(public) > 60
    assert [n for n in public if not hasattr(cr, n)] == []


def test_every_function_form_is_a_real_definition() -> None:
    """cr.exp and friends are defined by name (grep and mypy see them), never installed into
    a namespace at run time."""
    tree = ast.parse((SRC / "functions.py").read_text())
    defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert {"exp", "sum", "max", "softmax", "reshape"} <= defined
    for path in SRC.rglob("*.py"):
        assert "globals().update" not in path.read_text(), path


def test_every_op_states_its_rule() -> None:
    def subclasses(cls: type) -> set[type]:
        out = set()
        for sub in cls.__subclasses__():
            out |= {sub} | subclasses(sub)
        return out

    ops = {op for op in subclasses(Function) if op.__module__.startswith("chainrule.ops")}
    assert len(ops) > 40
    assert [op.__name__ for op in ops if not op.__dict__.get("rule")] == []


def test_imports_flow_downward_and_no_private_name_crosses_a_module() -> None:
    """autograd imports neither ops nor tensor at run time; no module imports another's
    private (underscored) name."""
    for path in SRC.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                private = [a.name for a in node.names if a.name.startswith("_")]
                private = [n for n in private if not n.endswith("__")]  # __all__
                assert private == [] or node.module == "__future__", (path, private)
        if path.parent.name == "autograd":
            top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
            names = [n.module or "" for n in top if isinstance(n, ast.ImportFrom)]
            assert not [m for m in names if m.endswith(("ops", "tensor")) or ".ops" in m], path
