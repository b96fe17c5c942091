"""The autograd tutorial's tour of a graph (pytorch_programs/programs/graph_tour.py) run on
torch and on chainrule with ``import torch`` aliased: the same nodes by the same names, the
same edges with their output indices, the same saved values, before and after backward."""

from __future__ import annotations

import pytest

from tests.pytorch_programs.test_pytorch_programs import F32, twins


def test_the_tour_of_a_classifiers_graph_is_torchs() -> None:
    theirs, ours = twins("graph_tour")
    assert ours["loss"] == pytest.approx(theirs["loss"], rel=F32)
    assert ours["before"] == theirs["before"]
    assert ours["after"] == theirs["after"]
    assert ours["printed"] == theirs["printed"] == "<AddBackward0"
    assert ours["name"] == theirs["name"] and ours["reached"] == theirs["reached"] == [1]
