"""A Gaussian-process notebook in torch's Tensor-method spelling of linear algebra
(programs/gaussian_process.py), run on torch and on chainrule with ``import torch`` aliased:
the same noise drawn by randn_like on a transposed tensor, the same marginal-likelihood
losses under Adam, and five ways to the posterior mean that agree with each other and with
torch's."""

from __future__ import annotations

import numpy as np

from tests.pytorch_programs.test_pytorch_programs import F64, assert_follows, twins


def test_gaussian_process_by_tensor_methods() -> None:
    theirs, ours = twins("gaussian_process")
    assert ours["noise"] == theirs["noise"]  # the very same draws, bit for bit
    assert_follows(ours["losses"], theirs["losses"], F64)
    assert ours["losses"][-1] < ours["losses"][0] - 5  # it learns
    np.testing.assert_allclose(ours["hyper"], theirs["hyper"], rtol=1e-8)
    for name, mean in ours["means"].items():
        np.testing.assert_allclose(mean, theirs["means"][name], rtol=1e-7, atol=1e-9, err_msg=name)
        np.testing.assert_allclose(mean, ours["means"]["inverse"], rtol=1e-6, atol=1e-8)
    for key in ("logdet", "det_small", "R_diag", "singular_values", "V_squared", "exp_trace"):
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-8, atol=1e-10, err_msg=key)
    assert ours["Q_orthogonal"] < 1e-12 and ours["power"] < 1e-9
