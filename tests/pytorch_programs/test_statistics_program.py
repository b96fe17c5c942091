"""A PyTorch program of robust statistics (programs/robust_stats.py), run on torch and on
chainrule with ``import torch`` aliased: medians and quantiles fill and scale the data, a
trimmed loss trains a linear model, and the report's scans and statistics come out as
torch's."""

from __future__ import annotations

import numpy as np

from tests.pytorch_programs.test_pytorch_programs import F32, assert_follows, twins


def test_robust_regression_and_its_report() -> None:
    theirs, ours = twins("robust_stats")
    assert_follows(ours["losses"], theirs["losses"], F32)
    assert ours["losses"][-1] < ours["losses"][0]  # it learns
    for key, want in theirs["report"].items():
        np.testing.assert_allclose(ours["report"][key], want, rtol=1e-4, atol=1e-5, err_msg=key)
    assert ours["refused"] == theirs["refused"] == dict.fromkeys(ours["refused"], True)
