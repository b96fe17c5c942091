"""Catalog rows of the smooth activations written as primitives in ops/smooth.py: the ELU
family (elu, selu, celu, one primitive for the three), softplus, logsigmoid and mish, on
both signs and far out on each, with second derivatives."""

from __future__ import annotations

from tests.ops.rows import Row


def _F(m):  # noqa: ANN001, ANN202  (m is chainrule or torch)
    return m.nn.functional


ROWS: list[Row] = [
    Row("elu", lambda m, a: _F(m).elu(a * 3.0), ((3, 5),), "away", second=True),
    Row("elu_alpha", lambda m, a: _F(m).elu(a * 3.0, alpha=0.5), ((3, 5),), "away", second=True),
    Row("selu", lambda m, a: _F(m).selu(a * 3.0), ((3, 5),), "away", second=True),
    Row("celu", lambda m, a: _F(m).celu(a * 3.0, alpha=0.7), ((3, 5),), "away", second=True),
    Row("elu_far", lambda m, a: _F(m).elu(a * 40.0), ((4, 6),), "away"),
    Row("elu[0d]", lambda m, a: _F(m).elu(a), ((),), "away", second=True),
    Row("selu[0d]", lambda m, a: _F(m).selu(a), ((),), "away"),
    Row("softplus[0d]", lambda m, a: _F(m).softplus(a), ((),), second=True),
    Row("softplus_beta[0d]", lambda m, a: _F(m).softplus(a, beta=3.0), ((),)),
    Row("logsigmoid_second", lambda m, a: _F(m).logsigmoid(a * 3.0), ((3, 5),), second=True),
    Row("mish_second", lambda m, a: _F(m).mish(a * 3.0), ((3, 5),), second=True),
    Row("mish_far", lambda m, a: _F(m).mish(a * 40.0), ((4, 6),)),
    Row("mish[0d]", lambda m, a: _F(m).mish(a), ((),)),
]
