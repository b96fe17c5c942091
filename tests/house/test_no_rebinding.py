"""No module of chainrule writes into another's names when it is imported: a reader of a file
sees every name it has where it is defined (a method in its class, a function in its module),
never one put there, unseen, by a module that imports it."""

from __future__ import annotations

import ast
import pathlib

import chainrule as cr

SRC = pathlib.Path(cr.__file__).parent

# Writes at import that PyTorch's own surface demands, by file and what is written, each with
# why it cannot be a definition where the name lives.
ALLOWED = {
    ("nn/modules/__init__.py", "sys.modules[made.__name__]"): (
        "torch.nn.modules.<file> import paths (from torch.nn.modules.linear import Linear) are "
        "modules Python's import finds only in sys.modules"
    ),
    ("sparse.py", "Tensor.to_sparse"): (
        "Tensor.to_sparse makes a SparseTensor, a class of sparse.py, above tensor/"
    ),
}

INSTEAD = (
    "define the name where it lives (a method in its class, a name in its module); where that "
    "module is below this one and cannot import it, let it declare the name and a way to fill "
    "it: a slot this module fills while it is needed (autograd/primitive.py's `batching`, "
    "filled by batching.enter) or a function this module calls (tensor/linalg.py's use_legacy)"
)

_WRITERS = {"setattr", "delattr"}
_DICT_WRITES = {"update", "setdefault", "pop", "clear", "__setitem__", "__delitem__"}


def _imported(tree: ast.Module) -> set[str]:
    """The names a file binds by importing: modules, and classes or functions of others."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            names |= {a.asname or a.name for a in node.names}
    return names


def _at_import(tree: ast.Module) -> list[ast.AST]:
    """The nodes that run when the module is imported: its top level (into if, for, with, try
    and class bodies), and the bodies of its own functions that the top level calls."""
    functions = {
        n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    found: list[ast.AST] = []
    todo: list[ast.AST] = list(tree.body)
    called: set[str] = set()
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue  # runs when called
        found.append(node)
        todo.extend(ast.iter_child_nodes(node))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            name = node.func.id
            if name in functions and name not in called:
                called.add(name)
                todo.extend(functions[name].body)
    return found


def _root(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _written(node: ast.AST) -> list[tuple[ast.expr, str]]:
    """What a node writes into, and how it reads: assignment targets that are attributes or
    items, the object of setattr / delattr, the ``__dict__`` whose update is called."""
    if isinstance(node, (ast.Assign, ast.Delete)):
        targets = node.targets
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        writes = node.func.id in _WRITERS and node.args
        return [(node.args[0], ast.unparse(node))] if writes else []
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        owner = node.func.value
        dict_of = isinstance(owner, ast.Attribute) and owner.attr == "__dict__"
        return [(owner, ast.unparse(node))] if dict_of and node.func.attr in _DICT_WRITES else []
    else:
        return []
    return [(t, ast.unparse(t)) for t in targets if isinstance(t, (ast.Attribute, ast.Subscript))]


def rebindings(source: str, where: str) -> list[tuple[str, int, str]]:
    """(file, line, what is written) for each write at import into a name another module
    defines (one this file imports), the allowed ones left out."""
    tree = ast.parse(source)
    imported = _imported(tree)
    found = []
    for node in _at_import(tree):
        for target, text in _written(node):
            if _root(target) in imported:
                if (where, text) not in ALLOWED:
                    found.append((where, getattr(node, "lineno", 0), text))
    return sorted(found)


def test_no_module_writes_into_another_at_import() -> None:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        where = str(path.relative_to(SRC))
        found += rebindings(path.read_text(), where)
    lines = [f"src/chainrule/{f}:{line}: writes {text}" for f, line, text in found]
    assert lines == [], "\n".join([*lines, f"instead: {INSTEAD}"])


def test_every_allowed_write_is_still_made() -> None:
    """An allowed write that is gone leaves its entry: remove it from ALLOWED."""
    stale = []
    for where, text in ALLOWED:
        tree = ast.parse((SRC / where).read_text())
        written = {text for n in _at_import(tree) for _, text in _written(n)}
        if text not in written:
            stale.append((where, text))
    assert stale == [], f"tests/house/test_no_rebinding.py: remove from ALLOWED: {stale}"


SEEN = """
import functools
from . import other
from .tensor import Tensor

other.name = 1
other.table["key"] = 2
Tensor.method = functools.partial(print)
setattr(Tensor, "draw", print)
other.__dict__.update(x=1)


def _install(name):
    setattr(Tensor, name, print)


for n in ("a", "b"):
    _install(n)
"""

NOT_SEEN = """
from . import other
from .tensor import Tensor


class Mine:
    pass


Mine.x = 1
setattr(Mine, "y", 2)
other.use(Mine)


def enter():
    other.slot[0] = Mine  # when called, not at import


def _unused():
    Tensor.z = 3
"""


def test_the_check_sees_each_way_of_writing_into_another_module() -> None:
    found = [text for _, _, text in rebindings(SEEN, "example.py")]
    assert found == [
        "other.name",
        "other.table['key']",
        "Tensor.method",
        "setattr(Tensor, 'draw', print)",
        "other.__dict__.update(x=1)",
        "setattr(Tensor, name, print)",
    ]
    assert rebindings(NOT_SEEN, "example.py") == []
