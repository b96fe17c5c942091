"""Type promotion as PyTorch's, in one function (chainrule.array.result_type, cr.result_type):
checked against torch.result_type over every pair of chainrule's dtypes as ranked and 0-d
tensors and with Python numbers, and through the binary ops themselves."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.helpers import torch_dtype_text

# every dtype chainrule names (uint16, uint32 and uint64 too), from the package itself
DTYPES = sorted({repr(v).removeprefix("chainrule.") for v in vars(cr).values()
                 if isinstance(v, cr.dtype)})  # fmt: skip
KINDS = ["ranked", "0-d"]
# Python ints up to the ends of what torch takes as a scalar, [-2**63, 2**64), and past them
NUMBERS = [True, 3, 300, -1, 2.5, 1e5, 2**63 - 1, 2**63 + 1, 2**64 - 1, -(2**63)]
BEYOND = [2**64, -(2**63) - 1, 10**30]


def _make(lib: Any, dtype: str, kind: str) -> Any:
    return lib.ones(2 if kind == "ranked" else (), dtype=getattr(lib, dtype))


def _outcome(lib: Any, call: Any, *args: Any) -> str:
    """The dtype a promotion gives, as torch prints it, or "refused" with our message
    naming ``op`` (torch's promotion errors are RuntimeErrors, ours TypeErrors; a Python
    int out of range is an OverflowError in both)."""
    try:
        return torch_dtype_text(call(*args)) if lib is cr else str(call(*args))
    except (RuntimeError, TypeError, OverflowError) as e:
        if lib is cr:
            assert str(e).startswith(("result_type: ", "promote_types: ")), str(e)
        return "refused"


def test_the_table_holds_the_unsigned_dtypes_torch_does_not_promote() -> None:
    assert {"uint16", "uint32", "uint64", "bool", "int64", "float64"} <= set(DTYPES)


@pytest.mark.parametrize("kinds", list(itertools.product(KINDS, KINDS)), ids=str)
def test_every_pair_of_dtypes_meets_where_torchs_do(kinds: tuple[str, str]) -> None:
    wrong = []
    for a, b in itertools.product(DTYPES, DTYPES):
        ours = _outcome(cr, cr.result_type, _make(cr, a, kinds[0]), _make(cr, b, kinds[1]))
        theirs = _outcome(
            torch, torch.result_type, _make(torch, a, kinds[0]), _make(torch, b, kinds[1])
        )
        if ours != theirs:
            wrong.append((a, b, ours, theirs))
    assert wrong == []


@pytest.mark.parametrize("kind", KINDS)
def test_every_dtype_meets_python_numbers_where_torchs_does(kind: str) -> None:
    wrong = []
    for dtype, number in itertools.product(DTYPES, NUMBERS + BEYOND):
        ours = _outcome(cr, cr.result_type, _make(cr, dtype, kind), number)
        theirs = _outcome(torch, torch.result_type, _make(torch, dtype, kind), number)
        if ours != theirs:
            wrong.append((dtype, number, ours, theirs))
    assert wrong == []


def test_promote_types_is_torchs_both_ways() -> None:
    wrong = []
    for a, b in itertools.product(DTYPES, DTYPES):
        ours = _outcome(cr, cr.promote_types, getattr(cr, a), getattr(cr, b))
        theirs = _outcome(torch, torch.promote_types, getattr(torch, a), getattr(torch, b))
        if ours != theirs:
            wrong.append((a, b, ours, theirs))
    assert wrong == []


PROMOTING = [
    ("add", lambda x, y: x + y),
    ("mul", lambda x, y: x * y),
    ("where", lambda x, y: _lib(x).where(_lib(x).ones(2, dtype=_lib(x).bool), x, y)),
    ("maximum", lambda x, y: _lib(x).maximum(x, y)),
    ("cat", lambda x, y: _lib(x).cat([x, y])),
    ("eq", lambda x, y: x == y),
]


def _lib(x: Any) -> Any:
    return torch if isinstance(x, torch.Tensor) else cr


@pytest.mark.parametrize(("name", "op"), PROMOTING, ids=[n for n, _ in PROMOTING])
def test_the_ops_refuse_the_promotions_torch_refuses_naming_themselves(name: str, op: Any) -> None:
    """uint64 + int64 was float64 (NumPy's promotion), which loses integers past 2**53."""
    refused = 0
    for a, b in itertools.product(DTYPES, DTYPES):
        if not {a, b} & {"uint16", "uint32", "uint64"} or a == b:
            continue
        try:
            op(torch.ones(2, dtype=getattr(torch, a)), torch.ones(2, dtype=getattr(torch, b)))
        except RuntimeError as e:
            assert "Promotion for uint16, uint32, uint64" in str(e)
            with pytest.raises(TypeError, match=rf"^{name}\w*: uint16, uint32 and uint64 are"):
                op(cr.ones(2, dtype=getattr(cr, a)), cr.ones(2, dtype=getattr(cr, b)))
            refused += 1
    assert refused > 20


def test_python_ints_past_torchs_range_are_refused_naming_the_op() -> None:
    for lib in (cr, torch):
        for number in BEYOND:
            for t in (lib.ones(2), lib.ones(2, dtype=lib.int64)):
                with pytest.raises(OverflowError):
                    t + number
        assert (lib.ones(1, dtype=lib.int64) * (2**64 - 1)).tolist() == [-1]  # wrapped, in both
    with pytest.raises(OverflowError, match=r"^mul: a Python int operand must lie in"):
        cr.ones(2) * 2**64


@pytest.mark.parametrize("data", [2**63, [2**63 + 1], -(2**63) - 1, [1, 2**64]])
def test_a_tensor_of_python_ints_past_int64_is_refused(data: Any) -> None:
    """2**63 + 1 became -2**63 + 1 (NumPy made it uint64, then it was cast to int64)."""
    with pytest.raises((ValueError, OverflowError)):
        torch.tensor(data)
    with pytest.raises(ValueError, match=r"^tensor: Python int"):
        cr.tensor(data)
    assert cr.tensor(2**63 + 1, dtype=cr.uint64).item() == 2**63 + 1
    assert (
        cr.tensor([2**63], dtype=cr.float64).item()
        == torch.tensor([2**63], dtype=torch.float64).item()
    )


OPS = [
    ("add", lambda x, y: x + y),
    ("sub", lambda x, y: x - y),
    ("mul", lambda x, y: x * y),
    ("div", lambda x, y: x / y),
    ("maximum", lambda x, y: x.maximum(y) if hasattr(x, "maximum") else None),
]
# torch's CPU kernels lack arithmetic on uint16, uint32 and uint64 (their promotions are
# checked above); the values are compared on the others
NUMERIC = [d for d in DTYPES if d not in ("bool", "uint16", "uint32", "uint64")]


@pytest.mark.parametrize("op", [f for _, f in OPS], ids=[n for n, _ in OPS])
def test_binary_ops_compute_in_torchs_dtype_and_values(op: Any) -> None:
    wrong = []
    for a, b, kind in itertools.product(NUMERIC, NUMERIC, ["ranked", "0-d"]):
        x = np.array([3, 5])
        ours = op(cr.tensor(x).to(getattr(cr, a)), cr.tensor(2).to(getattr(cr, b)) if
                  kind == "0-d" else cr.tensor([2, 7]).to(getattr(cr, b)))  # fmt: skip
        theirs = op(torch.tensor(x).to(getattr(torch, a)), torch.tensor(2).to(getattr(torch, b))
                    if kind == "0-d" else torch.tensor([2, 7]).to(getattr(torch, b)))  # fmt: skip
        if torch_dtype_text(ours.dtype) != str(theirs.dtype):
            wrong.append((a, b, kind, str(ours.dtype), str(theirs.dtype)))
        elif not np.allclose(ours.float().numpy(), theirs.float().numpy(), rtol=1e-2):
            wrong.append((a, b, kind, ours.tolist(), theirs.tolist()))
    assert wrong == []


def test_the_cases_that_differed() -> None:
    """float16 + bfloat16 is float32 (1e5 fits), float16 * a 0-d float64 stays float16,
    uint8 + a 0-d int64 or a Python int wraps in uint8, uint8 / float16 is float16."""
    for lib in (cr, torch):
        big = lib.tensor([1e5], dtype=lib.float16) if lib is torch else None
        assert big is None or bool(big.isinf())  # 1e5 overflows float16 itself, in both
        s = lib.tensor([60000.0], dtype=lib.float16) + lib.tensor([60000.0], dtype=lib.bfloat16)
        assert s.dtype == lib.float32 and s.tolist() == [pytest.approx(120000, rel=1e-2)]
        y = lib.ones(2, dtype=lib.float16) * lib.tensor(3.0, dtype=lib.float64)
        assert y.dtype == lib.float16
        u = lib.tensor([1], dtype=lib.uint8)
        assert (u + lib.tensor(300)).tolist() == [45] and (u + 300).tolist() == [45]
        assert (u + lib.tensor(300)).dtype == lib.uint8
        assert (u / lib.tensor([2.0], dtype=lib.float16)).dtype == lib.float16


def test_a_cast_operand_gets_its_gradient_in_its_own_dtype() -> None:
    a = cr.ones(2, dtype=cr.float16, requires_grad=True)
    b = cr.ones(2, dtype=cr.float32, requires_grad=True)
    (a * b).sum().backward()
    assert a.grad.dtype == cr.float16 and b.grad.dtype == cr.float32


@pytest.mark.parametrize("number", [300, -1, 2**63, 2**64 - 1, -(2**63), 7])
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int32", "int64", "bool", "float32"])
def test_a_comparison_with_a_python_int_wraps_it_as_torch(dtype: str, number: int) -> None:
    """torch casts the int to the compared dtype first (uint8 > -1 is uint8 > 255: False);
    chainrule compared the mathematical values."""
    values = [0, 1, 100] if dtype != "bool" else [False, True, True]
    ours, theirs = (
        cr.tensor(values, dtype=getattr(cr, dtype)),
        torch.tensor(values).to(getattr(torch, dtype)),
    )
    for compare in (
        lambda x: x < number,
        lambda x: x > number,
        lambda x: x == number,
        lambda x: x != number,
        lambda x: x <= number,
        lambda x: x >= number,
    ):
        try:
            expected = compare(theirs).tolist()
        except RuntimeError:  # a bool meets a uint64 (2**63 and up): no promotion, as above
            with pytest.raises(TypeError, match="uint16, uint32 and uint64 are promoted only"):
                compare(ours)
            continue
        assert compare(ours).tolist() == expected, (dtype, number)
