"""Linear algebra ops that end in PyTorch's one node, where they were composites: vecdot
of two vectors (vdot's), solve of a vector B (its own node squeezes), slogdet's sign (its
node's first output), matrix_power(A, 0) (a copy of the identity into A's clone), lstsq's
residuals (its node's second output); gradients and second derivatives as PyTorch's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr


def _both(a: Any) -> tuple[Any, Any]:
    return cr.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def test_vecdot_of_two_vectors_is_vdot() -> None:
    rng = np.random.default_rng(0)
    (x, tx), (y, ty) = _both(rng.standard_normal(4)), _both(rng.standard_normal(4))
    out, want = cr.linalg.vecdot(x, y), torch.linalg.vecdot(tx, ty)
    assert out.grad_fn.name() == want.grad_fn.name() == "VdotBackward0"
    np.testing.assert_allclose(out.numpy(), want.detach().numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match="vdot"):  # no broadcast between vectors, as PyTorch
        cr.linalg.vecdot(cr.ones(1), cr.ones(3))


@pytest.mark.parametrize("shapes", [((3, 3), (3,)), ((2, 3, 3), (2, 3)), ((2, 3, 3), (3,))])
def test_solve_of_a_vector_is_one_node(shapes: tuple[tuple[int, ...], ...]) -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal(shapes[0]) + 3 * np.eye(3)
    (A, tA), (B, tB) = _both(a), _both(rng.standard_normal(shapes[1]))
    X, want = cr.linalg.solve(A, B), torch.linalg.solve(tA, tB)
    assert X.grad_fn.name() == want.grad_fn.name() == "LinalgSolveExBackward0"
    assert tuple(X.grad_fn._saved_result.shape) == tuple(want.grad_fn._saved_result.shape)
    g = rng.standard_normal(want.shape)
    got = cr.autograd.grad(X, (A, B), cr.tensor(g), create_graph=True)
    ref = torch.autograd.grad(want, (tA, tB), torch.tensor(g), create_graph=True)
    for u, v in zip(got, ref, strict=True):
        np.testing.assert_allclose(u.detach().numpy(), v.detach().numpy(), rtol=1e-10)
    h = rng.standard_normal(a.shape)
    got2 = cr.autograd.grad(got[0], (A, B), cr.tensor(h))
    ref2 = torch.autograd.grad(ref[0], (tA, tB), torch.tensor(h))
    for u, v in zip(got2, ref2, strict=True):
        np.testing.assert_allclose(u.numpy(), v.numpy(), rtol=1e-10, atol=1e-12)


def test_solve_refuses_a_vector_on_the_right_as_torch() -> None:
    with pytest.raises(RuntimeError):
        torch.linalg.solve(torch.eye(2), torch.ones(2), left=False)
    with pytest.raises(ValueError, match="left=False"):
        cr.linalg.solve(cr.eye(2), cr.ones(2), left=False)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (0, 3, 3), (0, 0)], ids=str)
def test_slogdet_sign_and_logabsdet_share_one_node(shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(2)
    a = rng.standard_normal(shape) + 2 * np.eye(shape[-1])
    A, tA = _both(a)
    (sign, logabsdet), want = cr.linalg.slogdet(A), torch.linalg.slogdet(tA)
    assert sign.grad_fn is logabsdet.grad_fn
    assert sign.grad_fn.name() == want.sign.grad_fn.name() == "LinalgSlogdetBackward0"
    assert (sign.output_nr, logabsdet.output_nr) == (0, 1) and sign.requires_grad
    np.testing.assert_array_equal(sign.grad_fn._saved_sign.numpy(), want.sign.detach().numpy())
    g = rng.standard_normal(want.logabsdet.shape)
    (got,) = cr.autograd.grad(logabsdet, A, cr.tensor(g), create_graph=True)
    (ref,) = torch.autograd.grad(want.logabsdet, tA, torch.tensor(g), create_graph=True)
    np.testing.assert_allclose(got.detach().numpy(), ref.detach().numpy(), rtol=1e-10)
    if a.size:
        h = rng.standard_normal(shape)
        (got2,) = cr.autograd.grad(got, A, cr.tensor(h))
        (ref2,) = torch.autograd.grad(ref, tA, torch.tensor(h))
        np.testing.assert_allclose(got2.numpy(), ref2.numpy(), rtol=1e-9, atol=1e-12)


def test_logdet_is_a_where_of_the_sign() -> None:
    """NaN where det < 0, -inf where it is 0, as PyTorch's where on slogdet's sign."""
    a = np.stack([np.eye(2) * 2, np.diag([1.0, -1.0]), np.zeros((2, 2))])  # det 4, -1, 0
    A, tA = _both(a)
    out, want = cr.logdet(A), torch.logdet(tA)
    assert out.grad_fn.name() == want.grad_fn.name() == "WhereBackward0"
    # log(4) by two libraries' logs: equal to an ulp; NaN and -inf placed alike
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-15)


@pytest.mark.parametrize(
    "shapes", [((5, 3), (5, 2)), ((2, 6, 3), (2, 6, 2)), ((5, 3), (5,))], ids=str
)
def test_lstsq_residuals_are_the_nodes_second_output(shapes: tuple[tuple[int, ...], ...]) -> None:
    """A tall A of full rank, a driver that gives residuals: the solution and the residuals
    share LinalgLstsqBackward0; a vector B's residuals keep their dim of one, as PyTorch's."""
    rng = np.random.default_rng(3)
    (A, tA), (B, tB) = _both(rng.standard_normal(shapes[0])), _both(rng.standard_normal(shapes[1]))
    got, want = cr.linalg.lstsq(A, B, driver="gelsd"), torch.linalg.lstsq(tA, tB, driver="gelsd")
    assert got.solution.grad_fn is got.residuals.grad_fn
    assert got.residuals.grad_fn.name() == want.residuals.grad_fn.name()
    assert (got.solution.output_nr, got.residuals.output_nr) == (0, 1)
    assert tuple(got.residuals.shape) == tuple(want.residuals.shape)
    saved = got.residuals.grad_fn._saved_solution
    assert tuple(saved.shape) == tuple(want.residuals.grad_fn._saved_solution.shape)
    np.testing.assert_allclose(
        got.residuals.detach().numpy(), want.residuals.detach().numpy(), rtol=1e-10
    )
    outs = (got.solution, got.residuals), (want.solution, want.residuals)
    gs = [rng.standard_normal(tuple(t.shape)) for t in outs[1]]
    first = cr.autograd.grad(outs[0], (A, B), [cr.tensor(g) for g in gs], create_graph=True)
    ref = torch.autograd.grad(outs[1], (tA, tB), [torch.tensor(g) for g in gs], create_graph=True)
    for u, v in zip(first, ref, strict=True):
        np.testing.assert_allclose(u.detach().numpy(), v.detach().numpy(), rtol=1e-9, atol=1e-12)
    hs = [rng.standard_normal(shape) for shape in shapes]
    second = cr.autograd.grad(list(first), (A, B), [cr.tensor(h) for h in hs])
    ref2 = torch.autograd.grad(list(ref), (tA, tB), [torch.tensor(h) for h in hs])
    for u, v in zip(second, ref2, strict=True):
        np.testing.assert_allclose(u.numpy(), v.numpy(), rtol=1e-8, atol=1e-11)


@pytest.mark.parametrize("shape", [(1, 1), (2, 3, 3), (0, 2, 2)], ids=str)
def test_matrix_power_zero_is_a_copy_into_a_clone(shape: tuple[int, ...]) -> None:
    """The identity copied into A's clone (CopyBackwards after CloneBackward0), gradient 0."""
    A, tA = _both(np.random.default_rng(4).standard_normal(shape))
    out, want = cr.linalg.matrix_power(A, 0), torch.linalg.matrix_power(tA, 0)
    assert type(out.grad_fn).__name__ == type(want.grad_fn).__name__ == "CopyBackwards"
    clone = [type(f).__name__ for f, _ in out.grad_fn.next_functions if f is not None]
    assert clone == ["CloneBackward0"]
    np.testing.assert_array_equal(out.detach().numpy(), want.detach().numpy())
    (grad,) = cr.autograd.grad(out, A, cr.ones(shape, dtype=cr.float64))
    assert tuple(grad.shape) == shape and not grad.numpy().any()
