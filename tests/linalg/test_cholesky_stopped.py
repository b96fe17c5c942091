"""cholesky_ex of matrices that are not positive-definite, against PyTorch: L factored up
to the first leading minor that is not (as potrf leaves it) and info, on both paths (one
LAPACK call and the steps by columns for many small matrices); each cholesky's error names
its own op."""

import contextlib
import warnings

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import fastpath
from chainrule.ops import batched_lu


def _stopping(n: int, stops: list[int], dtype: str) -> np.ndarray:
    """A batch of symmetric matrices (len(stops), n, n), the i-th positive-definite where
    stops[i] is 0, else its leading minor of order stops[i] the first that is not."""
    x = np.random.default_rng(n).standard_normal((len(stops), n, n))
    a = x @ x.swapaxes(-1, -2) + n * np.eye(n)
    for i, k in enumerate(stops):
        if k:
            a[i, k - 1, k - 1] = -5.0
    return a.astype(dtype)


CASES = {
    "one": (5, [3]),
    "direct": (40, [20, 0, 1, 40]),
    "by columns": (3, [0] * 596 + [3, 1, 2, 2]),
}


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", list(CASES))
def test_cholesky_ex_stops_where_torchs_stops(case: str, dtype: str, fast: bool) -> None:
    n, stops = CASES[case]
    a = _stopping(n, stops, dtype)
    if case == "one":
        a = a[0]
    assert case != "by columns" or batched_lu.serves(a, 64)
    tol = 1e-4 if dtype == "float32" else 1e-10
    with fastpath.disabled() if not fast else contextlib.nullcontext():
        for upper in (False, True):
            L, info = cr.linalg.cholesky_ex(cr.tensor(a), upper=upper)
            want, want_info = torch.linalg.cholesky_ex(torch.tensor(a), upper=upper)
            np.testing.assert_allclose(L.numpy(), want.numpy(), rtol=tol, atol=tol)
            np.testing.assert_array_equal(info.numpy(), want_info.numpy())
            assert L.dtype == getattr(cr, dtype) and info.dtype == cr.int32


CALLS = {
    "cholesky": lambda m, a: m.cholesky(a),
    "Tensor.cholesky": lambda m, a: a.cholesky(upper=True),
    "linalg.cholesky": lambda m, a: m.linalg.cholesky(a),
    "linalg.cholesky_ex": lambda m, a: m.linalg.cholesky_ex(a, check_errors=True),
}


@pytest.mark.parametrize("call", list(CALLS))
def test_each_cholesky_names_its_own_op_in_its_error(call: str) -> None:
    a = _stopping(3, [2], "float64")[0]
    with pytest.raises(torch.linalg.LinAlgError) as theirs, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.cholesky is deprecated
        CALLS[call](torch, torch.tensor(a))
    with pytest.raises(cr.linalg.LinAlgError) as ours:
        CALLS[call](cr, cr.tensor(a))
    op = str(theirs.value).split(":")[0]
    assert str(ours.value).startswith(op + ": The factorization could not be completed")
