"""clamp with tensor bounds, div's rounding modes and integer powers, against PyTorch:
values, dtypes, gradients (also by central differences) and node names."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr

RNG = np.random.default_rng(11)


def _pair(values: np.ndarray) -> tuple[cr.Tensor, torch.Tensor]:
    grad = values.dtype.kind == "f"
    return cr.tensor(values, requires_grad=grad), torch.tensor(values, requires_grad=grad)


@pytest.mark.parametrize(
    ("op", "lo_shape", "hi_shape"),
    [
        ("clamp", (5, 1), None),
        ("clamp", None, (3,)),
        ("clamp", (3,), (5, 1)),
        ("clamp", (5, 3), (5, 3)),  # lo above hi in places: hi takes the gradient there
        ("clamp_min", (5, 1), None),
        ("clamp_max", None, (1, 3)),
    ],
)
def test_tensor_bounds_take_their_gradient_where_they_bind(op, lo_shape, hi_shape) -> None:
    # (the input has the broadcast shape: PyTorch's backward fails where it has not)
    (cx, tx) = _pair(RNG.standard_normal((5, 3)))
    bounds = [None if s is None else _pair(RNG.standard_normal(s)) for s in (lo_shape, hi_shape)]
    ours_args = [b[0] for b in bounds if b is not None]
    theirs_args = [b[1] for b in bounds if b is not None]
    if op == "clamp":
        ours = cr.clamp(cx, *(None if b is None else b[0] for b in bounds))
        theirs = torch.clamp(tx, *(None if b is None else b[1] for b in bounds))
    else:
        ours, theirs = getattr(cr, op)(cx, *ours_args), getattr(torch, op)(tx, *theirs_args)
    assert ours.grad_fn.name() == theirs.grad_fn.name()
    np.testing.assert_array_equal(ours.numpy(), theirs.detach().numpy())
    g = RNG.standard_normal(tuple(theirs.shape))
    ours.backward(cr.tensor(g))
    theirs.backward(torch.tensor(g))
    for a, b in zip([cx, *ours_args], [tx, *theirs_args], strict=True):
        assert a.grad.shape == a.shape  # a broadcast bound's gradient is a sum: not bit-equal
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12, atol=1e-15)


def test_tensor_bound_gradient_by_central_differences() -> None:
    x, lo = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 1))
    cx, clo = cr.tensor(x, requires_grad=True), cr.tensor(lo, requires_grad=True)
    hi = cr.tensor([0.8], dtype=cr.float64)  # a tensor too: PyTorch has no mixed overload
    assert cr.testing.gradcheck(lambda a, b: a.clamp(min=b, max=hi), (cx, clo))


def test_clamp_dtype_is_result_types_and_in_place_forms_match() -> None:
    x = cr.tensor([1.0, 2.0, 3.0])
    assert x.clamp(cr.tensor([2], dtype=cr.int32)).dtype == cr.float32
    assert x.clamp(cr.tensor(2.0, dtype=cr.float64)).dtype == cr.float32  # a 0-d bound
    assert x.clamp(cr.tensor([2.0], dtype=cr.float64)).dtype == cr.float64
    assert cr.tensor([1, 2]).clamp(cr.tensor(1.5, dtype=cr.float64)).dtype == cr.float64
    t = torch.tensor([1.0, 2.0, 3.0], requires_grad=True) * 1
    c = cr.tensor([1.0, 2.0, 3.0], requires_grad=True) * 1
    assert c.clamp_(cr.tensor([2.5, 0.0, 2.5])) is c
    t.clamp_(torch.tensor([2.5, 0.0, 2.5]))
    assert c.grad_fn.name() == t.grad_fn.name() == "ClampBackward0"
    np.testing.assert_array_equal(c.detach().numpy(), t.detach().numpy())
    with pytest.raises(RuntimeError, match=r"clamp_: the result's shape \(5, 3\)"):
        cr.zeros(3).clamp_(cr.zeros(5, 1))
    with pytest.raises(ValueError, match=r"clamp: shapes \(3,\) and \(4,\) cannot be broadcast"):
        cr.zeros(3).clamp(cr.zeros(4))


BOOLS = np.array([True, False, True])
INTS = np.array([1, 5, -3])
# (a bool or int tensor's) bounds: numbers, or arrays made tensors
BOUNDS = [
    {"max": False}, {"min": True}, {"min": False, "max": True}, {"min": 0}, {"max": 1},
    {"min": 0.5}, {"min": True, "max": 0}, {"min": BOOLS}, {"max": BOOLS}, {"min": INTS},
    {"min": BOOLS, "max": BOOLS}, {"min": BOOLS, "max": np.array(False)},
    {"min": BOOLS, "max": INTS},
]  # fmt: skip


@pytest.mark.parametrize("bounds", BOUNDS, ids=str)
@pytest.mark.parametrize("values", [BOOLS, INTS], ids=["bool", "int64"])
@pytest.mark.parametrize("name", ["clamp", "clip", "clamp_", "clip_"])
def test_clamp_of_bools_answers_or_refuses_as_torch(name: str, values, bounds) -> None:  # noqa: ANN001
    results = []
    for lib in (torch, cr):
        given = {k: lib.tensor(v) if isinstance(v, np.ndarray) else v for k, v in bounds.items()}
        try:
            out = getattr(lib.tensor(values), name)(**given)
        except (NotImplementedError, TypeError, RuntimeError) as e:
            results.append(e)
        else:
            results.append((str(out.dtype).split(".")[1], out.tolist()))
    theirs, ours = results
    if isinstance(theirs, NotImplementedError):  # PyTorch's kernels for bool results are missing
        assert isinstance(ours, TypeError)
        assert "clamp: not implemented for bool, as in PyTorch; got a bool tensor" in str(ours)
    elif isinstance(theirs, tuple):
        assert ours == theirs
    else:  # an in-place result PyTorch cannot cast back
        assert isinstance(ours, RuntimeError)


def test_clamp_min_and_max_of_bool_numbers_are_refused() -> None:
    for name in ("clamp_min", "clamp_max", "clamp_min_", "clamp_max_"):
        with pytest.raises(NotImplementedError):
            getattr(torch.tensor(BOOLS), name)(True)
        op = name.rstrip("_")
        with pytest.raises(TypeError, match=rf"{op}: not implemented for bool, as in PyTorch"):
            getattr(cr.tensor(BOOLS), name)(True)
        assert getattr(cr.tensor(BOOLS), name)(cr.tensor(BOOLS)).tolist() == BOOLS.tolist()


def test_number_bounds_keep_their_node_names() -> None:
    x, t = cr.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    for name in ("clamp_min", "clamp_max"):
        assert getattr(x, name)(0.5).grad_fn.name() == getattr(t, name)(0.5).grad_fn.name()
    assert x.clamp(0, 1).grad_fn.name() == t.clamp(0, 1).grad_fn.name() == "ClampBackward1"
    y = x.clamp_min(0.1)
    y.sum().backward()  # the name outlives the freed graph
    assert y.grad_fn.name() == "ClampMinBackward0"


@pytest.mark.parametrize("mode", ["floor", "trunc"])
@pytest.mark.parametrize("dtype", ["float64", "int64", "int32"])
def test_div_rounding_modes_as_torch(mode: str, dtype: str) -> None:
    a = np.array([7, -7, 5, -5, 0, 9], dtype=dtype)
    b = np.array([2, 2, -3, -3, 4, -2], dtype=dtype)
    theirs = torch.div(torch.tensor(a), torch.tensor(b), rounding_mode=mode)
    ours = cr.div(cr.tensor(a), cr.tensor(b), rounding_mode=mode)
    assert ours.dtype.name == dtype
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    c = cr.tensor(a)
    assert c.div_(cr.tensor(b), rounding_mode=mode) is c
    np.testing.assert_array_equal(c.numpy(), theirs.numpy())


@pytest.mark.parametrize("mode", ["floor", "trunc"])
def test_div_rounding_gradients_are_zeros_as_torch(mode: str) -> None:
    (ca, ta), (cb, tb) = _pair(RNG.standard_normal(4)), _pair(RNG.standard_normal((3, 1)))
    ours, theirs = ca.div(cb, rounding_mode=mode), ta.div(tb, rounding_mode=mode)
    assert ours.grad_fn.name() == theirs.grad_fn.name() == "DivBackward2"
    ours.backward(cr.full((3, 4), float("nan")))
    theirs.backward(torch.full((3, 4), float("nan")))
    for c, t in ((ca, ta), (cb, tb)):
        np.testing.assert_array_equal(c.grad.numpy(), t.grad.numpy())
    assert not ca.grad.numpy().any()


def test_floor_divide_has_no_derivative_as_torch() -> None:
    x = cr.randn(3, requires_grad=True)
    out = x // 2.0
    assert out.grad_fn.name() == (torch.randn(3, requires_grad=True) // 2.0).grad_fn.name()
    with pytest.raises(RuntimeError, match="floor_divide: the derivative is not implemented"):
        out.sum().backward()


@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_integer_powers_with_negative_exponents_as_torch(dtype: str) -> None:
    exps = np.array([-3, -2, -1, 0, 1, 2], dtype=dtype)
    for base in (0, 1, -1, 2, -3):
        theirs = base ** torch.tensor(exps)
        ours = base ** cr.tensor(exps)
        assert ours.dtype.name == dtype
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        zero_d = cr.tensor(base, dtype=getattr(cr, dtype)) ** cr.tensor(exps)
        np.testing.assert_array_equal(zero_d.numpy(), theirs.numpy())
    with pytest.raises(ValueError, match="pow: Integers to negative integer powers"):
        cr.tensor([2, 3]) ** -1  # a number exponent: PyTorch refuses it too


@pytest.mark.parametrize(
    "bounds",
    [
        lambda m: (m.tensor([1.5, 1.5]), 1.8),
        lambda m: (1.0, m.tensor([1.5, 1.5])),
        lambda m: (m.tensor(1.0, requires_grad=True), 1.8),
        lambda m: (m.tensor(1.0), 1.8),  # a 0-d tensor without grad passes for a number
        lambda m: (1, m.tensor(1.8)),
        lambda m: (m.tensor([1.5, 1.5]), None),
    ],
)
def test_a_tensor_bound_beside_a_number_answers_or_refuses_as_torch(bounds) -> None:  # noqa: ANN001
    results = []
    for m in (torch, cr):
        x = m.tensor([1.0, 2.0])
        try:
            results.append(x.clamp(*bounds(m)).tolist())
        except TypeError as err:
            results.append(type(err))
    assert results[0] == results[1]
    if results[1] is TypeError:
        with pytest.raises(TypeError, match="clamp: min and max must be both numbers or both"):
            cr.tensor([1.0, 2.0]).clip_(*bounds(cr))
