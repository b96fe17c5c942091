"""linalg.solve factors A once for its forward and backward together (getrf's LU, reused by
the backward's solve with A^T, as PyTorch's), on each side, for a vector B and for a batch of
large matrices."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule.ops import lapack

torch = pytest.importorskip("torch")


@pytest.mark.parametrize(
    "left, a_shape, b_shape",
    [
        (True, (5, 5), (5, 3)),
        (False, (5, 5), (3, 5)),
        (True, (5, 5), (5,)),
        (True, (5, 5), (5, 1)),
        (True, (2, 64, 64), (2, 64, 3)),
        (False, (2, 64, 64), (2, 3, 64)),
    ],
)
def test_solve_backward_reuses_the_forwards_lu(
    left: bool, a_shape: tuple[int, ...], b_shape: tuple[int, ...], monkeypatch: Any
) -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal(a_shape) + 3 * np.eye(a_shape[-1])
    b, g = rng.standard_normal(b_shape), rng.standard_normal(b_shape)
    calls = []
    real = lapack.routine
    monkeypatch.setattr(lapack, "routine", lambda name, *x: calls.append(name) or real(name, *x))
    A, B = cr.tensor(a, requires_grad=True), cr.tensor(b, requires_grad=True)
    X = cr.linalg.solve(A, B, left=left)
    X.backward(cr.tensor(g))
    assert calls.count("getrf") == 1
    tA, tB = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    tX = torch.linalg.solve(tA, tB, left=left)
    tX.backward(torch.tensor(g))
    for ours, theirs in [(X, tX), (A.grad, tA.grad), (B.grad, tB.grad)]:
        np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_solves_gradient_of_its_gradient_is_pytorchs() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((4, 4)) + 3 * np.eye(4), rng.standard_normal((4, 2))
    A, B = cr.tensor(a, requires_grad=True), cr.tensor(b, requires_grad=True)
    tA, tB = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    (gA,) = cr.grad((cr.linalg.solve(A, B) ** 2).sum(), [A], create_graph=True)
    (tgA,) = torch.autograd.grad((torch.linalg.solve(tA, tB) ** 2).sum(), [tA], create_graph=True)
    (gA**2).sum().backward()
    (tgA**2).sum().backward()
    np.testing.assert_allclose(A.grad.numpy(), tA.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(B.grad.numpy(), tB.grad.numpy(), rtol=1e-10)
