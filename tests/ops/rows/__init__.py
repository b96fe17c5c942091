"""The op catalog's row type, and the rows kept in this package's modules: one module a kind
of op (each holds a ``ROWS`` list), gathered by ``discovered()`` into test_ops.py's catalog, so
a new kind of op adds a file here rather than lines to one long table."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

NUM = 1.7  # a Python number operand, in a row's shapes


@dataclass
class Row:
    name: str
    fn: Callable[..., Any]  # fn(module, *inputs): module is chainrule or torch
    shapes: tuple  # one entry per input: a shape, or NUM for a plain Python number
    domain: str | tuple[str, ...] = "real"  # per input: real, pos, away (from 0), unit
    torch_fn: Callable[..., Any] | None = None  # when PyTorch spells the call differently
    atol32: float = 1e-5
    rtol32: float = 1e-4
    grad: bool = True  # False: outputs carry no gradient (argmax, comparisons)
    second: bool = False  # also compare second derivatives with PyTorch
    numeric: bool = True  # False: the gradient is not the derivative by design (PyTorch's too)
    host_only: str = ""  # why the op does not run on a CUDA device yet ("": it does)


def same(fn: Callable[..., Any]) -> Callable[..., Any]:
    """For torch_fn: turn Python numbers into tensors, for PyTorch functions that need them."""

    def call(m: Any, *xs: Any) -> Any:
        ref = next(x for x in xs if isinstance(x, torch.Tensor))
        return fn(
            m, *[x if isinstance(x, torch.Tensor) else torch.tensor(x, dtype=ref.dtype) for x in xs]
        )

    return call


# Rows whose ops still compute on host arrays (SciPy's routines, or a host array built
# beside the input): the CUDA runs (tests/on_cuda.py) skip them, with this reason.
_SCIPY = "computed by SciPy on the host; not yet moved to and from a CUDA device"
_HOST = "builds a host array beside its input; not yet on a CUDA device"
HOST_ONLY = {
    **dict.fromkeys(
        ("cholesky_inverse", "householder_product", "linalg_eigh_vectors", "linalg_eigvalsh")
        + ("linalg_lstsq", "linalg_lstsq_no_columns", "linalg_lu", "linalg_lu_factor")
        + ("linalg_lu_solve", "linalg_lu_tall")
        + ("linalg_lu_wide", "linalg_matrix_exp", "linalg_pinv", "linalg_pinv_wide")
        + ("linalg_vector_norm", "linalg_vector_norm_half", "linalg_vector_norm_inf")
        + ("linalg_vector_norm_l1", "special_entr", "special_erfcx", "special_gammainc")
        + ("special_gammaincc", "special_i0e", "special_i1", "special_i1e", "special_log_ndtr")
        + ("special_ndtri", "special_xlog1py", "special_zeta"),
        _SCIPY,
    ),
    **dict.fromkeys(
        ("as_strided_of_a_slice", "as_strided_offset", "as_strided_overlapping", "ctc_loss")
        + ("ctc_loss_log_probs", "diag_embed", "diag_embed_dims", "diagflat")
        + ("diagonal_scatter", "unfold")
        + ("unfold_0d", "unfold_gaps", "unfold_copy"),
        _HOST,
    ),
}


def discovered() -> list[Row]:
    """The rows of every module of this package, module by module in name order."""
    rows: list[Row] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        rows += importlib.import_module(f"{__name__}.{info.name}").ROWS
    for row in rows:
        row.host_only = HOST_ONLY.get(row.name, row.host_only)
    return rows
