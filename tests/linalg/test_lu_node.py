"""linalg.lu's L and U share one node, as PyTorch's LinalgLuBackward0: the same grad_fn,
output_nr 0 and 1, hooks that see each part's whole gradient (what the rule reads is its
triangle), gradients and second derivatives as PyTorch's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr

SHAPES = [(3, 3), (3, 5), (5, 3), (2, 4, 4)]


def _lu(lib: Any, a: np.ndarray) -> tuple[Any, Any, Any]:
    A = lib.tensor(a, requires_grad=True)
    _, L, U = lib.linalg.lu(A)
    return A, L, U


@pytest.mark.parametrize(
    "shape", [*SHAPES, (0, 3, 5), (2, 0, 3), (3, 0, 0), (17, 0, 0), (20, 3, 0)]
)
def test_one_node_as_torch(shape: tuple[int, ...]) -> None:
    """Matrices without elements too: no getrf, the one node still PyTorch's."""
    a = np.random.default_rng(0).standard_normal(shape)
    for lib in (torch, cr):
        A, L, U = _lu(lib, a)
        assert L.grad_fn is U.grad_fn
        assert L.grad_fn.name() == "LinalgLuBackward0"
        assert (L.output_nr, U.output_nr) == (0, 1)
        (nxt, nr), *rest = L.grad_fn.next_functions
        assert not rest and nr == 0 and type(nxt).__name__ == "AccumulateGrad"


@pytest.mark.parametrize("shape", SHAPES)
def test_hooks_see_each_part_whole(shape: tuple[int, ...]) -> None:
    """A prehook sees L's and U's gradients as they came (not their triangles), its result
    replaces them, and a post hook sees the replaced ones: as PyTorch's node."""
    a = np.random.default_rng(1).standard_normal(shape)
    w = np.random.default_rng(2).standard_normal(shape[:-2] + (shape[-2], min(shape[-2:])))
    seen = {}
    for lib in (torch, cr):
        A, L, U = _lu(lib, a)
        pre: list[Any] = []
        post: list[Any] = []
        L.grad_fn.register_prehook(lambda g, pre=pre: pre.append([x.numpy().copy() for x in g]))
        L.grad_fn.register_prehook(lambda g: (g[0] * 3, g[1]))
        L.grad_fn.register_hook(
            lambda gi, go, post=post: post.append([x.numpy().copy() for x in go])
        )
        ((L * lib.tensor(w)).sum() + (U**2).sum()).backward()
        seen[lib] = (pre[0], post[0], A.grad.numpy())
    (pre, post, grad), (tpre, tpost, tgrad) = seen[cr], seen[torch]
    for x, y in zip([*pre, *post, grad], [*tpre, *tpost, tgrad], strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-10)


def test_a_part_without_gradient_is_none_to_hooks() -> None:
    a = np.random.default_rng(3).standard_normal((4, 4))
    for lib in (torch, cr):
        A, L, U = _lu(lib, a)
        post: list[Any] = []
        L.grad_fn.register_hook(lambda gi, go, post=post: post.append(go))
        U.sum().backward()
        assert post[0][0] is None and post[0][1] is not None


@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 4), (4, 2)])
def test_second_derivative(shape: tuple[int, ...]) -> None:
    a = np.random.default_rng(4).standard_normal(shape) + 3 * np.eye(*shape[-2:])

    def f(A: Any) -> Any:
        _, L, U = cr.linalg.lu(A)
        return (L * L).sum() + (U * U.sin()).sum()

    A = cr.tensor(a, requires_grad=True)
    assert cr.autograd.gradcheck(f, (A,))
    assert cr.autograd.gradgradcheck(f, (A,))
