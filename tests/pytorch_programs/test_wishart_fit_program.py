"""A Wishart-prior covariance fit (programs/wishart_fit.py) through lu_factor, lu_solve,
mvlgamma, multi_dot and matrix_norm, run on torch and on chainrule with ``import torch``
aliased: the same losses under Adam, the same fitted factor, the same node names."""

from __future__ import annotations

import numpy as np

from tests.pytorch_programs.test_pytorch_programs import F64, assert_follows, twins


def test_wishart_fit_follows_torch() -> None:
    theirs, ours = twins("wishart_fit")
    assert_follows(ours["losses"], theirs["losses"], F64)
    assert ours["losses"][-1] < ours["losses"][0]  # it learns
    np.testing.assert_allclose(ours["F"], theirs["F"], rtol=1e-7, atol=1e-9)
    assert ours["names"] == theirs["names"]
    assert ours["mvlgamma_node"] == theirs["mvlgamma_node"] == "MvlgammaBackward0"
