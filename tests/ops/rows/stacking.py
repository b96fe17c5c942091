"""Catalog rows of stack and unbind, each one primitive a call (ops/movement.py's Stack, and
one Unbind node a piece): new dims first, middle and last, 0-d pieces, and a round trip."""

from __future__ import annotations

from tests.ops.rows import Row

ROWS: list[Row] = [
    Row("stack_middle", lambda m, a, b, c: m.stack([a, b, c], 1), ((2, 3), (2, 3), (2, 3))),
    Row("stack[0d]", lambda m, a, b: m.stack([a, b]), ((), ())),
    Row("stack_one", lambda m, a: m.stack([a], -1), ((2, 3, 4),), second=True),
    Row("unbind_0", lambda m, a: a.unbind(0), ((3, 4),), second=True),
    Row("unbind_last", lambda m, a: m.unbind(a, -1), ((2, 3, 4),)),
    Row("unbind_to_0d", lambda m, a: a.unbind(), ((4,),)),
    Row("unbind_stack", lambda m, a: m.stack(a.unbind(1), 0) * 2.0, ((3, 4),), second=True),
]
