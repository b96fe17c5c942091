"""Catalog rows of glu, PyTorch's one GluBackward0 node: along the last dim and another."""

from __future__ import annotations

from tests.ops.rows import Row

ROWS: list[Row] = [
    Row("glu", lambda m, a: m.nn.functional.glu(a), ((3, 4),), second=True),
    Row("glu_dim0", lambda m, a: m.nn.functional.glu(a, 0) * 2.0, ((4, 2, 3),)),
]
