"""A PyTorch program of 3-D, 1-D and 2-D spatial layers (programs/volumes.py), run on torch and
on chainrule with ``import torch`` aliased: a volumetric segmenter with pooling undone by
unpooling, a signal branch and a warped, shuffled and resized image train step for step as
torch's, and the report and refusals come out the same."""

from __future__ import annotations

import numpy as np

from tests.pytorch_programs.test_pytorch_programs import F32, assert_follows, twins


def test_volumes_train_and_report_as_torch() -> None:
    theirs, ours = twins("volumes")
    assert_follows(ours["losses"], theirs["losses"], F32)
    assert ours["losses"][-1] < ours["losses"][0]  # it learns
    for key in ("summary", "warped", "round_trip"):
        np.testing.assert_allclose(
            ours["report"][key], theirs["report"][key], rtol=1e-4, atol=1e-5, err_msg=key
        )
    assert ours["report"]["shapes"] == theirs["report"]["shapes"]
    assert ours["refused"] == theirs["refused"] == dict.fromkeys(ours["refused"], True)
