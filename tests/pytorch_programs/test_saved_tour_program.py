"""A small image classifier (pytorch_programs/programs/saved_tour.py), run on torch and on
chainrule with ``import torch`` aliased: every node of its loss's graph tells the same
_saved_* before backward and after it (tensors refused, the rest kept)."""

from __future__ import annotations

import pytest

from tests.pytorch_programs.test_pytorch_programs import F32, twins


def test_a_classifiers_nodes_tell_torchs_saved_values() -> None:
    theirs, ours = twins("saved_tour")
    assert theirs["before"]["pool"][0] == "MaxPool2DWithIndicesBackward0"
    for step in theirs["before"]:
        assert ours["before"][step] == theirs["before"][step], step
        assert ours["after"][step] == theirs["after"][step], step
    assert ours["loss"] == pytest.approx(theirs["loss"], rel=F32)
