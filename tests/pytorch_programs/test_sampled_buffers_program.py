"""The buffer-reusing sampler (programs/sampled_buffers.py), run on torch and on chainrule
with ``import torch`` aliased: the factories' and where's out= write the numbers torch
writes, and vmap's per-example draws (multinomial and bernoulli of tensors not batched,
feature dropout, chunks at randomness='same') are torch.func.vmap's, bit for bit."""

from __future__ import annotations

import numpy as np

from tests.pytorch_programs.test_pytorch_programs import twins


def test_sampled_buffers_follow_torch() -> None:
    theirs, ours = twins("sampled_buffers")
    for key in ("total", "steps", "picks", "masks", "dropped", "shared"):
        np.testing.assert_array_equal(ours[key], theirs[key], err_msg=key)
    assert len({tuple(p) for p in ours["picks"]}) > 1  # each example its own categories
    offsets = ours["offsets"]
    np.testing.assert_allclose(offsets, np.broadcast_to(offsets[0], offsets.shape), atol=1e-6)
