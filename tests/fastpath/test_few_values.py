"""erf and exact GELU of a few values (math.erf value by value, with the fast path on): the
same values, slopes, dtypes and layouts as the arrays' path and PyTorch's, at the edges
(0-d, -0.0, inf, NaN, integers, the size where the path changes) and in both switch modes."""

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import fastpath
from chainrule.ops.special import FEW

EDGES = np.array([0.0, -0.0, 1e-30, -0.5, 1.0, -3.9, 4.2, 7.0, -9.0, np.inf, -np.inf], np.float64)


def run(fn, x, on):
    """fn's output and input gradient (a fixed upstream gradient) with the switch on or off."""
    before = fastpath.enabled()
    fastpath.set_enabled(on)
    try:
        t = cr.tensor(x, requires_grad=True)
        out = fn(t)
        up = np.linspace(-1.0, 2.0, out.numel()).reshape(out.shape).astype(x.dtype)
        out.backward(cr.tensor(up))
        return out.detach().numpy(), t.grad.numpy(), out.is_contiguous()
    finally:
        fastpath.set_enabled(before)


FNS = {
    "erf": (lambda t: t.erf(), torch.erf),
    "gelu": (lambda t: cr.nn.functional.gelu(t), torch.nn.functional.gelu),
}


@pytest.mark.parametrize("name", FNS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3, 4), (FEW,), (FEW + 1,)])
def test_few_values_agree_with_the_arrays_path_and_torch(name, dtype, shape):
    ours, theirs = FNS[name]
    size = int(np.prod(shape))
    x = np.resize(EDGES[np.isfinite(EDGES)], size).reshape(shape).astype(dtype)
    fast, plain = run(ours, x, True), run(ours, x, False)
    tol = {"rtol": 2e-6, "atol": 1e-7} if dtype == np.float32 else {"rtol": 1e-13, "atol": 1e-15}
    for f, p in zip(fast[:2], plain[:2], strict=True):
        assert f.dtype == p.dtype == dtype and f.shape == p.shape == shape
        np.testing.assert_allclose(f, p, **tol)
    assert fast[2] and plain[2]  # contiguous, as PyTorch's
    tx = torch.tensor(x, requires_grad=True)
    ty = theirs(tx)
    ty.backward(torch.tensor(np.linspace(-1.0, 2.0, size).reshape(shape).astype(dtype)))
    # PyTorch's float32 0.5 (1 + erf) cancels left of about -3: within |x| eps of it there
    near = tol if dtype == np.float64 else {"rtol": 2e-6, "atol": 1e-6}
    np.testing.assert_allclose(fast[0], ty.detach().numpy(), **near)
    np.testing.assert_allclose(fast[1], tx.grad.numpy(), **near)


def test_erf_of_few_edge_values_keeps_signs_infinities_and_nan():
    x = np.concatenate([EDGES, [np.nan]]).astype(np.float32)
    got = cr.tensor(x).erf().numpy()
    want = torch.erf(torch.tensor(x)).numpy()
    np.testing.assert_allclose(got[:-1], want[:-1], rtol=1.2e-7, atol=0)  # an ulp
    assert np.signbit(got[:2]).tolist() == [False, True]
    assert np.isnan(got[-1])


def test_erf_of_few_integers_is_float32_as_torch():
    got = cr.tensor([0, 1, -2, 3]).erf()
    want = torch.tensor([0, 1, -2, 3]).erf()
    assert got.dtype == cr.float32 and want.dtype == torch.float32
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-7)


def test_half_precision_keeps_the_arrays_path():
    x = cr.tensor([0.5, -1.5], dtype=cr.float16)
    assert x.erf().dtype == cr.float16
    np.testing.assert_allclose(
        x.erf().float().numpy(), torch.tensor([0.5, -1.5], dtype=torch.float16).erf().float()
    )


def test_gelu_of_a_0d_tensor_differentiates_twice_as_torch():
    x = cr.tensor(0.7, requires_grad=True)
    (g,) = cr.autograd.grad(cr.nn.functional.gelu(x), x, create_graph=True)
    (gg,) = cr.autograd.grad(g, x)
    tx = torch.tensor(0.7, requires_grad=True)
    (tg,) = torch.autograd.grad(torch.nn.functional.gelu(tx), tx, create_graph=True)
    (tgg,) = torch.autograd.grad(tg, tx)
    np.testing.assert_allclose([g.item(), gg.item()], [tg.item(), tgg.item()], rtol=1e-6)
    assert cr.nn.functional.gelu(x).grad_fn.name() == "GeluBackward0"
