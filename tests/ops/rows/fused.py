"""Catalog rows of the arithmetic PyTorch computes as one op, each one node (ops/arithmetic.py):
addcmul and addcdiv (with a value, and broadcast), lerp of a number and of a tensor weight."""

from __future__ import annotations

from tests.ops.rows import NUM, Row

ROWS = [
    Row("addcmul", lambda m, a, b, c: a.addcmul(b, c, value=0.5), ((2, 3),) * 3, second=True),
    Row("addcmul[broadcast]", lambda m, a, b, c: m.addcmul(a, b, c), ((2, 3), (3,), (2, 1))),
    Row(
        "addcdiv",
        lambda m, a, b, c: a.addcdiv(b, c, value=-2),
        ((2, 3),) * 3,
        ("real", "real", "away"),
        second=True,
    ),
    Row(
        "addcdiv[broadcast]",
        lambda m, a, b, c: m.addcdiv(a, b, c),
        ((2, 3), (3,), (2, 1)),
        ("real", "real", "away"),
    ),
    Row("lerp", lambda m, a, b: a.lerp(b, 0.3), ((2, 3), (2, 3)), second=True),
    Row("lerp[weight 0.8]", lambda m, a, b: m.lerp(a, b, 0.8), ((2, 3), (3,))),
    Row("lerp[tensor weight]", lambda m, a, b, w: a.lerp(b, w), ((2, 3),) * 3, second=True),
    Row("remainder[number]", lambda m, a, n: m.remainder(a, n), ((2, 3), NUM)),
]
