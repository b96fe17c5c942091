"""lu_unpack's L and U share one node, PyTorch's LuUnpackBackward0: gradients (of either
factor or both, batched, wide, tall and empty), saved sizes, next_functions and the hooks'
view of each output's gradient, against PyTorch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr


def _run(lib: Any, shape: tuple[int, ...], which: str) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    A = lib.tensor(rng.standard_normal(shape), requires_grad=True)
    LU, pivots = lib.linalg.lu_factor(A)
    _, L, U = lib.lu_unpack(LU, pivots)
    node = L.grad_fn
    seen: list[Any] = []
    node.register_prehook(lambda g: seen.append([None if t is None else tuple(t.shape) for t in g]))
    gL = lib.tensor(np.random.default_rng(1).standard_normal(tuple(L.shape)))
    gU = lib.tensor(np.random.default_rng(2).standard_normal(tuple(U.shape)))
    total = (L * gL).sum() * ("L" in which) + (U * gU).sum() * ("U" in which)
    total.backward()
    return {
        "grad": A.grad.numpy(),
        "name": node.name(),
        "shared": U.grad_fn is node,
        "sizes": (node._saved_LU_data_sym_argsize_minus_1, node._saved_LU_data_sym_argsize_minus_2),
        "seen": seen,
    }


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 4)], ids=str)
@pytest.mark.parametrize("which", ["LU", "L", "U"])
def test_lu_unpack_is_one_node_as_torchs(shape: tuple[int, ...], which: str) -> None:
    ours, theirs = _run(cr, shape, which), _run(torch, shape, which)
    np.testing.assert_allclose(ours.pop("grad"), theirs.pop("grad"), rtol=1e-10, atol=1e-12)
    assert ours == theirs
    assert ours["name"] == "LuUnpackBackward0" and ours["shared"]


@pytest.mark.parametrize("shape", [(0, 3, 5), (3, 0), (2, 0, 0)], ids=str)
def test_lu_unpack_of_empty_factors_is_one_node_as_torchs(shape: tuple[int, ...]) -> None:
    for lib in (torch, cr):
        LU = lib.zeros(shape, dtype=lib.float64, requires_grad=True)
        pivots = lib.ones((*shape[:-2], min(shape[-2:])), dtype=lib.int32)
        _, L, U = lib.lu_unpack(LU, pivots)
        assert L.grad_fn.name() == "LuUnpackBackward0" and U.grad_fn is L.grad_fn
        (L.sum() + U.sum()).backward()
        assert tuple(LU.grad.shape) == shape


def test_lu_unpack_of_a_factor_that_needs_no_gradient_is_constant() -> None:
    LU, pivots = cr.linalg.lu_factor(cr.tensor(np.eye(3) * 2))
    _, L, U = cr.lu_unpack(LU, pivots)
    assert L.grad_fn is None and U.grad_fn is None
    np.testing.assert_array_equal(L.numpy(), np.eye(3))
    np.testing.assert_array_equal(U.numpy(), np.eye(3) * 2)
