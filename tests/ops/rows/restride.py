"""Catalog rows of the in-place shape methods (tensor/restride.py): each on a fresh result of
the graph (a leaf that requires grad refuses them), its gradient the view op's."""

from __future__ import annotations

from tests.ops.rows import Row

_STRIDED = "as_strided reads a host array's strides; not yet on a CUDA device"

ROWS: list[Row] = [
    Row("t_", lambda m, a: (a * 1.0).t_(), ((2, 3),), second=True),
    Row("transpose_", lambda m, a: (a * 1.0).transpose_(0, -1), ((2, 3, 4),)),
    Row("swapdims_", lambda m, a: (a * 1.0).swapdims_(1, 2), ((2, 3, 4),)),
    Row("swapaxes_", lambda m, a: (a * 1.0).swapaxes_(0, 1), ((2, 3),)),
    Row("squeeze_", lambda m, a: (a * 1.0).squeeze_(), ((1, 3, 1),), second=True),
    Row("squeeze__dim", lambda m, a: (a * 1.0).squeeze_(-1), ((2, 1),)),
    Row("squeeze__dims", lambda m, a: (a * 1.0).squeeze_((0, 2)), ((1, 3, 1),)),
    Row("unsqueeze_", lambda m, a: (a * 1.0).unsqueeze_(1), ((2, 3),)),
    Row(
        "as_strided_",
        lambda m, a: (a * 1.0).as_strided_((2, 2), (1, 3), 1),
        ((3, 3),),
        host_only=_STRIDED,
    ),
    # resize_ and detach_ take no gradient: the values, as PyTorch's
    Row("resize_", lambda m, a: a.detach().clone().resize_(2, 2), ((3, 2),), grad=False),
    Row("resize_as_", lambda m, a, b: a.detach().clone().resize_as_(b), ((6,), (3, 2)), grad=False),
    Row("detach_", lambda m, a: (a * 2.0).detach_(), ((2, 3),), grad=False),
]
