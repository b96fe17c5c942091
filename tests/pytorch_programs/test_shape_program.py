"""A program of windows, strided views and index bookkeeping (programs/prototypes.py) run on
torch and on chainrule with ``import torch`` aliased: the same losses, the same answers of
take, masked_scatter, index_copy and searchsorted, and the same shape mistakes refused."""

from __future__ import annotations

import numpy as np

from tests.pytorch_programs.test_pytorch_programs import F32, assert_follows, twins


def test_prototype_classifier_over_unfolded_windows() -> None:
    theirs, ours = twins("prototypes")
    assert_follows(ours["losses"], theirs["losses"], F32)
    assert ours["losses"][-1] < ours["losses"][0]  # it learns
    np.testing.assert_array_equal(ours["labels"], theirs["labels"])
    for key in ("best", "marked", "copied"):
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(ours["where"], theirs["where"])
    np.testing.assert_array_equal(ours["pairs"], theirs["pairs"])
    assert ours["refused"] == theirs["refused"] == dict.fromkeys(ours["refused"], True)
