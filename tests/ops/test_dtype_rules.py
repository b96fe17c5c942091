"""dtypes as PyTorch decides them: integer and bool inputs to floating ops compute in
float32, cat promotes as torch.cat, a layer refuses an input of another dtype, and arrays
chainrule cannot hold are refused when the tensor is made."""

from __future__ import annotations

import inspect
import warnings
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.ops import test_ops as catalog

FLOATING = ["sigmoid", "exp", "log", "tanh", "sqrt", "sin", "cos", "erf"]


@pytest.mark.parametrize("op", FLOATING)
@pytest.mark.parametrize("values", [[1, 2, 3], [True, False, True]], ids=["int64", "bool"])
def test_floating_ops_of_integers_compute_in_float32_as_torch(op, values) -> None:
    ours = getattr(cr.tensor(values), op)()
    theirs = getattr(torch.tensor(values), op)()
    assert ours.dtype == cr.float32 and str(theirs.dtype) == "torch.float32"
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_reductions_of_integers_compute_in_float32() -> None:
    i = cr.tensor([[1, 2, 3], [4, 5, 7]])
    t = torch.tensor([[1, 2, 3], [4, 5, 7]])
    np.testing.assert_allclose(i.logsumexp(1).numpy(), t.logsumexp(1).numpy(), rtol=1e-6)
    for out in (i.logsumexp(1), i / 2, 1 / i):
        assert out.dtype == cr.float32


@pytest.mark.parametrize("op", ["softmax", "log_softmax", "norm"])
def test_softmax_and_norm_of_integers_are_refused_as_torch(op) -> None:
    """They computed in float32; torch has no integer kernel for them (softmax's) or refuses
    integers by name (linalg.vector_norm's)."""
    args = () if op == "norm" else (1,)
    with pytest.raises(RuntimeError):
        getattr(torch.tensor([[1, 2]]), op)(*args)
    with pytest.raises(
        TypeError, match=rf"^{op}: needs a floating-point tensor; got dtype chainrule\.int64$"
    ):
        getattr(cr.tensor([[1, 2]]), op)(*args)
    assert getattr(cr.tensor([[1.0, 2.0]]), op)(*args).dtype == cr.float32


@pytest.mark.parametrize(
    "dtypes",
    [
        ("float32", "int64"),
        ("int64", "float32"),
        ("float64", "float32"),
        ("int64", "bool"),
        ("int32", "int64"),
        ("bool", "float32", "int64"),
    ],
)
def test_cat_promotes_as_torch(dtypes) -> None:
    ours = cr.cat([cr.ones(2, dtype=getattr(cr, "bool" if d == "bool" else d)) for d in dtypes])
    theirs = torch.cat([torch.ones(2, dtype=getattr(torch, d)) for d in dtypes])
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "chainrule.")


def test_cat_of_a_float_and_an_integer_tensor_gives_float_gradients() -> None:
    x = cr.ones(2, requires_grad=True)
    y = cr.cat([x, cr.tensor([3, 4])])
    (y * cr.arange(4.0)).sum().backward()
    assert x.grad.dtype == cr.float32 and x.grad.tolist() == [0.0, 1.0]


def test_a_layer_refuses_an_input_of_another_dtype_as_torch() -> None:
    layer = cr.nn.Linear(3, 2)
    for x in (cr.tensor([[1, 2, 3]]), cr.ones(1, 3, dtype=cr.float64)):
        with pytest.raises(RuntimeError, match=r"^Linear: input and weight must have the same"):
            layer(x)
        with pytest.raises(RuntimeError):
            torch.nn.Linear(3, 2)(torch.tensor(x.numpy()))
    assert layer(cr.ones(1, 3)).dtype == cr.float32
    with pytest.raises(RuntimeError, match=r"^linear: input and weight must have the same"):
        cr.nn.functional.linear(cr.tensor([[1, 2, 3]]), layer.weight)


@pytest.mark.parametrize(
    "array",
    [np.array([1 + 2j]), np.array([object()]), np.array(["a"])],
    ids=["complex", "object", "str"],
)
def test_arrays_chainrule_cannot_hold_are_refused_when_made(array) -> None:
    with pytest.raises(TypeError, match=f"^tensor: cannot make a tensor of .*{array.dtype}"):
        cr.tensor(array)


# -- every catalog row, in each dtype a program may hand it --------------------------------

DTYPES = ["int64", "int32", "uint8", "bool", "float16", "bfloat16"]


def _user_rows() -> list[Any]:
    """The catalog's rows that call what a user calls (not a primitive's apply directly:
    those meet their checks at the boundary, tests/nn/test_functional_dtypes.py)."""
    return [r for r in catalog.ROWS if ".apply(" not in inspect.getsource(r.fn)]


def _values(shape: Any, dtype: str) -> Any:
    """Small values of the dtype: 1 to 3 for integers (every domain's), 0 and 1 for bool,
    [0.5, 2) for the half floats."""
    if shape is catalog.NUM:
        return shape
    rng = np.random.default_rng(0)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype in ("float16", "bfloat16"):
        return rng.uniform(0.5, 2.0, shape)
    return rng.integers(1, 4, shape)


def _call(lib: Any, row: Any, dtype: str) -> Any:
    args = [
        a if a is catalog.NUM else lib.tensor(np.asarray(a)).to(getattr(lib, dtype))
        for a in (_values(s, dtype) for s in row.shapes)
    ]
    fn = row.fn if lib is cr else (row.torch_fn or row.fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return catalog._outs(fn(lib, *args))
        except (RuntimeError, TypeError, ValueError, NotImplementedError, IndexError) as e:
            return e


# Where chainrule still differs from torch, each with the reason: an xfail that must fail,
# so a fixed one is taken off the list. INTS: int64, int32 and uint8.
INTS = ("int64", "int32", "uint8")
_BF16 = "computes bfloat16 in another dtype or refuses it (NumPy has no bfloat16 loops)"
KNOWN: dict[str, tuple[tuple[str, ...], str]] = {
    "topk": (INTS, "ties among integers come in another order (both are valid)"),
    "scatter_fn_value": (("uint8",), "a negative value is refused for uint8; torch wraps it"),
    "pad_two_dims_value": (("uint8",), "a pad value out of uint8's range is wrapped, not refused"),
    "threshold": (("uint8",), "a value out of uint8's range is wrapped, not refused"),
    "scaled_dot_product_attention": (("bfloat16",), _BF16),
    "scaled_dot_product_attention_causal": (("bfloat16",), _BF16),
    "scaled_dot_product_attention_float_mask": (("bfloat16",), _BF16),
    "cross_entropy_probabilities": (("bfloat16",), _BF16),
}
for _n in ("maximum", "minimum"):
    for _s in ("[(2,3)&num]", "[num&(2,3)]"):
        KNOWN[_n + _s] = (INTS + ("bool",), "torch's call makes the number an integer tensor")
_EINSUMS = ("ij,jk->ik", "bij,bjk->bik", "i,i->", "ij,kl->ijkl", "ij,j->i", "bi,bi->b")
for _n in (*_EINSUMS, "ij->j", "ij->", "ij,k->i"):
    KNOWN[f"einsum[{_n}]"] = (("bfloat16",), _BF16)


def _known(row: str, dtype: str) -> str | None:
    dtypes, why = KNOWN.get(row, ((), ""))
    return why if dtype in dtypes else None


CASES = [
    pytest.param(
        row,
        dtype,
        id=f"{row.name}-{dtype}",
        marks=[pytest.mark.xfail(strict=True, reason=why)]
        if (why := _known(row.name, dtype))
        else [],
    )
    for row in _user_rows()
    for dtype in DTYPES
]


@pytest.mark.parametrize(("row", "dtype"), CASES)
def test_every_catalog_row_takes_or_refuses_a_dtype_as_torch(row: Any, dtype: str) -> None:
    """leaky_relu of an int64 tensor gave integers, softmax of one float32: torch refuses
    both. Where torch refuses a dtype, chainrule refuses it naming the op; where torch takes
    it, chainrule's results have its dtypes and values (some chainrule ops compute bfloat16
    in float32: their results are float32, with bfloat16's precision)."""
    theirs, ours = _call(torch, row, dtype), _call(cr, row, dtype)
    if isinstance(theirs, Exception):
        assert isinstance(ours, Exception), f"torch refuses: {theirs}; ours gave a result"
        assert isinstance(ours, (RuntimeError, TypeError, ValueError)), repr(ours)
        op = str(ours).split(":")[0]  # the row's op, or one its call makes (a loss's softmax)
        named = op.isidentifier() and (op in row.name or op in inspect.getsource(row.fn))
        assert named, f"the message names no op of the row: {ours}"
        return
    assert not isinstance(ours, Exception), f"torch takes it; we refused: {ours}"
    for o, t in zip(ours, theirs, strict=True):
        if not isinstance(t, torch.Tensor):
            continue
        expected = {str(t.dtype).removeprefix("torch.")}
        if expected == {"bfloat16"}:  # a chainrule op may compute bfloat16 in float32
            expected.add("float32")
        assert str(o.dtype).removeprefix("chainrule.") in expected
        close = 2e-2 if dtype in ("float16", "bfloat16") else 1e-5
        np.testing.assert_allclose(
            o.detach().float().numpy(), t.detach().float().numpy(), rtol=close, atol=close
        )
