"""A program of out= buffers, *_copy layouts, in-place reshapes and the nn.parallel paths
(programs/buffered_views.py) run on torch and on chainrule with ``import torch`` aliased: the
same losses, the same values written into the buffers, the same layouts."""

from __future__ import annotations

import numpy as np

from tests.pytorch_programs.test_pytorch_programs import F32, assert_follows, twins


def test_buffers_copies_and_in_place_reshapes() -> None:
    theirs, ours = twins("buffered_views")
    assert_follows(ours["losses"], theirs["losses"], F32)
    assert ours["losses"][-1] < ours["losses"][0]  # it learns
    for key in ("hidden", "summed", "best", "ranked"):
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(ours["where"], theirs["where"])
    np.testing.assert_array_equal(ours["order"], theirs["order"])
    for key in ("pieces", "same", "contiguous"):
        assert ours[key] == theirs[key]
