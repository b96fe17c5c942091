"""Every differentiable primitive (each Function subclass under chainrule.ops) is applied by
some row of the op catalog, forward or in its gradient, so a new op without a row fails here,
its node named as PyTorch's; and every public Tensor method torch has too is called by some
row, or by a test named in tested_elsewhere.py."""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.autograd.primitive import Function
from chainrule.linalg._checks import with_out
from tests.autograd.test_node_names import excepted
from tests.ops import test_ops as catalog
from tests.ops import tested_elsewhere

ROWS_DIR = "tests/ops/rows/"

# The primitives without a row, each with the reason.
NO_ROW = {
    "ToDevice": "moves between devices; the catalog runs on the CPU alone",
    "RNNLayer": "a layer's fused step over its own weights (tests/nn/test_rnn.py copies them)",
    "LSTMLayer": "a layer's fused step over its own weights (tests/nn/test_rnn.py copies them)",
    "GRULayer": "a layer's fused step over its own weights (tests/nn/test_rnn.py copies them)",
}


def _primitives() -> set[type]:
    found, todo = set(), [Function]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in found:
                found.add(sub)
                todo.append(sub)
    # a base that several share, named with an underscore, is never applied itself
    return {f for f in found if f.__module__.startswith("chainrule.ops") and f.__name__[0] != "_"}


def _on_leaves(fn: Any) -> bool:
    """Whether a node's inputs are all leaves (or need no gradient): one op's node alone."""
    return all(g is None or type(g).__name__ == "AccumulateGrad" for g, _ in fn.next_functions)


def _applied_by_the_catalog(monkeypatch: pytest.MonkeyPatch) -> set[type]:
    """The Function classes applied while each row runs forward and backward (float64),
    first order and with create_graph. Beside them, in NAMED, each primitive's node names on
    the rows where its node alone stands between the output and the leaves, with PyTorch's
    name for the same output (a one-node output there too)."""
    applied: set[type] = set()
    apply = Function.apply.__func__  # type: ignore[attr-defined]

    def recording(cls: type, *inputs: Any, **options: Any) -> Any:
        applied.add(cls.primitive)  # the op, also where it is named (Function.named)
        return apply(cls, *inputs, **options)

    monkeypatch.setattr(Function, "apply", classmethod(recording))
    for row in catalog.ROWS:
        try:
            ours, _, outs, theirs = catalog._run(row, np.float64)
        except Exception as err:  # its ops go uncounted: the test says which row, not "add one"
            FAILING.append(f"{row.name} ({type(err).__name__}: {err})")
            continue
        for o, t in zip(outs, theirs, strict=False):
            fo, ft = getattr(o, "grad_fn", None), getattr(t, "grad_fn", None)
            if fo is not None and ft is not None and _on_leaves(fo) and _on_leaves(ft):
                NAMED.setdefault(fo.primitive, []).append((fo.name(), ft.name(), row.name))
        outs = [o for o in outs if o.requires_grad]
        if outs:  # the backward on arrays, then in Tensor ops (what a second order records)
            upstream, _ = catalog._upstream(outs)
            inputs = catalog._tensor_inputs(ours)
            cr.grad(outs, inputs, upstream, retain_graph=True, allow_unused=True)
            cr.grad(outs, inputs, upstream, create_graph=True, allow_unused=True)
    return applied


def test_every_primitive_has_a_catalog_row(monkeypatch: pytest.MonkeyPatch) -> None:
    primitives = _primitives()
    assert len(primitives) > 40
    applied = {f.__name__ for f in _applied_by_the_catalog(monkeypatch)}
    assert FAILING == [], (
        "these rows raise before their ops can be counted (tests/ops/test_ops.py runs them "
        "too): make the call each row makes work, in the file its error names: "
        + "; ".join(FAILING)
    )
    names = {f.__name__ for f in primitives}
    missing = sorted(names - applied - set(NO_ROW))
    where = {f.__name__: f.__module__.replace(".", "/") for f in primitives}
    assert missing == [], (
        f"add a Row that applies each to the ROWS of its kind's module in {ROWS_DIR} (the "
        "catalog gathers them; a new kind, a new module there): "
        + "; ".join(f"{n} (src/{where[n]}.py)" for n in missing)
    )
    stale = sorted(n for n in NO_ROW if n in applied or n not in names)
    here = os.path.relpath(__file__, ROOT)
    assert stale == [], f"{here}: remove from NO_ROW (a row applies it, or it is gone): {stale}"
    _check_node_names()


# (chainrule's node name, PyTorch's, the row) by primitive, as the catalog's rows ran; the
# rows that raised, with the error
NAMED: dict[type, list[tuple[str, str, str]]] = {}
FAILING: list[str] = []


def _check_node_names() -> None:
    """Each primitive's node has PyTorch's name on at least one row where both libraries'
    output is one node on the leaves (tests/autograd/test_node_names.py compares every row,
    naming the rows; this names the op and the file to change)."""
    wrong = []
    for op, seen in sorted(NAMED.items(), key=lambda kv: kv[0].__name__):
        if not any(ours == theirs or excepted(ours, theirs) for ours, theirs, _ in seen):
            ours, theirs, row = seen[0]
            wrong.append(
                f"{op.__name__} (src/{op.__module__.replace('.', '/')}.py) names its node "
                f"{ours}, PyTorch {theirs} (row {row})"
            )
    assert wrong == [], (
        "name each op's class as PyTorch names its node, less Backward0 (Mul for "
        "MulBackward0), or, where PyTorch's name is not <Op>Backward0, map the class to it "
        "in _TORCH_NAMES of src/chainrule/autograd/node.py: " + "; ".join(wrong)
    )


# -- every public method --------------------------------------------------------------------

PACKAGE = os.path.dirname(cr.__file__)
FORMS = os.path.join(PACKAGE, "forms")
OUT = with_out("")(lambda: None).__code__  # the out= wrapper between a row and its form
ROOT = os.path.dirname(os.path.dirname(PACKAGE))
ELSEWHERE = os.path.relpath(tested_elsewhere.__file__, ROOT)  # as failures name it


def _methods() -> list[str]:
    """The public methods of cr.Tensor that torch.Tensor has too."""
    shared = set(dir(cr.Tensor)) & set(dir(torch.Tensor))
    return sorted(n for n in shared if n[0] != "_" and callable(getattr(cr.Tensor, n)))


def _called_by_a_row(frame: Any) -> bool:
    """Whether the call comes from a row's own code, or from a function form it called (not
    from chainrule's code calling its own methods)."""
    if frame.f_code.co_filename.startswith(FORMS):
        frame = frame.f_back
    if frame.f_code is OUT:
        frame = frame.f_back
    return not frame.f_code.co_filename.startswith(PACKAGE)


def _methods_applied_by_the_catalog() -> set[str]:
    """The Tensor methods each row's call makes (float64, forward)."""
    applied: set[str] = set()

    def watched(name: str, method: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            if _called_by_a_row(sys._getframe(1)):
                applied.add(name)
            return method(*args, **kwargs)

        return call

    names = _methods()
    own = {n: cr.Tensor.__dict__[n] for n in names if n in cr.Tensor.__dict__}
    for name in names:
        setattr(cr.Tensor, name, watched(name, getattr(cr.Tensor, name)))
    try:
        for row in catalog.ROWS:
            ours, _ = catalog._inputs(row, np.float64)
            try:
                row.fn(cr, *ours)
            except Exception:  # a failing row is test_ops.py's to report; its calls count
                pass
    finally:
        for name in names:
            if name in own:
                setattr(cr.Tensor, name, own[name])
            else:
                delattr(cr.Tensor, name)
    return applied


def _mentions(path: str, name: str) -> bool:
    """Whether the test file calls the method by name: ``.name(``, or ``"name"`` in a file
    that calls methods by getattr."""
    with open(os.path.join(ROOT, path)) as f:
        text = f.read()
    quoted = f'"{name}"' in text or f"'{name}'" in text
    return f".{name}(" in text or "getattr(" in text and quoted


def test_every_method_is_applied_by_a_row_or_tested_by_name() -> None:
    applied = _methods_applied_by_the_catalog()
    elsewhere = {n: path for path, names in tested_elsewhere.TESTED_IN.items() for n in names}
    missing = [
        n for n in _methods() if n not in applied | set(elsewhere) | set(tested_elsewhere.LACKING)
    ]
    assert missing == [], (
        f"add a Row that calls each to the ROWS of its kind's module in {ROWS_DIR}, or name "
        f"the test file that calls it in {ELSEWHERE}: {missing}"
    )
    wrong = [f"{path}: {n}" for n, path in elsewhere.items() if not _mentions(path, n)]
    assert wrong == [], f"{ELSEWHERE}: these files do not call these methods: {wrong}"
    done = sorted((set(elsewhere) | set(tested_elsewhere.LACKING)) & applied)
    if done:  # a warning: the row lands in another file, by another hand
        warnings.warn(
            f"{ELSEWHERE}: a row calls these now; take them out: {done}",
            stacklevel=1,
        )
