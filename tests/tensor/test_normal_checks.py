"""normal's layout= and the checks of normal and normal_ (std >= 0, a floating tensor), against
PyTorch."""

from __future__ import annotations

import pytest
import torch

import chainrule as cr


def test_normal_takes_layout_and_checks_std_as_torch() -> None:
    ours = cr.normal(1.6, 0.3, (2, 2, 2), layout=cr.strided)
    theirs = torch.normal(1.6, 0.3, (2, 2, 2), layout=torch.strided)
    assert ours.shape == theirs.shape and ours.dtype == cr.float32
    with pytest.raises(ValueError, match="normal: draws are dense tensors"):
        cr.normal(0.0, 1.0, (2,), layout=cr.sparse_coo)
    for call in (
        lambda lib: lib.normal(0.0, -1.0, (2,)),
        lambda lib: lib.normal(lib.zeros(2), lib.tensor([1.0, -1.0])),
        lambda lib: lib.zeros(3).normal_(0.0, -1.0),
        lambda lib: lib.zeros(3).normal_(0.0, float("nan")),
    ):
        with pytest.raises(RuntimeError, match="normal expects"):
            call(torch)
        with pytest.raises(RuntimeError, match="normal expects all elements of std >= 0.0"):
            call(cr)
    with pytest.raises(TypeError, match="normal_: needs a floating-point tensor"):
        cr.zeros(3, dtype=cr.int64).normal_()
