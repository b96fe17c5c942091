"""Tensor: constructors, dtypes, properties, conversion, repr, indexing forms, error messages."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.helpers import torch_dtype_text

# -- constructors and dtypes -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "dtype"),
    [
        (1.5, cr.float32),
        ([1.0, 2.0], cr.float32),
        ([[1, 2], [3, 4]], cr.int64),
        (3, cr.int64),
        ([True, False], cr.bool),
        (np.arange(3.0), cr.float64),
        (np.arange(3, dtype=np.float32), cr.float32),
        (np.arange(3, dtype=np.int32), cr.int32),
        (np.float64(2.0), cr.float64),
    ],
)
def test_tensor_dtype_rules(data: Any, dtype: cr.dtype) -> None:
    assert cr.tensor(data).dtype is dtype
    assert cr.Tensor(data).dtype is dtype


def test_tensor_copies_its_data() -> None:
    a = np.zeros(3)
    t = cr.tensor(a)
    a[0] = 1.0
    assert t.numpy()[0] == 0.0
    u = cr.tensor(t)
    u.numpy()[1] = 5.0
    assert t.numpy()[1] == 0.0


def test_tensor_dtype_argument() -> None:
    assert cr.tensor([1, 2], dtype=cr.float64).dtype == cr.float64
    assert cr.tensor([1.5], dtype="int64").dtype == cr.int64
    assert cr.tensor([1], dtype=float).dtype == cr.float64  # as torch: Python's float is double
    assert cr.float is cr.float32 and cr.double is cr.float64 and cr.long is cr.int64


@pytest.mark.parametrize(
    ("make", "shape", "dtype"),
    [
        (lambda: cr.zeros(2, 3), (2, 3), cr.float32),
        (lambda: cr.zeros((2, 3)), (2, 3), cr.float32),
        (lambda: cr.ones([4]), (4,), cr.float32),
        (lambda: cr.ones(2, dtype=cr.float64), (2,), cr.float64),
        (lambda: cr.empty(3, 1), (3, 1), cr.float32),
        (lambda: cr.full((2, 2), 1.5), (2, 2), cr.float32),
        (lambda: cr.full((2,), 7), (2,), cr.int64),
        (lambda: cr.full((2,), True), (2,), cr.bool),
        (lambda: cr.rand(2, 5), (2, 5), cr.float32),
        (lambda: cr.randn(3, dtype=cr.float64), (3,), cr.float64),
        (lambda: cr.arange(5), (5,), cr.int64),
        (lambda: cr.arange(1, 2, 0.25), (4,), cr.float32),
        (lambda: cr.arange(5.0), (5,), cr.float32),
        (lambda: cr.linspace(0, 1, 7), (7,), cr.float32),
        (lambda: cr.eye(3), (3, 3), cr.float32),
        (lambda: cr.eye(2, 4), (2, 4), cr.float32),
        (lambda: cr.zeros(()), (), cr.float32),
        (lambda: cr.randint(0, 4, (3, 2)), (3, 2), cr.int64),
    ],
)
def test_constructor_shapes_and_dtypes(make: Any, shape: tuple, dtype: cr.dtype) -> None:
    t = make()
    assert t.shape == shape and t.dtype is dtype
    assert not t.requires_grad and t.is_leaf


def test_constructor_values_match_torch() -> None:
    pairs = [
        (cr.zeros(2, 3), torch.zeros(2, 3)),
        (cr.ones(2), torch.ones(2)),
        (cr.full((2, 2), -1.25), torch.full((2, 2), -1.25)),
        (cr.arange(1, 10, 3), torch.arange(1, 10, 3)),
        (cr.arange(0, 1, 0.125), torch.arange(0, 1, 0.125)),
        (cr.linspace(-1, 1, 5), torch.linspace(-1, 1, 5)),
        (cr.eye(3, 2), torch.eye(3, 2)),
    ]
    for ours, theirs in pairs:
        assert ours.shape == tuple(theirs.shape)
        assert torch_dtype_text(ours.dtype) == str(theirs.dtype)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_random_constructors_draw_from_their_range() -> None:
    cr.manual_seed(0)
    u = cr.rand(10_000)
    assert 0.0 <= u.numpy().min() and u.numpy().max() < 1.0
    n = cr.randn(10_000, dtype=cr.float64)
    assert abs(n.numpy().mean()) < 0.05 and abs(n.numpy().std() - 1.0) < 0.05
    r = cr.randint(2, 5, (1000,))
    assert set(np.unique(r.numpy())) == {2, 3, 4}


def test_manual_seed_reproduces_draws() -> None:
    cr.manual_seed(123)
    a = (cr.rand(3), cr.randn(2, 2), cr.randint(0, 10, (4,)), cr.rand_like(cr.ones(2)))
    cr.manual_seed(123)
    b = (cr.rand(3), cr.randn(2, 2), cr.randint(0, 10, (4,)), cr.rand_like(cr.ones(2)))
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x.numpy(), y.numpy())
    assert not np.array_equal(cr.rand(3).numpy(), a[0].numpy())  # the stream moves on


@pytest.mark.parametrize(
    "like", ["zeros_like", "ones_like", "empty_like", "rand_like", "randn_like"]
)
def test_like_constructors_take_shape_and_dtype(like: str) -> None:
    src = cr.ones(2, 3, dtype=cr.float64)
    t = getattr(cr, like)(src)
    assert t.shape == (2, 3) and t.dtype == cr.float64
    assert getattr(cr, like)(src, dtype=cr.float32).dtype == cr.float32
    assert getattr(cr, like)(src, requires_grad=True).requires_grad


def test_full_like() -> None:
    t = cr.full_like(cr.zeros(2, dtype=cr.float64), 3.5)
    assert t.dtype == cr.float64
    np.testing.assert_array_equal(t.numpy(), [3.5, 3.5])
    assert cr.zeros_like(cr.arange(3)).dtype == cr.int64


def test_constructors_with_requires_grad() -> None:
    for t in (
        cr.zeros(2, requires_grad=True),
        cr.randn(2, requires_grad=True),
        cr.tensor([1.0], requires_grad=True),
        cr.linspace(0, 1, 3, requires_grad=True),
    ):
        assert t.requires_grad and t.is_leaf and t.grad is None


@pytest.mark.parametrize(
    "make",
    [
        lambda: cr.tensor([1, 2], requires_grad=True),
        lambda: cr.tensor([True], requires_grad=True),
        lambda: cr.zeros(2, dtype=cr.int64, requires_grad=True),
        lambda: cr.arange(3).requires_grad_(),
    ],
)
def test_integer_and_bool_tensors_cannot_require_grad(make: Any) -> None:
    with pytest.raises(TypeError, match="only floating-point tensors can require grad; got dtype"):
        make()


def test_cast_to_integer_leaves_the_graph() -> None:
    """Regression: x.long() of a tensor requiring grad made an int64 tensor requiring grad."""
    x = cr.tensor([1.5, 2.5], requires_grad=True)
    i = x.long()
    assert i.dtype == cr.int64 and not i.requires_grad and i.grad_fn is None
    assert not x.bool().requires_grad
    d = x.double()
    assert d.requires_grad and d.dtype == cr.float64
    d.sum().backward()
    assert x.grad.dtype == cr.float32
    assert x.int().dtype == cr.int32 and x.int().tolist() == [1, 2]


def test_where_method_matches_torch() -> None:
    """x.where(condition, other), PyTorch's method form of where(condition, x, other)."""
    data, keep = [1.5, -2.0, 3.0], [True, False, True]
    grads = []
    for lib in (cr, torch):
        x = lib.tensor(data, requires_grad=True)
        y = x.where(lib.tensor(keep), lib.tensor([9.0, 8.0, 7.0]))
        (y * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
        grads.append((y.tolist(), x.grad.tolist()))
    assert grads[0] == grads[1] == ([1.5, 8.0, 3.0], [1.0, 0.0, 3.0])


def test_to_dtype_and_device() -> None:
    x = cr.ones(2, requires_grad=True)
    assert x.to("cpu") is x and x.to(device="cpu") is x and x.float() is x
    assert x.to("float64").dtype == cr.float64
    assert x.to(cr.float64, device="cpu").dtype == cr.float64
    assert x.device == cr.device("cpu") and x.device.type == "cpu"
    with pytest.raises(ValueError, match="to: chainrule computes on the CPU; got device 'cuda'"):
        x.to("cuda")


# -- arithmetic dtypes ------------------------------------------------------------------------


def test_float32_with_python_numbers_stays_float32() -> None:
    x = cr.ones(2)
    for y in (x * 2.5, 2.5 * x, x + 1, x / 3.0, 3.0 / x, x - np.float64(1.0), x**2.0, 2.0**x):
        assert y.dtype == cr.float32


def test_integer_division_makes_float32() -> None:
    """Regression: int64 / int gave float64 (NumPy's rule); PyTorch gives float32."""
    i = cr.tensor([1, 2])
    for y in (i / 2, 3 / i, i / i, i / cr.tensor([2, 4])):
        assert y.dtype == cr.float32
    np.testing.assert_array_equal((i / 2).numpy(), [0.5, 1.0])


def test_integer_meets_float_takes_the_floats_dtype() -> None:
    """Regression: int64 tensor * float32 tensor gave float64 (NumPy's rule)."""
    i, f = cr.tensor([1, 2]), cr.ones(2)
    assert (i * f).dtype == cr.float32 and (f + i).dtype == cr.float32
    assert (f * np.arange(2)).dtype == cr.float32
    assert (f + [1, 2]).dtype == cr.float32
    assert (i @ cr.ones(2, 2)).dtype == cr.float32
    assert (i + 1).dtype == cr.int64 and (i + 1.5).dtype == cr.float32
    assert (cr.ones(2) + cr.ones(2, dtype=cr.float64)).dtype == cr.float64


def test_where_of_two_numbers_is_float32() -> None:
    """Regression: where(c, 1.0, 0.0) was float64."""
    c = cr.tensor([True, False])
    assert cr.where(c, 1.0, 0.0).dtype == cr.float32
    assert cr.where(c, 1, 0).dtype == cr.int64
    np.testing.assert_array_equal(cr.where(c, 1.0, 0.0).numpy(), [1.0, 0.0])


def test_maximum_with_a_number_first_keeps_the_tensors_dtype() -> None:
    """Regression: maximum(1.7, float64 tensor) rounded 1.7 to float32 first."""
    x = cr.zeros(2, dtype=cr.float64)
    assert cr.maximum(1.7, x).numpy()[0] == 1.7
    assert cr.minimum(x, -1.7).numpy()[0] == -1.7


def test_comparisons_make_bool_tensors_without_grad() -> None:
    x = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    for c in (x < 2, x <= 2, x > 2, x >= 2, x == 2, x != 2, 2 < x, x.eq(2)):
        assert c.dtype == cr.bool and not c.requires_grad and c.grad_fn is None
    np.testing.assert_array_equal((2 < x).numpy(), [False, False, True])
    np.testing.assert_array_equal(((x > 1) & (x < 3)).numpy(), [False, True, False])
    np.testing.assert_array_equal(((x < 2) | (x > 2)).numpy(), [True, False, True])
    np.testing.assert_array_equal((~(x > 1)).numpy(), [True, False, False])
    assert bool((x > 0).all()) and not bool((x > 2).all()) and bool((x > 2).any())


def test_numpy_array_operands() -> None:
    x = cr.ones(3, requires_grad=True)
    y = np.arange(3.0, dtype=np.float32) * x  # NumPy defers to the Tensor
    assert isinstance(y, cr.Tensor) and y.requires_grad
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, 2.0])


# -- properties and conversion ---------------------------------------------------------------


def test_properties() -> None:
    x = cr.ones(2, 3, 4, requires_grad=True)
    assert x.shape == (2, 3, 4) and x.ndim == 3 and x.dim() == 3
    assert x.numel() == 24 and x.size() == (2, 3, 4) and x.size(1) == 3 and x.size(-1) == 4
    assert len(x) == 2 and x.is_leaf and x.grad_fn is None and x.grad is None
    y = x * 2.0
    assert not y.is_leaf and y.grad_fn is not None and y.requires_grad
    assert [t.shape for t in x] == [(3, 4), (3, 4)]


def test_conversion() -> None:
    x = cr.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert x.numpy() is x.numpy()
    np.testing.assert_array_equal(np.asarray(x), x.numpy())
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    assert x.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert cr.tensor([2.5]).item() == 2.5 and isinstance(cr.tensor(3).item(), int)
    assert float(cr.tensor(2.5)) == 2.5 and int(cr.tensor([7])) == 7
    assert bool(cr.tensor([1.0])) and not bool(cr.tensor(0.0))


def test_data_can_be_reassigned() -> None:
    x = cr.ones(2)
    x.data = np.zeros(2, dtype=np.float32)
    np.testing.assert_array_equal(x.numpy(), [0.0, 0.0])


def test_setitem_and_in_place_fills() -> None:
    x = cr.zeros(2, 3)
    x[0, 1:] = 5.0
    x[cr.tensor([1])] = cr.ones(3)
    np.testing.assert_array_equal(x.numpy(), [[0, 5, 5], [1, 1, 1]])
    assert x.fill_(2.0) is x and x.numpy().max() == 2.0
    assert x.zero_() is x and x.numpy().max() == 0.0
    w = cr.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="setitem: a leaf tensor that requires grad"):
        w[0] = 3.0
    with cr.no_grad():
        w[0] = 3.0
    assert w.numpy()[0] == 3.0


def _torch_repr(t: torch.Tensor) -> str:
    return repr(t).replace("torch.", "chainrule.")  # dtype=chainrule.float64, as torch's


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.tensor([1.0, 2.0, 3.0]),
        lambda m: m.tensor([0.0, 0.25, -0.5]),
        lambda m: m.tensor(3.5),
        lambda m: m.tensor(3.0),
        lambda m: m.tensor([[1.5, float("nan")], [float("inf"), -2.0]]),
        lambda m: m.tensor([1e-5, 1.0]),
        lambda m: m.tensor([1e9, 1.0]),
        lambda m: m.tensor([1, 2, 3]),
        lambda m: m.tensor([True, False]),
        lambda m: m.tensor([1.0, 2.0], dtype=m.float64),
        lambda m: m.tensor([1, 2], dtype=m.int32),
        lambda m: m.tensor([]),
        lambda m: m.zeros(0, 3),
        lambda m: m.zeros(0, dtype=m.int64),
        lambda m: m.tensor([1.0, 2.0], requires_grad=True),
        lambda m: m.tensor([1.0, 2.0], requires_grad=True) * 2,
        lambda m: m.arange(30.0).reshape(3, 10) / 7,
        lambda m: m.arange(24.0).reshape(2, 3, 4),
    ],
)
def test_repr_like_torch(make: Any) -> None:
    assert repr(make(cr)) == _torch_repr(make(torch))


def test_repr_of_a_large_tensor_is_summarised_like_torch() -> None:
    ours, theirs = repr(cr.linspace(-1, 1, 2000)), _torch_repr(torch.linspace(-1, 1, 2000))
    assert ours.replace(" ", "") == theirs.replace(" ", "")  # NumPy spaces "..." its own way


# -- indexing forms --------------------------------------------------------------------------

X = np.arange(60.0).reshape(3, 4, 5)
INDEXES = [
    1,
    -1,
    (1, 2, 3),
    slice(1, None),
    (slice(None, None, 2), slice(1, 4, 2)),
    (slice(None), slice(None), slice(None, None, -1)),  # a negative step: NumPy only
    (slice(None, None, -2), 0),
    None,
    (None, 1, None),
    Ellipsis,
    (Ellipsis, 2),
    (0, Ellipsis, None),
    [2, 0, 2, 2],
    ([0, 0], [1, 1], [2, 2]),
    (slice(None), [3, 3, 0]),
    np.array([[0, 1], [1, 1]]),
    np.array([True, False, True]),
    (X[:, :, 0] > 20),
    (X > 30),
    (slice(None), np.array([False, True, True, False])),
]


@pytest.mark.parametrize("form", ["array", "list", "tensor"])
@pytest.mark.parametrize("index", INDEXES, ids=[repr(i)[:40] for i in INDEXES])
def test_indexing_matches_numpy_with_gradient(index: Any, form: str) -> None:
    def convert(i: Any) -> Any:
        if isinstance(i, tuple):
            return tuple(convert(j) for j in i)
        if isinstance(i, (list, np.ndarray)):
            return (
                np.asarray(i).tolist()
                if form == "list"
                else (cr.tensor(np.asarray(i)) if form == "tensor" else np.asarray(i))
            )
        return i

    x = cr.tensor(X, requires_grad=True)
    y = x[convert(index)]
    expected = X[index]
    np.testing.assert_array_equal(y.numpy(), expected)
    g = np.random.default_rng(0).standard_normal(expected.shape)
    y.backward(cr.tensor(g))
    want = np.zeros_like(X)
    np.add.at(want, index, g)  # repeated indices accumulate
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12)


def test_repeated_index_gradient_accumulates() -> None:
    x = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x[[0, 0, 2, 0]].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 0.0, 1.0])


def test_split_and_chunk_sizes_match_torch() -> None:
    t = torch.arange(14.0).reshape(7, 2)
    x = cr.tensor(t.numpy())
    for ours, theirs in [
        (x.split(3), t.split(3)),
        (x.split([2, 5]), t.split([2, 5])),
        (x.split(1, dim=1), t.split(1, dim=1)),
        (x.chunk(3), t.chunk(3)),
        (x.chunk(4), t.chunk(4)),
        (x.chunk(10), t.chunk(10)),
        (cr.chunk(x, 2, 1), torch.chunk(t, 2, 1)),
    ]:
        assert [o.shape for o in ours] == [tuple(s.shape) for s in theirs]
        for o, s in zip(ours, theirs, strict=True):
            np.testing.assert_array_equal(o.numpy(), s.numpy())


def test_max_min_with_dim_return_values_and_indices() -> None:
    x = cr.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 7.0]])
    values, indices = x.max(dim=1)
    assert x.max(1).values is not None and indices.dtype == cr.int64
    np.testing.assert_array_equal(values.numpy(), [5.0, 7.0])
    np.testing.assert_array_equal(indices.numpy(), [1, 0])
    m = x.min(0, keepdim=True)
    assert m.values.shape == (1, 3) and m.indices.shape == (1, 3)
    assert x.max().shape == () and x.max().item() == 7.0


def test_zero_dim_tensors() -> None:
    """Regressions: transpose(0, 0) and max(0) of a 0-d tensor raised bare errors."""
    x = cr.tensor(2.0, requires_grad=True)
    assert x.transpose(0, -1).shape == () and x.T.shape == ()
    values, indices = x.max(0)
    assert values.item() == 2.0 and indices.item() == 0 and values is not x
    assert x.sum(0).shape == () and x.unsqueeze(0).shape == (1,) and x.flatten().shape == (1,)
    assert x[None].shape == (1,) and x[...].shape == ()
    with pytest.raises(ValueError, match="split: needs a tensor of at least 1 dims"):
        x.split(1)  # was a bare IndexError
    values.backward()
    assert x.grad.item() == 1.0


def test_dim_and_keepdim_accept_numpy_names() -> None:
    x = cr.ones(2, 3)
    assert x.sum(axis=1).shape == (2,) and x.mean(axis=0, keepdims=True).shape == (1, 3)
    assert x.amax(axis=(0, 1)).shape == () and x.max(axis=1).values.shape == (2,)
    assert x.argmax(axis=1, keepdims=True).shape == (2, 1)
    with pytest.raises(TypeError, match=r"sum: unexpected keyword arguments \['axes'\]"):
        x.sum(axes=1)


def test_empty_dim_tuple_means_every_dim_as_torch() -> None:
    x = cr.ones(2, 3)
    assert x.sum(()).item() == 6.0 and x.amax(dim=()).shape == ()
    assert x.mean((), keepdim=True).shape == (1, 1)


# -- errors: the op, what is wrong, and every shape involved -------------------------------------


ERRORS = [
    (
        lambda: cr.tensor(1.0).split(1),
        ValueError,
        r"^split: needs a tensor of at least 1 dims; got shape \(\)$",
    ),
    (lambda: cr.tensor(1.0).chunk(2), ValueError, r"^chunk: needs a tensor of at least 1 dims"),
    (
        lambda: cr.ones(2) == "a",
        TypeError,
        r"^equal: cannot compare a tensor of dtype chainrule\.float32 with str$",
    ),
    (
        lambda: cr.grad([cr.ones(1, requires_grad=True) * 2] * 2, [], [cr.ones(1)]),
        ValueError,
        r"^grad: got 1 grad_outputs for 2 outputs; give one per output$",
    ),
    (
        lambda: cr.ones(2, 3) + cr.ones(4),
        ValueError,
        r"^add: shapes \(2, 3\) and \(4,\) cannot be broadcast together$",
    ),
    (
        lambda: cr.ones(2, 3) * cr.ones(2),
        ValueError,
        r"^mul: shapes \(2, 3\) and \(2,\) cannot be broadcast together$",
    ),
    (
        lambda: cr.maximum(cr.ones(3), cr.ones(2)),
        ValueError,
        r"^maximum: shapes \(3,\) and \(2,\) cannot be broadcast together$",
    ),
    (
        lambda: cr.where(cr.ones(2) > 0, cr.ones(3), cr.ones(2)),
        ValueError,
        r"^where: shapes \(2,\), \(3,\) and \(2,\) cannot be broadcast together$",
    ),
    (
        lambda: cr.ones(2) < cr.ones(3),
        ValueError,
        r"shapes \(2,\) and \(3,\) cannot be broadcast together",
    ),
    (
        lambda: cr.ones(2, 3) @ cr.ones(4, 2),
        ValueError,
        r"^matmul: inner dimensions differ; got shapes \(2, 3\) and \(4, 2\)$",
    ),
    (
        lambda: cr.ones(3) @ cr.ones(2),
        ValueError,
        r"^matmul: inner dimensions differ; got shapes \(3,\) and \(2,\)$",
    ),
    (
        lambda: cr.ones(2, 3) @ cr.tensor(2.0),
        ValueError,
        r"^matmul: both operands need at least 1 dim; got shapes \(2, 3\) and \(\)$",
    ),
    (
        lambda: cr.ones(2, 2, 3) @ cr.ones(3, 3, 4),
        ValueError,
        r"^matmul: batch dimensions cannot be broadcast; got shapes \(2, 2, 3\) and \(3, 3, 4\)$",
    ),
    (
        lambda: cr.ones(2, 3).reshape(4, -1),
        ValueError,
        r"^reshape: shape \(4, -1\) is invalid for a tensor of shape \(2, 3\) \(6 elements\)$",
    ),
    (lambda: cr.ones(2, 3).view(7), ValueError, r"^reshape: shape \(7,\) is invalid"),
    (
        lambda: cr.ones(2, 3).sum(2),
        IndexError,
        r"^sum: dim 2 is out of range for a tensor of shape \(2, 3\) "
        r"\(expected a dim in \[-2, 1\]\)$",
    ),
    (lambda: cr.ones(2, 3).softmax(-3), IndexError, r"^softmax: dim -3 is out of range"),
    (
        lambda: cr.ones(2, 3).sum((0, -2)),
        ValueError,
        r"^sum: dim \(0, -2\) repeats a dim; got shape \(2, 3\)$",
    ),
    (
        lambda: cr.ones(2, 3).sum(1.5),
        TypeError,
        r"^sum: dim must be an int or a tuple of ints; got float$",
    ),
    (
        lambda: cr.ones(2, 3).permute(0, 0),
        ValueError,
        r"^permute: dims \(0, 0\) are not a permutation of the 2 dims of a tensor of shape "
        r"\(2, 3\)$",
    ),
    (
        lambda: cr.ones(2, 3).expand(3, 2),
        ValueError,
        r"^expand: shape \(2, 3\) cannot be broadcast to \(3, 2\)$",
    ),
    (
        lambda: cr.ones(2, 3).expand(3),
        ValueError,
        r"^expand: cannot expand shape \(2, 3\) to fewer dims \(3,\)$",
    ),
    (
        lambda: cr.cat([cr.ones(2, 3), cr.ones(3, 2)]),
        ValueError,
        r"^cat: shapes must match except in dim 0; got shapes \[\(2, 3\), \(3, 2\)\]$",
    ),
    (lambda: cr.cat([]), ValueError, r"^cat: expected a non-empty sequence of tensors$"),
    (
        lambda: cr.stack([cr.ones(2), cr.ones(3)]),
        ValueError,
        r"^stack: all tensors must have one shape; got shapes \[\(2,\), \(3,\)\]$",
    ),
    (
        lambda: cr.ones(2, 3).split([1, 1], 1),
        ValueError,
        r"^split: sections \[1, 1\] sum to 2, not to dim 1's size 3; got shape \(2, 3\)$",
    ),
    (
        lambda: cr.einsum("ij,jk", cr.ones(2, 3), cr.ones(3, 2)),
        ValueError,
        r"^einsum: only the explicit form 'ij,jk->ik' .*; got 'ij,jk'$",
    ),
    (lambda: cr.einsum("...i->i", cr.ones(2, 3)), ValueError, r"^einsum: only the explicit form"),
    (
        lambda: cr.einsum("ij,jk->ik", cr.ones(2, 3), cr.ones(2, 3)),
        ValueError,
        r"^einsum: dim 'j' has sizes 3 and 2; got shapes \[\(2, 3\), \(2, 3\)\]$",
    ),
    (
        lambda: cr.einsum("ij->ik", cr.ones(2, 3)),
        ValueError,
        r"^einsum: output 'ik' repeats a letter or names one no input has; got 'ij->ik'$",
    ),
    (
        lambda: cr.einsum("ijk->i", cr.ones(2, 3)),
        ValueError,
        r"^einsum: operand 'ijk' does not fit shape \(2, 3\)",
    ),
    (
        lambda: cr.ones(2, 3)[5],
        IndexError,
        r"^getitem: index 5 is out of bounds for axis 0 with size 2; got shape \(2, 3\)$",
    ),
    (lambda: cr.ones(2, 3)[:, [0, 3]], IndexError, r"^getitem: index 3 is out of bounds"),
    (
        lambda: cr.ones(2, 3)[cr.tensor([True, False, True])],
        IndexError,
        r"^getitem: boolean index did not match .*; got shape \(2, 3\)$",
    ),
    (
        lambda: cr.ones(2, 3)[cr.tensor([0.5])],
        IndexError,
        r"^getitem: index arrays must be integer or bool; got dtype float32$",
    ),
    (
        lambda: cr.ones(2, 3).item(),
        ValueError,
        r"^item: only one-element tensors have an item; got shape \(2, 3\)$",
    ),
    (
        lambda: bool(cr.ones(2)),
        RuntimeError,
        r"^bool: the truth value of a tensor of shape \(2,\) is ambiguous",
    ),
    (
        lambda: cr.where(cr.ones(2), cr.ones(2), 0.0),
        TypeError,
        r"^where: condition must be a bool tensor; got dtype float32$",
    ),
    (
        lambda: cr.tensor([1, 2]).mean(),
        TypeError,
        r"^mean: needs a floating-point tensor; got dtype chainrule\.int64$",
    ),
    (lambda: cr.ones(2).clamp(), ValueError, r"^clamp: at least one of min and max must be given$"),
    (
        lambda: cr.pad(cr.ones(2, 3), (1,)),
        ValueError,
        r"^pad: pad \(1,\) must have an even length of at most 2\*ndim; got shape \(2, 3\)$",
    ),
    (
        lambda: cr.pad(cr.ones(2), (1, 1), mode="wrap"),
        ValueError,
        r"^pad: mode must be one of 'constant', 'reflect', 'replicate', 'circular'; got 'wrap'$",
    ),
    (
        lambda: cr.pad(cr.ones(2), (1, 1), mode="reflect"),
        ValueError,
        r"^pad: mode='reflect' pads the last 1, 2 or 3 dims of an input with one or two dims "
        r"more \(2 or 3 dims for 1, 3 or 4 for 2, 4 or 5 for 3\); got pad \(1, 1\) for shape "
        r"\(2,\)$",
    ),
    (
        lambda: cr.pad(cr.ones(2, 3), (0, 3), mode="reflect"),
        ValueError,
        r"^pad: mode='reflect' needs each padding smaller than the size of the dim it pads; got "
        r"padding \(0, 3\) for dim 1 of size 3 \(shape \(2, 3\)\)$",
    ),
    (
        lambda: cr.pad(cr.ones(2, 3), (4, 0), mode="circular"),
        ValueError,
        r"^pad: mode='circular' needs each padding at most the size of the dim it pads; got "
        r"padding \(4, 0\) for dim 1 of size 3",
    ),
    (
        lambda: cr.pad(cr.ones(2, 0), (1, 0), mode="replicate"),
        ValueError,
        r"^pad: mode='replicate' needs a dim that is not empty; got padding \(1, 0\) for dim 1",
    ),
    (lambda: cr.ones(2, 3).flatten(1, 0), ValueError, r"^flatten: start_dim 1 comes after"),
    (
        lambda: cr.ones(2).mT,
        ValueError,
        r"^mT: needs a tensor of at least 2 dims; got shape \(2,\)$",
    ),
    (
        lambda: cr.ones(2, 3).gather(1, cr.tensor([0, 1])),
        ValueError,
        r"^gather: index must be an integer tensor with 2 dims; got dtype int64 and shape \(2,\)$",
    ),
    (lambda: cr.zeros(0).amax(), ValueError, r"^amax: the tensor is empty; got shape \(0,\)$"),
    (
        lambda: cr.zeros(2, 0).argmax(1),
        ValueError,
        r"^argmax: the tensor is empty over dim 1, "
        r"which has size 0; got shape \(2, 0\)$",
    ),
    (lambda: cr.zeros(0, 2).amax((1, 0)), ValueError, r"^amax: the tensor is empty over dim 0"),
    (lambda: cr.zeros(0, 2).max(0), ValueError, r"^max: the tensor is empty over dim 0"),
    (lambda: cr.tensor("a"), TypeError, r"^tensor: cannot make a tensor of str"),
    (lambda: cr.tensor([1.0], dtype="float8"), TypeError, r"^dtype: unknown dtype name 'float8'"),
    (
        lambda: ~cr.ones(2),
        TypeError,
        r"^invert: needs a bool or integer tensor; got dtype chainrule\.float32$",
    ),
    (lambda: cr.ones(2) + "a", TypeError, r"^add: unsupported operand of type str with a Tensor$"),
    (lambda: cr.ones(2, 3).size(2), IndexError, r"^size: dim 2 is out of range"),
    (lambda: len(cr.tensor(1.0)), TypeError, r"^len: a 0-d tensor has no len\(\)$"),
    (
        lambda: cr.tensor([True]) - cr.tensor([True]),
        TypeError,
        r"^sub: not defined for bool tensors, as in PyTorch; got dtype chainrule\.bool$",
    ),
    (lambda: cr.ones(2, 3).split(0), ValueError, r"^split: split_size must be positive; got 0$"),
    (lambda: cr.ones(2, 3).chunk(0), ValueError, r"^chunk: chunks must be positive; got 0$"),
]


@pytest.mark.parametrize(("call", "kind", "pattern"), ERRORS, ids=[e[2][:40] for e in ERRORS])
def test_errors_name_the_op_and_shapes(call: Any, kind: type, pattern: str) -> None:
    with pytest.raises(kind, match=pattern):
        call()


def test_forward_errors_keep_the_exception_type_and_drop_numpys_traceback() -> None:
    with pytest.raises(ValueError) as info:
        cr.ones(2, 3) + cr.ones(4)
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_clamp_with_tensor_bounds_and_integer_input() -> None:
    data = [0.0, 1.0, 2.0, 3.0]
    x, tx = cr.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    lo = [0.5, 0.5, 2.5, 2.5]
    y = x.clamp(min=cr.tensor(lo), max=cr.tensor(2.0))
    ty = tx.clamp(min=torch.tensor(lo), max=torch.tensor(2.0))
    np.testing.assert_array_equal(y.numpy(), ty.detach().numpy())
    y.backward(cr.tensor([1.0, 2.0, 3.0, 4.0]))
    ty.backward(torch.tensor([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    # an integer tensor clamped to a float bound becomes float32, as in PyTorch
    assert cr.tensor([1, 5]).clamp(0.5, 2.5).dtype == cr.float32
    assert cr.tensor([1, 5]).clamp(0, 2).dtype == cr.int64


def test_max_min_family_over_the_non_empty_dims_of_an_empty_tensor() -> None:
    """Regression: amax/amin/argmax/argmin/max/min refused any empty tensor; reduced over
    dims that have elements they give an empty result, as PyTorch, with a gradient."""
    for shape, dim in [((0, 3), 1), ((3, 0, 2), 2), ((0, 3), (1,))]:
        for op in ("amax", "amin", "argmax", "argmin", "max", "min"):
            if isinstance(dim, tuple) and op not in ("amax", "amin"):  # one dim only
                continue
            x = cr.zeros(*shape, requires_grad=True)
            ours = getattr(x, op)(dim)
            theirs = getattr(torch.zeros(*shape), op)(dim)
            if op in ("max", "min"):
                ours, theirs = ours[0], theirs[0]
                assert getattr(x, op)(dim)[1].dtype == np.int64
            assert ours.shape == tuple(theirs.shape), (op, shape, dim)
            if ours.dtype.kind == "f":
                ours.sum().backward()
                assert x.grad.shape == shape and x.grad.numpy().size == 0


def test_flip_shares_no_memory_with_its_input_as_in_torch() -> None:
    for lib in (cr, torch):
        x = lib.tensor([1.0, 2.0, 3.0])
        y = x.flip(0)
        y[0] = 9.0
        assert x.tolist() == [1.0, 2.0, 3.0] and y.tolist() == [9.0, 2.0, 1.0]
