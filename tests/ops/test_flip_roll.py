"""flip and roll, one node each (FlipBackward0, RollBackward0): under vmap, where a flat roll
rolls each example alone, and with PyTorch's saved dims and shifts as given."""

import numpy as np
import pytest
import torch

import chainrule as cr

rng = np.random.default_rng(0)

CALLS = [
    ("roll_flat", lambda m, x: x.roll(2)),
    ("roll_dims", lambda m, x: x.roll((1, -2), (0, -1))),
    ("flip", lambda m, x: x.flip(-1)),
    ("rot90", lambda m, x: m.rot90(x, 1, (0, 1))),
]


@pytest.mark.parametrize("call", [c[1] for c in CALLS], ids=[c[0] for c in CALLS])
def test_under_vmap_as_torch(call):
    a = rng.standard_normal((4, 3, 5))
    got = cr.func.vmap(lambda x: call(cr, x))(cr.tensor(a))
    want = torch.func.vmap(lambda x: call(torch, x))(torch.tensor(a))
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_saved_dims_and_shifts_are_torchs_as_given():
    a = rng.standard_normal((2, 3, 4))
    x, t = cr.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    assert x.flip((0, -1)).grad_fn._saved_dims == (0, -1)
    assert t.flip((0, -1)).grad_fn._saved_dims == (0, 2**64 - 1)
    got, want = x.roll((-1, 5), (2, -2)).grad_fn, t.roll((-1, 5), (2, -2)).grad_fn
    assert got._saved_dims == (2, -2) and got._saved_shifts == (-1, 5)
    assert want._saved_shifts == (2**64 - 1, 5)
    assert x.roll(7).grad_fn._saved_dims == t.roll(7).grad_fn._saved_dims == ()
    assert x.roll(7).grad_fn._saved_shifts == t.roll(7).grad_fn._saved_shifts == (7,)


def test_a_roll_of_an_empty_dim_or_a_0d_tensor_is_a_copy():
    for shape, shifts, dims in [((0, 3), 2, 0), ((), 3, None), ((2, 3), 3, 1)]:
        a = rng.standard_normal(shape)
        got = cr.tensor(a).roll(shifts, dims)
        want = torch.tensor(a).roll(shifts, dims)
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        assert not np.shares_memory(got.numpy(), a)


def test_a_0d_tensor_has_no_dim_to_roll_along():
    with pytest.raises(IndexError):
        torch.tensor(1.0).roll(1, 0)
    with pytest.raises(IndexError, match="roll: dims"):
        cr.tensor(1.0).roll(1, 0)


@pytest.mark.parametrize("shift", [0, 7, -3, 2500, -5000])
def test_a_long_flat_roll_is_torchs_in_either_mode(shift):
    """From FLAT_SLICES_MIN elements the fast path copies two slices; a transposed input rolls
    in its logical order; the gradient rolls back; vmap rolls each example alone."""
    from tests.helpers import fast_path_on

    a = rng.standard_normal((60, 50))
    for given in (a, a.T):
        x, t = cr.tensor(given, requires_grad=True), torch.tensor(given, requires_grad=True)
        with fast_path_on():
            got = x.roll(shift)
        want = t.roll(shift)
        np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
        v = rng.standard_normal(given.shape)
        (g,) = cr.grad(got, x, cr.tensor(v))
        (tg,) = torch.autograd.grad(want, t, torch.tensor(v))
        np.testing.assert_array_equal(g.numpy(), tg.numpy())
    b = rng.standard_normal((3, 40, 60))
    with fast_path_on():
        got = cr.func.vmap(lambda x: x.roll(shift))(cr.tensor(b))
    want = torch.func.vmap(lambda x: x.roll(shift))(torch.tensor(b))
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize(
    "shape, dims",
    [((600, 4), 0), ((600, 3, 4), (0, 1)), ((30, 30, 4), (-2,)), ((3, 4), 0), ((0, 600, 4), 1)],
)
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_])
def test_a_flip_of_many_short_rows_is_torchs_in_either_mode(shape, dims, dtype):
    """From FLIPPED_ROWS_MIN rows the fast path copies each row after the last flipped dim
    as one element; a transposed input flips in its logical order; the result is its own."""
    from tests.helpers import fast_path_on

    a = (rng.standard_normal(shape) * 5).astype(dtype)
    for given in (a, a.swapaxes(-1, -2)):
        with fast_path_on():
            got = cr.tensor(given).flip(dims)
        want = torch.tensor(given).flip(dims)
        assert got.dtype == cr.tensor(given).dtype and got.numpy().flags.c_contiguous
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    x = cr.tensor(a.astype(np.float64), requires_grad=True)
    v = rng.standard_normal(shape)
    with fast_path_on():
        (g,) = cr.grad(x.flip(dims), x, cr.tensor(v))
    np.testing.assert_array_equal(g.numpy(), torch.tensor(v).flip(dims).numpy())
