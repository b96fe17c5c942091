"""The per-sample gradients program (programs/per_sample_gradients.py), run on torch and on
chainrule with ``import torch`` aliased: vmap(grad) over functional_call against a loop,
chunked, DP-SGD steps with clipped per-example gradients, and an ensemble by vmap."""

from __future__ import annotations

import numpy as np

from tests.pytorch_programs.test_pytorch_programs import F32, assert_follows, twins


def test_per_sample_gradients_follow_torch() -> None:
    theirs, ours = twins("per_sample_gradients")
    assert ours["apart"] < 1e-6 and ours["chunk_apart"] < 1e-6 and ours["ensemble_apart"] < 1e-6
    assert_follows(ours["losses"], theirs["losses"], F32)
    assert ours["losses"][-1] < ours["losses"][0]  # it learns
    np.testing.assert_allclose(ours["norms"], theirs["norms"], rtol=1e-4)
    np.testing.assert_allclose(ours["ensemble"], theirs["ensemble"], rtol=1e-5, atol=1e-6)
