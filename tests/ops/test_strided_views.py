"""as_strided's views with the fast path and without: the same values, the same memory as
PyTorch's, written through as PyTorch's."""

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.autograd import fastpath

CALLS = [
    ("offset", (2, 3), lambda x: x.as_strided((2, 2), (3, 1), 1)),
    ("overlapping", (6,), lambda x: x.as_strided((3, 3), (1, 1))),
    ("of_a_slice", (6,), lambda x: x[1:].as_strided((2, 2), (2, 1))),
    ("of_a_transpose", (3, 4), lambda x: x.t().as_strided((2, 3), (1, 4), 2)),
    ("empty", (0,), lambda x: x.as_strided((0, 2), (1, 1))),
    ("unfold", (2, 5), lambda x: x.unfold(1, 2, 1)),
]


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("shape,call", [c[1:] for c in CALLS], ids=[c[0] for c in CALLS])
def test_a_strided_view_reads_and_writes_torchs_elements(shape, call, fast):
    a = np.arange(float(np.prod(shape))).reshape(shape)
    x, t = cr.tensor(a), torch.tensor(a)
    if fast:
        got = call(x)
    else:
        with fastpath.disabled():
            got = call(x)
    want = call(t)
    assert got.shape == want.shape and got.stride() == want.stride()
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    if got.numel():
        got.data[(0,) * got.ndim] = -1.0  # a write through the view reaches the tensor
        want.data[(0,) * want.ndim] = -1.0
        np.testing.assert_array_equal(x.numpy(), t.numpy())
