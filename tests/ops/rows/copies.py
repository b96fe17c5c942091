"""Catalog rows of the *_copy functions (copies.py): each view op's values copied, its
gradient the view's; contiguous results of non-contiguous views (permute, t, diagonal,
expand, unfold), and the split family's pieces."""

from __future__ import annotations

from tests.ops.rows import Row

_STRIDED = "as_strided reads a host array's strides; not yet on a CUDA device"

ROWS: list[Row] = [
    Row("alias_copy", lambda m, a: m.alias_copy(a) * 2.0, ((2, 3),)),
    Row(
        "as_strided_copy",
        lambda m, a: m.as_strided_copy(a, (2, 2), (1, 2), 1),
        ((3, 4),),
        host_only=_STRIDED,
    ),
    Row("diagonal_copy", lambda m, a: m.diagonal_copy(a, 1, 0, 2), ((3, 2, 4),), second=True),
    Row("expand_copy", lambda m, a: m.expand_copy(a, (2, 3, 4)), ((3, 1),)),
    Row("permute_copy", lambda m, a: m.permute_copy(a, (2, 0, 1)), ((2, 3, 4),), second=True),
    Row("select_copy", lambda m, a: m.select_copy(a, -1, 1), ((2, 3),)),
    Row("slice_copy", lambda m, a: m.slice_copy(a, 1, 1, None, 2), ((2, 5),)),
    Row("split_copy", lambda m, a: m.split_copy(a, 2, 1), ((2, 5),)),
    Row("split_with_sizes_copy", lambda m, a: m.split_with_sizes_copy(a, [1, 3]), ((4, 2),)),
    Row("squeeze_copy", lambda m, a: m.squeeze_copy(a), ((2, 1, 3),)),
    Row("squeeze_copy_dims", lambda m, a: m.squeeze_copy(a, (0, 2)), ((1, 3, 1),)),
    Row("t_copy", lambda m, a: m.t_copy(a), ((2, 3),), second=True),
    Row("transpose_copy", lambda m, a: m.transpose_copy(a, 0, -1), ((2, 3, 4),)),
    Row("unbind_copy", lambda m, a: m.unbind_copy(a, 1), ((2, 3),)),
    Row("unfold_copy", lambda m, a: m.unfold_copy(a, 1, 2, 1), ((2, 4),)),
    Row("unsqueeze_copy", lambda m, a: m.unsqueeze_copy(a, -1), ((2, 3),)),
    Row("view_copy", lambda m, a: m.view_copy(a, (3, -1)), ((2, 3),)),
    Row("view_copy[0d]", lambda m, a: m.view_copy(a, (1, 1)), ((),)),
]
