"""The ensemble-with-dropout program (programs/vmap_randomness.py), run on torch and on
chainrule with ``import torch`` aliased: vmap's randomness='different' and 'same' draw the
numbers torch.func.vmap draws from the same seed, and 'error' refuses a draw."""

from __future__ import annotations

import numpy as np

from tests.pytorch_programs.test_pytorch_programs import twins


def test_vmap_randomness_follows_torch() -> None:
    theirs, ours = twins("vmap_randomness")
    np.testing.assert_array_equal(ours["masks"], theirs["masks"])
    np.testing.assert_array_equal(ours["perturbed"], theirs["perturbed"])
    for key in ("different", "same"):
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-5, atol=1e-6)
    assert not np.allclose(ours["same"], ours["different"])  # other masks and noise
    assert (
        "randomness error mode" in theirs["refused"] and "randomness error mode" in ours["refused"]
    )
