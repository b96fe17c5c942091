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

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64"]  # fmt: skip
KINDS = ["ranked", "0-d"]
NUMBERS = [True, 3, 300, -1, 2.5, 1e5]


def _make(lib: Any, dtype: str, kind: str) -> Any:
    return lib.ones(2 if kind == "ranked" else (), dtype=getattr(lib, dtype))


@pytest.mark.parametrize("kinds", list(itertools.product(KINDS, KINDS)), ids=str)
def test_every_pair_of_dtypes_meets_where_torchs_do(kinds: tuple[str, str]) -> None:
    wrong = []
    for a, b in itertools.product(DTYPES, DTYPES):
        ours = cr.result_type(_make(cr, a, kinds[0]), _make(cr, b, kinds[1]))
        theirs = torch.result_type(_make(torch, a, kinds[0]), _make(torch, b, kinds[1]))
        if torch_dtype_text(ours) != str(theirs):
            wrong.append((a, b, str(ours), str(theirs)))
    assert wrong == []


@pytest.mark.parametrize("kind", KINDS)
def test_every_dtype_meets_python_numbers_where_torchs_does(kind: str) -> None:
    wrong = []
    for dtype, number in itertools.product(DTYPES, NUMBERS):
        ours = cr.result_type(_make(cr, dtype, kind), number)
        theirs = torch.result_type(_make(torch, dtype, kind), number)
        if torch_dtype_text(ours) != str(theirs):
            wrong.append((dtype, number, str(ours), str(theirs)))
    assert wrong == []


def test_promote_types_is_torchs() -> None:
    for a, b in itertools.product(DTYPES, DTYPES):
        ours = cr.promote_types(getattr(cr, a), getattr(cr, b))
        theirs = torch.promote_types(getattr(torch, a), getattr(torch, b))
        assert torch_dtype_text(ours) == str(theirs)


OPS = [
    ("add", lambda x, y: x + y),
    ("sub", lambda x, y: x - y),
    ("mul", lambda x, y: x * y),
    ("div", lambda x, y: x / y),
    ("maximum", lambda x, y: x.maximum(y) if hasattr(x, "maximum") else None),
]
NUMERIC = [d for d in DTYPES if d != "bool"]


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
