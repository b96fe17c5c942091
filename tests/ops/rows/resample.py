"""Catalog rows of nearest resampling in each rank it has its own node in (spatial.py holds
interpolate's other rows): 'nearest' and 'nearest-exact' along 1, 2 and 3 axes."""

from __future__ import annotations

from tests.ops.rows import Row

ROWS = [
    Row(
        "interpolate_nearest_1d",
        lambda m, x: m.nn.functional.interpolate(x, size=7),
        ((2, 3, 4),),
        second=True,
    ),
    Row(
        "interpolate_nearest_3d",
        lambda m, x: m.nn.functional.interpolate(x, scale_factor=(1.5, 0.5, 2)),
        ((1, 2, 3, 4, 2),),
    ),
    Row(
        "interpolate_nearest_exact_1d",
        lambda m, x: m.nn.functional.interpolate(x, scale_factor=0.6, mode="nearest-exact"),
        ((2, 2, 7),),
    ),
    Row(
        "interpolate_nearest_exact_2d",
        lambda m, x: m.nn.functional.interpolate(x, size=(5, 2), mode="nearest-exact"),
        ((2, 3, 3, 4),),
        second=True,
    ),
]
