"""How chainrule.linalg calls LAPACK: float32 in float32 (as PyTorch), each decomposition once
for its forward and backward together, batches of small matrices through NumPy's compiled
loop, and a singular system refused on either route."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule.ops import lapack

torch = pytest.importorskip("torch")
sl = pytest.importorskip("scipy.linalg")


def _matrix(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    n = shape[-1]
    rng = np.random.default_rng(0)
    return (rng.standard_normal(shape) / np.sqrt(n) + 2 * np.eye(n)).astype(dtype)


def test_float32_is_computed_by_lapacks_float32_routines() -> None:
    a = _matrix(70, 70)
    det = cr.linalg.det(cr.tensor(a))
    assert det.dtype == cr.float32
    lu, piv, _ = sl.lapack.sgetrf(a.T)  # sgetrf's diagonal multiplied in float32, as PyTorch
    sign = (-1) ** int((piv != np.arange(70)).sum())
    assert det.item() == sign * np.prod(np.diagonal(lu))
    assert det.item() != np.float32(np.linalg.det(a.astype(np.float64)))
    got = cr.linalg.inv(cr.tensor(a)).numpy()
    np.testing.assert_allclose(got, sl.inv(a, check_finite=False), rtol=1e-5, atol=1e-6)
    assert not np.array_equal(got, np.linalg.inv(a.astype(np.float64)).astype(np.float32))


def test_batches_of_small_matrices_take_numpys_loop_large_ones_scipys() -> None:
    assert lapack.direct(_matrix(8, 8)) is sl
    assert lapack.direct(_matrix(3, 8, 8)) is None
    assert lapack.direct(_matrix(2, lapack.LARGE, lapack.LARGE)) is sl
    assert lapack.direct(np.zeros((0, 3, 3), np.float32)) is None
    assert lapack.direct(_matrix(4, 4, dtype=np.float16)) is None


@pytest.mark.parametrize("shape", [(6, 6), (3, 6, 6), (2, 70, 70)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_both_routes_agree_with_pytorch(shape: tuple[int, ...], dtype: Any) -> None:
    a = _matrix(*shape, dtype=dtype)
    spd = a @ np.swapaxes(a, -1, -2)
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == np.float32 else {"rtol": 1e-10, "atol": 1e-10}
    t = torch.from_numpy
    pairs = [
        (cr.linalg.inv(cr.tensor(a)), torch.linalg.inv(t(a))),
        (cr.linalg.det(cr.tensor(a)), torch.linalg.det(t(a))),
        (cr.linalg.slogdet(cr.tensor(a))[1], torch.linalg.slogdet(t(a))[1]),
        (cr.linalg.slogdet(cr.tensor(-a))[0], torch.linalg.slogdet(t(-a))[0]),
        (cr.linalg.cholesky(cr.tensor(spd)), torch.linalg.cholesky(t(spd))),
        (cr.linalg.eigvalsh(cr.tensor(spd)), torch.linalg.eigvalsh(t(spd))),
        (cr.linalg.svdvals(cr.tensor(a)), torch.linalg.svdvals(t(a))),
        (cr.linalg.qr(cr.tensor(a)).R.abs(), torch.linalg.qr(t(a)).R.abs()),
        (
            cr.linalg.solve(cr.tensor(a), cr.tensor(a[..., :2])),
            torch.linalg.solve(t(a), t(a[..., :2])),
        ),
    ]
    for ours, theirs in pairs:
        assert ours.dtype == getattr(cr, str(theirs.dtype).split(".")[1])
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), **tol)


def test_a_singular_system_is_refused_on_either_route() -> None:
    for shape in [(3, 3), (2, 3, 3)]:
        a = cr.zeros(*shape)
        with pytest.raises(
            cr.linalg.LinAlgError, match="linalg.solve: the input matrix is singular"
        ):
            cr.linalg.solve(a, cr.ones(*shape[:-1], 1))


@pytest.mark.parametrize(
    "name, call",
    [
        ("svd", lambda A: sum(p.sum() for p in cr.linalg.svd(A, full_matrices=False))),
        ("svd", lambda A: cr.linalg.svdvals(A).sum()),
        ("svd", lambda A: cr.linalg.matrix_norm(A, 2)),
        ("eigh", lambda A: sum(p.sum() for p in cr.linalg.eigh(A + A.mT))),
        ("qr", lambda A: sum(p.sum() for p in cr.linalg.qr(A))),
    ],
)
def test_backward_reuses_forwards_decomposition(name: str, call: Any, monkeypatch: Any) -> None:
    calls = []
    real = getattr(lapack, name)
    monkeypatch.setattr(lapack, name, lambda *a, **k: calls.append(1) or real(*a, **k))
    A = cr.tensor(_matrix(5, 5, dtype=np.float64), requires_grad=True)
    call(A).backward()
    assert len(calls) == 1 and A.grad is not None


def test_a_write_into_one_part_leaves_the_others_gradients() -> None:
    a = _matrix(4, 4, dtype=np.float64)
    A, tA = cr.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    U, S, _ = cr.linalg.svd(A)
    tU, tS, _ = torch.linalg.svd(tA)
    with cr.no_grad():
        U.mul_(0.0)  # U is the user's: backward's copy of it stays
    S.sum().backward()
    tS.sum().backward()
    np.testing.assert_allclose(A.grad.numpy(), tA.grad.numpy(), rtol=1e-10)


@pytest.mark.parametrize("shape", [(6, 6), (3, 6, 6), (5, 3), (2, 3, 5)])
def test_lus_permutation_is_pytorchs_for_one_matrix_and_a_batch(shape: tuple[int, ...]) -> None:
    a = np.random.default_rng(1).standard_normal(shape)
    P, L, U = cr.linalg.lu(cr.tensor(a))
    tP, tL, tU = torch.linalg.lu(torch.from_numpy(a))
    assert np.array_equal(P.numpy(), tP.numpy())
    np.testing.assert_allclose((P @ L @ U).numpy(), a, rtol=1e-12, atol=1e-12)
    LU, pivots = cr.linalg.lu_factor(cr.tensor(a))
    P2, L2, U2 = cr.lu_unpack(LU, pivots)
    assert np.array_equal(P2.numpy(), tP.numpy())
    np.testing.assert_allclose(L2.numpy(), tL.numpy(), rtol=1e-12, atol=1e-12)
