"""put, one node (PutBackward0): repeated positions, negative ones, in place, and PyTorch's
saved index as given; index_put's edge indices (none, 0-d) against PyTorch."""

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


@pytest.mark.parametrize("accumulate", [True, False])
@pytest.mark.parametrize("indices", [(), []])
def test_index_put_without_an_index_tensor_is_refused(indices, accumulate):
    """PyTorch fails inside (an internal assert, or an undefined tensor); chainrule refused
    only with accumulate, from inside scatteradd, and without it wrote everywhere."""
    for put in ("index_put", "index_put_"):
        with pytest.raises(RuntimeError):
            getattr(torch.zeros(3), put)(indices, torch.tensor(1.0), accumulate=accumulate)
        x = cr.zeros(3)
        with pytest.raises(RuntimeError, match=rf"^{put}: indices .* shape \(3,\)$"):
            getattr(x, put)(indices, cr.tensor(1.0), accumulate=accumulate)
        assert x.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("accumulate", [True, False])
def test_index_put_at_a_0d_index_is_torchs_with_its_gradients(accumulate):
    """A 0-d index picks one row; with accumulate it failed to broadcast in scatteradd."""
    a, v, g = rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal((3, 4))
    found = []
    for m in (cr, torch):
        x, values = m.tensor(a, requires_grad=True), m.tensor(v, requires_grad=True)
        out = x.index_put((m.tensor(1), m.tensor([0, 2, 2])), values[:3], accumulate)
        out = out.index_put((m.tensor(2),), values, accumulate)
        out.backward(m.tensor(g))
        found.append([out.detach().numpy(), x.grad.numpy(), values.grad.numpy()])
    for got, want in zip(*found, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)


EMPTY_MASKS = [  # a shape, the index before an empty mask
    ((3,), ()),
    ((2, 3), (slice(None),)),
    ((0,), ()),
    ((2, 0), (slice(None),)),
    ((2, 0), (1,)),
    ((0, 3), ()),
    ((0, 4), (True,)),  # a bool takes no dim
    ((3,), (True,)),
    ((2, 0), (None, 1)),
]


@pytest.mark.parametrize("shape,lead", EMPTY_MASKS)
def test_an_empty_mask_must_fit_its_dims_as_torchs(shape, lead):
    """NumPy takes an empty mask against a dim of any size (picking nothing); PyTorch
    refuses one whose shape is not the dims it indexes, in getitem and index_put_."""
    found = []
    for m in (cr, torch):
        mask = m.zeros(0, dtype=m.bool)
        try:
            found.append(("shape", tuple(m.zeros(shape)[(*lead, mask)].shape)))
            if not lead:
                m.zeros(shape).index_put_((mask,), m.tensor(1.0))
        except IndexError as e:
            found.append(("refused", "does not match" in str(e)))
    assert found[0] == found[1]
