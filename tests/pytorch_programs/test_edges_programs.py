"""Programs at the edges, run on torch and on chainrule with ``import torch`` aliased: a GRU
over sequences packed by hand (programs/hand_packed.py), whose mistaken packings both
libraries refuse (chainrule when the PackedSequence is made, torch in the GRU), and sparse
attention scores (programs/sparse_edges.py) whose dims and sizes are checked as torch's, and
integer counts as features (programs/dtype_edges.py), with the dtype mistakes both refuse."""

from __future__ import annotations

import numpy as np
import torch

from tests.pytorch_programs.test_pytorch_programs import F32, assert_follows, twins


def test_a_gru_over_sequences_packed_by_hand() -> None:
    theirs, ours = twins("hand_packed")
    assert_follows(ours["losses"], theirs["losses"], F32)
    assert ours["losses"][-1] < ours["losses"][0]  # it learns
    np.testing.assert_array_equal(ours["padded"], theirs["padded"])
    assert ours["lengths"] == theirs["lengths"]
    assert ours["refused"] == dict.fromkeys(ours["refused"], True)
    # PyTorch inverts a sorted_indices that is no permutation into memory it leaves unwritten,
    # so whether its GRU then fails depends on what that memory held: compared where it is not
    theirs["refused"].pop("not-a-permutation")
    assert theirs["refused"] == dict.fromkeys(theirs["refused"], True)


def test_sparse_attention_over_a_graphs_edges() -> None:
    with torch.sparse.check_sparse_tensor_invariants():  # and no warning that it does not
        theirs, ours = twins("sparse_edges")
    assert_follows(ours["losses"], theirs["losses"], F32)
    assert ours["losses"][-1] < ours["losses"][0]
    assert ours["degrees"] == theirs["degrees"] and ours["in_degrees"] == theirs["in_degrees"]
    assert ours["refused"] == theirs["refused"] == dict.fromkeys(ours["refused"], True)


def test_integer_counts_as_features_and_the_dtype_mistakes() -> None:
    theirs, ours = twins("dtype_edges")
    assert_follows(ours["losses"], theirs["losses"], F32)
    assert ours["losses"][-1] < ours["losses"][0]
    np.testing.assert_allclose(ours["probabilities"], theirs["probabilities"], rtol=1e-4, atol=1e-6)
    assert ours["features_dtype"] == theirs["features_dtype"] == "float32"
    assert ours["double_features_dtype"] == theirs["double_features_dtype"] == "float64"
    assert ours["refused"] == theirs["refused"] == dict.fromkeys(ours["refused"], True)
