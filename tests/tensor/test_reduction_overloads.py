"""The reductions' rarer arguments against PyTorch: var and std's overloads (unbiased by
position, correction=None), the dtype= of cumsum, cumprod, prod, softmax and log_softmax,
the int64 result of an integer einsum that sums a letter alone, and norm's orders 0, 'fro'
and 'nuc'."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.helpers import torch_dtype_text

X = np.random.default_rng(0).standard_normal((3, 4, 5))


def _both(call: str, data: Any = X, requires_grad: bool = False) -> tuple[Any, Any]:
    """``call`` (an expression in x and M, the module) run on chainrule and on torch."""
    ours = cr.tensor(data, requires_grad=requires_grad)
    theirs = torch.tensor(data, requires_grad=requires_grad)
    return eval(call, {"x": ours, "M": cr}), eval(call, {"x": theirs, "M": torch})


def _outs(value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, tuple) else (value,)


def _assert_same(ours: Any, theirs: Any) -> None:
    for o, t in zip(_outs(ours), _outs(theirs), strict=True):
        assert tuple(o.shape) == tuple(t.shape)
        assert torch_dtype_text(o.dtype) == str(t.dtype)
        close = 1e-12 if t.dtype != torch.float32 else 1e-6  # float32: NumPy's and torch's
        np.testing.assert_allclose(o.numpy(), t.detach().numpy(), rtol=close, atol=close)


def _assert_same_gradients(ours: Any, theirs: Any, x: Any, tx: Any) -> None:
    rng = np.random.default_rng(1)
    outs, touts = _outs(ours), _outs(theirs)
    ups = [rng.standard_normal(tuple(o.shape)) for o in outs]
    (g,) = cr.grad(list(outs), x, [cr.tensor(u) for u in ups])
    (t,) = torch.autograd.grad(list(touts), tx, [torch.tensor(u) for u in ups])
    np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-10, atol=1e-12)


# -- var and std: PyTorch's three overloads --------------------------------------------------

SPREADS = [
    "x.{op}(True)",
    "x.{op}(False)",
    "x.{op}(0, True)",
    "x.{op}(1, False, True)",
    "x.{op}((0, 2), unbiased=False, keepdim=True)",
    "x.{op}(None, True)",
    "x.{op}(unbiased=False)",
    "x.{op}(correction=None)",
    "x.{op}(1, correction=None, keepdim=True)",
    "x.{op}(2, correction=0.5)",
    "M.{op}(x, False)",
    "M.{op}(x, 1, True)",
    "M.{op}(x, dim=0, correction=None)",
]
PAIRS = [
    "M.{op}_mean(x, True)",
    "M.{op}_mean(x, 0, False, True)",
    "M.{op}_mean(x, (0, 1), unbiased=True)",
    "M.{op}_mean(x, correction=None)",
    "M.{op}_mean(x, 2, keepdim=True, correction=0)",
]


@pytest.mark.parametrize("op", ["var", "std"])
@pytest.mark.parametrize("call", SPREADS + PAIRS)
def test_var_and_std_overloads_match_torch(op: str, call: str) -> None:
    x, tx = cr.tensor(X, requires_grad=True), torch.tensor(X, requires_grad=True)
    ours = eval(call.format(op=op), {"x": x, "M": cr})
    theirs = eval(call.format(op=op), {"x": tx, "M": torch})
    _assert_same(ours, theirs)
    _assert_same_gradients(ours, theirs, x, tx)


def test_var_refuses_unbiased_and_correction_together() -> None:
    x = cr.tensor(X)
    with pytest.raises(TypeError, match="var: give unbiased or correction, not both"):
        x.var(0, True, correction=1)
    with pytest.raises(TypeError, match="std: unbiased must be a bool; got int"):
        x.std(0, 1)
    with pytest.raises(TypeError, match="var: unbiased given twice"):
        cr.var(x, True, False)


# -- dtype= ------------------------------------------------------------------------------

INTS = np.arange(1, 13).reshape(3, 4) % 5
DTYPED = [
    ("x.cumsum(1, dtype=M.int32)", INTS.astype(np.int32)),
    ("M.cumsum(x, 0, dtype=M.int8)", (INTS * 40).astype(np.int8)),  # wraps as int8, as torch
    ("M.cumprod(x, 1, dtype=M.int32)", INTS.astype(np.int32)),
    ("x.cumprod(0, dtype=M.int32)", INTS + 0.5),  # the input cast first
    ("x.cumsum(0)", INTS.astype(np.int32)),  # no dtype: int64
    ("x.prod(dtype=M.int32)", INTS.astype(np.int32)),
    ("M.prod(x, 1, dtype=M.bool)", INTS.astype(np.int32)),
    ("x.prod(0, True, dtype=M.bool)", INTS > 1),
    ("x.prod(1)", INTS > 1),  # no dtype: int64
    ("M.prod(x, 1, dtype=M.int32)", np.ones((2, 0), np.int32)),
    ("x.prod(dtype=M.bool)", np.ones((0,), bool)),
    ("x.softmax(1, M.float64)", X[0].astype(np.float32)),
    ("M.log_softmax(x, 0, dtype=M.float64)", X[0].astype(np.float32)),
    ("M.softmax(x, 0, dtype=M.float32)", INTS),
    ("x.log_softmax(-1, dtype=M.float32)", INTS > 2),
]


@pytest.mark.parametrize(("call", "data"), DTYPED, ids=[c for c, _ in DTYPED])
def test_dtype_keyword_matches_torch(call: str, data: Any) -> None:
    _assert_same(*_both(call, data))


@pytest.mark.parametrize(
    "call", ["x.softmax(1, dtype=M.float64)", "M.log_softmax(x, 0, M.float64)", "x.prod(1)"]
)
def test_dtype_keyword_gradients_match_torch(call: str) -> None:
    data = X[0].astype(np.float32)
    x, tx = cr.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    ours, theirs = eval(call, {"x": x, "M": cr}), eval(call, {"x": tx, "M": torch})
    _assert_same(ours, theirs)
    rng = np.random.default_rng(2)
    up = rng.standard_normal(tuple(ours.shape)).astype(str(theirs.dtype)[6:])
    (g,) = cr.grad(ours, x, cr.tensor(up))
    (t,) = torch.autograd.grad(theirs, tx, torch.tensor(up))
    assert torch_dtype_text(g.dtype) == str(t.dtype)
    np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("call", "shape"), [("x.prod()", (0,)), ("M.prod(x, 1, True)", (2, 0))])
def test_empty_product_has_gradient_zero(call: str, shape: tuple[int, ...]) -> None:
    x, tx = (
        cr.zeros(shape, dtype=cr.float64, requires_grad=True),
        torch.zeros(shape, dtype=torch.float64, requires_grad=True),
    )
    ours, theirs = eval(call, {"x": x, "M": cr}), eval(call, {"x": tx, "M": torch})
    _assert_same(ours, theirs)
    assert ours.requires_grad
    _assert_same_gradients(ours, theirs, x, tx)


# -- einsum: the int64 of a letter summed alone ------------------------------------------------

EINSUMS = [
    ("i->", [(3,)]),
    ("i->", [(1,)]),
    ("ij->i", [(2, 3)]),
    ("ij->j", [(2, 1)]),
    ("i->i", [(3,)]),
    ("ij->ji", [(2, 3)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij,k->k", [(2, 3), (4,)]),
    ("ij,k->k", [(1, 1), (4,)]),
    ("i,j->", [(1,), (3,)]),
    ("i,j->", [(1,), (1,)]),
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("i,i->", [(3,), (3,)]),
    ("k,ij->jk", [(4,), (2, 3)]),
]


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.int64, bool])
@pytest.mark.parametrize(("equation", "shapes"), EINSUMS, ids=[e for e, _ in EINSUMS])
def test_integer_einsum_dtype_matches_torch(equation: str, shapes: list, dtype: Any) -> None:
    rng = np.random.default_rng(3)
    arrays = [rng.integers(0, 3, s).astype(dtype) for s in shapes]
    try:
        theirs = torch.einsum(equation, *[torch.tensor(a) for a in arrays])
    except RuntimeError:  # torch has no bool contraction (bmm); chainrule refuses it too
        with pytest.raises(TypeError, match="einsum"):
            cr.einsum(equation, *[cr.tensor(a) for a in arrays])
        return
    _assert_same(cr.einsum(equation, *[cr.tensor(a) for a in arrays]), theirs)


# -- norm's orders 0, 'fro' and 'nuc' ---------------------------------------------------------

NORMS = [
    "x.norm(0)",
    "M.norm(x, 0, 1, True)",
    "x.norm()",
    "x.norm('fro', 1)",
    "M.norm(x, 'fro', (0, 2), True)",
    "x.norm('fro', [])",
    "x[0].norm('nuc')",
    "x[:, :2].norm('nuc', (0, 1), True)",
    "M.norm(x, 'nuc', [1, 2])",
    "x.norm('nuc', (2, 0))",
    "M.norm(x, 'nuc', (-1, -2), True)",
]


@pytest.mark.parametrize("call", NORMS)
def test_norm_orders_by_name_match_torch(call: str) -> None:
    x, tx = cr.tensor(X, requires_grad=True), torch.tensor(X, requires_grad=True)
    ours, theirs = eval(call, {"x": x, "M": cr}), eval(call, {"x": tx, "M": torch})
    _assert_same(ours, theirs)
    rng = np.random.default_rng(4)
    up = rng.standard_normal(tuple(ours.shape))
    (g,) = cr.grad(ours, x, cr.tensor(up), allow_unused=True)
    (t,) = torch.autograd.grad(theirs, tx, torch.tensor(up), allow_unused=True)
    assert (g is None) == (t is None)  # order 0: no gradient in either
    if t is not None:
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 3, 4)])
def test_nuclear_norm_gradients_against_finite_differences(shape: tuple[int, ...]) -> None:
    x = cr.tensor(np.random.default_rng(5).standard_normal(shape), requires_grad=True)
    f = lambda t: t.norm("nuc", (-2, -1))  # noqa: E731
    assert cr.testing.gradcheck(f, (x,))
    assert cr.testing.gradgradcheck(f, (x,))


def test_nuclear_norm_of_an_empty_matrix_is_zero() -> None:
    _assert_same(*_both("x.norm('nuc')", np.ones((3, 0))))
    _assert_same(*_both("x.norm('nuc', keepdim=True)", np.ones((0, 3))))


def test_norm_orders_by_name_refuse_what_torch_refuses() -> None:
    x = cr.tensor(X)
    with pytest.raises(ValueError, match="norm: order 'max' is not supported"):
        x.norm("max")
    with pytest.raises(ValueError, match=r"norm: order 'nuc' is a matrix norm, over 2 dims; got"):
        x.norm("nuc")
    with pytest.raises(ValueError, match=r"norm: order 'fro' is a matrix norm, over 2 dims; got"):
        x.norm("fro", (0, 1, 2))
    with pytest.raises(ValueError, match=r"norm: dim \(1, -2\) names dim 1 twice"):
        x.norm("nuc", (1, -2))
    with pytest.raises(TypeError, match="norm"):
        cr.tensor(INTS).norm("nuc")
    with pytest.raises(TypeError, match="norm: order 'nuc' needs float32 or float64; got dtype"):
        cr.ones(3, 3, dtype=cr.bfloat16).norm("nuc")
