"""put, one node (PutBackward0): repeated positions, negative ones, in place, and PyTorch's
saved index as given."""

import numpy as np
import pytest
import torch

import chainrule as cr

rng = np.random.default_rng(0)


@pytest.mark.parametrize("accumulate", [True, False])
def test_put_of_repeated_and_negative_positions_is_torchs(accumulate):
    a, s = rng.standard_normal((2, 3)), rng.standard_normal(4)
    index = [0, -1, 3, 3] if accumulate else [0, -1, 3, 2]
    x, src = cr.tensor(a, requires_grad=True), cr.tensor(s, requires_grad=True)
    tx, tsrc = torch.tensor(a, requires_grad=True), torch.tensor(s, requires_grad=True)
    got = x.put(cr.tensor(index), src, accumulate)
    want = tx.put(torch.tensor(index), tsrc, accumulate)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy())
    assert got.grad_fn.name() == want.grad_fn.name() == "PutBackward0"
    assert got.grad_fn._saved_index.tolist() == index
    assert got.grad_fn._saved_accumulate is accumulate
    g = rng.standard_normal((2, 3))
    got.backward(cr.tensor(g))
    want.backward(torch.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    np.testing.assert_allclose(src.grad.numpy(), tsrc.grad.numpy())


def test_put_in_place_writes_the_tensor():
    x, t = cr.zeros(2, 2), torch.zeros(2, 2)
    x.put_(cr.tensor([1, -1]), cr.tensor([5.0, 6.0]), accumulate=True)
    t.put_(torch.tensor([1, -1]), torch.tensor([5.0, 6.0]), accumulate=True)
    assert x.tolist() == t.tolist()
