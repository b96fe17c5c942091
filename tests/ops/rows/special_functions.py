"""Catalog rows of chainrule.special's primitives (ops/special_functions.py); zeta and the
incomplete gamma functions with their first argument a number, since PyTorch has no gradient
with respect to it."""

from __future__ import annotations

from tests.ops.rows import NUM, Row, same

ROWS = [
    Row("special_i0e", lambda m, x: m.special.i0e(x), ((2, 3),), second=True),
    Row("special_i1", lambda m, x: m.special.i1(x), ((2, 3),), second=True),
    Row("special_i1e", lambda m, x: m.special.i1e(x), ((2, 3),), second=True),
    Row(
        "special_ndtri", lambda m, x: m.special.ndtri(x / 2.5), ((2, 3),), domain="pos", second=True
    ),
    Row("special_log_ndtr", lambda m, x: m.special.log_ndtr(x), ((2, 3),), second=True),
    Row("special_erfcx", lambda m, x: m.special.erfcx(x), ((2, 3),), second=True),
    Row("special_entr", lambda m, x: m.special.entr(x), ((2, 3),), domain="pos", second=True),
    Row(
        "special_xlog1py",
        lambda m, x, y: m.special.xlog1py(x, y),
        ((2, 3), (3,)),
        domain=("real", "pos"),
        second=True,
    ),
    Row(
        "special_zeta",
        lambda m, x, q: m.special.zeta(x + 1, q),
        (NUM, (2, 3)),
        domain=("real", "pos"),
        torch_fn=same(lambda m, x, q: m.special.zeta(x + 1, q)),
    ),
    Row(
        "special_gammainc",
        lambda m, a, x: m.special.gammainc(a, x),
        (NUM, (2, 3)),
        domain=("real", "pos"),
        torch_fn=same(lambda m, a, x: m.special.gammainc(a, x)),
    ),
    Row(
        "special_gammaincc",
        lambda m, a, x: m.special.gammaincc(a, x),
        (NUM, (2, 3)),
        domain=("real", "pos"),
        torch_fn=same(lambda m, a, x: m.special.gammaincc(a, x)),
    ),
]
