"""chainrule.linalg, PyTorch's torch.linalg on LAPACK: norms, determinants, inverses and
solvers, and the decompositions, each differentiable by PyTorch's rule. The primitives are in
ops/decompositions.py and ops/lu_qr.py; solvers.py, decompose.py and products.py hold the
public functions."""

from __future__ import annotations

from ..ops.decompositions import LinAlgError
from ..tensor import linalg as methods
from . import legacy
from .decompose import (
    eig,
    eigh,
    eigvals,
    eigvalsh,
    householder_product,
    ldl_factor,
    ldl_factor_ex,
    ldl_solve,
    lu,
    lu_factor,
    lu_factor_ex,
    lu_solve,
    qr,
    svd,
    svdvals,
)
from .products import (
    cond,
    cross,
    diagonal,
    matrix_norm,
    multi_dot,
    norm,
    vander,
    vecdot,
    vector_norm,
)
from .solvers import (
    cholesky,
    cholesky_ex,
    det,
    inv,
    inv_ex,
    lstsq,
    matrix_exp,
    matrix_power,
    matrix_rank,
    pinv,
    slogdet,
    solve,
    solve_ex,
    solve_triangular,
    tensorinv,
    tensorsolve,
)

# Tensor's methods (t.det(), t.svd(), ...) call legacy's functions: tensor/ is below linalg/
# and cannot import it, so it is told where they are, once, here.
methods.use_legacy(legacy)

__all__ = [
    "LinAlgError",
    "cholesky",
    "cholesky_ex",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "householder_product",
    "ldl_factor",
    "ldl_factor_ex",
    "ldl_solve",
    "inv",
    "inv_ex",
    "lstsq",
    "lu",
    "lu_factor",
    "lu_factor_ex",
    "lu_solve",
    "matrix_exp",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "multi_dot",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "solve_ex",
    "solve_triangular",
    "svd",
    "svdvals",
    "tensorinv",
    "tensorsolve",
    "vander",
    "vecdot",
    "vector_norm",
]
