"""A PyTorch program of count regression (programs/count_model.py), run on torch and on
chainrule with ``import torch`` aliased: a negative binomial likelihood of lgamma, xlogy and
logaddexp trains as torch's, and the report's elementwise math comes out as torch's."""

from __future__ import annotations

import numpy as np

from tests.pytorch_programs.test_pytorch_programs import F32, assert_follows, twins


def test_count_regression_and_its_report() -> None:
    theirs, ours = twins("count_model")
    assert_follows(ours["losses"], theirs["losses"], F32)
    assert ours["losses"][-1] < ours["losses"][0]  # it learns
    for key, want in theirs["report"].items():
        got = ours["report"][key]
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=key)
    assert ours["refused"] == theirs["refused"] == dict.fromkeys(ours["refused"], True)
