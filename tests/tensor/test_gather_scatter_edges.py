"""Gather, scatter, index, cat, diag and fill at their edges against PyTorch: 0-d tensors
(read as ones of shape (1,)), empty and smaller indexes, take_along_dim's broadcasting, cat's
legacy empty tensor, bool dtypes, and the tie order of sort and topk."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.tolerances import tol


def both(value: Any) -> tuple[Any, Any]:
    """A NumPy value as a chainrule and a torch tensor (float64 ones require grad)."""
    arr = np.asarray(value)
    grad = arr.dtype == np.float64
    return cr.tensor(arr, requires_grad=grad), torch.tensor(arr, requires_grad=grad)


def assert_like_torch(got: cr.Tensor, want: torch.Tensor) -> None:
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), **tol("float64"))


def assert_grads_like_torch(
    fn: Callable[[Any, Any], Any], args: list[Any], names: tuple[str, ...] = ()
) -> None:
    """fn(lib, *args) on both sides, then the float64 inputs' gradients for one random
    upstream gradient: equal to PyTorch's and to central differences."""
    pairs = [both(a) if isinstance(a, np.ndarray) else (a, a) for a in args]
    ours = fn(cr, *[p[0] for p in pairs])
    theirs = fn(torch, *[p[1] for p in pairs])
    assert_like_torch(ours, theirs)
    leaves = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype == np.float64]
    if not leaves:
        return
    up = np.random.default_rng(0).standard_normal(theirs.shape)
    got = cr.autograd.grad(ours, [pairs[i][0] for i in leaves], cr.tensor(up), allow_unused=True)
    want = torch.autograd.grad(
        theirs, [pairs[i][1] for i in leaves], torch.tensor(up), allow_unused=True
    )
    for g, w in zip(got, want, strict=True):
        assert (g is None) == (w is None)
        if g is not None:
            np.testing.assert_allclose(g.numpy(), w.numpy(), **tol("float64"))

    def numeric(*xs: Any) -> Any:
        full = [cr.tensor(a) for a in args]
        for i, x in zip(leaves, xs, strict=True):
            full[i] = x
        return (fn(cr, *full) * cr.tensor(up)).sum()

    inputs = [cr.tensor(args[i], requires_grad=True) for i in leaves]
    assert cr.testing.gradcheck(numeric, inputs)


F = np.float64
I64 = np.int64

ZERO_D_SCATTERS: list[tuple[str, Callable[..., Any]]] = [
    ("scatter", lambda lib, s, i, v: lib.scatter(s, 0, i, v)),
    ("scatter value", lambda lib, s, i, v: lib.scatter(s, -1, i, 2.5)),
    ("scatter_add", lambda lib, s, i, v: lib.scatter_add(s, 0, i, v)),
    *[
        (
            f"scatter_reduce {r} {inc}",
            lambda lib, s, i, v, r=r, inc=inc: lib.scatter_reduce(s, 0, i, v, r, include_self=inc),
        )
        for r in ("sum", "prod", "mean", "amax", "amin")
        for inc in (True, False)
    ],
]


@pytest.mark.parametrize("name, fn", ZERO_D_SCATTERS, ids=[n for n, _ in ZERO_D_SCATTERS])
@pytest.mark.parametrize(
    "self_, index, src",
    [
        (F(3.0), I64(0), F(5.0)),  # all 0-d: a 0-d result
        (F(3.0), np.array([0]), np.array([5.0])),  # 0-d self beside (1,) index and src
        (np.array([1.0, 2.0, 4.0]), I64(2), F(5.0)),  # 1-D self beside 0-d index and src
    ],
    ids=["all 0-d", "0-d self", "0-d index and src"],
)
def test_scatters_read_a_0d_tensor_as_shape_1(
    name: str, fn: Any, self_: Any, index: Any, src: Any
) -> None:
    assert_grads_like_torch(fn, [np.asarray(self_), np.asarray(index), np.asarray(src)])


@pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.bool_])
@pytest.mark.parametrize("reduce", [None, "add", "multiply"])
def test_scatter_in_place_of_a_0d_tensor(dtype: Any, reduce: Any) -> None:
    results = []
    for lib in (cr, torch):
        t = lib.tensor(np.asarray(1, dtype=dtype))
        v = t._version
        src = lib.tensor(np.asarray(1, dtype=dtype))
        out = t.scatter_(0, lib.tensor(0), src, **({"reduce": reduce} if reduce else {}))
        assert out is t and t._version == v + 1
        results.append(t)
    assert_like_torch(*results)


def test_scatter_in_place_of_a_0d_tensor_in_a_graph() -> None:
    grads = []
    for lib in (cr, torch):
        a = lib.tensor(3.0, dtype=lib.float64, requires_grad=True)
        s = lib.tensor(5.0, dtype=lib.float64, requires_grad=True)
        b = a * 2
        c = b + 1
        b.scatter_(0, lib.tensor(0), s)
        assert b.shape == ()
        grads.append([g.item() for g in lib.autograd.grad((b * 3 + c * c).sum(), [a, s])])
    assert grads[0] == grads[1]


def test_a_0d_src_beside_2d_index_is_refused_as_pytorch() -> None:
    with pytest.raises(RuntimeError):
        torch.zeros(2, 2).scatter(0, torch.tensor([[1]]), torch.tensor(5.0))
    with pytest.raises(ValueError, match=r"^scatter: index must be an integer tensor"):
        cr.zeros(2, 2).scatter(0, cr.tensor([[1]]), cr.tensor(5.0))


@pytest.mark.parametrize(
    "fn, args",
    [
        (lambda lib, s, i, v: lib.index_add(s, 0, i, v, alpha=2), [F(3.0), np.array([0]), F(5.0)]),
        (lambda lib, s, i, v: lib.index_add(s, 0, i, v), [F(3.0), I64(0), F(5.0)]),
        (lambda lib, s, i: lib.index_fill(s, 0, i, -1.5), [F(3.0), np.array([0, 0])]),
        (lambda lib, s, i: lib.index_fill(s, 0, i, 2.0), [F(3.0), np.array([], I64)]),
        (lambda lib, s, i: lib.index_select(s, 0, i), [F(3.0), np.array([0])]),
        (lambda lib, s, i: lib.index_select(s, -1, i), [F(3.0), I64(0)]),
    ],
    ids=[
        "index_add",
        "index_add 0-d index",
        "index_fill",
        "index_fill none",
        "index_select",
        "index_select 0-d index",
    ],
)
def test_index_ops_of_a_0d_tensor_stay_0d(fn: Any, args: list[Any]) -> None:
    assert_grads_like_torch(fn, [np.asarray(a) for a in args])


def test_index_ops_of_a_0d_tensor_refuse_what_pytorch_refuses() -> None:
    with pytest.raises(RuntimeError, match="only 1 value"):
        torch.index_select(torch.tensor(3.0), 0, torch.tensor([0, 0]))
    with pytest.raises(ValueError, match=r"^index_select: the index of a 0-d tensor must hold"):
        cr.index_select(cr.tensor(3.0), 0, cr.tensor([0, 0]))
    with pytest.raises(RuntimeError, match="source tensor shape must match"):
        torch.index_add(torch.tensor(3.0), 0, torch.tensor([0]), torch.tensor([2.0]))
    with pytest.raises(ValueError, match=r"^index_add: source must have shape"):
        cr.index_add(cr.tensor(3.0), 0, cr.tensor([0]), cr.tensor([2.0]))


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.bool_])
def test_index_add_and_index_fill_in_place_of_a_0d_tensor(dtype: Any) -> None:
    for method, extra in (("index_add_", (np.asarray(1, dtype),)), ("index_fill_", (1,))):
        results = []
        for lib in (cr, torch):
            t = lib.tensor(np.asarray(0, dtype))
            v = t._version
            out = getattr(t, method)(
                0,
                lib.tensor([0]),
                *[lib.tensor(e) if isinstance(e, np.ndarray) else e for e in extra],
            )
            assert out is t and t._version == v + 1
            results.append(t)
        assert_like_torch(*results)


@pytest.mark.parametrize(
    "self_, index, dim",
    [
        (np.arange(5.0), np.zeros((2, 0), np.uint8), 0),  # empty: neither dtype nor dims read
        (F(3.0), np.array([0]), 0),  # 0-d self
        (F(3.0), I64(0), -1),  # 0-d self and index
        (np.arange(5.0), I64(3), 0),  # 0-d index
        (np.arange(25.0).reshape(5, 5), np.array([[0, 4]]), 1),  # index smaller than self
        (np.arange(24.0).reshape(2, 3, 4), np.array([[[0, 1], [2, 2]]]), 1),
    ],
)
def test_gather_takes_index_s_shape(self_: Any, index: Any, dim: int) -> None:
    assert_grads_like_torch(
        lambda lib, s, i: lib.gather(s, dim, i), [np.asarray(self_), np.asarray(index)]
    )
    assert_grads_like_torch(
        lambda lib, s, i: s.gather(dim, i), [np.asarray(self_), np.asarray(index)]
    )


def test_gather_refuses_an_index_larger_than_self_outside_dim() -> None:
    with pytest.raises(RuntimeError):
        torch.arange(5.0).reshape(1, 5).gather(1, torch.zeros(2, 2, dtype=torch.int64))
    with pytest.raises(ValueError, match=r"^gather: index must be .* no larger than self"):
        cr.arange(5.0).reshape(1, 5).gather(1, cr.zeros(2, 2, dtype=cr.int64))


@pytest.mark.parametrize(
    "self_, indices, dim",
    [
        (np.arange(25.0).reshape(5, 5), np.array([[0, 4]]), 1),  # indices broadcast
        (np.arange(5.0).reshape(1, 5), np.array([[0, 1], [4, 4], [2, 0]]), 1),  # self broadcast
        (np.arange(6.0).reshape(2, 3), np.array([[100, 3], [-100, -7]]), 1),  # read modulo 3
        (np.arange(6.0).reshape(2, 3), np.array([[-1], [1]]), -1),
        (np.arange(6.0).reshape(2, 3), np.array([5, 0, 2]), None),  # flattened
    ],
)
def test_take_along_dim_broadcasts_and_wraps_like_torch(self_: Any, indices: Any, dim: Any) -> None:
    fn = lambda lib, s, i: lib.take_along_dim(s, i, dim)  # noqa: E731
    assert_grads_like_torch(fn, [self_, indices])


@pytest.mark.parametrize(
    "self_, index",
    [
        (np.arange(12.0).reshape(3, 4), np.array([[0, -1], [5, 5]])),
        (np.arange(12.0).reshape(4, 3), np.array([1, -12, 7])),
        (np.array(3.0), np.array([[0], [-1]])),  # 0-d self
        (np.arange(6.0), np.zeros((0, 2), np.int64)),  # empty index
        (np.arange(6).reshape(2, 3), I64(-2)),  # integers, 0-d index
        (np.array([[True, False]]), np.array([1, 0, 1])),
    ],
)
def test_take_reads_the_flattened_tensor_like_torch(self_: Any, index: Any) -> None:
    """With and without a node (off the graph, the fast path reads the flat array)."""
    want = torch.tensor(self_).take(torch.tensor(index))
    assert_like_torch(cr.tensor(self_).take(cr.tensor(index)), want)
    if self_.ndim == 2:  # a transposed view, not contiguous
        want = torch.tensor(self_).T.take(torch.tensor(index))
        assert_like_torch(cr.tensor(self_).T.take(cr.tensor(index)), want)
    if self_.dtype == np.float64:
        assert_grads_like_torch(lambda lib, s, i: s.take(i), [self_, index])


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda lib: lib.take_along_dim(lib.arange(5.0), lib.tensor(1), 0), "same number of dims"),
        (lambda lib: lib.take_along_dim(lib.tensor(3.0), lib.tensor(0), 0), "same number of dims"),
        (
            lambda lib: lib.take_along_dim(lib.arange(5.0), lib.tensor([1], dtype=lib.int32), 0),
            "must be int64",
        ),
    ],
)
def test_take_along_dim_refuses_what_pytorch_refuses(make: Any, message: str) -> None:
    with pytest.raises((RuntimeError, IndexError)):
        make(torch)
    with pytest.raises((ValueError, TypeError), match=rf"^take_along_dim: .*{message}"):
        make(cr)


@pytest.mark.parametrize(
    "shapes, dim",
    [
        ([(0,), (2, 3)], 1),  # the legacy empty tensor skipped
        ([(2, 3), (0,), (2, 3), (0,)], -1),
        ([(0,), (0,)], 0),
        ([(0,), (0,)], 3),  # with only empty ones, no dim is read
    ],
)
def test_cat_skips_a_1d_empty_tensor_as_pytorch(shapes: list[tuple[int, ...]], dim: int) -> None:
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s) for s in shapes]
    assert_grads_like_torch(lambda lib, *xs: lib.cat(list(xs), dim), arrays)


def test_cat_counts_a_skipped_tensor_s_dtype() -> None:
    got = cr.cat([cr.zeros(0, dtype=cr.float64), cr.ones(2, 3)], dim=1)
    want = torch.cat([torch.zeros(0, dtype=torch.float64), torch.ones(2, 3)], dim=1)
    assert_like_torch(got, want)


def test_cat_refuses_a_0d_tensor_naming_its_position() -> None:
    with pytest.raises(RuntimeError, match="at position 1"):
        torch.cat([torch.ones(2), torch.tensor(1.0)])
    with pytest.raises(ValueError, match=r"^cat: a 0-d tensor \(at position 1\) cannot be"):
        cr.cat([cr.ones(2), cr.tensor(1.0)])


@pytest.mark.parametrize("diagonal", [0, 2, -1])
@pytest.mark.parametrize("form", ["fn", "method"])
def test_diag_of_a_bool_vector_is_bool(diagonal: int, form: str) -> None:
    values = [True, False, True]
    got = cr.diag(cr.tensor(values), diagonal) if form == "fn" else cr.tensor(values).diag(diagonal)
    assert_like_torch(got, torch.diag(torch.tensor(values), diagonal))


FILLS = [
    ("zero_", lambda t: t.zero_()),
    *[(f"fill_({v})", lambda t, v=v: t.fill_(v)) for v in (0, 2, 0.5, -1.7, True)],
    (
        "fill_(0-d float)",
        lambda t: t.fill_(type(t)(2.5) if isinstance(t, cr.Tensor) else torch.tensor(2.5)),
    ),
    ("masked_fill_", lambda t: t.masked_fill_(t.new_ones(t.shape).bool().triu(), 0)),
    ("tril_", lambda t: t.tril_()),
    ("triu_", lambda t: t.triu_(1)),
]


@pytest.mark.parametrize("name, fill", FILLS, ids=[n for n, _ in FILLS])
@pytest.mark.parametrize("dtype", [np.bool_, np.int64, np.float32])
def test_fills_cast_the_value_to_the_tensor_s_dtype(name: str, fill: Any, dtype: Any) -> None:
    data = np.array([[1, 0], [2, 3]], dtype)
    results = []
    for lib in (cr, torch):
        t = lib.tensor(data)
        v = t._version
        assert fill(t) is t and t._version == v + 1
        results.append(t)
    assert_like_torch(*results)


@pytest.mark.parametrize("dtype", [np.bool_, np.int64])
@pytest.mark.parametrize("value", [1, 0, 1.7, np.float32(2.5), np.int64(0)])
def test_index_fill_casts_the_value_to_the_tensor_s_dtype(dtype: Any, value: Any) -> None:
    data = np.array([1, 0, 2], dtype)
    results = []
    for lib in (cr, torch):
        v = lib.tensor(value) if isinstance(value, np.generic) else value
        results.append(lib.tensor(data).index_fill(0, lib.tensor([0, 1]), v))
    assert_like_torch(*results)


def test_sort_of_ties_keeps_their_order_as_pytorch_s_small_rows() -> None:
    # PyTorch's CPU sort is stable for rows of up to 16 (an insertion sort), ours always
    rng = np.random.default_rng(2)
    x = rng.integers(0, 2, (40, 16)).astype(bool)
    for descending in (False, True):
        got = cr.tensor(x).sort(-1, descending)
        want = torch.tensor(x).sort(-1, descending)
        np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
        stable = torch.tensor(np.tile(x, 3)).sort(dim=-1, descending=descending, stable=True)
        ours = cr.tensor(np.tile(x, 3)).argsort(-1, descending)
        np.testing.assert_array_equal(ours.numpy(), stable.indices.numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.uint8, np.bool_])
@pytest.mark.parametrize("nan", [False, True])
def test_a_descending_stable_sort_is_pytorch_s_with_ties_infs_and_nans(
    dtype: Any, nan: bool
) -> None:
    """Descending, the keys reverse the order (-x, ~x) where no NaN is; a NaN, the reversed
    sort: both keep ties in order, NaN first, 0.0 and -0.0 tied, as torch's stable sort."""
    values = [0.0, -0.0, 1.0, 2.0, np.inf, -np.inf] + ([np.nan] if nan else [])
    x = np.random.default_rng(3).choice(values, (3, 5, 7))
    if np.dtype(dtype).kind in "biu":
        x = np.nan_to_num(x, posinf=3.0, neginf=-1.0)
    x = x.astype(dtype)
    for dim in (0, 1, 2):
        got = cr.tensor(x).sort(dim, descending=True, stable=True)
        want = torch.tensor(x).sort(dim=dim, descending=True, stable=True)
        np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
        np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_a_gather_of_a_shape_seen_before_reads_its_own_index(dim: int) -> None:
    """The positions along the other dims are kept from the first index of a shape (where the
    switch is on): a second index of that shape, and a write into neither, read as PyTorch's."""
    rng = np.random.default_rng(dim)
    a = rng.normal(size=(2, 3, 4))
    shape = tuple(1 if d == dim else n for d, n in enumerate(a.shape))
    for _ in range(2):
        index = rng.integers(0, a.shape[dim], shape)
        (x, t), (i, j) = both(a), both(index)
        got, want = x.gather(dim, i), t.gather(dim, j)
        got.backward(cr.ones_like(got))
        want.backward(torch.ones_like(want))
        np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
        np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())
    where = cr.ops.movement.along_dim(index, dim, a.ndim)
    assert where[dim] is index
    kept = [not w.flags.writeable for d, w in enumerate(where) if d != dim]
    assert kept == [cr.fastpath.enabled()] * 2  # kept ones are read-only
