"""Catalog rows of the order statistics, scans and statistics: median, kthvalue, mode,
quantile, cummax and cummin, logcumsumexp, the NaN-ignoring reductions, aminmax, diff, cov
and corrcoef (random inputs: no ties; tests/ops/test_statistics.py pins the ties)."""

from __future__ import annotations

from tests.ops.rows import Row

X = ((2, 3, 4),)
MATRIX = ((3, 5),)

ROWS: list[Row] = [
    Row("median_all", lambda m, x: x.median(), X, second=True),
    Row("median_dim", lambda m, x: tuple(x.median(1)), X),
    Row("median_dim_values", lambda m, x: x.median(1).values * x[:, 0], X, second=True),
    Row("median_fn_keepdim", lambda m, x: tuple(m.median(x, -1, keepdim=True)), X),
    Row("median_0d", lambda m, x: tuple(x.median(0)), ((),)),
    Row("nanmedian_all", lambda m, x: m.nanmedian(x), X),
    Row("nanmedian_dim", lambda m, x: tuple(x.nanmedian(0, True)), X),
    Row("kthvalue", lambda m, x: tuple(x.kthvalue(2)), X),
    Row("kthvalue_values", lambda m, x: x.kthvalue(2).values ** 2, X, second=True),
    Row("kthvalue_fn_dim_keepdim", lambda m, x: tuple(m.kthvalue(x, 3, 1, True)), X),
    Row("mode", lambda m, x: tuple(x.mode(0)), X),
    Row("mode_fn_keepdim", lambda m, x: tuple(m.mode(x, keepdim=True)), X),
    Row("quantile_all", lambda m, x: x.quantile(0.3), X, second=True),
    Row("quantile_dim_keepdim", lambda m, x: m.quantile(x, 0.75, 1, True), X),
    Row(
        "quantile_q_tensor",
        lambda m, x, q: x.quantile(q.sigmoid(), dim=-1),
        ((2, 3, 4), (3,)),
        second=True,
    ),
    Row(
        "quantile_interpolations",
        lambda m, x: tuple(
            x.quantile(0.4, 0, interpolation=how)
            for how in ("lower", "higher", "nearest", "midpoint")
        ),
        X,
    ),
    Row("nanquantile", lambda m, x: m.nanquantile(x, 0.6, dim=2), X),
    Row("cummax", lambda m, x: tuple(x.cummax(1)), X),
    Row("cummax_values", lambda m, x: x.cummax(1).values * x, X, second=True),
    Row("cummin_fn", lambda m, x: tuple(m.cummin(x, -1)), X),
    Row("cummax_0d", lambda m, x: tuple(x.cummax(0)), ((),)),
    Row("logcumsumexp", lambda m, x: x.logcumsumexp(1), X, second=True),
    Row("logcumsumexp_fn_last", lambda m, x: m.logcumsumexp(x, -1) * x, X, second=True),
    Row("logcumsumexp_0d", lambda m, x: x.logcumsumexp(0), ((),)),
    Row("nansum", lambda m, x: x.nansum(), X),
    Row("nansum_fn_dim", lambda m, x: m.nansum(x, (0, 2), keepdim=True), X),
    Row("nanmean", lambda m, x: x.nanmean(1), X, second=True),
    Row("nanmean_fn", lambda m, x: m.nanmean(x), X),
    Row("aminmax", lambda m, x: tuple(x.aminmax()), X),
    Row("aminmax_fn_dim", lambda m, x: tuple(m.aminmax(x, dim=1, keepdim=True)), X),
    Row("diff", lambda m, x: x.diff(), X),
    Row("diff_fn_n2_dim0", lambda m, x: m.diff(x, 2, 0), X),
    Row(
        "diff_prepend_append",
        lambda m, x, p, a: x.diff(dim=1, prepend=p, append=a),
        ((2, 3, 4), (2, 1, 4), (2, 2, 4)),
    ),
    Row("cov", lambda m, x: x.cov(), MATRIX, second=True),
    Row("cov_fn_vector_correction0", lambda m, x: m.cov(x, correction=0), ((5,),)),
    Row(
        "cov_weights",
        lambda m, x, w: m.cov(x, fweights=m.tensor([1, 2, 1, 3, 1]), aweights=w.exp()),
        ((3, 5), (5,)),
        second=True,
    ),
    Row("corrcoef", lambda m, x: x.corrcoef(), MATRIX, second=True),
    Row("msort", lambda m, x: x.msort() * x, X, second=True),
    Row("msort_fn", lambda m, x: m.msort(x), ((5,),)),
    Row("corrcoef_fn_vector", lambda m, x: m.corrcoef(x * x), ((4,),)),
]
