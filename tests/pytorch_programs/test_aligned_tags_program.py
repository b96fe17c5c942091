"""A PyTorch program of the normalisations, losses and small layers beyond the basics
(programs/aligned_tags.py: CTC, EmbeddingBag, Bilinear, the margin losses, instance, group,
RMS and local response normalisation), run on torch and on chainrule with ``import torch``
aliased: the losses follow torch's step by step and the report comes out as torch's."""

from __future__ import annotations

import numpy as np

from tests.pytorch_programs.test_pytorch_programs import F32, assert_follows, twins


def test_tagger_ranker_and_patches_train_as_torch() -> None:
    theirs, ours = twins("aligned_tags")
    assert_follows(ours["losses"], theirs["losses"], F32)
    assert ours["losses"][-1] < ours["losses"][0]  # it learns
    for key, want in theirs["report"].items():
        np.testing.assert_allclose(ours["report"][key], want, rtol=1e-4, atol=1e-5, err_msg=key)
    assert ours["refused"] == theirs["refused"] == dict.fromkeys(ours["refused"], True)
