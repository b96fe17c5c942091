"""An op cannot be half added: docs/architecture.md's "How an op is added" says an op is four
places and that forgetting any of them fails a test naming the file to change. Here a real
PyTorch op chainrule lacks (dist) is added that way to a copy of the package and its tests,
which pass; then each step is left out in turn, and some test must fail with a message that
names the file to change and what to write there."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass

import pytest
import torch

import chainrule as cr

ROOT = pathlib.Path(__file__).resolve().parents[2]
OP = "dist"  # a method and function of torch's that chainrule does not have yet

# -- the op, added the documented way ---------------------------------------------------------

# 1. its Function, in the file of ops/ of the distances (made here if there is none yet)
HEADER = '''"""Distances between two tensors."""

from __future__ import annotations

'''
FUNCTION = '''from typing import TYPE_CHECKING, Any

from ..array import xp
from ..autograd.primitive import Function

if TYPE_CHECKING:
    from ..autograd.primitive import Grads
    from ..tensor import Tensor


class Dist(Function):
    """out = (sum |a - b|^p)^(1/p) over the broadcast elements, for p > 0;
    grad_a = grad sign(d) |d|^(p-1) / out^(p-1) with d = a - b, grad_b = -grad_a."""

    rule = "grad_a = grad * sign(a - b) * |a - b|^(p-1) / out^(p-1), grad_b = -grad_a"
    saves_out = True

    def forward(self, a: Any, b: Any, p: float) -> Any:
        self.p = p
        return xp.asarray(xp.sum(xp.abs(a - b) ** p) ** (1 / p))

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        a, b = self.inputs
        d = a - b
        g = grad * d.sign() * d.abs() ** (self.p - 1) / out ** (self.p - 1)
        return g, -g
'''

# 2. its Tensor method, in the class of tensor/reductions.py (the norms are there)
IMPORT = (
    "from ..arguments import need_float\nfrom ..ops import distance\nfrom .core import as_tensor\n"
)
METHOD = '''
    def dist(self: TensorSelf, other: Tensor, p: float = 2) -> Tensor:
        """The p-norm of self - other (broadcast), as torch.dist."""
        need_float(self, "dist")
        return distance.Dist.apply(self, as_tensor(other), p=float(p))
'''

# 3. its function form, in forms/reductions.py, named in that module's __all__
FORM = '''

def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """The function form of Tensor.dist."""
    return as_tensor(input).dist(other, p)
'''
LISTED = '    "dist",\n'

# 4. its catalog rows, in the module of the distances in tests/ops/rows/ (made if there is none)
ROWS_HEADER = '''"""Catalog rows of the distances between two tensors."""

ROWS: list = []
'''
ROWS = """
from tests.ops.rows import Row

ROWS += [
    Row("dist", lambda m, a, b: a.dist(b), ((2, 3), (2, 3)), second=True),
    Row("dist_p3_broadcast", lambda m, a, b: m.dist(a, b, 3), ((2, 3), (3,)), second=True),
]
"""

PARTS = {
    "function": FUNCTION,
    "import": IMPORT,
    "method": METHOD,
    "form": FORM,
    "listed": LISTED,
    "rows": ROWS,
}


def _insert(path: pathlib.Path, after: str, text: str, before: bool = False) -> None:
    """Write text into the file just after (or before) the first line that starts with
    ``after``, so the additions stand wherever the file's other lines go."""
    lines = path.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith(after))
    lines.insert(at if before else at + 1, text)
    path.write_text("".join(lines))


def _add(root: pathlib.Path, parts: dict[str, str]) -> None:
    """Add the op's parts to the copy at root: the four places the architecture names."""
    _lacks_the_op()
    src = root / "src" / "chainrule"
    _append(src / "ops" / "distance.py", HEADER, parts["function"])
    reductions = src / "tensor" / "reductions.py"
    _insert(reductions, "class Reductions(", parts["import"], before=True)
    text = reductions.read_text()
    start = text.index("class Reductions(")
    slots = text.index("    __slots__ = ()\n", start) + len("    __slots__ = ()\n")
    reductions.write_text(text[:slots] + parts["method"] + text[slots:])
    forms = src / "forms" / "reductions.py"
    forms.write_text(forms.read_text() + parts["form"])
    _insert(forms, "__all__ = [", parts["listed"])
    _append(root / "tests" / "ops" / "rows" / "distance.py", ROWS_HEADER, parts["rows"])


def _append(path: pathlib.Path, header: str, text: str) -> None:
    """Add text at the end of the module at path, made with header first if there is none."""
    if not text:
        return
    old = path.read_text() + "\n\n" if path.exists() else header
    path.write_text(old + text)


def _copy(tmp: pathlib.Path, tests: tuple[str, ...] = ()) -> pathlib.Path:
    """The package, its tests (or these of them alone) and the pytest settings, copied
    under tmp."""
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "src" / "chainrule", tmp / "src" / "chainrule", ignore=skip)
    if not tests:
        shutil.copytree(ROOT / "tests", tmp / "tests", ignore=skip)
    for name in tests:
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp / name)
    shutil.copy(ROOT / "pyproject.toml", tmp)
    return tmp


def _python(root: pathlib.Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Python in a subprocess that imports chainrule and the tests from the copy."""
    env = {**os.environ, "PYTHONPATH": f"{root / 'src'}{os.pathsep}{root}"}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return subprocess.run(
        [sys.executable, *args], cwd=root, env=env, capture_output=True, text=True, timeout=600
    )


def test_the_op_is_not_chainrules_yet() -> None:
    """The tests below add dist: once chainrule has it, they need another op."""
    _lacks_the_op()


def _lacks_the_op() -> None:
    assert hasattr(torch.Tensor, OP) and callable(getattr(torch, OP))
    assert not hasattr(cr.Tensor, OP) and not hasattr(cr, OP), (
        f"chainrule has {OP} now: give tests/house/test_adding_an_op.py another op that "
        "torch has as a method and function and chainrule lacks (its Function, method, form "
        "and rows)"
    )


# -- one omission, fast: the complete op passes the layout checks, and without rule fails ----

FAST = """
import tests.house.test_layout as layout
from chainrule.ops import distance

assert distance.Dist.__module__ == "chainrule.ops.distance", distance.__file__
layout.test_every_op_states_its_rule()
layout.test_every_op_gives_its_forward_formula_first_in_its_docstring()
layout.test_every_op_has_a_forward()
layout.test_every_op_has_a_backward()
del distance.Dist.rule  # the op, its rule left out
try:
    layout.test_every_op_states_its_rule()
except AssertionError as err:
    print(err)
"""


def test_an_op_without_its_rule_fails_naming_its_file(tmp_path: pathlib.Path) -> None:
    layout = ("tests/__init__.py", "tests/house/__init__.py", "tests/house/test_layout.py")
    root = _copy(tmp_path, layout)
    _add(root, {**PARTS, "rows": ""})
    done = _python(root, "-c", FAST)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "src/chainrule/ops/distance.py: Dist" in done.stdout, done.stdout
    assert 'rule = "grad_a = ..."' in done.stdout


# -- every omission -----------------------------------------------------------------------------

# The tests an op's omission can fail: the house's layout, the forms, the dtypes, the catalog's
# coverage and node names, and the op's own catalog rows (-k: the others' rows are left out).
CHECKS = [
    "tests/house/test_layout.py",
    "tests/ops/test_forms.py",
    "tests/ops/test_floating_methods.py",
    "tests/ops/test_catalog_covers_every_op.py",
    "tests/ops/test_ops.py",
    "-k",
    "dist or layout or forms or floating or covers",
]


def _pytest(root: pathlib.Path, *report: str) -> subprocess.CompletedProcess[str]:
    return _python(
        root, "-m", "pytest", "-q", "--tb=short", "-p", "no:cacheprovider", *report, *CHECKS
    )


@dataclass
class Omission:
    name: str
    change: Callable[[dict[str, str]], dict[str, str]]
    says: tuple[str, ...]  # what the failures must say: the file to change, what to write
    not_says: tuple[str, ...] = ()  # a wrong file to blame


def _without(part: str, old: str = "", new: str = "") -> Callable[[dict[str, str]], dict[str, str]]:
    """The parts with ``old`` replaced by ``new`` in one part (all of it when old is "")."""

    def change(parts: dict[str, str]) -> dict[str, str]:
        assert old in parts[part], (part, old)
        return {**parts, part: parts[part].replace(old, new) if old else ""}

    return change


def _renamed(parts: dict[str, str]) -> dict[str, str]:
    """The op's class named otherwise than PyTorch names its node (DistBackward0)."""
    return {
        k: v.replace("Dist(", "Distance(").replace("Dist.", "Distance.") for k, v in parts.items()
    }


def _lines(start: str, end: str | None) -> str:
    """The lines of FUNCTION from the one that starts with ``start`` to ``end``'s."""
    return FUNCTION[FUNCTION.index(start) : FUNCTION.index(end) if end else len(FUNCTION)]


OPS_FILE = "src/chainrule/ops/distance.py: Dist"
ROWS_BLAMED = "add a Row that applies each"  # where the rows are there, and fail
OMISSIONS = [
    Omission(
        "no rule", _without("function", _lines("    rule =", "    saves_out")), (OPS_FILE, "rule =")
    ),
    Omission(
        "a rule of two lines",
        _without("function", ", grad_b = -grad_a", "\\ngrad_b = -grad_a"),
        (f"{OPS_FILE} (of two lines)", "rule ="),
    ),
    Omission(
        "no docstring",
        _without("function", _lines('    """out =', "    rule =")),
        (OPS_FILE, "forward formula"),
    ),
    Omission(
        "no formula in the docstring",
        _without("function", '"""out = (sum |a - b|^p)^(1/p)', '"""The p-norm of a - b'),
        (OPS_FILE, "forward formula"),
    ),
    Omission(
        "no forward",
        _without("function", _lines("    def forward(", "    def backward(")),
        (OPS_FILE, "write forward("),
    ),
    Omission(
        "no backward",
        _without("function", _lines("    def backward(", None)),
        (OPS_FILE, "write backward("),
    ),
    Omission(
        "no Tensor method",
        _without("method"),
        ("add the Tensor method", "src/chainrule/tensor/", "'dist'"),
        ("add the function form", ROWS_BLAMED),
    ),
    Omission(
        "no function form",
        lambda parts: _without("listed")(_without("form")(parts)),
        ("add the function form", "src/chainrule/forms/", "'dist'"),
        ("add the Tensor method", ROWS_BLAMED),
    ),
    Omission(
        "the form not in __all__",
        _without("listed"),
        ("__all__", "'src/chainrule/forms/reductions.py': 'dist'"),
        (ROWS_BLAMED,),
    ),
    Omission(
        "the form with another signature",
        _without("form", "p: float = 2) -> Tensor:", "p: float = 3) -> Tensor:"),
        ("src/chainrule/forms/reductions.py: dist must take Tensor.dist's parameters",),
    ),
    Omission(
        "no catalog row",
        _without("rows"),
        ("add a Row that applies each", "tests/ops/rows/", "Dist (src/chainrule/ops/distance.py)"),
    ),
    Omission(
        "integers not refused",
        _without("method", '        need_float(self, "dist")\n'),
        ("src/chainrule/tensor/reductions.py: Tensor.dist must refuse two int64", "need_float"),
    ),
    Omission(
        "a node name other than PyTorch's",
        _renamed,
        (
            "Distance (src/chainrule/ops/distance.py) names its node DistanceBackward0, "
            "PyTorch DistBackward0",
            "_TORCH_NAMES of src/chainrule/autograd/node.py",
        ),
    ),
]


@pytest.mark.slow
def test_the_complete_op_passes_its_checks(tmp_path: pathlib.Path) -> None:
    root = _copy(tmp_path)
    _add(root, PARTS)
    done = _pytest(root, "-rA")  # -rA: each test passed, named
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    ran = [
        "test_ops.py::test_forward_matches_torch[dist-f64]",
        "test_ops.py::test_gradients_match_torch[dist_p3_broadcast-f32-plain]",
        "test_forms.py::test_each_form_has_its_methods_parameters_and_return[dist]",
        "test_floating_methods.py::test_methods_of_two_integer_tensors_take_torchs_dtype_or_refuse[int64-dist]",
    ]
    assert [t for t in ran if f"PASSED tests/ops/{t}" not in done.stdout] == []


@pytest.mark.slow
@pytest.mark.parametrize("omission", OMISSIONS, ids=[o.name for o in OMISSIONS])
def test_each_omission_fails_naming_the_file_to_change(
    omission: Omission, tmp_path: pathlib.Path
) -> None:
    root = _copy(tmp_path)
    _add(root, omission.change(PARTS))
    done = _pytest(root)
    said = done.stdout + done.stderr
    assert done.returncode != 0, f"{omission.name}: every check passed"
    missing = [s for s in omission.says if s not in said]
    assert missing == [], f"{omission.name}: no failure says {missing}:\n{said[-6000:]}"
    wrong = [s for s in omission.not_says if s in said]
    assert wrong == [], f"{omission.name}: a failure blames the wrong file ({wrong}):\n{said}"
