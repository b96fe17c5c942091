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
