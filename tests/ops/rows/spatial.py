"""Catalog rows of the spatial ops: convolutions and pools of every rank, resampling, unfold
and fold, pixel and channel shuffles, affine grids and grid sampling."""

from __future__ import annotations

from tests.ops.rows import Row


def _unpool(m, x, pool: str, unpool: str, kernel: int, stride: int, padding: int):  # type: ignore[no-untyped-def]
    """A value at each window's maximum of x, put back by max_unpool: the values are 2x."""
    f = m.nn.functional
    pooled, idx = getattr(f, pool)(x, kernel, stride, padding, return_indices=True)
    return getattr(f, unpool)(pooled * 2, idx, kernel, stride, padding)


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
    Row(
        "max_unpool1d",
        lambda m, x: _unpool(m, x, "max_pool1d", "max_unpool1d", 2, 2, 0),
        ((2, 3, 9),),
    ),
    Row(
        "max_unpool2d",
        lambda m, x: _unpool(m, x, "max_pool2d", "max_unpool2d", 2, 2, 0),
        ((2, 2, 4, 6),),
        second=True,
    ),
    Row(
        "max_unpool3d",
        lambda m, x: _unpool(m, x, "max_pool3d", "max_unpool3d", 2, 2, 0),
        ((1, 2, 4, 4, 6),),
    ),
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

ROWS += [
    # resampling
    Row(
        "interpolate_nearest",
        lambda m, x: m.nn.functional.interpolate(x, scale_factor=1.7),
        ((2, 3, 4, 5),),
        second=True,
    ),
    Row(
        "interpolate_nearest_exact_3d",
        lambda m, x: m.nn.functional.interpolate(x, size=(3, 5, 2), mode="nearest-exact"),
        ((1, 2, 4, 3, 5),),
    ),
    Row(
        "interpolate_linear_align_corners",
        lambda m, x: m.nn.functional.interpolate(x, size=7, mode="linear", align_corners=True),
        ((2, 3, 4),),
        second=True,
    ),
    Row(
        "interpolate_bilinear",
        lambda m, x: m.nn.functional.interpolate(x, scale_factor=(0.6, 2.5), mode="bilinear"),
        ((2, 3, 5, 4),),
        second=True,
    ),
    Row(
        "interpolate_bicubic",
        lambda m, x: m.nn.functional.interpolate(x, size=(7, 3), mode="bicubic"),
        ((2, 2, 4, 5),),
        second=True,
    ),
    Row(
        "interpolate_trilinear",
        lambda m, x: m.nn.functional.interpolate(
            x, scale_factor=1.5, mode="trilinear", recompute_scale_factor=True
        ),
        ((1, 2, 3, 4, 3),),
    ),
    Row(
        "interpolate_area",
        lambda m, x: m.nn.functional.interpolate(x, size=(3, 2), mode="area"),
        ((2, 3, 7, 5),),
    ),
    # rearranging pixels
    Row(
        "nn_unfold",
        lambda m, x: m.nn.functional.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
        ((2, 3, 5, 6),),
        second=True,
    ),
    Row(
        "nn_fold",
        lambda m, x: m.nn.functional.fold(
            x, (5, 6), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)
        ),
        ((2, 12, 12),),
        second=True,
    ),
    Row("pixel_shuffle", lambda m, x: m.nn.functional.pixel_shuffle(x, 2), ((2, 8, 2, 3),)),
    Row("pixel_unshuffle", lambda m, x: m.nn.functional.pixel_unshuffle(x, 2), ((3, 4, 6),)),
    Row("channel_shuffle", lambda m, x: m.nn.functional.channel_shuffle(x, 3), ((2, 6, 2, 2),)),
    # sampling grids
    Row(
        "affine_grid",
        lambda m, t: m.nn.functional.affine_grid(t, [2, 3, 4, 5], align_corners=False),
        ((2, 2, 3),),
        second=True,
    ),
    Row(
        "grid_sample_bilinear_zeros",
        lambda m, x, g: m.nn.functional.grid_sample(x, g.tanh() * 1.2, align_corners=False),
        ((2, 3, 5, 4), (2, 3, 4, 2)),
        second=True,
        atol32=1e-4,
    ),
    Row(
        "grid_sample_bilinear_reflection_3d",
        lambda m, x, g: m.nn.functional.grid_sample(
            x, g.tanh() * 1.5, padding_mode="reflection", align_corners=True
        ),
        ((1, 2, 3, 4, 3), (1, 2, 3, 2, 3)),
        atol32=1e-4,
    ),
    Row(
        "grid_sample_bicubic_border",
        lambda m, x, g: m.nn.functional.grid_sample(
            x, g.tanh() * 1.2, mode="bicubic", padding_mode="border", align_corners=False
        ),
        ((1, 2, 5, 4), (1, 3, 3, 2)),
        atol32=1e-4,
    ),
    Row(
        "grid_sample_nearest",
        lambda m, x, g: m.nn.functional.grid_sample(
            x, g.tanh(), mode="nearest", align_corners=True
        ),
        ((2, 2, 4, 5), (2, 3, 3, 2)),
        numeric=False,
    ),
]
