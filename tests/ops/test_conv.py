"""Convolution and pooling against PyTorch (values and gradients with random upstream
gradients, float64 and float32), central finite differences, second derivatives, modules and
error messages."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import chainrule as cr
import chainrule.nn.functional as F
from chainrule.ops import conv as conv_ops
from chainrule.testing import gradcheck, gradgradcheck
from tests.helpers import assert_nan_and_inf_upstream_like_torch
from tests.tolerances import LAYER, tol
from tests.twins import copy_into

# PyTorch warns that 'same' with an even kernel copies its input; so do we, by design
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same'")


def run(ours, theirs, arrays, dtype, rng, **kwargs):
    """Apply both functions to the same arrays; compare the values and the gradients of
    every array for one random upstream gradient."""
    limits = tol(dtype, LAYER)
    xs = [cr.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    ts = [torch.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    out, expected = ours(*xs, **kwargs), theirs(*ts, **kwargs)
    assert out.shape == tuple(expected.shape)
    assert out.dtype == dtype
    np.testing.assert_allclose(out.numpy(), expected.detach().numpy(), **limits)
    g = rng.standard_normal(out.shape).astype(dtype)
    out.backward(cr.tensor(g))
    expected.backward(torch.tensor(g))
    for x, t in zip(xs, ts, strict=True):
        assert x.grad.shape == x.shape and x.grad.dtype == x.dtype
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), **limits)


# ---------------------------------------------------------------------------------------
# conv2d / conv1d: a table of every option and their combinations.

# (input shape, weight shape, bias, options)
CONV2D = [
    ((2, 3, 7, 6), (4, 3, 3, 3), True, {}),
    ((2, 3, 7, 6), (4, 3, 3, 3), True, {"stride": 2}),
    ((2, 3, 7, 6), (4, 3, 3, 3), True, {"padding": 1}),
    ((2, 3, 7, 6), (4, 3, 3, 3), False, {"padding": (0, 2)}),  # padding on one axis
    ((2, 3, 7, 6), (4, 3, 3, 3), True, {"padding": (2, 0), "stride": (1, 2)}),
    ((2, 3, 9, 8), (4, 3, 3, 3), True, {"dilation": 2}),
    ((2, 3, 9, 8), (4, 3, 2, 3), True, {"dilation": (2, 1), "stride": (2, 1), "padding": 1}),
    ((2, 3, 7, 9), (5, 3, 3, 1), True, {}),  # rectangular kernels
    ((2, 3, 7, 9), (5, 3, 2, 5), True, {"stride": (2, 3), "padding": (1, 2)}),
    ((2, 4, 8, 7), (6, 2, 3, 3), True, {"groups": 2}),
    ((2, 4, 9, 9), (6, 2, 3, 2), True, {"groups": 2, "dilation": 2, "stride": 2, "padding": 1}),
    ((2, 6, 9, 8), (6, 2, 3, 3), True, {"groups": 3, "stride": (2, 1), "dilation": (1, 2)}),
    ((2, 4, 6, 6), (4, 1, 3, 3), True, {"groups": 4, "padding": 1}),  # depthwise
    ((2, 4, 6, 6), (8, 1, 3, 3), False, {"groups": 4, "stride": 2}),  # depthwise, multiplier 2
    ((2, 3, 7, 6), (4, 3, 3, 3), True, {"padding": "same"}),
    ((2, 3, 7, 6), (4, 3, 4, 2), True, {"padding": "same"}),  # even kernel: asymmetric padding
    ((2, 3, 9, 8), (4, 3, 3, 2), True, {"padding": "same", "dilation": (2, 3)}),
    ((2, 4, 7, 6), (4, 2, 2, 3), True, {"padding": "same", "groups": 2}),
    ((2, 3, 7, 6), (4, 3, 3, 3), True, {"padding": "valid"}),
    ((2, 3, 5, 4), (4, 3, 5, 4), True, {}),  # the kernel covers the input: a 1x1 output
    ((2, 3, 3, 2), (4, 3, 5, 4), True, {"padding": 1}),  # ... the padded input
    ((2, 3, 8, 7), (4, 3, 3, 2), True, {"stride": 3}),  # rows and columns left unread
    ((1, 2, 4, 5), (3, 2, 2, 2), True, {"padding": 3}),  # padding wider than the kernel
    ((3, 5, 4, 4), (2, 5, 1, 1), True, {}),  # 1x1 convolution
    ((3, 7, 6), (4, 3, 3, 3), True, {"padding": 1, "stride": 2}),  # unbatched
    ((0, 4, 6, 5), (6, 2, 3, 3), True, {"groups": 2}),  # an empty batch
]


def conv_arrays(rng, x_shape, w_shape, bias):
    arrays = [rng.standard_normal(x_shape), rng.standard_normal(w_shape)]
    return arrays + [rng.standard_normal(w_shape[0])] if bias else arrays


def leaves(arrays):
    return [cr.tensor(a, requires_grad=True) for a in arrays]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("x_shape, w_shape, bias, options", CONV2D)
def test_conv2d_matches_torch(x_shape, w_shape, bias, options, dtype):
    rng = np.random.default_rng(0)
    arrays = conv_arrays(rng, x_shape, w_shape, bias)
    run(F.conv2d, TF.conv2d, arrays, dtype, rng, **options)


CONV1D = [
    ((2, 3, 9), (4, 3, 3), True, {}),
    ((2, 3, 9), (4, 3, 3), False, {"stride": 2, "padding": 1}),
    ((2, 4, 11), (6, 2, 2), True, {"groups": 2, "dilation": 3, "stride": 2, "padding": 2}),
    ((2, 3, 8), (4, 3, 4), True, {"padding": "same", "dilation": 2}),
    ((2, 3, 8), (4, 3, 4), True, {"padding": "valid"}),
    ((3, 9), (4, 3, 3), True, {"padding": (1,)}),  # unbatched
    ((0, 3, 9), (4, 3, 3), True, {}),  # an empty batch
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("x_shape, w_shape, bias, options", CONV1D)
def test_conv1d_matches_torch(x_shape, w_shape, bias, options, dtype):
    rng = np.random.default_rng(1)
    arrays = conv_arrays(rng, x_shape, w_shape, bias)
    run(F.conv1d, TF.conv1d, arrays, dtype, rng, **options)


# small planes in a batch several blocks long: with the fast path on, by blocks of images with
# the batch last (a block one image longer than the output's rows; the last one shorter)
SMALL_PLANES = [
    ((9, 4, 5, 6), (6, 2, 3, 3), {"groups": 2, "padding": 1}),
    ((11, 4, 4, 5, 4), (3, 4, 2, 3, 2), {"stride": (1, 2, 1), "padding": 1}),
    ((13, 3, 6), (4, 3, 2), {"dilation": 2, "padding": (2,)}),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("x_shape, w_shape, options", SMALL_PLANES)
def test_conv_of_small_planes_by_blocks_matches_torch(
    monkeypatch, x_shape, w_shape, options, dtype
):
    rank = len(x_shape) - 2
    reference = getattr(TF, f"conv{rank}d")
    outs = reference(torch.zeros(x_shape), torch.zeros(w_shape), **options).shape[2:]
    per_image = x_shape[1] * math.prod(w_shape[2:]) * math.prod(outs) * np.dtype(dtype).itemsize
    monkeypatch.setattr(conv_ops, "BLOCK_BYTES", per_image * (outs[-1] + 1))
    assert conv_ops.batch_block(np.zeros(x_shape, dtype), w_shape[2:], tuple(outs)) > 0
    rng = np.random.default_rng(5)
    arrays = conv_arrays(rng, x_shape, w_shape, True)
    run(getattr(F, f"conv{rank}d"), reference, arrays, dtype, rng, **options)


@pytest.mark.parametrize(
    "x_shape, w_shape, options",
    [
        ((1, 2, 5, 4), (3, 2, 3, 2), {"padding": 1}),
        ((2, 4, 5, 5), (2, 2, 2, 3), {"groups": 2, "stride": 2, "dilation": (1, 2)}),
    ],
)
def test_conv2d_finite_differences(x_shape, w_shape, options):
    rng = np.random.default_rng(2)
    x, w, b = leaves(conv_arrays(rng, x_shape, w_shape, True))
    assert gradcheck(lambda x, w, b: F.conv2d(x, w, b, **options), [x, w, b])


def test_conv2d_second_derivatives():
    """The backward is made of convolutions, so it can be differentiated again: against
    finite differences, and against PyTorch's double backward."""
    rng = np.random.default_rng(3)
    options = {"stride": 2, "padding": (1, 0), "dilation": (1, 2), "groups": 2}
    x, w, b = leaves(conv_arrays(rng, (1, 4, 5, 6), (2, 2, 2, 2), True))
    assert gradgradcheck(lambda x, w, b: F.conv2d(x, w, b, **options), [x, w, b])

    tx, tw = (
        torch.tensor(x.numpy(), requires_grad=True),
        torch.tensor(w.numpy(), requires_grad=True),
    )
    out, t_out = F.conv2d(x, w, **options), TF.conv2d(tx, tw, **options)
    g = rng.standard_normal(out.shape)
    gx, gw = cr.grad(out, [x, w], cr.tensor(g), create_graph=True)
    t_gx, t_gw = torch.autograd.grad(t_out, [tx, tw], torch.tensor(g), create_graph=True)
    u, v = rng.standard_normal(x.shape), rng.standard_normal(w.shape)
    hx, hw = cr.grad((gx * cr.tensor(u)).sum() + (gw * cr.tensor(v)).sum() ** 2, [x, w])
    t_hx, t_hw = torch.autograd.grad(
        (t_gx * torch.tensor(u)).sum() + (t_gw * torch.tensor(v)).sum() ** 2, [tx, tw]
    )
    np.testing.assert_allclose(hx.numpy(), t_hx.numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(hw.numpy(), t_hw.numpy(), rtol=1e-10, atol=1e-10)


def test_conv_third_derivative_of_weight_gradient():
    """Gradients of the gradient primitives' own gradients (ConvTranspose and
    ConvWeightGrad differentiated twice) still agree with finite differences."""
    rng = np.random.default_rng(4)
    x, w = leaves(conv_arrays(rng, (1, 2, 4, 4), (2, 2, 2, 2), False))

    def weight_grad_of_square(x, w):
        out = F.conv2d(x, w, padding=1, stride=2)
        (gw,) = cr.grad((out * out).sum(), [w], create_graph=True)
        return gw

    assert gradgradcheck(weight_grad_of_square, [x, w])


def test_conv2d_float32_stays_float32():
    x = cr.randn(2, 3, 6, 6, requires_grad=True)
    w = cr.randn(4, 3, 3, 3, requires_grad=True)
    b = cr.randn(4, requires_grad=True)
    out = F.conv2d(x, w, b, padding=1)
    out.backward(cr.ones_like(out))
    assert {t.dtype for t in (out, x.grad, w.grad, b.grad)} == {np.dtype(np.float32)}


# ---------------------------------------------------------------------------------------
# Pooling.

POOL = [
    (2, None, 0),
    (2, 1, 0),  # overlapping windows
    (3, 2, 1),
    ((3, 2), (1, 2), (1, 0)),
    ((2, 3), 2, (1, 1)),
    (3, 3, 0),  # the last rows and columns are left out
    (1, 1, 0),
    ((1, 3), (2, 1), (0, 1)),
]


def pool_input(rng, shape, ties):
    """Random numbers, or numbers from {0, 1, 2} (after relu, max pooling meets ties all the
    time), so tie-breaking is checked too."""
    if ties:
        return rng.integers(0, 3, shape).astype(np.float64)
    return rng.standard_normal(shape)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("kernel, stride, padding", POOL)
def test_max_pool2d_matches_torch(kernel, stride, padding, ties, dtype):
    rng = np.random.default_rng(5)
    x = pool_input(rng, (2, 3, 7, 8), ties)
    run(
        F.max_pool2d,
        TF.max_pool2d,
        [x],
        dtype,
        rng,
        kernel_size=kernel,
        stride=stride,
        padding=padding,
    )


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kernel, stride, padding", POOL)
def test_avg_pool2d_matches_torch(kernel, stride, padding, dtype):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 3, 7, 8))
    run(
        F.avg_pool2d,
        TF.avg_pool2d,
        [x],
        dtype,
        rng,
        kernel_size=kernel,
        stride=stride,
        padding=padding,
    )


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    "shape, size",
    [
        ((2, 3, 7, 8), 1),  # global average pooling
        ((2, 3, 8, 6), (4, 3)),  # windows that divide the input
        ((2, 3, 7, 8), (3, 5)),  # windows of uneven, overlapping sizes
        ((2, 3, 7, 8), (4, None)),  # None keeps the input size
        ((2, 3, 5, 4), (7, 6)),  # larger than the input
        ((3, 7, 8), 3),  # unbatched
    ],
)
def test_adaptive_avg_pool2d_matches_torch(shape, size, dtype):
    rng = np.random.default_rng(7)
    run(
        F.adaptive_avg_pool2d,
        TF.adaptive_avg_pool2d,
        [rng.standard_normal(shape)],
        dtype,
        rng,
        output_size=size,
    )


def test_unbatched_pools_match_torch():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((3, 7, 8))
    run(F.max_pool2d, TF.max_pool2d, [x], np.float64, rng, kernel_size=3, stride=2, padding=1)
    run(F.avg_pool2d, TF.avg_pool2d, [x], np.float64, rng, kernel_size=2)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: F.max_pool2d(x, 3, 2, 1),
        lambda x: F.max_pool2d(x, (2, 3), 1, (1, 0)),
        lambda x: F.avg_pool2d(x, 3, 2, 1),
        lambda x: F.adaptive_avg_pool2d(x, (2, 3)),
    ],
)
def test_pool_finite_differences_and_second_derivatives(fn):
    x = cr.tensor(np.random.default_rng(9).standard_normal((1, 2, 5, 6)), requires_grad=True)
    assert gradcheck(fn, [x])
    assert gradgradcheck(lambda x: fn(x) ** 2, [x])


# (kernel, options): dilation, ceil_mode and their mix with stride and padding, on 7x8 and
# 6x9 inputs, where rounding up adds a last, partial window or (ceil rule) does not.
MAX_POOL_OPTIONS = [
    (2, {"dilation": 2}),
    (3, {"dilation": (2, 1), "stride": 1, "padding": 1}),
    ((2, 3), {"dilation": (1, 2), "stride": (2, 1), "padding": (1, 1)}),
    (2, {"ceil_mode": True}),
    (3, {"stride": 2, "ceil_mode": True}),
    (3, {"stride": 2, "padding": 1, "ceil_mode": True}),  # a window would start in padding
    ((3, 2), {"stride": (3, 2), "padding": (1, 0), "ceil_mode": True}),
    (2, {"stride": 3, "dilation": 2, "padding": 1, "ceil_mode": True}),
]


@pytest.mark.parametrize("shape", [(2, 3, 7, 8), (1, 2, 6, 9)])
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("kernel, options", MAX_POOL_OPTIONS)
def test_max_pool2d_dilation_and_ceil_mode_match_torch(kernel, options, ties, shape):
    rng = np.random.default_rng(12)
    x = pool_input(rng, shape, ties)
    run(F.max_pool2d, TF.max_pool2d, [x], np.float64, rng, kernel_size=kernel, **options)


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize(
    "kernel, options", [(2, {}), (3, {"stride": 1, "padding": 1}), *MAX_POOL_OPTIONS]
)
def test_max_pool2d_indices_match_torch(kernel, options, ties):
    rng = np.random.default_rng(13)
    x = pool_input(rng, (2, 3, 7, 8), ties).astype(np.float32)
    out, idx = F.max_pool2d(cr.tensor(x), kernel, return_indices=True, **options)
    t_out, t_idx = TF.max_pool2d(torch.tensor(x), kernel, return_indices=True, **options)
    np.testing.assert_array_equal(out.numpy(), t_out.numpy())
    assert idx.dtype == np.int64
    np.testing.assert_array_equal(idx.numpy(), t_idx.numpy())
    # unbatched, and through the module
    out, idx = cr.nn.MaxPool2d(kernel, return_indices=True, **options)(cr.tensor(x[0]))
    t_out, t_idx = torch.nn.MaxPool2d(kernel, return_indices=True, **options)(torch.tensor(x[0]))
    np.testing.assert_array_equal(idx.numpy(), t_idx.numpy())
    np.testing.assert_array_equal(out.numpy(), t_out.numpy())
    # recorded: the indices come from the node's own offsets
    xs = cr.tensor(x, requires_grad=True)
    out, idx = F.max_pool2d(xs, kernel, return_indices=True, **options)
    t_out, t_idx = TF.max_pool2d(torch.tensor(x), kernel, return_indices=True, **options)
    assert out.grad_fn is not None
    np.testing.assert_array_equal(idx.numpy(), t_idx.numpy())


AVG_POOL_OPTIONS = [
    (3, {"padding": 1, "count_include_pad": False}),
    ((2, 3), {"stride": (1, 2), "padding": (1, 1), "count_include_pad": False}),
    (2, {"ceil_mode": True}),
    (3, {"stride": 2, "padding": 1, "ceil_mode": True}),
    (3, {"stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False}),
    ((3, 2), {"stride": (3, 2), "padding": (1, 0), "ceil_mode": True}),
    (3, {"stride": 2, "divisor_override": 4}),
    (2, {"padding": 1, "ceil_mode": True, "divisor_override": 3, "count_include_pad": False}),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(2, 3, 7, 8), (1, 2, 6, 9)])
@pytest.mark.parametrize("kernel, options", AVG_POOL_OPTIONS)
def test_avg_pool2d_options_match_torch(kernel, options, shape, dtype):
    rng = np.random.default_rng(14)
    x = rng.standard_normal(shape)
    run(F.avg_pool2d, TF.avg_pool2d, [x], dtype, rng, kernel_size=kernel, **options)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: F.max_pool2d(x, 2, 3, 1, dilation=2, ceil_mode=True),
        lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
    ],
)
def test_pool_options_finite_differences_and_second_derivatives(fn):
    x = cr.tensor(np.random.default_rng(15).standard_normal((1, 2, 6, 7)), requires_grad=True)
    assert gradcheck(fn, [x])
    assert gradgradcheck(lambda x: fn(x) ** 2, [x])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "shape, kernel, options",
    [
        ((1, 2, 5, 5), 3, {"stride": 2, "padding": 1}),
        ((2, 3, 4, 4), 2, {}),
        ((2, 3, 1, 8), (1, 3), {"stride": (1, 2), "padding": (0, 1), "ceil_mode": True}),
        ((1, 2, 6, 5), (2, 3), {"dilation": (2, 1), "padding": (1, 1), "ceil_mode": True}),
        ((2, 5, 4), 2, {"stride": 1}),  # unbatched
    ],
)
def test_max_pool2d_of_few_windows_off_the_graph_matches_torch(shape, kernel, options, dtype):
    """A pool that records nothing over a few windows (one take with the fast path on): its
    maxima as PyTorch's, a NaN winning its windows."""
    x = np.random.default_rng(6).standard_normal(shape).astype(dtype)
    x.reshape(-1)[[1, 7]] = np.nan
    out = F.max_pool2d(cr.tensor(x), kernel, **options)
    expected = TF.max_pool2d(torch.tensor(x), kernel, **options)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out.numpy(), expected.numpy())


def test_max_pool2d_propagates_nan():
    x = np.arange(16.0).reshape(1, 1, 4, 4)
    x[0, 0, 1, 0] = np.nan
    out = F.max_pool2d(cr.tensor(x), 2)
    expected = TF.max_pool2d(torch.tensor(x), 2)
    np.testing.assert_array_equal(out.numpy(), expected.numpy())


def test_max_pool_with_kernel_one_copies():
    x = cr.randn(1, 2, 3, 3)
    out = F.max_pool2d(x, 1)
    assert not np.shares_memory(out.numpy(), x.numpy())
    np.testing.assert_array_equal(out.numpy(), x.numpy())


# ---------------------------------------------------------------------------------------
# Modules.


@pytest.mark.parametrize(
    "ours, theirs, args, kwargs",
    [
        (cr.nn.Conv2d, torch.nn.Conv2d, (4, 6, 3), {"padding": 1, "groups": 2}),
        (cr.nn.Conv2d, torch.nn.Conv2d, (3, 5, (2, 3)), {"stride": (2, 1), "bias": False}),
        (cr.nn.Conv2d, torch.nn.Conv2d, (3, 4, 3), {"padding": "same", "dilation": 2}),
        (cr.nn.Conv1d, torch.nn.Conv1d, (3, 4, 3), {"stride": 2, "padding": 1}),
        (cr.nn.Conv1d, torch.nn.Conv1d, (4, 4, 2), {"groups": 4, "padding": "valid"}),
    ],
)
def test_conv_modules_match_torch(ours, theirs, args, kwargs):
    ref = theirs(*args, **kwargs).double()
    layer = ours(*args, **kwargs, dtype=cr.float64)
    assert repr(layer) == repr(ref)
    assert [(k, tuple(v.shape)) for k, v in layer.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in ref.state_dict().items()
    ]
    copy_into(layer, ref)
    spatial = (9,) if ours is cr.nn.Conv1d else (9, 8)
    x = np.random.default_rng(10).standard_normal((2, args[0], *spatial))
    out, expected = layer(cr.tensor(x)), ref(torch.tensor(x))
    np.testing.assert_allclose(out.numpy(), expected.detach().numpy(), rtol=1e-10, atol=1e-10)


PADDING_MODE_CASES = {  # (layer, torch layer, args, options, input shape)
    "2d": (cr.nn.Conv2d, torch.nn.Conv2d, (3, 4, 3), {"padding": 1}, (2, 3, 6, 5)),
    "2d-unbatched-stride": (
        cr.nn.Conv2d, torch.nn.Conv2d, (3, 4, (2, 3)), {"padding": (1, 2), "stride": 2}, (3, 6, 5)
    ),
    "2d-same-dilated": (
        cr.nn.Conv2d, torch.nn.Conv2d, (2, 4, 4), {"padding": "same", "dilation": (1, 2)},
        (1, 2, 7, 9),
    ),
    "1d": (cr.nn.Conv1d, torch.nn.Conv1d, (3, 2, 3), {"padding": 2}, (2, 3, 6)),
    "1d-unbatched-same-groups": (
        cr.nn.Conv1d, torch.nn.Conv1d, (2, 2, 4), {"padding": "same", "groups": 2}, (2, 7)
    ),
}  # fmt: skip


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize(
    "ours, theirs, args, kwargs, shape",
    list(PADDING_MODE_CASES.values()),
    ids=list(PADDING_MODE_CASES),
)
def test_conv_padding_modes_match_torch(ours, theirs, args, kwargs, shape, mode):
    ref = theirs(*args, **kwargs, padding_mode=mode).double()
    layer = ours(*args, **kwargs, padding_mode=mode, dtype=cr.float64)
    assert repr(layer) == repr(ref)
    copy_into(layer, ref)
    x = np.random.default_rng(16).standard_normal(shape)
    xc, xt = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, expected = layer(xc), ref(xt)
    np.testing.assert_allclose(out.numpy(), expected.detach().numpy(), rtol=1e-10, atol=1e-10)
    g = np.random.default_rng(17).standard_normal(out.shape)
    out.backward(cr.tensor(g))
    expected.backward(torch.tensor(g))
    np.testing.assert_allclose(xc.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(layer.weight.grad.numpy(), ref.weight.grad.numpy(), rtol=1e-10)


def test_conv_default_initialisation():
    """kaiming_uniform_(a=sqrt(5)) and PyTorch's bias rule: both uniform in +-1/sqrt(fan_in),
    fan_in = in_channels/groups * kernel size; float32 unless asked; seeded."""
    cr.manual_seed(0)
    layer = cr.nn.Conv2d(8, 64, (3, 5), groups=2)
    assert layer.weight.shape == (64, 4, 3, 5) and layer.bias.shape == (64,)
    assert layer.weight.dtype == np.float32 and layer.bias.dtype == np.float32
    bound = 1 / math.sqrt(4 * 3 * 5)
    for p in (layer.weight, layer.bias):
        assert np.abs(p.numpy()).max() <= bound
        assert np.abs(p.numpy()).max() > 0.9 * bound
    # uniform in +-bound has standard deviation bound / sqrt(3)
    assert abs(layer.weight.numpy().std() - bound / math.sqrt(3)) < 0.05 * bound
    cr.manual_seed(0)
    again = cr.nn.Conv2d(8, 64, (3, 5), groups=2)
    np.testing.assert_array_equal(again.weight.numpy(), layer.weight.numpy())
    assert [name for name, _ in cr.nn.Conv1d(2, 3, 1, bias=False).named_parameters()] == ["weight"]


@pytest.mark.parametrize(
    "ours, theirs, args",
    [
        (cr.nn.MaxPool2d, torch.nn.MaxPool2d, (3, 2, 1)),
        (cr.nn.MaxPool2d, torch.nn.MaxPool2d, (3, 2, 1, 2, False, True)),
        (cr.nn.AvgPool2d, torch.nn.AvgPool2d, ((2, 3), None, (1, 1))),
        (cr.nn.AvgPool2d, torch.nn.AvgPool2d, (3, 2, 1, True, False, 5)),
        (cr.nn.AdaptiveAvgPool2d, torch.nn.AdaptiveAvgPool2d, ((3, None),)),
    ],
)
def test_pool_modules_match_torch(ours, theirs, args):
    layer, ref = ours(*args), theirs(*args)
    assert repr(layer) == repr(ref)
    assert list(layer.parameters()) == []
    x = np.random.default_rng(11).standard_normal((2, 3, 7, 8))
    np.testing.assert_allclose(
        layer(cr.tensor(x)).numpy(), ref(torch.tensor(x)).numpy(), atol=1e-12
    )


def test_small_cnn_trains_like_torch():
    """A conv - relu - pool - linear model with the same weights gives the same loss and the
    same gradients as PyTorch's."""
    rng = np.random.default_rng(12)
    nn, tnn = cr.nn, torch.nn
    ours = nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(4, 6, 3, padding=1),
        nn.ReLU(),
        nn.AvgPool2d(2),
        nn.Flatten(),
        nn.Linear(6 * 2 * 2, 3),
    ).to(cr.float64)
    theirs = tnn.Sequential(
        tnn.Conv2d(1, 4, 3, padding=1),
        tnn.ReLU(),
        tnn.MaxPool2d(2),
        tnn.Conv2d(4, 6, 3, padding=1),
        tnn.ReLU(),
        tnn.AvgPool2d(2),
        tnn.Flatten(),
        tnn.Linear(6 * 2 * 2, 3),
    ).double()
    copy_into(ours, theirs)
    x, y = rng.standard_normal((5, 1, 8, 8)), rng.integers(0, 3, 5)
    loss = F.cross_entropy(ours(cr.tensor(x)), cr.tensor(y))
    t_loss = TF.cross_entropy(theirs(torch.tensor(x)), torch.tensor(y))
    loss.backward()
    t_loss.backward()
    assert abs(loss.item() - t_loss.item()) < 1e-12
    t_params = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), t_params[name].grad.numpy(), atol=1e-12)


# ---------------------------------------------------------------------------------------
# A convolution followed by a ReLU in a Sequential.


FUSED_CASES = {  # layer, torch layer, args, options, input shape
    "2d": (cr.nn.Conv2d, torch.nn.Conv2d, (3, 4, 3), {"padding": 1}, (2, 3, 6, 5)),
    "2d-unbatched-groups-stride": (
        cr.nn.Conv2d, torch.nn.Conv2d, (4, 6, 3), {"groups": 2, "stride": 2}, (4, 7, 7)
    ),
    "2d-no-bias-reflect": (
        cr.nn.Conv2d, torch.nn.Conv2d, (2, 3, 3),
        {"bias": False, "padding": 1, "padding_mode": "reflect"}, (2, 2, 5, 5),
    ),
    "1d": (cr.nn.Conv1d, torch.nn.Conv1d, (3, 4, 3), {"padding": "same"}, (2, 3, 8)),
    "2d-empty-batch": (cr.nn.Conv2d, torch.nn.Conv2d, (3, 4, 3), {}, (0, 3, 5, 5)),
}  # fmt: skip


def fused_pair(ours, theirs, args, kwargs):
    ref = torch.nn.Sequential(theirs(*args, **kwargs), torch.nn.ReLU()).double()
    model = cr.nn.Sequential(ours(*args, **kwargs, dtype=cr.float64), cr.nn.ReLU())
    copy_into(model, ref)
    return model, ref


@pytest.mark.parametrize(
    "ours, theirs, args, kwargs, shape", list(FUSED_CASES.values()), ids=list(FUSED_CASES)
)
def test_sequential_conv_relu_matches_torch(ours, theirs, args, kwargs, shape):
    model, ref = fused_pair(ours, theirs, args, kwargs)
    rng = np.random.default_rng(18)
    x = rng.standard_normal(shape)
    xc, xt = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, expected = model(xc), ref(xt)
    assert out.grad_fn.op == "Relu"
    np.testing.assert_allclose(out.numpy(), expected.detach().numpy(), rtol=1e-10, atol=1e-10)
    g = rng.standard_normal(out.shape)
    out.backward(cr.tensor(g))
    expected.backward(torch.tensor(g))
    np.testing.assert_allclose(xc.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-10)
    for p, q in zip(model.parameters(), ref.parameters(), strict=True):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.filterwarnings("ignore:invalid value encountered")  # inf - inf in the products
@pytest.mark.parametrize("held", [True, False], ids=["gradient-given", "gradient-from-an-op"])
def test_sequential_conv_relu_keeps_nan_and_inf_out_of_the_masked_gradient(held):
    """Where relu's output is 0, PyTorch's gradient is 0 even for a NaN or inf upstream."""
    model, ref = fused_pair(*FUSED_CASES["2d"][:4])
    x = np.random.default_rng(19).standard_normal((2, 3, 6, 5))
    assert_nan_and_inf_upstream_like_torch(model, ref, x, held)


def test_sequential_conv_relu_second_derivatives():
    model, _ = fused_pair(*FUSED_CASES["2d-unbatched-groups-stride"][:4])
    x = cr.tensor(np.random.default_rng(20).standard_normal((4, 5, 5)), requires_grad=True)
    params = list(model.parameters())
    assert gradcheck(lambda x, *ps: model(x), [x, *params])
    assert gradgradcheck(lambda x, *ps: model(x), [x, *params])


# ---------------------------------------------------------------------------------------
# Errors: ValueError naming the shapes.


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: F.conv2d(cr.randn(2, 3, 8, 8), cr.randn(4, 2, 3, 3)),
            r"conv2d: the input has 3 channels but the weight expects 2 "
            r"\(2 per group x 1 groups\); got input shape \(2, 3, 8, 8\) and weight shape "
            r"\(4, 2, 3, 3\)",
        ),
        (
            lambda: F.conv2d(cr.randn(2, 4, 8, 8), cr.randn(6, 2, 3, 3), groups=3),
            r"conv2d: groups=3 must divide both the input's 4 channels and the weight's 6 output "
            r"channels; got input shape \(2, 4, 8, 8\) and weight shape \(6, 2, 3, 3\)",
        ),
        (
            lambda: F.conv2d(cr.randn(2, 4, 8, 8), cr.randn(6, 1, 3, 3), groups=4),
            r"conv2d: groups=4 must divide .* output channels",
        ),
        (
            lambda: F.conv2d(cr.randn(1, 1, 4, 4), cr.randn(1, 1, 5, 3), padding=(0, 1)),
            r"conv2d: the kernel \(5, 3\) \(spanning \(5, 3\) with dilation\) is larger than the "
            r"padded input \(4, 6\); got input shape \(1, 1, 4, 4\), weight shape \(1, 1, 5, 3\) "
            r"and padding \(\(0, 0\), \(1, 1\)\)",
        ),
        (
            lambda: F.conv2d(cr.randn(1, 1, 4, 4), cr.randn(1, 1, 3, 3), dilation=2),
            r"conv2d: the kernel \(3, 3\) \(spanning \(5, 5\) with dilation\) is larger",
        ),
        (
            lambda: F.conv1d(cr.randn(1, 2, 4), cr.randn(1, 3, 2)),
            r"conv1d: the input has 2 channels but the weight expects 3",
        ),
        (
            lambda: F.conv2d(cr.randn(1, 2, 4, 4), cr.randn(3, 2, 2, 2), cr.randn(2)),
            r"conv2d: bias must have shape \(3,\); got bias shape \(2,\)",
        ),
        (
            lambda: F.conv2d(cr.randn(3, 4, 4), cr.randn(1, 2, 3, 3)),
            r"conv2d: the input has 3 channels .*; got input shape \(3, 4, 4\)",
        ),  # unbatched
        (
            lambda: F.conv2d(cr.randn(4, 4), cr.randn(1, 1, 3, 3)),
            r"conv2d: expected a 3-D \(unbatched\) or 4-D \(batched\) input; got shape \(4, 4\)",
        ),
        (
            lambda: F.conv2d(cr.randn(1, 1, 4, 4), cr.randn(1, 1, 3)),
            r"conv2d: weight must have 4 dims .*; got weight shape \(1, 1, 3\)",
        ),
        (
            lambda: F.conv2d(cr.randn(1, 1, 4, 4), cr.randn(1, 1, 3, 3), padding="same", stride=2),
            r"conv2d: padding='same' needs stride 1; got stride \(2, 2\)",
        ),
        (
            lambda: F.conv2d(cr.randn(1, 1, 4, 4), cr.randn(1, 1, 3, 3), padding="full"),
            r"conv2d: padding must be 'valid', 'same', an int or a tuple; got 'full'",
        ),
        (
            lambda: F.conv2d(cr.randn(1, 1, 4, 4), cr.randn(1, 1, 3, 3), stride=0),
            r"conv2d: stride must be positive; got \(0, 0\)",
        ),
        (
            lambda: F.conv2d(cr.randn(1, 1, 4, 4), cr.randn(1, 1, 3, 3), padding=-1),
            r"conv2d: padding must be non-negative; got \(-1, -1\)",
        ),
        (
            lambda: F.conv2d(cr.randn(1, 1, 4, 4), cr.randn(1, 1, 3, 3), groups=0),
            r"conv2d: groups must be a positive int; got 0",
        ),
        (
            lambda: F.max_pool2d(cr.randn(1, 1, 4, 4), 2, padding=2),
            r"max_pool2d: padding must be between 0 and half the kernel size; got padding \(2, 2\) "
            r"and kernel_size \(2, 2\)",
        ),
        (
            lambda: F.max_pool2d(cr.randn(1, 1, 2, 5), 3),
            r"max_pool2d: the kernel \(3, 3\) .* is larger than the padded input \(2, 5\); got "
            r"input shape \(1, 1, 2, 5\)",
        ),
        (
            lambda: F.avg_pool2d(cr.randn(1, 2, 5), 3),
            r"avg_pool2d: the kernel \(3, 3\) .* larger than the padded input \(2, 5\); got input "
            r"shape \(1, 2, 5\)",
        ),  # unbatched
        (
            lambda: F.avg_pool2d(cr.randn(1, 1, 4, 4), (2, 0)),
            r"avg_pool2d: kernel_size must be positive; got \(2, 0\)",
        ),
        (
            lambda: F.max_pool2d(cr.randn(1, 1, 4, 4), 2, dilation=(1, 0)),
            r"max_pool2d: dilation must be positive; got \(1, 0\)",
        ),
        (
            lambda: F.max_pool2d(cr.randn(1, 1, 4, 4), 2, dilation=4),
            r"max_pool2d: the kernel \(2, 2\) \(spanning \(5, 5\) with dilation\) is larger than "
            r"the padded input \(4, 4\)",
        ),
        (
            lambda: F.avg_pool2d(cr.randn(1, 1, 4, 4), 2, divisor_override=0),
            r"avg_pool2d: divisor_override must be a positive int; got 0",
        ),
        (
            lambda: F.adaptive_avg_pool2d(cr.randn(1, 1, 4, 4), 0),
            r"adaptive_avg_pool2d: output_size must be positive; got \(0, 0\)",
        ),
        (
            lambda: cr.nn.Conv2d(4, 6, 3, groups=4),
            r"Conv2d: groups=4 must divide both in_channels \(4\) and out_channels \(6\)",
        ),
        (
            lambda: cr.nn.Conv2d(4, 6, 3, padding_mode="wrap"),
            r"Conv2d: padding_mode must be one of 'zeros', 'reflect', 'replicate', 'circular'; "
            r"got 'wrap'",
        ),
        (
            lambda: cr.nn.Conv2d(1, 1, 3, padding=3, padding_mode="reflect")(cr.randn(1, 1, 3, 3)),
            r"pad: mode='reflect' needs each padding smaller than the size of the dim it pads",
        ),
        (
            lambda: cr.nn.Conv2d(4, 6, 3, padding="same", stride=2),
            r"Conv2d: padding='same' needs stride 1",
        ),
        (
            lambda: cr.nn.Conv2d(2, 3, 3)(cr.randn(1, 3, 5, 5)),
            r"Conv2d: the input has 3 channels but the weight expects 2",
        ),
    ],
)
def test_bad_arguments_raise_value_error_naming_shapes(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: F.conv2d(cr.randn(1, 1, 4, 4), cr.randn(1, 1, 3, 3), stride=(1, 2, 3)),
            r"conv2d: stride must be an int or a tuple of 2 ints; got \(1, 2, 3\)",
        ),
        (
            lambda: F.conv2d(cr.randn(1, 1, 4, 4), cr.randn(1, 1, 3, 3, dtype=cr.float64)),
            r"conv2d: input, weight and bias must share one dtype",
        ),
        (
            lambda: F.adaptive_avg_pool2d(cr.tensor(np.zeros((1, 1, 4, 4), dtype=np.int64)), 2),
            r"adaptive_avg_pool2d: needs a floating-point tensor; got dtype chainrule.int64",
        ),
    ],
)
def test_bad_kinds_raise_type_error(call, message):
    with pytest.raises(TypeError, match=message):
        call()


def test_functional_pad_is_where_pytorch_code_finds_it():
    assert F.pad is cr.pad
    x = np.random.default_rng(18).standard_normal((1, 2, 3, 4))
    for mode in ("constant", "reflect", "replicate", "circular"):
        ours = F.pad(cr.tensor(x), (1, 2, 2, 0), mode=mode)
        np.testing.assert_array_equal(
            ours.numpy(), TF.pad(torch.tensor(x), (1, 2, 2, 0), mode=mode)
        )
