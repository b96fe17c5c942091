"""A course's linear-algebra lab (programs/linear_algebra.py), run on torch and on chainrule
with ``import torch`` aliased: closed-form least squares and ridge agree with gradient descent,
PCA by the SVD agrees with eigh of the covariance, and a normalising flow trained through
slogdet follows torch's losses."""

from __future__ import annotations

import numpy as np

from tests.pytorch_programs.test_pytorch_programs import F32, assert_follows, twins


def test_least_squares_pca_and_a_flow() -> None:
    theirs, ours = twins("linear_algebra")
    reg, treg = ours["regression"], theirs["regression"]
    for key in ("w_ls", "w_ridge", "w_chol", "w_gd", "v_gd", "residual", "cond", "rank"):
        np.testing.assert_allclose(reg[key], treg[key], rtol=1e-9, err_msg=key)
    assert_follows(reg["losses"], treg["losses"], 1e-12)
    # gradient descent reaches the closed forms
    np.testing.assert_allclose(reg["w_gd"], reg["w_ls"], atol=1e-6)
    np.testing.assert_allclose(reg["v_gd"], reg["w_ridge"], atol=1e-6)
    np.testing.assert_allclose(reg["w_chol"], reg["w_ridge"], rtol=1e-12)
    pca, tpca = ours["pca"], theirs["pca"]
    for key, want in tpca.items():
        np.testing.assert_allclose(pca[key], want, rtol=1e-9, atol=1e-12, err_msg=key)
    n = 300  # eigh's eigenvalues of the covariance are the squared singular values / (n - 1)
    np.testing.assert_allclose(pca["eigenvalues"], np.square(pca["singular_values"]) / (n - 1))
    flow, tflow = ours["flow"], theirs["flow"]
    assert_follows(flow["losses"], tflow["losses"], F32)
    assert flow["losses"][-1] < flow["losses"][0] - 0.3  # it learns
    assert flow["round_trip"] < 1e-5
