"""The pools of every rank against PyTorch's modules (outputs, indices, gradients, reprs),
unbatched inputs, dtype rules and the errors that name the op."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.tolerances import tol


def assert_close(ours: cr.Tensor, theirs: torch.Tensor) -> None:
    want = theirs.detach().numpy()
    np.testing.assert_allclose(ours.detach().numpy(), want, **tol(want.dtype))


rng = np.random.default_rng(0)

MODULES = [
    ("MaxPool1d", (3,), {"stride": 2, "padding": 1, "ceil_mode": True}, (2, 3, 9)),
    ("MaxPool3d", ((2, 3, 2),), {"stride": (1, 2, 2), "dilation": (2, 1, 1)}, (2, 2, 5, 6, 5)),
    ("AvgPool1d", (3,), {"stride": 2, "padding": 1, "count_include_pad": False}, (2, 3, 9)),
    ("AvgPool3d", (2,), {"ceil_mode": True, "divisor_override": 3}, (2, 2, 5, 5, 5)),
    ("AvgPool2d", (3,), {"stride": 2, "padding": 1}, (3, 7, 6)),
    ("AdaptiveAvgPool1d", (4,), {}, (2, 3, 9)),
    ("AdaptiveAvgPool3d", ((2, None, 3),), {}, (2, 3, 5, 4, 7)),
    ("AdaptiveMaxPool1d", (4,), {}, (2, 3, 9)),
    ("AdaptiveMaxPool2d", ((3, 4),), {}, (3, 7, 9)),
    ("AdaptiveMaxPool3d", (2,), {}, (2, 3, 5, 4, 7)),
    ("LPPool1d", (2, 3), {"stride": 2}, (2, 3, 9)),
    ("LPPool2d", (1.5, (2, 3)), {"ceil_mode": True}, (2, 3, 7, 8)),
]


@pytest.mark.parametrize("name, args, kwargs, shape", MODULES, ids=[m[0] for m in MODULES])
def test_pool_modules_match_torch(name: str, args: tuple, kwargs: dict, shape: tuple) -> None:
    x = rng.random(shape) + 0.1  # positive: the lp pools' powers are real
    ours, theirs = getattr(cr.nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    xc, xt = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    yc, yt = ours(xc), theirs(xt)
    assert_close(yc, yt)
    g = rng.standard_normal(yt.shape)
    yc.backward(cr.tensor(g))
    yt.backward(torch.tensor(g))
    assert_close(xc.grad, xt.grad)


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_max_pool_indices_round_trip_through_unpool(rank: int) -> None:
    shape = (2, 3, 6, 5, 7)[: rank + 2]
    x = rng.standard_normal(shape)
    kw = {"kernel_size": 2, "stride": 2, "padding": 1}
    outs = []
    for m, t in (
        (cr, cr.tensor(x, requires_grad=True)),
        (torch, torch.tensor(x, requires_grad=True)),
    ):
        pool = getattr(m.nn, f"MaxPool{rank}d")(**kw, return_indices=True)
        unpool = getattr(m.nn, f"MaxUnpool{rank}d")(**kw)
        y, idx = pool(t)
        out = unpool(y, idx, output_size=t.shape)
        out.backward(m.ones_like(out))
        outs.append((idx, out, t.grad, repr(unpool)))
    assert np.array_equal(outs[0][0].numpy(), outs[1][0].numpy())
    assert outs[0][0].dtype == cr.int64
    assert_close(outs[0][1], outs[1][1])
    assert_close(outs[0][2], outs[1][2])
    assert outs[0][3] == outs[1][3]


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_adaptive_max_pool_indices_match_torch(rank: int) -> None:
    shape = (2, 3, 7, 5, 6)[: rank + 2]
    x = rng.standard_normal(shape)
    x[..., 0] = x[..., 1]  # ties: the first in row-major order wins, as PyTorch
    f = f"adaptive_max_pool{rank}d"
    yc, ic = getattr(cr.nn.functional, f)(cr.tensor(x[0]), 3, return_indices=True)
    yt, it = getattr(torch.nn.functional, f)(torch.tensor(x[0]), 3, return_indices=True)
    assert_close(yc, yt)
    assert np.array_equal(ic.numpy(), it.numpy())


def test_integer_rules_follow_pytorch() -> None:
    f = cr.nn.functional
    x = cr.tensor(np.arange(2 * 3 * 4 * 4 * 4).reshape(2, 3, 4, 4, 4))
    assert f.max_pool3d(x, 2).dtype == cr.int64
    out = f.avg_pool3d(x, 2)  # int64: sums divided toward zero
    want = torch.nn.functional.avg_pool3d(torch.tensor(x.numpy()), 2)
    assert np.array_equal(out.numpy(), want.numpy())
    with pytest.raises(TypeError, match="max_pool1d: needs a floating-point tensor"):
        f.max_pool1d(cr.tensor([[1, 2, 3]]), 2)
    with pytest.raises(TypeError, match="adaptive_max_pool2d: needs a floating-point tensor"):
        f.adaptive_max_pool2d(cr.tensor([[[1, 2], [3, 4]]]), 1)


def test_errors_name_the_op_and_shapes() -> None:
    f = cr.nn.functional
    x = cr.tensor(rng.standard_normal((2, 3, 4, 4, 4)))
    with pytest.raises(ValueError, match=r"max_pool3d: expected a 4-D \(unbatched\) or 5-D"):
        f.max_pool3d(x[0, 0], 2)
    with pytest.raises(ValueError, match="avg_pool3d: padding must be between 0 and half"):
        f.avg_pool3d(x, 2, padding=2)
    with pytest.raises(ValueError, match="adaptive_avg_pool3d: the input's spatial dims must not"):
        f.adaptive_avg_pool3d(x[:, :, :0], 2)
    with pytest.raises(
        TypeError, match="adaptive_max_pool3d: output_size must be an int or a tuple of 3"
    ):
        f.adaptive_max_pool3d(x, (2, 2))
    y, idx = f.max_pool3d(x, 2, return_indices=True)
    with pytest.raises(ValueError, match=r"max_unpool3d: output_size \(9, 4, 4\) is out of reach"):
        f.max_unpool3d(y, idx, 2, output_size=(9, 4, 4))
    with pytest.raises(ValueError, match="max_unpool3d: indices must be an int64 tensor"):
        f.max_unpool3d(y, idx.float(), 2)
    with pytest.raises(ValueError, match=r"max_unpool3d: indices must lie in \[0, 8\)"):
        f.max_unpool3d(y, idx, 1)


def test_empty_batch_and_max_pool_nan() -> None:
    f = cr.nn.functional
    empty = np.zeros((0, 2, 4, 4, 4))
    for name, args in (("max_pool3d", (2,)), ("avg_pool3d", (2,)), ("adaptive_avg_pool3d", (2,))):
        ours = getattr(f, name)(cr.tensor(empty), *args)
        assert ours.shape == getattr(torch.nn.functional, name)(torch.tensor(empty), *args).shape
    x = rng.standard_normal((1, 1, 6))
    x[0, 0, 2] = np.nan
    assert_close(f.max_pool1d(cr.tensor(x), 2), torch.nn.functional.max_pool1d(torch.tensor(x), 2))


@pytest.mark.parametrize(
    ("rank", "pools"),
    [(1, ("MaxPool1d", "MaxUnpool1d")), (2, ("MaxPool2d", "MaxUnpool2d")),
     (3, ("MaxPool3d", "MaxUnpool3d"))],
)  # fmt: skip
def test_max_unpool_modules_match_torch(rank, pools):
    """MaxPoolNd(return_indices=True) then MaxUnpoolNd, as the modules, against PyTorch's."""
    shape = (2, 3) + (4,) * rank
    x = np.random.default_rng(rank).standard_normal(shape)
    outs = []
    for lib in (cr, torch):
        pool = getattr(lib.nn, pools[0])(2, return_indices=True)
        unpool = getattr(lib.nn, pools[1])(2)
        t = lib.tensor(x, requires_grad=True)
        y, idx = pool(t)
        z = unpool(y, idx)
        z.sum().backward()
        outs.append((z.detach().numpy(), t.grad.numpy(), repr(unpool)))
    np.testing.assert_allclose(outs[0][0], outs[1][0])
    np.testing.assert_allclose(outs[0][1], outs[1][1])
    assert outs[0][2] == outs[1][2]


@pytest.mark.parametrize(
    "pool",
    [
        lambda m, x, s: m.nn.functional.max_pool2d(x, 2, stride=s),
        lambda m, x, s: m.nn.functional.avg_pool2d(x, 2, stride=s),
        lambda m, x, s: m.nn.functional.lp_pool2d(x, 2.0, 2, stride=s),
        lambda m, x, s: m.nn.MaxPool2d(2, stride=s)(x),
        lambda m, x, s: m.nn.AvgPool1d(2, stride=s)(x[0]),
    ],
)
def test_a_numpy_integer_is_a_stride(pool) -> None:
    """A stride read from a NumPy array (np.int64) is taken as PyTorch takes it; it is not
    compared with () as the 'no stride given' spellings are."""
    x = np.arange(36, dtype=np.float32).reshape(1, 1, 6, 6)
    ours = pool(cr, cr.tensor(x), np.int64(2))
    theirs = pool(torch, torch.tensor(x), np.int64(2))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


WITH_INDICES = [
    ("max_pool1d", (3, 2, 1), {"ceil_mode": True}, (2, 3, 9)),
    ("max_pool2d", (3, 2, 1), {}, (3, 7, 6)),
    ("max_pool3d", (2,), {"dilation": (2, 1, 1), "ceil_mode": True}, (2, 5, 4, 5)),
    ("adaptive_max_pool1d", (4,), {}, (2, 3, 9)),
    ("adaptive_max_pool3d", ((2, 3, 2),), {}, (2, 2, 5, 4, 5)),
]


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize(
    "name, args, kwargs, shape", WITH_INDICES, ids=[w[0] for w in WITH_INDICES]
)
def test_indices_off_the_graph_and_on_it_match_torch(
    name: str, args: tuple, kwargs: dict, shape: tuple, fast: bool
) -> None:
    """A pool's maxima and indices where no node records (one pass) and where one does."""
    x = rng.standard_normal(shape)
    x[(0,) * len(shape)] = np.nan  # a NaN wins its windows
    want = getattr(torch.nn.functional, name)(torch.tensor(x), *args, **kwargs, return_indices=True)
    with contextlib.nullcontext() if fast else cr.fastpath.disabled():
        for grad in (False, True):
            t = cr.tensor(x, requires_grad=grad)
            got = getattr(cr.nn.functional, name)(t, *args, **kwargs, return_indices=True)
            np.testing.assert_array_equal(got[0].detach().numpy(), want[0].numpy())
            np.testing.assert_array_equal(got[1].numpy(), want[1].numpy())
            assert tuple(got[0].shape) == tuple(want[0].shape)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "shape, kwargs",
    [
        ((2, 2, 5, 6, 5), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
        ((2, 2, 5, 6, 5), dict(kernel_size=3, stride=2, padding=1, count_include_pad=False)),
        ((2, 4, 5, 6), {"kernel_size": (1, 2, 3), "divisor_override": 5}),  # unbatched
        ((1, 2, 12, 12, 12), {"kernel_size": 2}),  # a plane past the one product's bound
    ],
)
def test_avg_pool3d_by_one_product_or_by_adds_matches_torch(shape, kwargs, dtype) -> None:
    """avg_pool3d of a small plane (one product by each box's weights, with the fast path on)
    and of a larger one (an add per window offset): values and gradients as PyTorch's."""
    x = np.random.default_rng(7).standard_normal(shape).astype(dtype)
    ours, theirs = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out = cr.nn.functional.avg_pool3d(ours, **kwargs)
    expected = torch.nn.functional.avg_pool3d(theirs, **kwargs)
    assert out.dtype == ours.dtype
    np.testing.assert_allclose(out.numpy(), expected.detach().numpy(), **tol(dtype))
    g = np.random.default_rng(8).standard_normal(out.shape).astype(dtype)
    out.backward(cr.tensor(g))
    expected.backward(torch.tensor(g))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), **tol(dtype))
