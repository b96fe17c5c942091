"""Catalog rows of the spatial ops: convolutions and pools of every rank, resampling, unfold
and fold, pixel and channel shuffles, affine grids and grid sampling."""

from __future__ import annotations

from tests.ops.rows import Row


def _unpool(m, x, rank: int, kernel: int, stride: int, padding: int):  # type: ignore[no-untyped-def]
    """A value at each window's maximum of x, put back by max_unpool: the values are 2x."""
    f = m.nn.functional
    pooled, idx = getattr(f, f"max_pool{rank}d")(x, kernel, stride, padding, return_indices=True)
    return getattr(f, f"max_unpool{rank}d")(pooled * 2, idx, kernel, stride, padding)


ROWS = [
    # convolutions
    Row(
        "conv3d",
        lambda m, x, w, b: m.nn.functional.conv3d(x, w, b, stride=(1, 2, 1), padding=1),
        ((2, 4, 4, 5, 4), (3, 4, 2, 3, 2), (3,)),
        second=True,
        atol32=1e-4,
    ),
    Row(
        "conv3d_grouped_dilated_same",
        lambda m, x, w: m.nn.functional.conv3d(x, w, padding="same", dilation=(2, 1, 1), groups=2),
        ((1, 4, 5, 4, 4), (2, 2, 2, 3, 2)),
        atol32=1e-4,
    ),
    Row(
        "conv_transpose1d",
        lambda m, x, w, b: m.nn.functional.conv_transpose1d(
            x, w, b, stride=2, padding=1, output_padding=1, groups=2, dilation=2
        ),
        ((2, 4, 5), (4, 3, 3), (6,)),
        second=True,
        atol32=1e-4,
    ),
    Row(
        "conv_transpose3d",
        lambda m, x, w, b: m.nn.functional.conv_transpose3d(
            x, w, b, stride=(2, 1, 2), padding=(1, 0, 1), output_padding=(1, 0, 0), groups=2
        ),
        ((1, 4, 3, 3, 3), (4, 2, 3, 2, 3), (4,)),
        second=True,
        atol32=1e-4,
    ),
    # max pools
    Row(
        "max_pool1d",
        lambda m, x: m.nn.functional.max_pool1d(x, 3, 2, 1, ceil_mode=True),
        ((2, 3, 8),),
        second=True,
    ),
    Row(
        "max_pool3d",
        lambda m, x: m.nn.functional.max_pool3d(x, (2, 3, 2), (1, 2, 2), (1, 1, 0)),
        ((2, 2, 4, 5, 4),),
        second=True,
    ),
    Row(
        "max_pool3d_dilated_unbatched",
        lambda m, x: m.nn.functional.max_pool3d(x, 2, dilation=(2, 1, 1), ceil_mode=True),
        ((2, 5, 4, 5),),
    ),
    Row(
        "adaptive_max_pool1d",
        lambda m, x: m.nn.functional.adaptive_max_pool1d(x, 4),
        ((2, 3, 7),),
        second=True,
    ),
    Row(
        "adaptive_max_pool2d",
        lambda m, x: m.nn.functional.adaptive_max_pool2d(x, (3, 2)),
        ((2, 3, 7, 5),),
    ),
    Row(
        "adaptive_max_pool3d",
        lambda m, x: m.nn.functional.adaptive_max_pool3d(x, (2, 3, 2)),
        ((2, 5, 4, 5),),
    ),
    Row("max_unpool1d", lambda m, x: _unpool(m, x, 1, 2, 2, 0), ((2, 3, 9),)),
    Row("max_unpool2d", lambda m, x: _unpool(m, x, 2, 2, 2, 0), ((2, 2, 4, 6),), second=True),
    Row("max_unpool3d", lambda m, x: _unpool(m, x, 3, 2, 2, 0), ((1, 2, 4, 4, 6),)),
    # average and power-average pools
    Row(
        "avg_pool1d",
        lambda m, x: m.nn.functional.avg_pool1d(
            x, 3, 2, 1, ceil_mode=True, count_include_pad=False
        ),
        ((2, 3, 8),),
        second=True,
    ),
    Row(
        "avg_pool3d",
        lambda m, x: m.nn.functional.avg_pool3d(
            x, 3, 2, 1, ceil_mode=True, count_include_pad=False
        ),
        ((2, 2, 5, 6, 5),),
        second=True,
    ),
    Row(
        "avg_pool3d_divisor_override",
        lambda m, x: m.nn.functional.avg_pool3d(x, (1, 2, 3), divisor_override=5),
        ((2, 4, 5, 6),),
    ),
    Row(
        "adaptive_avg_pool1d",
        lambda m, x: m.nn.functional.adaptive_avg_pool1d(x, 4),
        ((2, 3, 7),),
        second=True,
    ),
    Row(
        "adaptive_avg_pool3d",
        lambda m, x: m.nn.functional.adaptive_avg_pool3d(x, (3, None, 2)),
        ((2, 3, 5, 4, 5),),
        second=True,
    ),
    Row(
        "lp_pool1d",
        lambda m, x: m.nn.functional.lp_pool1d(x, 2, 3, 2),
        ((2, 3, 8),),
        "pos",
        second=True,
    ),
    Row(
        "lp_pool2d",
        lambda m, x: m.nn.functional.lp_pool2d(x, 3, (2, 3), ceil_mode=True),
        ((2, 3, 5, 7),),
        "pos",
        second=True,
    ),
]
