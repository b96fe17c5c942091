"""A PyTorch program of 3-D volumes (programs/volume_pools.py), run on torch and on chainrule
with ``import torch`` aliased: a Conv3d, MaxPool3d and AdaptiveAvgPool3d classifier trains as
torch's, classifies an unbatched volume as it is, unpools its maxima, gives each example's
gradient by vmap(grad), and its pools' nodes on unbatched inputs carry torch's names."""

from __future__ import annotations

import numpy as np

from tests.pytorch_programs.test_pytorch_programs import F32, assert_follows, twins


def test_a_volume_classifier_and_its_pools() -> None:
    theirs, ours = twins("volume_pools")
    assert_follows(ours["losses"], theirs["losses"], F32)
    assert ours["losses"][-1] < ours["losses"][0]  # it learns
    assert ours["same_as_batched"] and theirs["same_as_batched"]
    np.testing.assert_allclose(ours["one"], theirs["one"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ours["back"], theirs["back"], rtol=1e-4, atol=1e-5)
    assert ours["kept"] == theirs["kept"] > 0
    assert ours["apart"] < 1e-5 and theirs["apart"] < 1e-5
    for name, want in theirs["per_sample"].items():
        np.testing.assert_allclose(ours["per_sample"][name], want, rtol=1e-3, atol=1e-5)
    assert ours["names"] == theirs["names"]
