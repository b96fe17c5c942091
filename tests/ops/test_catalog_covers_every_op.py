"""Every differentiable primitive (each Function subclass under chainrule.ops) is applied by
some row of the op catalog, forward or in its gradient, so a new op without a row fails here."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd.function import Function
from tests.ops import test_ops as catalog

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


def _applied_by_the_catalog(monkeypatch: pytest.MonkeyPatch) -> set[type]:
    """The Function classes applied while each row runs forward and backward (float64),
    first order and with create_graph."""
    applied: set[type] = set()
    apply = Function.apply.__func__  # type: ignore[attr-defined]

    def recording(cls: type, *inputs: Any, **options: Any) -> Any:
        applied.add(cls)
        return apply(cls, *inputs, **options)

    monkeypatch.setattr(Function, "apply", classmethod(recording))
    for row in catalog.ROWS:
        ours, _, outs, _ = catalog._run(row, np.float64)
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
    names = {f.__name__ for f in primitives}
    missing = sorted(names - applied - set(NO_ROW))
    where = {f.__name__: f.__module__.replace(".", "/") for f in primitives}
    assert missing == [], (
        f"add a Row that applies each to the ROWS of its kind's module in {ROWS_DIR} (the "
        "catalog gathers them; a new kind, a new module there): "
        + "; ".join(f"{n} (src/{where[n]}.py)" for n in missing)
    )
    stale = sorted(n for n in NO_ROW if n in applied or n not in names)
    assert stale == [], f"{__file__}: remove from NO_ROW (a row applies it, or it is gone): {stale}"
