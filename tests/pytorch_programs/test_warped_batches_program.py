"""The warped-batches program (programs/warped_batches.py), run on torch and on chainrule with
``import torch`` aliased: per-example gradients by vmap(grad) through affine_grid,
grid_sample, pixel_unshuffle, nearest interpolation, unfold and fold, against a loop, and
clipped per-example SGD steps."""

from __future__ import annotations

import numpy as np

from tests.pytorch_programs.test_pytorch_programs import F32, assert_follows, twins


def test_warped_batches_follow_torch() -> None:
    theirs, ours = twins("warped_batches")
    assert ours["apart"] < 1e-6 and theirs["apart"] < 1e-6
    assert_follows(ours["losses"], theirs["losses"], F32)
    assert ours["losses"][-1] < ours["losses"][0]  # it learns
    np.testing.assert_allclose(ours["norms"], theirs["norms"], rtol=1e-4)
