"""glu as PyTorch's one GluBackward0 node: its refusals, the half types computed in float32,
and a large negative gate that overflows exp to give 0, as PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.tolerances import OP, tol


def test_glu_refuses_a_0d_tensor_an_odd_dim_and_a_dim_out_of_range() -> None:
    F = cr.nn.functional
    with pytest.raises(ValueError, match=r"^glu: a 0-d tensor has no dim -1 to halve; got shape"):
        F.glu(cr.tensor(1.0))
    with pytest.raises(ValueError, match=r"^glu: dim 0 must have an even size; got shape \(3, 2\)"):
        F.glu(cr.ones(3, 2), 0)
    with pytest.raises(IndexError, match="glu"):
        F.glu(cr.ones(2, 2), 2)
    with pytest.raises(TypeError, match="glu"):
        F.glu(cr.ones(2, 2, dtype=cr.int64))


def test_glu_in_float32_is_torchs() -> None:
    x = np.random.default_rng(0).standard_normal((3, 8)) * 4
    ours = cr.nn.functional.glu(cr.tensor(x, dtype=cr.float32), 1)
    theirs = torch.nn.functional.glu(torch.tensor(x, dtype=torch.float32), 1)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), **tol(np.float32, OP))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_glu_of_a_half_type_is_computed_in_float32_and_rounded_once(dtype: str) -> None:
    x = cr.tensor(np.random.default_rng(0).standard_normal((3, 8)) * 4, dtype=getattr(cr, dtype))
    y = cr.nn.functional.glu(x, 1)
    assert y.dtype == x.dtype
    once = cr.nn.functional.glu(x.float(), 1).to(x.dtype)
    np.testing.assert_array_equal(y.float().numpy(), once.float().numpy())


def test_a_gate_far_below_zero_closes() -> None:
    x = [[2.0, -1000.0], [-3.0, 1000.0]]
    for lib in (cr, torch):
        t = lib.tensor(x, dtype=lib.float32, requires_grad=True)
        y = lib.nn.functional.glu(t)
        y.sum().backward()
        assert y.grad_fn.name() == "GluBackward0"
        assert y.tolist() == [[0.0], [-3.0]] and t.grad.tolist() == [[0.0, 0.0], [1.0, 0.0]]
