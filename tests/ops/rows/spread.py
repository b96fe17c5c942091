"""Catalog rows of the products and spreads that are one node each, as PyTorch's: prod over
every dim and over one (with zeros among the factors), std, var_mean, std_mean and aminmax
(their two outputs one node), and the vector norms by order through torch.norm."""

from __future__ import annotations

from tests.ops.rows import Row

X = ((2, 3, 4),)
ONE_ZERO = [[1.0, 0.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]]
TWO_ZEROS = [[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]]

ROWS: list[Row] = [
    Row("prod_all", lambda m, x: x.prod(), X, second=True),
    Row("prod_dim", lambda m, x: x.prod(1), X, second=True),
    Row("prod_dim_keepdim", lambda m, x: m.prod(x, -1, keepdim=True), X),
    Row("prod_0d", lambda m, x: x.prod(0), ((),)),
    Row("prod_all_one_zero", lambda m, x: (x * m.tensor(ONE_ZERO)).prod(), ((3, 4),), second=True),
    Row("prod_all_two_zeros", lambda m, x: (x * m.tensor(TWO_ZEROS)).prod(), ((3, 4),)),
    Row(
        "prod_dim_zeros",
        lambda m, x: (x * m.tensor(TWO_ZEROS)).prod(1),
        ((3, 4),),
        second=True,
    ),
    Row("prod_dtype", lambda m, x: x.prod(dtype=m.float64), X),
    Row("std_unbiased_false", lambda m, x: x.std(1, False), X, second=True),
    Row("var_mean", lambda m, x: tuple(m.var_mean(x, 1)), X, second=True),
    Row("var_mean_all", lambda m, x: tuple(m.var_mean(x, correction=0)), X),
    Row("var_mean_mean_only", lambda m, x: m.var_mean(x, (0, 2), keepdim=True)[1] * x, X),
    Row("std_mean", lambda m, x: tuple(m.std_mean(x, (0, 2), keepdim=True)), X, second=True),
    Row("std_mean_std_only", lambda m, x: m.std_mean(x, -1)[0], X, second=True),
    Row("aminmax_min_only", lambda m, x: m.aminmax(x, dim=-1, keepdim=True).min * x, X),
    Row("norm_inf_dim", lambda m, x: x.norm(float("inf"), 1), X),
    Row("norm_zero", lambda m, x: x.norm(0), X),
    Row("norm_fro_dims", lambda m, x: m.norm(x, "fro", (0, 2), True), X, second=True),
    Row("norm_p1_dim", lambda m, x: x.norm(1, -1), X, domain="away"),
]
