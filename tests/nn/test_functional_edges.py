"""nn.functional at the edges PyTorch's op database samples: the softmax family's dtype=,
prelu of a 0-d input and at zeros, infinities and NaN, dropout of a 0-d tensor,
cosine_similarity of inputs that broadcast, avg_pool2d's padding as a 1-tuple,
conv_transpose2d's weight gradient with groups, and batch_norm of an empty 1-D input; each
against torch, gradients too."""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.tolerances import LAYER, tol


def _both(x: np.ndarray, grad: bool = True) -> tuple[Any, Any]:
    return cr.tensor(x, requires_grad=grad), torch.tensor(x, requires_grad=grad)


def _close(ours: Any, theirs: Any, dtype: str = "float64") -> None:
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), **tol(dtype, LAYER))


def _grads_close(ours: Any, theirs: Any, c_in: list, t_in: list) -> None:
    """Gradients of both results for one random upstream gradient, input by input."""
    g = np.random.default_rng(3).standard_normal(tuple(theirs.shape))
    t_grads = torch.autograd.grad(theirs, t_in, torch.tensor(g, dtype=theirs.dtype))
    c_grads = cr.grad(ours, c_in, cr.tensor(g).to(ours.dtype))
    for c, t in zip(c_grads, t_grads, strict=True):
        _close(c, t)


# -- the softmax family's dtype= ----------------------------------------------------------


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize(("source", "dtype"), [("float32", "float64"), ("int64", "float32")])
def test_softmax_family_casts_to_dtype_first(name: str, source: str, dtype: str) -> None:
    x = np.random.default_rng(0).integers(-3, 4, (2, 3, 4)).astype(source)
    ours = getattr(cr.nn.functional, name)(cr.tensor(x), dim=1, dtype=getattr(cr, dtype))
    theirs = getattr(torch.nn.functional, name)(torch.tensor(x), dim=1, dtype=getattr(torch, dtype))
    _close(ours, theirs, dtype)


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
def test_softmax_family_dtype_gradient_reaches_the_input(name: str) -> None:
    x = np.random.default_rng(1).standard_normal((3, 5)).astype(np.float32)
    (cx, tx) = _both(x)
    ours = getattr(cr.nn.functional, name)(cx, -1, dtype=cr.float64)
    theirs = getattr(torch.nn.functional, name)(tx, -1, dtype=torch.float64)
    _close(ours, theirs)
    _grads_close(ours, theirs, [cx], [tx])


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize("shape", [(4,), (2, 3), (2, 3, 4), (2, 3, 4, 5)])
def test_softmax_family_without_dim_picks_pytorchs_dim(name: str, shape: tuple) -> None:
    x = np.random.default_rng(2).standard_normal(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = getattr(torch.nn.functional, name)(torch.tensor(x))
    with pytest.warns(UserWarning, match=f"{name}: implicit dimension choice") as caught:
        ours = getattr(cr.nn.functional, name)(cr.tensor(x))
    _close(ours, theirs)
    assert caught[0].filename == __file__  # as PyTorch's: at the function's caller
    with pytest.warns(UserWarning) as caught:
        getattr(cr.nn.functional, name)(cr.tensor(x), _stacklevel=2)
    assert caught[0].filename.endswith("activation.py")  # one frame less: the function


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize(("shape", "dim"), [((33, 23), 1), ((33, 23), 0), ((), 0), ((), -1)])
def test_softmax_family_of_many_rows_and_of_0d(name: str, shape: tuple, dim: int) -> None:
    """The shapes whose max is taken by the shared reduction (2-D of 32 rows or more, 0-d),
    with its dims given as a tuple, or none for a 0-d input."""
    x = np.random.default_rng(3).standard_normal(shape)
    _close(
        getattr(cr.nn.functional, name)(cr.tensor(x), dim),
        getattr(torch, name)(torch.tensor(x), dim),
    )


def test_softmin_of_bool_is_refused_by_name_as_torch_refuses_it() -> None:
    with pytest.raises(RuntimeError):
        torch.nn.functional.softmin(torch.tensor([True]), 0, dtype=torch.float32)
    with pytest.raises(TypeError, match="softmin: not defined for bool tensors"):
        cr.nn.functional.softmin(cr.tensor([True]), 0, dtype=cr.float32)


# -- prelu --------------------------------------------------------------------------------


@pytest.mark.parametrize(("shape", "slopes"), [((), 1), ((), 0), ((5,), 1), ((2, 3, 4), 3)])
def test_prelu_shapes_and_gradients_as_torch(shape: tuple, slopes: int) -> None:
    rng = np.random.default_rng(4)
    x = rng.standard_normal(shape)
    w = rng.standard_normal((slopes,) if slopes else ())
    (cx, tx), (cw, tw) = _both(x), _both(w)
    ours, theirs = cr.nn.functional.prelu(cx, cw), torch.nn.functional.prelu(tx, tw)
    _close(ours, theirs)
    _grads_close(ours, theirs, [cx, cw], [tx, tw])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's on inf * 0, as its where's
@pytest.mark.parametrize("slope", [0.25, 1.0, 2.5, 0.0, -1.5, np.inf, np.nan])
def test_prelu_at_zeros_infinities_and_nan_as_torch(slope: float) -> None:
    """Every slope's sign: -0.0 and +0.0 take w * x, inf and NaN keep out of the gradient
    where x > 0 (selected, not multiplied), bit for bit."""
    edges = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3e38, -3e38]
    x = np.tile(np.array(edges, np.float32), 200).reshape(-1, 2)  # past select's few values
    g = np.random.default_rng(5).standard_normal(x.shape).astype(np.float32)
    (cx, tx), (cw, tw) = _both(x), _both(np.array([slope], np.float32))
    ours, theirs = cr.nn.functional.prelu(cx, cw), torch.nn.functional.prelu(tx, tw)
    ours.backward(cr.tensor(g))
    theirs.backward(torch.tensor(g))
    want = theirs.detach().numpy()
    np.testing.assert_array_equal(ours.numpy(), want)
    np.testing.assert_array_equal(np.signbit(ours.numpy()), np.signbit(want))
    np.testing.assert_array_equal(cx.grad.numpy(), tx.grad.numpy())


@pytest.mark.parametrize(("shape", "slopes"), [((3,), 3), ((), 3), ((2, 3), 2)])
def test_prelu_refuses_a_weight_that_fits_no_channel(shape: tuple, slopes: int) -> None:
    x, w = torch.randn(shape), torch.randn(slopes)
    with pytest.raises(RuntimeError):
        torch.nn.functional.prelu(x, w)
    with pytest.raises(ValueError, match=re.escape(f"got input shape {shape}")):
        cr.nn.functional.prelu(cr.randn(*shape), cr.randn(slopes))


# -- dropout ------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("training", [True, False])
def test_dropout_of_a_0d_tensor(p: float, training: bool) -> None:
    cr.manual_seed(0)
    x = cr.tensor(2.0, dtype=cr.float64, requires_grad=True)
    out = cr.nn.functional.dropout(x, p, training)
    want = torch.nn.functional.dropout(torch.tensor(2.0, dtype=torch.float64), p, training)
    assert out.shape == () and out.dtype == cr.float64
    assert float(out) in ({0.0, 2.0 / (1.0 - p)} if training and p < 1 else {float(want)})
    (g,) = cr.grad(out, x)
    assert float(g) * 2.0 == float(out)  # the gradient is the factor the value was scaled by


@pytest.mark.parametrize("shape", [(), (3, 4)])
def test_dropout_in_place_writes_the_input_and_its_gradient(shape: tuple) -> None:
    cr.manual_seed(1)
    x = cr.ones(*shape, dtype=cr.float64, requires_grad=True)
    y = x * 3.0
    before = y._version
    out = cr.nn.functional.dropout(y, 0.4, inplace=True)
    assert out is y and y._version == before + 1
    assert set(np.unique(y.numpy())) <= {0.0, 3.0 / 0.6}
    (g,) = cr.grad(out.sum(), x)
    np.testing.assert_allclose(g.numpy(), y.numpy(), rtol=1e-12)  # d(3 x m / 0.6)/dx = out / x
    module = cr.nn.Dropout(0.4, inplace=True)
    z = cr.ones(5)
    assert module(z) is z


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "float16", "bfloat16"])
@pytest.mark.parametrize("p", [0.0, 0.5, 1.0])
def test_dropout_takes_or_refuses_a_dtype_as_torch(dtype: str, p: float) -> None:
    def run(lib: Any) -> Any:
        try:
            return lib.nn.functional.dropout(lib.ones(64, dtype=getattr(lib, dtype)), p)
        except (RuntimeError, TypeError) as err:
            return err

    ours, theirs = run(cr), run(torch)
    if isinstance(theirs, Exception):
        assert isinstance(ours, TypeError) and str(ours).startswith("dropout: needs a floating")
        return
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    if p == 0.5:  # each element dropped or doubled (exact in every floating dtype)
        assert set(np.unique(ours.float().numpy())) <= {0.0, 2.0}
    else:  # all kept or all zeroed: the values themselves
        np.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy())


# -- cosine_similarity --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "dim"),
    [((1, 2, 3), (2, 1, 3), -2), ((4, 3), (3,), 1), ((2, 3), (2, 3), 0), ((), (), 0)],
)
def test_cosine_similarity_broadcasts_first(a: tuple, b: tuple, dim: int) -> None:
    rng = np.random.default_rng(5)
    (c1, t1), (c2, t2) = _both(rng.standard_normal(a)), _both(rng.standard_normal(b))
    ours = cr.nn.functional.cosine_similarity(c1, c2, dim)
    theirs = torch.nn.functional.cosine_similarity(t1, t2, dim)
    _close(ours, theirs)
    _grads_close(ours, theirs, [c1, c2], [t1, t2])


def test_cosine_similarity_below_eps_passes_the_norms_gradient_as_torch() -> None:
    rng = np.random.default_rng(6)
    x = np.concatenate([np.full((1, 3), 1e-10), np.zeros((1, 3)), rng.standard_normal((1, 3))])
    (c1, t1), (c2, t2) = _both(x), _both(rng.standard_normal((3, 3)))
    ours = cr.nn.functional.cosine_similarity(c1, c2)
    theirs = torch.nn.functional.cosine_similarity(t1, t2)
    _close(ours, theirs)
    _grads_close(ours, theirs, [c1, c2], [t1, t2])


def test_cosine_similarity_dtypes_and_refusals_as_torch() -> None:
    g = torch.Generator().manual_seed(0)
    a32, b64 = torch.randn(2, 3, generator=g), torch.randn(2, 3, dtype=torch.float64, generator=g)
    ours = cr.nn.functional.cosine_similarity(cr.tensor(a32.numpy()), cr.tensor(b64.numpy()))
    # float64, but a32's norm is taken in float32 on both sides: float32's rounding
    _close(ours, torch.nn.functional.cosine_similarity(a32, b64), "float32")
    ints = np.arange(6).reshape(2, 3)
    ours = cr.nn.functional.cosine_similarity(cr.tensor(a32.numpy()), cr.tensor(ints))
    _close(ours, torch.nn.functional.cosine_similarity(a32, torch.tensor(ints)), "float32")
    with pytest.raises(TypeError, match="cosine_similarity: needs a floating-point tensor"):
        cr.nn.functional.cosine_similarity(cr.tensor(ints), cr.tensor(ints))
    with pytest.raises(ValueError, match=re.escape("shapes (3, 4) and (5, 4) cannot be")):
        cr.nn.functional.cosine_similarity(cr.randn(3, 4), cr.randn(5, 4))


# -- avg_pool2d ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {"kernel_size": 3, "padding": (1,)},
        {"kernel_size": (2,), "stride": ()},
        {"kernel_size": 2, "stride": (1,), "padding": 1, "divisor_override": -2},
        {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
        {"kernel_size": 2, "padding": 1, "count_include_pad": False},
    ],
)
def test_avg_pool2d_arguments_as_torch(kwargs: dict) -> None:
    x = np.random.default_rng(7).standard_normal((2, 3, 5, 6))
    cx, tx = _both(x)
    ours = cr.nn.functional.avg_pool2d(cx, **kwargs)
    theirs = torch.nn.functional.avg_pool2d(tx, **kwargs)
    _close(ours, theirs)
    _grads_close(ours, theirs, [cx], [tx])
    # the integer kernel: exact window sums divided toward zero
    ints = np.random.default_rng(8).integers(-50, 50, (2, 3, 5, 6))
    ours = cr.nn.functional.avg_pool2d(cr.tensor(ints), **kwargs)
    theirs = torch.nn.functional.avg_pool2d(torch.tensor(ints), **kwargs)
    assert ours.dtype == cr.int64
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_avg_pool2d_of_large_integers_wraps_as_torch() -> None:
    x = np.full((1, 1, 2, 2), 2**62 + 3)
    ours = cr.nn.functional.avg_pool2d(cr.tensor(x), 2)
    np.testing.assert_array_equal(ours.numpy(), torch.nn.functional.avg_pool2d(torch.tensor(x), 2))


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_max_pool2d_pads_integers_with_their_least_value(dtype: str) -> None:
    x = np.random.default_rng(11).integers(-90, -10, (1, 2, 5, 5))
    ours = cr.nn.functional.max_pool2d(cr.tensor(x).to(getattr(cr, dtype)), 3, 2, padding=1)
    theirs = torch.nn.functional.max_pool2d(torch.tensor(x).to(getattr(torch, dtype)), 3, 2, 1)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_pool_modules_take_a_1_tuple_as_torch() -> None:
    x = np.random.default_rng(9).standard_normal((1, 2, 5, 5)).astype(np.float32)
    for name in ("MaxPool2d", "AvgPool2d"):
        ours = getattr(cr.nn, name)(2, stride=(), padding=(1,))
        theirs = getattr(torch.nn, name)(2, stride=(), padding=(1,))
        assert repr(ours) == repr(theirs)
        _close(ours(cr.tensor(x)), theirs(torch.tensor(x)), "float32")


# -- conv_transpose2d ---------------------------------------------------------------------


@pytest.mark.parametrize("unbatched", [False, True])
def test_conv_transpose2d_output_padding_past_the_stride_differentiates_as_torch(
    unbatched: bool,
) -> None:
    """output_padding (2, 3) with stride (3, 2) and dilation 4: the output gains columns no
    window of the adjoint convolution reads; the gradients of the input and the weight (and
    their own gradients) skip them, as PyTorch's."""
    rng = np.random.default_rng(10)
    geometry = dict(stride=(3, 2), padding=(1, 2), output_padding=(2, 3), groups=2, dilation=4)
    x = rng.standard_normal((2, 4, 4) if unbatched else (2, 2, 4, 4))
    (cx, tx), (cw, tw) = _both(x), _both(rng.standard_normal((2, 2, 4, 5)))
    (cb, tb) = _both(rng.standard_normal(4))
    ours = cr.nn.functional.conv_transpose2d(cx, cw, cb, **geometry)
    theirs = torch.nn.functional.conv_transpose2d(tx, tw, tb, **geometry)
    _close(ours, theirs)
    _grads_close(ours, theirs, [cx, cw, cb], [tx, tw, tb])
    # second order: the gradient of <grad_x, v> in x and w, against torch's
    ours = cr.nn.functional.conv_transpose2d(cx, cw, cb, **geometry)
    theirs = torch.nn.functional.conv_transpose2d(tx, tw, tb, **geometry)
    g = rng.standard_normal(tuple(theirs.shape))
    (tgx,) = torch.autograd.grad(theirs, tx, torch.tensor(g), create_graph=True)
    (cgx,) = cr.grad(ours, cx, cr.tensor(g), create_graph=True)
    v = rng.standard_normal(x.shape)
    _grads_close((cgx * cr.tensor(v)).sum(), (tgx * torch.tensor(v)).sum(), [cw], [tw])


# -- batch_norm ---------------------------------------------------------------------------


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize(("shape", "c"), [((0,), 0), ((0, 3), 3), ((0, 3, 2), 3)])
def test_batch_norm_of_an_empty_input_as_torch(training: bool, shape: tuple, c: int) -> None:
    (cx, tx), (cw, tw) = _both(np.zeros(shape)), _both(np.ones(c))
    c_stats = [cr.zeros(c, dtype=cr.float64), cr.ones(c, dtype=cr.float64)]
    t_stats = [torch.zeros(c, dtype=torch.float64), torch.ones(c, dtype=torch.float64)]
    cw, tw = (cw, tw) if c else (None, None)  # PyTorch's 1-D path fails on a weight
    ours = cr.nn.functional.batch_norm(cx, *c_stats, cw, None, training)
    theirs = torch.nn.functional.batch_norm(tx, *t_stats, tw, None, training)
    _close(ours, theirs)
    for c_stat, t_stat in zip(c_stats, t_stats, strict=True):  # untouched, as PyTorch's
        np.testing.assert_array_equal(c_stat.numpy(), t_stat.numpy())
    (g,) = cr.grad(ours.sum(), cx)
    assert g.shape == shape


def test_batch_norm_refuses_a_1d_input_with_values() -> None:
    with pytest.raises(ValueError, match=re.escape("batch_norm: expected input of shape (N, C")):
        cr.nn.functional.batch_norm(cr.randn(5), None, None, training=True)
