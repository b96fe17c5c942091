"""Catalog rows of integration by the trapezoidal rule: trapezoid, trapz and
cumulative_trapezoid, with sample points x (1-D, broadcasting, of another dtype's shape) or a
constant spacing dx, along each dim."""

from __future__ import annotations

from tests.ops.rows import Row

X = ((2, 3, 4),)

ROWS: list[Row] = [
    Row("trapezoid", lambda m, y: m.trapezoid(y), X, second=True),
    Row("trapezoid_dx_dim", lambda m, y: m.trapezoid(y, dx=0.5, dim=1), X),
    Row(
        "trapezoid_x_1d",
        lambda m, y, x: m.trapezoid(y, x.cumsum(0), dim=0),
        ((2, 3, 4), (2,)),
        second=True,
    ),  # fmt: skip
    Row("trapezoid_x_broadcast", lambda m, y, x: m.trapezoid(y, x), ((2, 3, 4), (3, 4))),
    Row("trapezoid_x_same_shape", lambda m, y, x: m.trapezoid(y, x, dim=1), ((2, 3, 4),) * 2),
    Row("trapz", lambda m, y, x: m.trapz(y, x), ((3, 5), (5,))),
    Row("trapz_dx", lambda m, y: m.trapz(y, dx=2.0, dim=0), ((3, 5),)),
    Row("cumulative_trapezoid", lambda m, y: m.cumulative_trapezoid(y), X, second=True),
    Row("cumulative_trapezoid_dx", lambda m, y: m.cumulative_trapezoid(y, dx=3, dim=0), X),
    Row(
        "cumulative_trapezoid_x",
        lambda m, y, x: m.cumulative_trapezoid(y, x, dim=-2),
        ((2, 3, 4), (3,)),
        second=True,
    ),  # fmt: skip
    Row("trapezoid_one_sample", lambda m, y: m.trapezoid(y, dim=0), ((1, 3),)),
]
