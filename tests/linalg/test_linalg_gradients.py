"""The gradients of chainrule.linalg's factorisations against PyTorch's, first and second
order, and what each backward asks of LAPACK: det's and slogdet's from the forward's LU
factor, LU's L and U meeting at one node, one matrix or a batch, square, wide or tall."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule.ops import lapack

torch = pytest.importorskip("torch")

Call = Callable[[Any, Any], Any]


def _grads(call: Call, a: np.ndarray, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """A's gradient, chainrule's and PyTorch's, of call's outputs against random weights."""
    A, T = cr.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    ours, theirs = call(cr, A), call(torch, T)
    ours, theirs = (
        (ours if isinstance(ours, tuple) else (ours,)),
        (theirs if isinstance(theirs, tuple) else (theirs,)),
    )
    rng = np.random.default_rng(seed)
    weights = [rng.standard_normal(tuple(t.shape)) for t in theirs]
    sum((o * cr.tensor(w)).sum() for o, w in zip(ours, weights, strict=True)).backward()
    sum((t * torch.tensor(w)).sum() for t, w in zip(theirs, weights, strict=True)).backward()
    return A.grad.numpy(), T.grad.numpy()


def _matrix(*shape: int, dtype: Any = np.float64, seed: int = 0) -> np.ndarray:
    n = shape[-1]
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) / np.sqrt(n) + 2 * np.eye(*shape[-2:])).astype(dtype)


DETERMINANTS: list[tuple[str, Call]] = [
    ("det", lambda m, A: m.linalg.det(A)),
    ("slogdet", lambda m, A: m.linalg.slogdet(A)[1]),
    ("logdet", lambda m, A: m.logdet(A)),
]


@pytest.mark.parametrize("name, call", DETERMINANTS)
@pytest.mark.parametrize("shape", [(5, 5), (2, 3, 70, 70)])
def test_a_determinants_gradient_is_the_forwards_lu_inverted(
    name: str, call: Call, shape: tuple[int, ...], monkeypatch: Any
) -> None:
    factored = []
    real = lapack.lu_factor
    monkeypatch.setattr(lapack, "lu_factor", lambda a: factored.append(1) or real(a))
    monkeypatch.setattr(lapack, "inv", lambda a: pytest.fail("a second factorisation"))
    ours, theirs = _grads(call, _matrix(*shape))
    assert len(factored) == 1
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_determinants_gradient_keeps_the_dtype(dtype: Any) -> None:
    a = _matrix(70, 70, dtype=dtype)
    ours, theirs = _grads(lambda m, A: m.linalg.det(A), a)
    assert ours.dtype == dtype
    np.testing.assert_allclose(ours, theirs, rtol=1e-3 if dtype == np.float32 else 1e-10)


def test_a_singular_matrix_in_the_batch_has_det_gradient_from_its_own_rule() -> None:
    a = np.stack([_matrix(4, 4), np.ones((4, 4)), np.diag([1.0, 2.0, 0.0, 3.0])])
    ours, theirs = _grads(lambda m, A: m.linalg.det(A), a)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape", [(5, 5), (3, 5), (5, 3), (2, 4, 4), (2, 3, 5), (2, 5, 3)])
@pytest.mark.parametrize(
    "parts", [slice(1, None), slice(1, 2), slice(2, None)], ids=["L and U", "L", "U"]
)
def test_lus_gradient_is_pytorchs(shape: tuple[int, ...], parts: slice) -> None:
    a = np.random.default_rng(2).standard_normal(shape)
    ours, theirs = _grads(lambda m, A: tuple(m.linalg.lu(A)[parts]), a)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3), (2, 3, 3)])
def test_lu_factors_gradient_is_pytorchs(shape: tuple[int, ...]) -> None:
    a = np.random.default_rng(3).standard_normal(shape)
    ours, theirs = _grads(lambda m, A: m.linalg.lu_factor(A).LU, a)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


def _count_triangular_solves(monkeypatch: Any) -> list[int]:
    """The calls of BLAS's trsm, which every triangular solve of one matrix makes."""
    solves: list[int] = []
    real = lapack.blas

    def counted(name: str, char: str) -> Any:
        routine = real(name, char)
        if name != "trsm":
            return routine
        return lambda *a, **k: solves.append(1) or routine(*a, **k)

    monkeypatch.setattr(lapack, "blas", counted)
    return solves


def test_l_and_u_gradients_meet_at_one_node(monkeypatch: Any) -> None:
    solves = _count_triangular_solves(monkeypatch)
    _, L, U = cr.linalg.lu(cr.tensor(_matrix(6, 6), requires_grad=True))
    assert L.grad_fn.name() == U.grad_fn.name() == "LinalgLuBackward0"
    (L.sum() + U.sum()).backward()
    assert len(solves) == 2  # L^-T and U^-T once


@pytest.mark.parametrize(
    "call, shape",
    [
        (lambda A: cr.linalg.lu(A)[1:], (3, 4)),
        (lambda A: cr.linalg.lu(A)[1:], (2, 4, 3)),
        (lambda A: cr.linalg.lu_factor(A).LU, (3, 3)),
        (lambda A: cr.linalg.det(A), (2, 3, 3)),
        (lambda A: cr.linalg.slogdet(A).logabsdet, (3, 3)),
    ],
    ids=["lu wide", "lu tall batch", "lu_factor", "det", "slogdet"],
)
def test_second_derivatives_agree_with_finite_differences(call: Any, shape: Any) -> None:
    A = cr.tensor(_matrix(*shape, seed=4), requires_grad=True)
    assert cr.testing.gradgradcheck(call, (A,))


QR_CASES = [
    ((5, 5), "reduced"),
    ((5, 3), "reduced"),
    ((3, 5), "reduced"),
    ((3, 5), "complete"),
    ((4, 4), "complete"),
    ((2, 5, 3), "reduced"),
    ((2, 3, 5), "complete"),
]


@pytest.mark.parametrize("shape, mode", QR_CASES)
@pytest.mark.parametrize("parts", [slice(None), slice(0, 1), slice(1, 2)], ids=["QR", "Q", "R"])
def test_qrs_gradient_is_pytorchs(shape: tuple[int, ...], mode: str, parts: slice) -> None:
    a = np.random.default_rng(5).standard_normal(shape)
    ours, theirs = _grads(lambda m, A: tuple(m.linalg.qr(A, mode=mode)[parts]), a)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


def test_q_and_r_gradients_meet_at_one_triangular_solve(monkeypatch: Any) -> None:
    solves = _count_triangular_solves(monkeypatch)
    Q, R = cr.linalg.qr(cr.tensor(_matrix(6, 4), requires_grad=True))
    assert Q.grad_fn.name() == R.grad_fn.name() == "LinalgQrBackward0"
    (Q.sum() + R.sum()).backward()
    assert len(solves) == 1


def test_a_qr_part_that_reaches_nothing_has_zero_gradient() -> None:
    A = cr.tensor(_matrix(3, 3), requires_grad=True)
    Q, R = cr.linalg.qr(A)
    (Q.sum() * 0.0).backward()
    assert A.grad is not None and not A.grad.numpy().any()


@pytest.mark.parametrize("shape, mode", [((4, 3), "reduced"), ((3, 5), "complete")])
def test_qrs_second_derivatives_agree_with_finite_differences(shape: Any, mode: str) -> None:
    A = cr.tensor(_matrix(*shape, seed=6), requires_grad=True)
    assert cr.testing.gradgradcheck(lambda A: cr.linalg.qr(A, mode=mode), (A,))


@pytest.mark.parametrize("left", [True, False], ids=["left", "right"])
@pytest.mark.parametrize("adjoint", [False, True], ids=["A", "A^T"])
@pytest.mark.parametrize(
    "shapes", [((4, 4), (4, 2)), ((2, 4, 4), (4, 3)), ((3, 1, 4, 4), (2, 4, 2))]
)
def test_lu_solves_result_and_gradients_are_pytorchs(
    left: bool, adjoint: bool, shapes: Any
) -> None:
    rng = np.random.default_rng(7)
    a_shape, b_shape = shapes
    a = _matrix(*a_shape)
    b = rng.standard_normal(b_shape if left else (*b_shape[:-2], b_shape[-1], b_shape[-2]))
    got = []
    for lib in (cr, torch):
        A, B = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        X = lib.linalg.lu_solve(*lib.linalg.lu_factor(A), B, left=left, adjoint=adjoint)
        (X * lib.tensor(np.cos(np.arange(X.numel())).reshape(tuple(X.shape)))).sum().backward()
        got.append([t.detach().numpy() for t in (X, A.grad, B.grad)])
    for ours, theirs in zip(*got, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape", [(6, 6), (5, 6, 6), (2, 3, 70, 70)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_triangular_solves_by_trsm_agree_with_scipy(shape: Any, dtype: Any) -> None:
    sl = pytest.importorskip("scipy.linalg")
    a = _matrix(*shape, dtype=dtype)
    b = np.random.default_rng(8).standard_normal((*shape[:-1], 3)).astype(dtype)
    tol = {"rtol": 1e-4, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-12}
    for lower in (True, False):
        for unit in (True, False):
            for m in (a, np.swapaxes(a, -1, -2)):  # C order, and LAPACK's own
                x = lapack.solve_triangular(m, b, lower=lower, unit=unit)
                want = sl.solve_triangular(m, b, lower=lower, unit_diagonal=unit)
                assert x.dtype == dtype
                np.testing.assert_allclose(x, want, **tol)


@pytest.mark.parametrize(
    "a_shape, b_shape", [((2, 3, 3), (2, 3, 0)), ((0, 3, 3), (0, 3, 2)), ((0, 0), (0, 4))]
)
def test_lu_solve_of_nothing_is_empty_as_pytorchs(a_shape: Any, b_shape: Any) -> None:
    a = _matrix(*a_shape) if a_shape[-1] else np.zeros(a_shape)
    b = np.ones(b_shape)
    ours = cr.linalg.lu_solve(*cr.linalg.lu_factor(cr.tensor(a)), cr.tensor(b))
    theirs = torch.linalg.lu_solve(*torch.linalg.lu_factor(torch.tensor(a)), torch.tensor(b))
    assert tuple(ours.shape) == tuple(theirs.shape)


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (2, 0, 0)])
def test_qr_of_nothing_has_an_empty_gradient(shape: Any) -> None:
    ours, theirs = _grads(lambda m, A: tuple(m.linalg.qr(A)), np.zeros(shape))
    assert ours.shape == theirs.shape == shape
