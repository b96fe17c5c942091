"""The code's layout keeps its promises: every op has its cr.* form and its rule text, and
the engine's modules import what the map in docs/architecture.md says."""

from __future__ import annotations

import ast
import pathlib

import torch

import chainrule as cr
from chainrule.autograd.primitive import Function

SRC = pathlib.Path(cr.__file__).parent


def _top_level_functions(path: pathlib.Path) -> set[str]:
    """The public functions a module defines, or every module of a package does."""
    if path.is_dir():
        return set().union(*(_top_level_functions(p) for p in path.glob("*.py")))
    tree = ast.parse(path.read_text())
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name[0] != "_"}


# Functions of several tensors that are also Tensor methods: defined beside the Tensor (its
# methods call them) and exported by functions.py; where takes torch's order, not the method's.
BESIDE_THE_FORMS = {"matmul", "where"}


def test_forms_are_the_tensor_methods_torch_has_as_functions() -> None:
    """forms/ holds one form for each Tensor method that torch also has as a function, and
    nothing else; its __all__ lists exactly those."""
    methods = [n for n in dir(cr.Tensor) if not n.startswith("_")]
    methods = [n for n in methods if callable(getattr(cr.Tensor, n))]
    public = {n for n in methods if callable(getattr(torch, n, None))}
    assert len(public) > 60
    forms = _top_level_functions(SRC / "forms")
    missing = sorted(public - forms - BESIDE_THE_FORMS)
    assert missing == [], (
        "add the function form of each to its kind's module in src/chainrule/forms/, with "
        f"the Tensor method's signature, and name it in that module's __all__: {missing}"
    )
    no_method = sorted(n for n in forms - public if hasattr(torch.Tensor, n))
    assert no_method == [], (
        "add the Tensor method of each (one line calling its op) to the file of its kind in "
        f"src/chainrule/tensor/; its form in src/chainrule/forms/ is there already: {no_method}"
    )
    stray = sorted(forms - public)
    assert stray == [], f"src/chainrule/forms/: not a Tensor method torch has: {stray}"
    unlisted = {_defined_in(SRC / "forms", n): n for n in forms - set(cr.forms.__all__)}
    assert unlisted == {}, f"name each in the __all__ of the module that defines it: {unlisted}"
    assert sorted(cr.forms.__all__) == sorted(forms), (
        "src/chainrule/forms/: __all__ names a function no module of forms/ defines"
    )
    assert BESIDE_THE_FORMS <= set(cr.functions.__all__)


def _defined_in(package: pathlib.Path, name: str) -> str:
    """The file of package that defines the public function name."""
    found = [p for p in sorted(package.glob("*.py")) if name in _top_level_functions(p)]
    return str(found[0].relative_to(SRC.parent.parent)) if found else str(package)


def test_every_function_form_is_a_real_definition() -> None:
    """cr.exp and friends are defined by name (grep and mypy see them), never installed into
    a namespace at run time."""
    assert {"exp", "sum", "max", "softmax", "reshape"} <= _top_level_functions(SRC / "forms")
    for path in SRC.rglob("*.py"):
        assert "globals().update" not in path.read_text(), path


def _ops() -> list[type]:
    """Every Function subclass of chainrule.ops: the primitives (a base that several share,
    named with an underscore, is none: it is never applied itself)."""
    found, todo = set(), [Function]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in found:
                found.add(sub)
                todo.append(sub)
    ops = [
        op for op in found if op.__module__.startswith("chainrule.ops") and op.__name__[0] != "_"
    ]
    assert len(ops) > 40
    return sorted(ops, key=lambda op: (op.__module__, op.__name__))


def _file(op: type) -> str:
    return "src/" + op.__module__.replace(".", "/") + ".py"


def test_every_op_states_its_rule() -> None:
    rules = {op: op.__dict__.get("rule") or "" for op in _ops()}
    missing = [f"{_file(op)}: {op.__name__}" for op, rule in rules.items() if not rule.strip()]
    missing += [
        f"{_file(op)}: {op.__name__} (of two lines)" for op, r in rules.items() if "\n" in r
    ]
    assert missing == [], (
        'give each op its gradient rule as one line of text, rule = "grad_a = ..." (what '
        "explain and draw_graph show): " + "; ".join(missing)
    )


def test_every_op_gives_its_forward_formula_first_in_its_docstring() -> None:
    """An op's docstring opens with the formula forward computes (``out = a * b``)."""
    missing = []
    for op in _ops():
        first = (op.__dict__.get("__doc__") or "").strip().partition("\n")[0]
        if "=" not in first:
            missing.append(f"{_file(op)}: {op.__name__} (first line {first!r})")
    assert missing == [], (
        'open each op\'s docstring with its forward formula, as """out = a * b""": '
        + "; ".join(missing)
    )


def test_every_op_has_a_backward() -> None:
    """Every primitive has its rule in Tensor ops (its own, or the op's it specialises)."""
    missing = [f"{_file(op)}: {op.__name__}" for op in _ops() if op.backward is Function.backward]
    assert missing == [], (
        "write backward(self, grad, out) for each op, in Tensor ops, one gradient per input: "
        + "; ".join(missing)
    )


def test_every_op_has_a_forward() -> None:
    """Every primitive computes on arrays (its own forward, or the op's it specialises)."""
    missing = [f"{_file(op)}: {op.__name__}" for op in _ops() if op.forward is Function.forward]
    assert missing == [], (
        "write forward(self, *arrays, **options) for each op, on arrays, returning the "
        "output's array: " + "; ".join(missing)
    )


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


def _module_name(path: pathlib.Path) -> str:
    parts = ["chainrule", *path.relative_to(SRC).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: pathlib.Path, modules: set[str]) -> set[str]:
    """The chainrule modules a file imports when it runs: at the top and inside functions,
    but not under ``if TYPE_CHECKING:`` (read by mypy only). ``from pkg import name`` is an
    import of pkg.name where that is a module, else of pkg (its __init__ runs)."""
    tree = ast.parse(path.read_text())
    me = _module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    checked = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            checked |= {id(n) for sub in node.body for n in ast.walk(sub)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in checked:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            for a in node.names:
                found.add(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base)
    return {m for m in found if m in modules and m != me}


def test_no_module_imports_itself_back_even_inside_a_function() -> None:
    """The imports between chainrule's modules, counting those inside functions, have no
    cycle: each layer is importable and readable on its own, below the ones that use it."""
    paths = {_module_name(p): p for p in SRC.rglob("*.py")}
    edges = {m: _imports(p, set(paths)) for m, p in paths.items()}
    assert "chainrule" in edges["chainrule.tools.cli"]  # imported inside its functions only
    assert "chainrule.array" in edges["chainrule.autograd.primitive"]
    done: set[str] = set()
    for start in sorted(edges):  # depth first, without recursion; a grey node met is a cycle
        stack, grey = [(start, iter(sorted(edges[start])))], {start}
        while stack:
            node, rest = stack[-1]
            nxt = next(rest, None)
            if nxt is None:
                stack.pop()
                grey.discard(node)
                done.add(node)
            elif nxt in grey:
                cycle = [n for n, _ in stack][[n for n, _ in stack].index(nxt) :] + [nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            elif nxt not in done:
                grey.add(nxt)
                stack.append((nxt, iter(sorted(edges[nxt]))))


def test_no_source_file_is_over_800_lines() -> None:
    """A file a reader opens fits in one sitting: split one that grows past 800 lines by
    kind, as tensor/ and ops/ are split."""
    long = {str(p.relative_to(SRC)): n for p in SRC.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 800}  # fmt: skip
    assert long == {}, f"split these files of src/chainrule by kind: {long}"
