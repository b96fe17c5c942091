"""The packed-sequence classifier (programs/packed_classifier.py: pad_sequence,
pack_padded_sequence of unsorted lengths, a bidirectional LSTM over the packed batch, h_n and
pad_packed_sequence into a linear head, Adam) run on torch and on chainrule with ``import
torch`` aliased, from the same initial weights: its losses follow the same trajectory."""

from __future__ import annotations

import numpy as np
import torch

from tests.pytorch_programs.test_pytorch_programs import F32, assert_follows, twins


def test_packed_sequence_classifier() -> None:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # small: a second thread only waits
    try:
        theirs, ours = twins("packed_classifier")
    finally:
        torch.set_num_threads(threads)
    assert_follows(ours["losses"], theirs["losses"], F32)
    assert len(ours["losses"]) == 12 and ours["losses"][-1] < ours["losses"][0]  # it learns
    np.testing.assert_allclose(ours["logits"], theirs["logits"], rtol=10 * F32, atol=1e-5)
    assert ours["accuracy"] == theirs["accuracy"]
