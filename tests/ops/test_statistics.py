"""Order statistics, scans and statistics against PyTorch where conventions matter: ties
(which index median, kthvalue and mode return), NaN, integer and bool inputs, 0-d and empty
inputs, node names, in-place scans, and the refusals' messages."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr

NAN = float("nan")


def _same(got: Any, want: Any) -> None:
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _same(g, w)
        return
    assert isinstance(got, cr.Tensor)
    assert got.shape == tuple(want.shape)
    assert str(got.dtype) == str(want.dtype).replace("torch.", "chainrule.")
    np.testing.assert_array_equal(got.numpy(), want.detach().numpy())


def _both(fn: Any, data: Any, dtype: Any = np.float64) -> None:
    a = np.asarray(data, dtype=dtype)
    want = fn(torch, torch.tensor(a))
    got = fn(cr, cr.tensor(a))
    _same(got, tuple(want) if isinstance(want, tuple) else want)


# integer data with many ties, NaN among floats: the index each op picks is PyTorch's
TIES = np.random.default_rng(0).integers(-2, 3, size=(4, 7, 40))
NANS = np.where(np.random.default_rng(1).random((2, 5, 21)) < 0.2, NAN, TIES[:2, :5, :21])
SELECTING = [
    ("median", lambda m, x: tuple(m.median(x, 2))),
    ("median_keepdim", lambda m, x: tuple(x.median(0, keepdim=True))),
    ("nanmedian", lambda m, x: tuple(x.nanmedian(1))),
    ("median_all", lambda m, x: x.median()),
    ("nanmedian_all", lambda m, x: x.nanmedian()),
    ("kthvalue", lambda m, x: tuple(x.kthvalue(3, 1))),
    ("kthvalue_last", lambda m, x: tuple(m.kthvalue(x, 17, keepdim=True))),
    ("mode", lambda m, x: tuple(x.mode())),
    ("mode_short", lambda m, x: tuple(x.mode(1))),
    ("cummax", lambda m, x: tuple(x.cummax(2))),
    ("cummin", lambda m, x: tuple(m.cummin(x, 0))),
]


@pytest.mark.parametrize("fn", [f for _, f in SELECTING], ids=[n for n, _ in SELECTING])
@pytest.mark.parametrize("dtype", [np.int64, np.float32], ids=["int64", "float32"])
def test_ties_pick_the_index_pytorch_picks(fn: Any, dtype: Any) -> None:
    _both(fn, TIES, dtype)


@pytest.mark.parametrize("fn", [f for _, f in SELECTING], ids=[n for n, _ in SELECTING])
def test_nan_is_handled_as_pytorch_handles_it(fn: Any) -> None:
    _both(fn, NANS)
    _both(fn, np.full((2, 3, 17), NAN))


def test_results_are_named_as_pytorchs() -> None:
    x = cr.tensor([[1.0, 2.0], [3.0, 0.0]])
    for pair in (x.median(0), x.kthvalue(1), x.mode(), x.cummax(0), x.cummin(1), x.nanmedian(1)):
        assert pair.values is pair[0] and pair.indices is pair[1]
    low, high = cr.aminmax(x)
    assert x.aminmax().min.item() == low.item() == 0.0 and x.aminmax().max.item() == high.item()


def test_mode_of_bools_and_long_lines() -> None:
    _both(lambda m, x: tuple(x.mode(0)), [True, False, True, False], bool)
    _both(lambda m, x: tuple(x.mode()), TIES.reshape(2, -1))


def test_median_gradient_is_shared_among_the_ties() -> None:
    data = [[1.0, 3.0, 3.0], [2.0, 3.0, 0.0]]
    for m in (torch, cr):
        x = m.tensor(data, requires_grad=True)
        x.median().backward()
        if m is torch:
            want = x.grad.numpy()
        else:
            np.testing.assert_array_equal(x.grad.numpy(), want)


NODE_NAMES = [
    (lambda x: x.median(), "MedianBackward0"),
    (lambda x: x.median(0).values, "MedianBackward1"),
    (lambda x: x.nanmedian(), "NanmedianBackward0"),
    (lambda x: x.nanmedian(1).values, "NanmedianBackward1"),
    (lambda x: x.kthvalue(1).values, "KthvalueBackward0"),
    (lambda x: x.mode().values, "ModeBackward0"),
    (lambda x: x.cummax(0).values, "CummaxBackward0"),
    (lambda x: x.cummin(1).values, "CumminBackward0"),
    (lambda x: x.logcumsumexp(1), "LogcumsumexpBackward0"),
]


@pytest.mark.parametrize("fn,name", NODE_NAMES, ids=[n for _, n in NODE_NAMES])
def test_node_names_are_pytorchs(fn: Any, name: str) -> None:
    x = torch.ones(2, 3, requires_grad=True)
    assert fn(x).grad_fn.name() == name
    y = fn(cr.ones(2, 3, requires_grad=True))
    assert y.grad_fn.name() == name
    y.sum().backward()
    assert y.grad_fn.name() == name  # also once backward has freed the node


DTYPE_RULES = [
    ("nansum_int", lambda m, x: x.nansum(0), np.int64),
    ("nansum_bool", lambda m, x: m.nansum(x), bool),
    ("count_nonzero_bool", lambda m, x: x.count_nonzero((0, 1)), bool),
    ("count_nonzero_float", lambda m, x: m.count_nonzero(x, 1), np.float32),
    ("cummax_bool", lambda m, x: tuple(x.cummax(1)), bool),
    ("cummin_int", lambda m, x: tuple(x.cummin(0)), np.int32),
    ("aminmax_bool", lambda m, x: tuple(m.aminmax(x)), bool),
    ("aminmax_int_dim", lambda m, x: tuple(x.aminmax(dim=0, keepdim=True)), np.int64),
    ("diff_bool", lambda m, x: x.diff(dim=0), bool),
    ("diff_int_n3", lambda m, x: m.diff(x, 3), np.int64),
    ("diff_n_past_the_size", lambda m, x: x.diff(9), np.float64),
    ("diff_n0", lambda m, x: x.diff(0), np.float64),
    ("diff_n0_ignores_the_ends", lambda m, x: m.diff(x, 0, 0, x[:1], x), np.float64),
    ("median_int", lambda m, x: x.median(), np.int64),
    ("kthvalue_int", lambda m, x: tuple(x.kthvalue(2, 0)), np.int32),
    ("cov_int", lambda m, x: m.cov(x), np.int64),
    ("corrcoef_int", lambda m, x: m.corrcoef(x), np.int64),
    ("nanmean_float32", lambda m, x: x.nanmean(1, keepdim=True), np.float32),
    ("median_0d", lambda m, x: tuple(x[0, 0].median(0, keepdim=True)), np.float64),
    ("kthvalue_0d", lambda m, x: tuple(x[0, 0].kthvalue(1)), np.float64),
    ("mode_0d", lambda m, x: tuple(x[0, 0].mode(-1)), np.float64),
    ("quantile_0d", lambda m, x: x[0, 0].quantile(0.3, 0), np.float64),
    ("cummax_0d", lambda m, x: tuple(x[0, 0].cummax(-1)), np.float64),
    ("median_empty_rows", lambda m, x: tuple(x[:0].median(1)), np.float64),
    ("kthvalue_empty_rows", lambda m, x: tuple(x[:0].kthvalue(1)), np.float64),
    ("cummax_empty", lambda m, x: tuple(x[:0].cummax(0)), np.float64),
    ("logcumsumexp_empty", lambda m, x: x[:, :0].logcumsumexp(1), np.float64),
    ("nansum_empty", lambda m, x: x[:0].nansum(0), np.float64),
]


@pytest.mark.parametrize("fn,dtype", [r[1:] for r in DTYPE_RULES], ids=[r[0] for r in DTYPE_RULES])
def test_dtypes_0d_and_empty_inputs_match_torch(fn: Any, dtype: Any) -> None:
    _both(fn, [[0, 2, 1, 0], [3, 0, 0, 1], [1, 1, 2, 5]], dtype)


def test_median_of_nothing_is_nan() -> None:
    _both(lambda m, x: x.median(), [])
    _both(lambda m, x: x.nanmedian(), [])


@pytest.mark.parametrize("how", ["linear", "lower", "higher", "nearest", "midpoint"])
@pytest.mark.parametrize("op", ["quantile", "nanquantile"])
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_quantile_interpolations_and_nan_match_torch(how: str, op: str, dim: Any) -> None:
    data = np.where(np.eye(4, 6) > 0, NAN, np.arange(24.0).reshape(4, 6) % 5)
    q = [0.0, 0.1, 0.5, 0.55, 1.0]
    _both(
        lambda m, x: getattr(x, op)(m.tensor(q, dtype=m.float64), dim, dim == 1, interpolation=how),
        data,
    )
    _both(lambda m, x: getattr(x, op)(0.5, dim, interpolation=how), np.full((2, 3), NAN))


def test_cov_weights_and_degrees_of_freedom_match_torch() -> None:
    x = np.random.default_rng(2).standard_normal((3, 4))
    fw, aw = [1, 0, 2, 3], [0.5, 1.0, 0.0, 2.0]
    for kw in ({"fweights": fw}, {"aweights": aw}, {"fweights": fw, "aweights": aw}):
        for correction in (0, 1, 2):

            def call(m: Any, t: Any, kw: dict = kw, c: int = correction) -> Any:
                weights = {k: m.tensor(v) for k, v in kw.items()}
                return m.cov(t, correction=c, **weights)

            want = call(torch, torch.tensor(x))
            np.testing.assert_allclose(call(cr, cr.tensor(x)).numpy(), want.numpy(), rtol=1e-12)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = cr.cov(cr.tensor([[1.0, 2.0]]), correction=2)
    assert [str(w.message)[:30] for w in caught] == ["cov: degrees of freedom <= 0; "]  # only
    assert np.isinf(out.numpy())


def test_in_place_scans_write_the_tensor_and_keep_the_graph() -> None:
    for m in (torch, cr):
        x = m.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], requires_grad=True)
        y = x * 1
        assert y.cumsum_(1) is y
        y.cumprod_(dim=0)
        (y * m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().backward()
        if m is torch:
            want, grad = y.detach().numpy(), x.grad.numpy()
        else:
            np.testing.assert_allclose(y.numpy(), want)
            np.testing.assert_allclose(x.grad.numpy(), grad)
    ints = cr.tensor([1, 2, 3])
    ints.cumsum_(0)
    assert ints.tolist() == [1, 3, 6] and ints.dtype == cr.int64


def test_logcumsumexp_is_stable_at_any_scale() -> None:
    data = [[-1000.0, 0.0, 1000.0], [float("-inf"), float("-inf"), 2.0]]
    _both(lambda m, x: x.logcumsumexp(1), data)
    x, t = cr.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    x.logcumsumexp(1).sum().backward()
    t.logcumsumexp(1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())


ERRORS = [
    (lambda: cr.tensor([True]).median(), TypeError, "median: not defined for bool"),
    (lambda: cr.ones(2).median(keepdim=True), TypeError, "median: keepdim needs a dim"),
    (lambda: cr.ones(2, 0).median(1), ValueError, "median: the tensor is empty over dim 1"),
    (lambda: cr.tensor([], dtype=cr.int64).median(), ValueError, "median: the tensor is empty"),
    (lambda: cr.ones(2, 3).kthvalue(4), ValueError, "kthvalue: k 4 is out of range for dim -1"),
    (lambda: cr.ones(2, 3).kthvalue(0, 0), ValueError, "kthvalue: k 0 is out of range"),
    (lambda: cr.ones(2, 0).mode(), ValueError, "mode: the tensor is empty over dim 1"),
    (lambda: cr.tensor([1, 2]).quantile(0.5), TypeError, "quantile: needs a float32 or float64"),
    (lambda: cr.ones(3).quantile(1.5), ValueError, "quantile: q must be in [0, 1]; got 1.5"),
    (lambda: cr.ones(3).quantile(cr.ones(2, 2)), ValueError, "quantile: q must be a number or"),
    (
        lambda: cr.ones(3, dtype=cr.float64).nanquantile(cr.ones(2, dtype=cr.float32)),
        ValueError,
        "of the input's dtype; got shape (2,) of dtype chainrule.float32",
    ),
    (lambda: cr.ones(3).quantile(0.5, interpolation="cubic"), ValueError, "quantile: interp"),
    (lambda: cr.ones(0).quantile(0.5), ValueError, "quantile: the tensor is empty"),
    (lambda: cr.tensor([1, 2]).logcumsumexp(0), TypeError, "logcumsumexp: needs a floating"),
    (lambda: cr.tensor([1, 2]).nanmean(), TypeError, "nanmean: needs a floating"),
    (lambda: cr.ones(2, 3).aminmax(dim=(0, 1)), TypeError, "aminmax: dim must be an int"),
    (lambda: cr.ones(2, 0).aminmax(dim=1), ValueError, "aminmax: the tensor is empty"),
    (lambda: cr.tensor(1.0).diff(), ValueError, "diff: needs a tensor of at least one dim"),
    (lambda: cr.ones(3).diff(-1), ValueError, "diff: n must be a non-negative int; got -1"),
    (
        lambda: cr.ones(2, 3).diff(prepend=cr.ones(3)),
        ValueError,
        "diff: prepend and append must match the input's shape but in dim -1",
    ),
    (lambda: cr.ones(2, 2, 2).cov(), ValueError, "cov: needs at most 2 dims; got shape (2, 2, 2)"),
    (lambda: cr.ones(2, 2, 2).corrcoef(), ValueError, "corrcoef: needs at most 2 dims"),
    (lambda: cr.tensor([True]).cov(), TypeError, "cov: not defined for bool tensors"),
    (
        lambda: cr.ones(2, 3).cov(fweights=cr.tensor([1.0, 2.0, 3.0])),
        ValueError,
        "cov: fweights must be integer with one value per observation (3)",
    ),
    (
        lambda: cr.ones(2, 3).cov(aweights=cr.ones(2)),
        ValueError,
        "cov: aweights must be floating-point with one value per observation (3); got shape (2,)",
    ),
    (
        lambda: cr.ones(2, 3).cov(fweights=cr.tensor([1, -1, 0])),
        ValueError,
        "cov: fweights cannot be negative",
    ),
    (
        lambda: cr.ones(2, 3).cov(aweights=cr.zeros(3)),
        ValueError,
        "cov: the weights sum to zero",
    ),
]


@pytest.mark.parametrize("call,kind,message", ERRORS, ids=[e[2][:40] for e in ERRORS])
def test_errors_name_the_op_and_what_is_wrong(call: Any, kind: type, message: str) -> None:
    with pytest.raises(kind, match=None) as info:
        call()
    assert message in str(info.value)


def test_the_refused_calls_are_refused_by_torch_too() -> None:
    for call in (
        lambda: torch.tensor([True]).median(),
        lambda: torch.ones(2, 0).median(1),
        lambda: torch.ones(2, 3).kthvalue(4),
        lambda: torch.tensor([1.0, 2.0]).quantile(1.5),
        lambda: torch.tensor([1, 2]).logcumsumexp(0),
        lambda: torch.ones(2, 2, 2).cov(),
        lambda: torch.ones(2, 3).cov(fweights=torch.tensor([1, -1, 0])),
        lambda: torch.ones(2, 3).cov(aweights=torch.zeros(3)),
        lambda: torch.tensor(1.0).diff(),
    ):
        with pytest.raises((RuntimeError, IndexError, NotImplementedError)):
            call()


RANDOM_CALLS = [
    ("median", lambda m, x, d, k: tuple(x.median(d))),
    ("nanmedian", lambda m, x, d, k: tuple(x.nanmedian(d, True))),
    ("median_all", lambda m, x, d, k: x.median()),
    ("kthvalue", lambda m, x, d, k: tuple(x.kthvalue(k, d))),
    ("mode", lambda m, x, d, k: tuple(x.mode(d))),
    ("cummax", lambda m, x, d, k: tuple(x.cummax(d))),
    ("cummin", lambda m, x, d, k: tuple(x.cummin(d))),
    ("nansum", lambda m, x, d, k: x.nansum(d)),
    ("count_nonzero", lambda m, x, d, k: x.count_nonzero(d)),
    ("aminmax", lambda m, x, d, k: tuple(m.aminmax(x, dim=d))),
    ("diff", lambda m, x, d, k: x.diff(2, d)),
]


@pytest.mark.parametrize("seed", range(25))
def test_random_shapes_with_ties_and_nan_match_torch(seed: int) -> None:
    """Small integer values (ties everywhere), NaN in some, integer dtype in others, random
    shapes and dims: every value and index equal to PyTorch's."""
    rng = np.random.default_rng(seed)
    shape = tuple(int(n) for n in rng.integers(1, 7, size=rng.integers(1, 4)))
    data = rng.integers(-3, 4, size=shape).astype(np.float64)
    if seed % 3 == 0:
        data[rng.random(shape) < 0.2] = NAN
    dtype = np.int64 if seed % 5 == 0 else np.float64
    d = int(rng.integers(-len(shape), len(shape)))
    k = int(rng.integers(1, shape[d] + 1))
    for _, fn in RANDOM_CALLS:
        _both(
            lambda m, x, fn=fn: fn(m, x, d, k),
            np.nan_to_num(data) if dtype is np.int64 else data,
            dtype,
        )


def test_past_the_budget_ties_take_an_index_of_an_equal_value() -> None:
    """Lines of ties beyond what PyTorch's own steps are followed for in Python: the values
    are still PyTorch's, and each index points at an element holding its value."""
    data = np.random.default_rng(3).integers(0, 5, size=(600, 1000))  # 6 * 10^5 elements
    x, t = cr.tensor(data), torch.tensor(data)
    for got, want in ((x.mode(1), t.mode(1)), (x.kthvalue(700, 1), t.kthvalue(700, 1))):
        np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
        picked = np.take_along_axis(data, got.indices.numpy()[:, None], 1)[:, 0]
        np.testing.assert_array_equal(picked, want.values.numpy())


@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: tuple(x.cummax(1)),
        lambda m, x: tuple(m.cummin(x, -1)),
        lambda m, x: tuple(x.median(0, keepdim=True)),
        lambda m, x: tuple(m.mode(x, 2)),
        lambda m, x: tuple(x.kthvalue(2, 1)),
    ],
    ids=["cummax", "cummin", "median", "mode", "kthvalue"],
)
def test_chosen_values_made_directly_are_torchs_and_their_own(call):
    """With the switch on and nothing recorded, the values are wrapped directly: PyTorch's
    values and indices, no node, memory of their own; recorded, the node is PyTorch's."""
    from tests.helpers import fast_path_on

    a = np.array([[[1.0, NAN, 3.0], [1.0, 0.5, 3.0]], [[2.0, 2.0, -1.0], [2.0, 7.0, 2.0]]])
    x, t = cr.tensor(a), torch.tensor(a)
    with fast_path_on():
        got = call(cr, x)
        _same(got, call(torch, t))
        assert got[0].grad_fn is None and not np.shares_memory(got[0].numpy(), x.numpy())
        y, w = cr.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        recorded, want = call(cr, y), call(torch, w)
    assert type(recorded[0].grad_fn).__name__ == type(want[0].grad_fn).__name__
