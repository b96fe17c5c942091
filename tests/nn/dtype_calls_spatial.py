"""test_functional_dtypes.py's calls of the spatial functions (convolutions and pools of every
rank, resampling, unfold and fold, the shuffles, sampling grids): name -> call(lib, F, dtype),
every tensor operand of the dtype under test, made by that file's helper ``x``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Call = Callable[[Any, Any, str], Any]


def calls(_x: Callable[..., Any]) -> dict[str, Call]:
    """The calls, from the helper making a tensor of a dtype."""

    def unpool(rank: int) -> Call:
        def call(lib: Any, F: Any, d: str) -> Any:
            shape = (1, 2, 2, 2, 2)[: rank + 2]
            idx = lib.zeros(shape, dtype=lib.int64)
            return getattr(F, f"max_unpool{rank}d")(_x(lib, d, shape), idx, 2)

        return call

    v3, v4, v5 = (1, 2, 4), (1, 2, 4, 4), (1, 2, 4, 4, 4)
    return {
        "conv3d": lambda lib, F, d: F.conv3d(_x(lib, d, v5), _x(lib, d, (2, 2, 2, 2, 2))),
        "conv_transpose1d": lambda lib, F, d: F.conv_transpose1d(
            _x(lib, d, v3), _x(lib, d, (2, 2, 2))
        ),
        "conv_transpose3d": lambda lib, F, d: F.conv_transpose3d(
            _x(lib, d, v5), _x(lib, d, (2, 2, 2, 2, 2))
        ),
        "max_pool1d": lambda lib, F, d: F.max_pool1d(_x(lib, d, v3), 2),
        "max_pool3d": lambda lib, F, d: F.max_pool3d(_x(lib, d, v5), 2),
        "avg_pool1d": lambda lib, F, d: F.avg_pool1d(_x(lib, d, v3), 2),
        "avg_pool3d": lambda lib, F, d: F.avg_pool3d(_x(lib, d, v5), 2),
        "adaptive_avg_pool1d": lambda lib, F, d: F.adaptive_avg_pool1d(_x(lib, d, v3), 2),
        "adaptive_avg_pool3d": lambda lib, F, d: F.adaptive_avg_pool3d(_x(lib, d, v5), 2),
        "adaptive_max_pool1d": lambda lib, F, d: F.adaptive_max_pool1d(_x(lib, d, v3), 2),
        "adaptive_max_pool2d": lambda lib, F, d: F.adaptive_max_pool2d(_x(lib, d, v4), 2),
        "adaptive_max_pool3d": lambda lib, F, d: F.adaptive_max_pool3d(_x(lib, d, v5), 2),
        "max_unpool1d": unpool(1),
        "max_unpool2d": unpool(2),
        "max_unpool3d": unpool(3),
        "lp_pool1d": lambda lib, F, d: F.lp_pool1d(_x(lib, d, v3), 2, 2),
        "lp_pool2d": lambda lib, F, d: F.lp_pool2d(_x(lib, d, v4), 2, 2),
        "lp_pool3d": lambda lib, F, d: F.lp_pool3d(_x(lib, d, v5), 2, 2),
        "interpolate": lambda lib, F, d: F.interpolate(_x(lib, d, v4), scale_factor=2),
        "upsample": lambda lib, F, d: F.upsample(_x(lib, d, v4), size=(3, 5)),
        "upsample_nearest": lambda lib, F, d: F.upsample_nearest(_x(lib, d, v3), size=7),
        "upsample_bilinear": lambda lib, F, d: F.upsample_bilinear(_x(lib, d, v4), scale_factor=2),
        "unfold": lambda lib, F, d: F.unfold(_x(lib, d, v4), 2),
        "fold": lambda lib, F, d: F.fold(_x(lib, d, (1, 8, 9)), (4, 4), 2),
        "pixel_shuffle": lambda lib, F, d: F.pixel_shuffle(_x(lib, d, (1, 4, 2, 3)), 2),
        "pixel_unshuffle": lambda lib, F, d: F.pixel_unshuffle(_x(lib, d, v4), 2),
        "channel_shuffle": lambda lib, F, d: F.channel_shuffle(_x(lib, d, v4), 2),
        "affine_grid": lambda lib, F, d: F.affine_grid(
            _x(lib, d, (1, 2, 3)), [1, 1, 3, 4], align_corners=False
        ),
        "grid_sample": lambda lib, F, d: F.grid_sample(
            _x(lib, d, v4), _x(lib, d, (1, 3, 2, 2)) / 4, align_corners=False
        ),
    }
