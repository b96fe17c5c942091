"""Catalog rows of chainrule.nn.functional's activations, normalisations, losses and small
layers (each row one call, the same in torch.nn.functional)."""

from __future__ import annotations

from tests.ops.rows import Row

ROWS: list[Row] = [
    # -- activations ------------------------------------------------------------------------
    Row("hardswish", lambda m, a: m.nn.functional.hardswish(a * 4.0), ((3, 5),), second=True),
    Row("hardsigmoid", lambda m, a: m.nn.functional.hardsigmoid(a * 4.0), ((3, 5),)),
    Row("softshrink", lambda m, a: m.nn.functional.softshrink(a, 0.3), ((3, 5),), "away"),
    Row("hardshrink", lambda m, a: m.nn.functional.hardshrink(a, 0.3), ((3, 5),), "away"),
    Row("tanhshrink", lambda m, a: m.nn.functional.tanhshrink(a), ((3, 5),), second=True),
    Row("rrelu_eval", lambda m, a: m.nn.functional.rrelu(a, 0.1, 0.3), ((3, 5),), "away"),
    Row("hardswish[0d]", lambda m, a: m.nn.functional.hardswish(a), ((),)),
]
