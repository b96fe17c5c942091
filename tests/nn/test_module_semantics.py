"""Where a PyTorch program means one thing, chainrule means the same, checked against torch:
what assigning to a Parameter's, a buffer's or a submodule's name does, unique's NaNs, and
clip_grad_norm_ on float16 gradients."""

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import nn


def torch_error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return info.type, str(info.value)


# -- unique and clip_grad_norm_ -------------------------------------------------------------


@pytest.mark.parametrize("values", [[float("nan"), 1.0, float("nan"), 1.0], [float("nan")] * 3])
def test_unique_keeps_each_nan_as_its_own_value(values):
    ours = cr.tensor(values).unique(return_inverse=True, return_counts=True)
    theirs = torch.tensor(values).unique(return_inverse=True, return_counts=True)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(cr.unique(cr.tensor(values)).numpy(),
                                  torch.unique(torch.tensor(values)).numpy())


def test_clip_grad_norm_of_float16_gradients_computes_the_norm_wider():
    p, q = nn.Parameter(cr.zeros(2, dtype=cr.float16)), torch.nn.Parameter(
        torch.zeros(2, dtype=torch.float16))
    p.grad = cr.tensor([300.0, 400.0], dtype=cr.float16)
    q.grad = torch.tensor([300.0, 400.0], dtype=torch.float16)
    ours = nn.utils.clip_grad_norm_([p], 1.0)
    theirs = torch.nn.utils.clip_grad_norm_([q], 1.0)
    assert ours.dtype == cr.float16 and float(ours) == float(theirs) == 500.0
    np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
