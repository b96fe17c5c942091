"""The rows scatter-add behind Embedding's gradient and the cube as products: against
np.add.at and PyTorch, on both of add_rows' strategies, with repeats, negative indices and
empty lookups."""

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.fastpath.rules import ADD_AT_MAX, add_rows


def bound(idx, g, rows):
    """Per-row sum of |terms|: how far two summation orders may drift apart."""
    m = np.zeros((rows,) + g.shape[idx.ndim :])
    np.add.at(m, idx, np.abs(g).astype(np.float64))
    return m


# (rows, index shape, row shape): few distinct rows repeated often (reduceat), many
# distinct rows repeated rarely (rounds), a row of one element, one row repeated only
CASES = [(27, (32, 16), (64,)), (1000, (32, 64), (8,)), (5, (4000,), ()), (1, (300,), (3, 2))]


@pytest.mark.parametrize("rows,shape,row", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_add_rows_matches_add_at(rows, shape, row, dtype):
    rng = np.random.default_rng(0)
    idx = rng.integers(-rows, rows, shape)
    g = (rng.standard_normal(shape + row) * 10.0 ** rng.integers(-3, 3, shape + row)).astype(dtype)
    want = np.zeros((rows,) + row, dtype)
    np.add.at(want, idx, g)
    got = np.zeros((rows,) + row, dtype)
    add_rows(got, idx, g)
    eps = np.finfo(dtype).eps
    assert (np.abs(got - want) <= 8 * eps * bound(idx, g, rows)).all()


def test_add_rows_rounds_are_add_at_bit_for_bit():
    rng = np.random.default_rng(1)
    idx = rng.integers(0, 5000, 4000)  # most rows once, a few twice or three times
    g = rng.standard_normal((4000, 16)).astype(np.float32)
    want = np.zeros((5000, 16), np.float32)
    np.add.at(want, idx, g)
    got = np.zeros((5000, 16), np.float32)
    add_rows(got, idx, g)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("vocab,shape", [(27, (32, 16)), (500, (16, 40)), (3, (2, 0))])
def test_embedding_gradient_against_torch(vocab, shape):
    rng = np.random.default_rng(2)
    w = rng.standard_normal((vocab, 64)).astype(np.float32)
    idx = rng.integers(0, vocab, shape)
    up = rng.standard_normal(shape + (64,)).astype(np.float32)
    assert up.size == 0 or up.size > ADD_AT_MAX or shape == (2, 0)
    ours = cr.tensor(w, requires_grad=True)
    cr.nn.functional.embedding(cr.tensor(idx), ours).backward(cr.tensor(up))
    theirs = torch.tensor(w, requires_grad=True)
    torch.nn.functional.embedding(torch.tensor(idx), theirs).backward(torch.tensor(up))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_negative_row_indices_gradient_against_torch():
    rng = np.random.default_rng(3)
    w = rng.standard_normal((50, 100))
    idx = rng.integers(-50, 50, 200)
    ours = cr.tensor(w, requires_grad=True)
    ours[cr.tensor(idx)].sum().backward()
    theirs = torch.tensor(w, requires_grad=True)
    theirs[torch.tensor(idx)].sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("exponent", [3, 3.0])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cube_is_torch_bit_for_bit(exponent, dtype):
    x = np.random.default_rng(4).standard_normal(1000).astype(dtype) * 100
    x[:5] = [np.inf, -np.inf, np.nan, -0.0, 1e30]
    ours = cr.tensor(x, requires_grad=True)
    out = ours**exponent
    theirs = torch.tensor(x, requires_grad=True)
    expected = theirs**exponent
    assert out.dtype == cr.tensor(x).dtype
    np.testing.assert_array_equal(out.numpy(), expected.detach().numpy())
    out.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-6)


def test_cube_of_integers_stays_integer():
    x = np.arange(-5, 6)
    np.testing.assert_array_equal((cr.tensor(x) ** 3).numpy(), (torch.tensor(x) ** 3).numpy())
    assert (cr.tensor(x) ** 3).dtype == cr.int64


def test_cube_of_a_0d_tensor_and_its_second_derivative():
    x = cr.tensor(1.5, dtype=cr.float64, requires_grad=True)
    (g,) = cr.autograd.grad(x**3, x, create_graph=True)
    (h,) = cr.autograd.grad(g, x)
    assert (x**3).item() == 1.5**3 and g.item() == 3 * 1.5**2 and h.item() == 6 * 1.5


def test_write_in_another_thread_between_forward_and_backward_is_caught():
    """Nodes skip comparing versions while the process's count of in-place writes is
    unchanged since they were recorded; a write from any thread changes it."""
    import threading

    w = cr.randn(3, 3, requires_grad=True)
    x = cr.randn(2, 3)
    loss = (x @ w).tanh().sum()  # tanh saves its output, matmul its inputs
    worker = threading.Thread(target=lambda: x.mul_(2.0))
    worker.start()
    worker.join()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_unrelated_writes_leave_the_gradient_as_before():
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((4, 5)), rng.standard_normal((5, 2))
    ours = cr.tensor(a, requires_grad=True)
    loss = (ours @ cr.tensor(b)).sigmoid().sum()
    other = cr.zeros(3)
    other.add_(1.0)  # some other tensor written in place: every node now checks
    loss.backward()
    theirs = torch.tensor(a, requires_grad=True)
    (theirs @ torch.tensor(b)).sigmoid().sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)


def ulps(ours, theirs):
    """|ours - theirs| in units in the last place of theirs (float32)."""
    return np.abs(ours.astype(np.float64) - theirs) / np.spacing(np.abs(theirs).astype(np.float32))


def test_float32_erf_within_one_ulp_of_torch():
    x = np.concatenate(
        [
            np.linspace(-6, 6, 400_001, dtype=np.float32),  # many pieces
            np.float32(10.0) ** np.linspace(-38, 1, 20_000, dtype=np.float32),
            np.array([0.0, -0.0, 1e-45, 3.9, 3.95, 4.0, 4.1, 1e30, np.inf, -np.inf], np.float32),
        ]
    )
    ours = cr.tensor(x).erf().numpy()
    theirs = torch.erf(torch.tensor(x)).numpy()
    assert ours.dtype == np.float32
    assert ulps(ours, theirs).max() <= 1
    assert np.signbit(ours[x == 0]).tolist() == np.signbit(theirs[x == 0]).tolist()
    assert np.isnan(cr.tensor(np.array([np.nan], np.float32)).erf().item())


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gelu_over_many_pieces_and_a_strided_input_against_torch(approximate, dtype):
    rng = np.random.default_rng(6)
    x = (rng.standard_normal((3, 40_000)) * 4).astype(dtype)
    up = rng.standard_normal((40_000, 3)).astype(dtype)
    ours = cr.tensor(x, requires_grad=True)
    out = cr.nn.functional.gelu(ours.t(), approximate=approximate)  # a strided view
    out.backward(cr.tensor(up))
    theirs = torch.tensor(x, requires_grad=True)
    expected = torch.nn.functional.gelu(theirs.t(), approximate=approximate)
    expected.backward(torch.tensor(up))
    tol = {"rtol": 2e-6, "atol": 1e-6} if dtype == np.float32 else {"rtol": 1e-13, "atol": 1e-15}
    if approximate == "tanh":  # where x << 0, 1 + tanh cancels: one ulp of the tanh (NumPy's
        # and PyTorch's differ by that) moves the gradient by about 1e-6 of its scale
        tol["atol"] = 1e-5 if dtype == np.float32 else 1e-13
    assert out.dtype == cr.tensor(x).dtype
    np.testing.assert_allclose(out.numpy(), expected.detach().numpy(), **tol)
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), **tol)


def test_float32_gelu_and_its_slope_against_float64():
    """Phi made in float32 from exp(-x^2 / 2) and a polynomial: GELU and its slope within
    a few parts in 10^7 where values are ordinary, 4.2e-6 in the far tails (the rounding of
    x^2 in the exponent), and no cancellation for x << 0, where PyTorch's float32 loses all
    its digits."""
    x = np.concatenate([np.linspace(-12, 12, 600_001, dtype=np.float32), [0.0, -0.0]])
    ours = cr.tensor(x, requires_grad=True)
    out = cr.nn.functional.gelu(ours)
    out.backward(cr.ones(x.shape))
    x64 = torch.tensor(x.astype(np.float64), requires_grad=True)
    exact = torch.nn.functional.gelu(x64)
    exact.backward(torch.ones(x.shape, dtype=torch.float64))
    exact, slope = exact.detach().numpy(), x64.grad.numpy()
    got, got_slope = out.numpy().astype(np.float64), ours.grad.numpy().astype(np.float64)
    ordinary = np.abs(x) < 3
    tiny = np.abs(exact) < 1e-37  # below float32's normal numbers
    rel = np.abs(got - exact) / np.abs(exact)
    assert rel[ordinary & (exact != 0)].max() < 6e-7
    assert rel[~tiny & (exact != 0)].max() < 5e-6
    assert np.abs(got - exact)[tiny].max() < 1e-37
    # the slope's Phi and x phi: relative to the larger of their magnitudes
    scale = np.maximum(np.abs(slope), 1e-30)
    assert (np.abs(got_slope - slope) / scale)[ordinary].max() < 2e-6
    assert np.abs(got_slope - slope).max() < 1e-6
    assert out.numpy()[-2:].tolist() == [0.0, 0.0] and np.signbit(out.numpy()[-1])
    assert ours.grad.numpy()[-2:].tolist() == [0.5, 0.5]
    special = cr.nn.functional.gelu(cr.tensor(np.array([np.inf, -np.inf, np.nan], np.float32)))
    # -inf * 0 is NaN, as in PyTorch; at +inf PyTorch's float32 gives NaN too, float64 inf
    np.testing.assert_array_equal(special.numpy(), [np.inf, np.nan, np.nan])


def test_gelu_of_integers_and_half_precision():
    x = np.arange(-4, 5)
    assert cr.nn.functional.gelu(cr.tensor(x)).dtype == cr.float32
    # Phi = 0.5 (1 + erf) cancels for x << 0: made in float64 from an erf good to 2e-9,
    # it is 3e-5 off at x = -4, where PyTorch's float32 is 1.6e-3 off; so compared with
    # PyTorch's float64
    np.testing.assert_allclose(
        cr.nn.functional.gelu(cr.tensor(x)).numpy(),
        torch.nn.functional.gelu(torch.tensor(x, dtype=torch.float64)).numpy(),
        rtol=5e-5,
    )
    h = np.linspace(-3, 3, 50).astype(np.float16)
    ours = cr.nn.functional.gelu(cr.tensor(h))
    assert ours.dtype == cr.float16
    np.testing.assert_allclose(
        ours.numpy().astype(np.float32),
        torch.nn.functional.gelu(torch.tensor(h).float()).numpy(),
        rtol=2e-3,
        atol=1e-3,
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_layer_norm_primitive_against_torch(dtype):
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((6, 40, 32)) * 3 + 1).astype(dtype)
    w, b = rng.standard_normal(32).astype(dtype), rng.standard_normal(32).astype(dtype)
    up = rng.standard_normal((40, 6, 32)).astype(dtype)
    ours = [cr.tensor(a, requires_grad=True) for a in (x, w, b)]
    out = cr.nn.functional.layer_norm(ours[0].transpose(0, 1), (32,), ours[1], ours[2])
    out.backward(cr.tensor(up))
    wide = np.float32 if dtype == np.float16 else dtype  # PyTorch's CPU half: as float32
    theirs = [torch.tensor(a.astype(wide), requires_grad=True) for a in (x, w, b)]
    expected = torch.nn.functional.layer_norm(theirs[0].transpose(0, 1), (32,), *theirs[1:])
    expected.backward(torch.tensor(up.astype(wide)))
    assert out.dtype == cr.tensor(x).dtype
    tol = {np.float32: 1e-5, np.float64: 1e-12, np.float16: 2e-2}[dtype]
    np.testing.assert_allclose(out.numpy(), expected.detach().numpy(), rtol=tol, atol=tol)
    for a, t in zip(ours, theirs, strict=True):
        assert a.grad.dtype == a.dtype
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=tol, atol=tol * 10)


def test_layer_norm_checks_its_weight_shape():
    with pytest.raises(ValueError, match=r"layer_norm: weight must have the normalized shape"):
        cr.nn.functional.layer_norm(cr.randn(2, 4), (4,), cr.ones(3))
