"""Catalog rows of the linear-algebra Tensor methods (t.det(), t.inverse(), t.svd(), ...),
each called as a method on both sides, on inputs made well conditioned as in linalg.py."""

from __future__ import annotations

from tests.ops.rows import Row
from tests.ops.rows.linalg import _spd, _well

_SCIPY = "computed by SciPy on the host; not yet moved to and from a CUDA device"

ROWS = [
    Row("method_det", lambda m, x: x.det(), ((2, 3, 3),), second=True),
    Row("method_logdet", lambda m, x: _spd(m, x).logdet(), ((3, 3),)),
    Row("method_slogdet", lambda m, x: _well(m, x).slogdet()[1], ((2, 3, 3),)),
    Row("method_inverse", lambda m, x: _well(m, x).inverse(), ((2, 3, 3),), second=True),
    Row("method_cholesky", lambda m, x: _spd(m, x).cholesky(), ((3, 3),)),
    Row("method_cholesky_upper", lambda m, x: _spd(m, x).cholesky(upper=True), ((2, 3, 3),)),
    Row(
        "method_cholesky_solve",
        lambda m, b, x: b.cholesky_solve(_spd(m, x).cholesky()),
        ((3, 2), (3, 3)),
    ),
    Row(
        "method_cholesky_inverse",
        lambda m, x: _spd(m, x).cholesky().cholesky_inverse(),
        ((3, 3),),
        host_only=_SCIPY,
    ),
    Row("method_svd_values", lambda m, x: x.svd()[1], ((2, 4, 3),)),
    Row("method_svd_v", lambda m, x: x.svd(some=False)[2][..., :2] ** 2, ((2, 3),)),
    Row("method_pinverse", lambda m, x: x.pinverse(), ((3, 2),), host_only=_SCIPY),
    Row("method_qr", lambda m, x: x.qr(), ((4, 3),)),
    Row("method_qr_complete", lambda m, x: x.qr(some=False)[1], ((3, 4),)),
    Row("method_lu", lambda m, x: _well(m, x).lu()[0], ((2, 3, 3),), host_only=_SCIPY),
    Row(
        "method_lu_solve",
        lambda m, b, a: b.lu_solve(*_well(m, a).lu()),
        ((3, 2), (3, 3)),
        host_only=_SCIPY,
    ),
    Row(
        "method_triangular_solve",
        lambda m, b, a: b.triangular_solve(_well(m, a), upper=False, transpose=True)[0],
        ((3, 2), (3, 3)),
    ),
    Row("method_matrix_power", lambda m, x: x.matrix_power(3), ((2, 3, 3),), second=True),
    Row("method_matrix_exp", lambda m, x: x.matrix_exp(), ((3, 3),), host_only=_SCIPY),
    Row("method_orgqr", lambda m, a, t: a.orgqr(t), ((4, 3), (2,)), host_only=_SCIPY),
]
