"""No module is handed the Tensor class from outside: a module that names ``Tensor`` at run
time imports it (or defines it) where a reader sees it. The files Tensor is made of
(src/chainrule/tensor/) cannot import it, so they name it in annotations alone, make a
tensor with core's ``make`` and recognise one with ``isinstance(x, Core)``."""

from __future__ import annotations

import ast
import pathlib
import sys

import chainrule as cr
from chainrule.tensor.core import Core, make

SRC = pathlib.Path(cr.__file__).parent
FIX = (
    "write make(...) (from .core) for Tensor._make(...), isinstance(x, Core) for "
    "isinstance(x, Tensor), a mixin's own method (Arithmetic.abs) for Tensor.abs, and "
    "tensor_type() (array/tensor_type.py) where the class itself is wanted"
)


def _is_type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def _for_mypy(tree: ast.AST) -> set[int]:
    """The ids of the nodes mypy alone reads: annotations and ``if TYPE_CHECKING:`` blocks."""
    seen: set[int] = set()
    for node in ast.walk(tree):
        parts = [getattr(node, "annotation", None), getattr(node, "returns", None)]
        if _is_type_checking(node):
            parts.append(node)
        for part in parts:
            if part is not None:
                seen.update(id(n) for n in ast.walk(part))
    return seen


def runtime_uses(source: str, name: str = "Tensor") -> list[int]:
    """The lines where ``name`` is read when the code runs (not in an annotation, not under
    ``if TYPE_CHECKING:``)."""
    tree = ast.parse(source)
    skip = _for_mypy(tree)
    return [
        n.lineno
        for n in ast.walk(tree)
        if isinstance(n, ast.Name) and n.id == name and id(n) not in skip
        if isinstance(n.ctx, ast.Load)
    ]


def binds_at_top(source: str, name: str = "Tensor") -> bool:
    """Whether the module itself binds ``name`` when it runs: an import, a class, a def or an
    assignment at its top level (inside ``if``/``try`` blocks too, not ``if TYPE_CHECKING:``)."""

    def walk(body: list[ast.stmt]) -> bool:
        for stmt in body:
            if _is_type_checking(stmt):
                if any(walk([s]) for s in getattr(stmt, "orelse", [])):
                    return True
                continue
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                if any((a.asname or a.name.split(".")[0]) == name for a in stmt.names):
                    return True
            elif isinstance(stmt, (ast.ClassDef, ast.FunctionDef)) and stmt.name == name:
                return True
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target in targets:
                    if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target)):
                        return True
            for field in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(stmt, field, None)
                if isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    break
                if inner and walk(inner):
                    return True
        return False

    return walk(ast.parse(source).body)


def test_the_tensor_files_never_name_tensor_at_run_time() -> None:
    """The files Tensor is made of read the name in annotations alone; anything else would
    need the class bound into them once it is made."""
    found = []
    for path in sorted((SRC / "tensor").glob("*.py")):
        source = path.read_text()
        if binds_at_top(source):
            continue  # __init__.py makes the class
        found += [f"src/chainrule/tensor/{path.name}:{n}" for n in sorted(runtime_uses(source))]
    assert found == [], f"these lines read the name Tensor at run time; {FIX}: {found}"


def test_no_module_gets_tensor_bound_from_outside() -> None:
    """Every chainrule module that ``import chainrule`` loads and that holds the name Tensor
    binds it itself, in its source."""
    outside = []
    for name, module in sorted(sys.modules.items()):
        if not name.startswith("chainrule") or "Tensor" not in vars(module):
            continue
        path = getattr(module, "__file__", None)
        if path is None or not path.endswith(".py"):
            continue
        if not binds_at_top(pathlib.Path(path).read_text()):
            outside.append(name)
    assert outside == [], (
        f"these modules hold the name Tensor without binding it in their source: something "
        f"binds it into them from outside; import it where the module can, else {FIX}: "
        f"{outside}"
    )


def test_only_tensors_derive_from_core() -> None:
    """isinstance(x, Core) means a Tensor: the only classes derived from Core are Tensor's
    own bases (its kinds of method) and Tensor and its subclasses."""

    def subclasses(cls: type) -> set[type]:
        return {s for c in cls.__subclasses__() for s in {c} | subclasses(c)}

    others = [
        c.__qualname__
        for c in subclasses(Core)
        if not issubclass(c, cr.Tensor) and c not in cr.Tensor.__mro__
    ]
    assert others == [], f"derive these from Tensor, not from tensor/core.py's Core: {others}"
    assert type(make(cr.zeros(2)._array)) is cr.Tensor and cr.Tensor._make is make


def test_the_checks_find_a_name_read_at_run_time() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from . import Tensor\n"
        "def f(x: Tensor) -> Tensor:\n"
        "    return Tensor._make(x) if isinstance(x, Tensor) else x\n"
    )
    assert runtime_uses(source) == [5, 5]
    assert not binds_at_top(source)
    assert binds_at_top("try:\n    from .tensor import Tensor\nexcept ImportError:\n    pass\n")
    assert binds_at_top(source.replace("if TYPE_CHECKING:\n    from", "if True:\n    from"))
