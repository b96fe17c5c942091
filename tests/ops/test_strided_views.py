"""as_strided's views with the fast path and without: the same values, the same memory as
PyTorch's, written through as PyTorch's."""

import contextlib

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.autograd import fastpath

CALLS = [
    ("offset", (2, 3), lambda x: x.as_strided((2, 2), (3, 1), 1)),
    ("overlapping", (6,), lambda x: x.as_strided((3, 3), (1, 1))),
    ("of_a_slice", (6,), lambda x: x[1:].as_strided((2, 2), (2, 1))),
    ("beyond_a_slice", (6,), lambda x: x[1:3].as_strided((2, 2), (2, 1))),
    ("of_a_row", (3, 4), lambda x: x[1].as_strided((2, 2), (1, 1))),
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
    assert got.storage_offset() == want.storage_offset()
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    if got.numel():
        got.data[(0,) * got.ndim] = -1.0  # a write through the view reaches the tensor
        want.data[(0,) * want.ndim] = -1.0
        np.testing.assert_array_equal(x.numpy(), t.numpy())


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("stop", [None, 3], ids=["within_the_slice", "beyond_it"])
def test_a_strided_view_of_a_slice_takes_torchs_gradient(stop, fast):
    a, g = np.random.default_rng(0).normal(size=(2, 6))
    x, t = cr.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    with fastpath.disabled() if not fast else contextlib.nullcontext():
        got = x[1:stop].as_strided((2, 2), (2, 1))
        got.backward(cr.tensor(g[:4].reshape(2, 2)))
    want = t[1:stop].as_strided((2, 2), (2, 1))
    want.backward(torch.tensor(g[:4].reshape(2, 2)))
    assert type(got.grad_fn).__name__ == type(want.grad_fn).__name__
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize(
    "view",
    [lambda x: x[1:], lambda x: x[:, ::2], lambda x: x.t()[2:], lambda x: x[1:][:, 1:]],
    ids=["rows", "every_other", "of_a_transpose", "of_a_view"],
)
def test_storage_offset_and_data_ptr_are_torchs(view):
    a = np.arange(12.0).reshape(3, 4)
    x, t = cr.tensor(a), torch.tensor(a)
    got, want = view(x), view(t)
    assert got.storage_offset() == want.storage_offset()
    assert got.data_ptr() - x.data_ptr() == want.data_ptr() - t.data_ptr()
    assert got.data_ptr() == got.numpy().__array_interface__["data"][0]


@pytest.mark.parametrize("args", [(1, 1, 2), (-1, -3, 2), (0, 1, 1)])
def test_narrow_copy_is_one_node_saving_torchs_values(args):
    a = np.arange(8.0).reshape(2, 4)
    x, t = cr.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    got, want = x.narrow_copy(*args), t.narrow_copy(*args)
    assert type(got.grad_fn).__name__ == type(want.grad_fn).__name__ == "NarrowCopyBackward0"
    assert got.grad_fn.next_functions[0][0].variable is x
    for key in ("_saved_dim", "_saved_length", "_saved_self_sym_sizes", "_saved_start"):
        assert getattr(got.grad_fn, key) == getattr(want.grad_fn, key), key
    assert got.stride() == want.stride() and got.storage_offset() == 0
    got.backward(cr.ones_like(got))
    want.backward(torch.ones_like(want))
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())
