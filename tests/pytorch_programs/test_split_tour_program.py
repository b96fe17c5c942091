"""A gated model with chunk, unbind and a custom Function of two outputs
(pytorch_programs/programs/split_tour.py), run on torch and on chainrule with ``import
torch`` aliased: each op's outputs share one node, with the same names, output numbers,
edges, saved values and hook calls, and the same loss before and after a step."""

from __future__ import annotations

import pytest

from tests.pytorch_programs.test_pytorch_programs import F32, twins


def test_a_gated_models_several_output_nodes_are_torchs() -> None:
    theirs, ours = twins("split_tour")
    assert ours["shared"] == theirs["shared"] == [True, True, True]
    assert ours["numbers"] == theirs["numbers"] == [0, 1, 0, 1]
    assert ours["names"] == theirs["names"] == ["SplitBackward0", "SinCosBackward"]
    assert ours["saved"] == theirs["saved"]
    assert ours["before"] == theirs["before"]
    assert ours["seen"] == theirs["seen"] == [[False, False]]
    assert ours["loss"] == pytest.approx(theirs["loss"], rel=F32)
    assert ours["after"] == pytest.approx(theirs["after"], rel=10 * F32)
