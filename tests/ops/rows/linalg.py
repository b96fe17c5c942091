"""Catalog rows of chainrule.linalg's primitives: each made well conditioned (a matrix plus a
multiple of the identity, symmetric where the op reads a triangle), and each decomposition's
vectors seen through a sign-free function of them (LAPACK's signs differ by library)."""

from __future__ import annotations

from typing import Any

from tests.ops.rows import Row


def _spd(m: Any, x: Any) -> Any:
    """A symmetric positive-definite matrix from any square one."""
    return x @ x.mT + 3 * m.eye(x.shape[-1], dtype=x.dtype)


def _well(m: Any, x: Any) -> Any:
    """An invertible matrix from any square one."""
    return x + 4 * m.eye(x.shape[-1], dtype=x.dtype)


def _sym(x: Any) -> Any:
    return x + x.mT


ROWS = [
    Row("linalg_inv", lambda m, x: m.linalg.inv(_well(m, x)), ((2, 3, 3),), second=True),
    Row(
        "linalg_solve",
        lambda m, a, b: m.linalg.solve(_well(m, a), b),
        ((2, 3, 3), (3, 2)),
        second=True,
    ),
    Row(
        "linalg_solve_right",
        lambda m, a, b: m.linalg.solve(_well(m, a), b, left=False),
        ((3, 3), (2, 3)),
    ),
    Row(
        "linalg_solve_triangular",
        lambda m, a, b: m.linalg.solve_triangular(_well(m, a), b, upper=True),
        ((3, 3), (3, 2)),
        second=True,
    ),
    Row(
        "linalg_solve_triangular_right_unit",
        lambda m, a, b: m.linalg.solve_triangular(
            a, b, upper=False, left=False, unitriangular=True
        ),
        ((3, 3), (2, 3)),
    ),
    Row("linalg_det", lambda m, x: m.linalg.det(x), ((2, 3, 3),), second=True),
    Row("linalg_slogdet", lambda m, x: m.linalg.slogdet(_well(m, x))[1], ((3, 3),), second=True),
    Row("linalg_cholesky", lambda m, x: m.linalg.cholesky(_spd(m, x)), ((2, 3, 3),), second=True),
    Row(
        "linalg_cholesky_upper",
        lambda m, x: m.linalg.cholesky(_spd(m, x), upper=True),
        ((3, 3),),
    ),
    Row("linalg_eigvalsh", lambda m, x: m.linalg.eigvalsh(_sym(x)), ((2, 3, 3),), second=True),
    Row("linalg_eigh_vectors", lambda m, x: m.linalg.eigh(_sym(x))[1] ** 2, ((3, 3),)),
    Row("linalg_qr_tall", lambda m, x: m.linalg.qr(x), ((4, 3),), second=True),
    Row("linalg_qr_wide", lambda m, x: m.linalg.qr(x), ((2, 4),)),
    Row("linalg_svd_full", lambda m, x: m.linalg.svd(x)[0][..., :2] ** 2, ((3, 2),)),
    Row("linalg_svd_vh", lambda m, x: m.linalg.svd(x, full_matrices=False)[2] ** 2, ((2, 3),)),
    Row("linalg_pinv", lambda m, x: m.linalg.pinv(x), ((3, 2),), second=True),
    Row("linalg_pinv_wide", lambda m, x: m.linalg.pinv(x), ((2, 4),)),
    Row(
        "linalg_lstsq",
        lambda m, a, b: m.linalg.lstsq(a, b).solution,
        ((4, 2), (4, 3)),
        second=True,
    ),
    Row(  # no columns: an empty solution, and the empty residuals' own node
        "linalg_lstsq_no_columns", lambda m, a, b: m.linalg.lstsq(a, b)[:2], ((4, 2), (4, 0))
    ),
    Row("linalg_matrix_exp", lambda m, x: m.linalg.matrix_exp(x), ((2, 3, 3),), second=True),
    Row("linalg_lu", lambda m, x: m.linalg.lu(x)[1:], ((3, 3),), second=True),
    Row("linalg_lu_wide", lambda m, x: m.linalg.lu(x)[1:], ((2, 4),)),
    Row("linalg_lu_tall", lambda m, x: m.linalg.lu(x)[1:], ((4, 2),)),
    Row("linalg_lu_factor", lambda m, x: m.linalg.lu_factor(_well(m, x)).LU, ((2, 3, 3),)),
    Row(
        "linalg_lu_solve",
        lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(_well(m, a)), b),
        ((3, 3), (3, 2)),
    ),
    Row(
        "linalg_vector_norm", lambda m, x: m.linalg.vector_norm(x, 3.5, -1), ((2, 3),), second=True
    ),
    Row("linalg_vector_norm_l1", lambda m, x: m.linalg.vector_norm(x, 1), ((2, 3),), domain="away"),
    Row("linalg_vector_norm_inf", lambda m, x: m.linalg.vector_norm(x, float("inf"), 0), ((2, 3),)),
    Row(
        "linalg_vector_norm_half", lambda m, x: m.linalg.vector_norm(x, 0.5), ((4,),), domain="away"
    ),
    Row("linalg_matrix_norm_2", lambda m, x: m.linalg.matrix_norm(x, 2), ((2, 3, 4),)),
    Row("linalg_matrix_norm_1", lambda m, x: m.linalg.matrix_norm(x, -1, (0, 2)), ((3, 2, 4),)),
    Row(
        "cholesky_solve",
        lambda m, b, x: m.cholesky_solve(b, m.linalg.cholesky(_spd(m, x))),
        ((3, 2), (3, 3)),
        second=True,
    ),
    Row("cholesky_inverse", lambda m, x: m.cholesky_inverse(_well(m, x).triu(), True), ((3, 3),)),
    Row("logdet", lambda m, x: m.logdet(_spd(m, x)), ((3, 3),)),
    Row("householder_product", lambda m, a, t: m.linalg.householder_product(a, t), ((4, 3), (2,))),
    Row("linalg_cross", lambda m, a, b: m.linalg.cross(a, b), ((2, 3), (1, 3))),
    Row(
        "linalg_multi_dot", lambda m, a, b, c: m.linalg.multi_dot([a, b, c]), ((3,), (3, 4), (4, 2))
    ),
]
