"""chainrule.linalg's errors, info outputs and older spellings, against PyTorch's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr


def _pair(*shape: int, seed: int = 0) -> tuple[cr.Tensor, torch.Tensor]:
    a = np.random.default_rng(seed).standard_normal(shape)
    return cr.tensor(a), torch.tensor(a)


def _close(ours: Any, theirs: Any, **tol: float) -> None:
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), **tol)


def test_a_singular_matrix_is_an_error_naming_the_batch_element() -> None:
    a = np.stack([np.eye(3), np.ones((3, 3))])
    with pytest.raises(cr.linalg.LinAlgError, match=r"linalg.inv: .*singular \(batch element 1\)"):
        cr.linalg.inv(cr.tensor(a))
    with pytest.raises(RuntimeError, match="linalg.solve: .*singular"):
        cr.linalg.solve(cr.tensor(a), cr.ones(2, 3, dtype=cr.float64))


def test_inv_ex_and_solve_ex_report_info_as_pytorch() -> None:
    a = np.stack([np.eye(3), np.diag([1.0, 0.0, 2.0])])
    ours, theirs = cr.linalg.inv_ex(cr.tensor(a)), torch.linalg.inv_ex(torch.tensor(a))
    assert ours.info.tolist() == theirs.info.tolist() == [0, 2]
    assert str(ours.info.dtype) == "chainrule.int32"
    _close(ours.inverse[0], theirs.inverse[0])
    assert np.isnan(ours.inverse[1].numpy()).all()
    with pytest.raises(cr.linalg.LinAlgError):
        cr.linalg.inv_ex(cr.tensor(a), check_errors=True)
    assert cr.linalg.solve_ex(cr.tensor(a[:1]), cr.ones(1, 3, dtype=cr.float64)).info.tolist() == [
        0
    ]


def test_cholesky_names_the_minor_that_is_not_positive_definite() -> None:
    a = np.diag([1.0, -1.0, 1.0])
    with pytest.raises(cr.linalg.LinAlgError, match="leading minor of order 2"):
        cr.linalg.cholesky(cr.tensor(a))
    ours = cr.linalg.cholesky_ex(cr.tensor(a))
    assert ours.info.item() == torch.linalg.cholesky_ex(torch.tensor(a)).info.item() == 2


@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3)])
def test_cholesky_error_reads_once_in_pytorchs_words_with_the_shape(shape: tuple) -> None:
    """The message is PyTorch's and then the shape, once: it was wrapped a second time by
    the op's class name (linalgcholeskyex: linalg.cholesky: ...; got shape ...; got shape)."""
    a = np.broadcast_to(np.diag([1.0, -1.0, 1.0]), shape).copy()
    with pytest.raises(torch.linalg.LinAlgError) as theirs:
        torch.linalg.cholesky(torch.tensor(a))
    with pytest.raises(cr.linalg.LinAlgError) as ours:
        cr.linalg.cholesky(cr.tensor(a))
    want = str(theirs.value).rstrip(".") + f"; got shape {shape}"
    assert str(ours.value) == want


def test_singular_inverse_error_names_the_op_and_shape_once() -> None:
    with pytest.raises(cr.linalg.LinAlgError) as ours:
        cr.linalg.inv(cr.tensor([[1.0, 2.0], [2.0, 4.0]]))
    assert str(ours.value).startswith("linalg.inv: ")
    assert str(ours.value).count("got shape") == 1


def test_integers_are_refused_by_name() -> None:
    with pytest.raises(TypeError, match="linalg.inv: expected a float32 or float64 tensor"):
        cr.linalg.inv(cr.ones(2, 2, dtype=cr.int64))
    with pytest.raises(TypeError, match="linalg.vector_norm"):
        cr.linalg.vector_norm(cr.ones(3, dtype=cr.int64))


def test_shapes_are_checked() -> None:
    with pytest.raises(ValueError, match="linalg.det: A must be batches of square matrices"):
        cr.linalg.det(cr.ones(2, 3))
    with pytest.raises(ValueError, match="linalg.solve: incompatible shapes"):
        cr.linalg.solve(cr.eye(3), cr.ones(4, 2))
    with pytest.raises(ValueError, match="linalg.cross: dim -1 must have size 3"):
        cr.linalg.cross(cr.ones(2, 4), cr.ones(2, 4))


def test_eig_and_eigvals_are_refused_for_want_of_complex_tensors() -> None:
    for fn in (cr.linalg.eig, cr.linalg.eigvals):
        with pytest.raises(TypeError, match="complex tensors are not supported yet"):
            fn(cr.eye(2))


def test_qr_mode_r_has_no_gradient_as_in_pytorch() -> None:
    a = cr.randn(3, 2, dtype=cr.float64, requires_grad=True)
    Q, R = cr.linalg.qr(a, mode="r")
    assert Q.shape == (0,)
    with pytest.raises(RuntimeError, match="mode='r'"):
        R.sum().backward()


def test_lstsq_returns_what_each_driver_returns_in_pytorch() -> None:
    (a, ta), (b, tb) = _pair(2, 5, 3), _pair(2, 5, 2, seed=1)
    for driver in ("gels", "gelsy", "gelsd", "gelss"):
        ours, theirs = (
            cr.linalg.lstsq(a, b, driver=driver),
            torch.linalg.lstsq(ta, tb, driver=driver),
        )
        for o, t in zip(ours, theirs, strict=True):
            assert o.shape == tuple(t.shape), driver
            _close(o, t, rtol=1e-9, atol=1e-10)


def test_the_older_spellings_agree_with_pytorch() -> None:
    (a, ta), (b, tb) = _pair(3, 3), _pair(3, 2, seed=1)
    spd, tspd = (
        a @ a.mT + 3 * cr.eye(3, dtype=cr.float64),
        ta @ ta.mT + 3 * torch.eye(3, dtype=torch.float64),
    )
    _close(cr.det(a), torch.det(ta))
    _close(cr.logdet(spd), torch.logdet(tspd))
    _close(cr.inverse(spd), torch.inverse(tspd))
    _close(cr.matrix_power(a, -2), torch.matrix_power(ta, -2))
    _close(cr.matrix_power(a, 5), torch.matrix_power(ta, 5))
    _close(cr.pinverse(a), torch.pinverse(ta))
    U, S, V = cr.svd(a)
    tU, tS, tV = torch.svd(ta)
    _close(U @ cr.diag(S) @ V.mT, ta)
    _close(S, tS)
    X, _ = cr.triangular_solve(b, a, upper=False, transpose=True)
    _close(X, torch.triangular_solve(tb, ta, upper=False, transpose=True)[0])
    LU, piv = cr.lu(a)
    tLU, tpiv = torch.linalg.lu_factor(ta)
    _close(LU, tLU)
    assert piv.tolist() == tpiv.tolist()
    for o, t in zip(cr.lu_unpack(LU, piv), torch.lu_unpack(tLU, tpiv), strict=True):
        _close(o, t)
    _close(cr.lu_solve(b, LU, piv), torch.linalg.lu_solve(tLU, tpiv, tb))
    L = cr.linalg.cholesky(spd)
    _close(cr.cholesky_solve(b, L), torch.cholesky_solve(tb, torch.linalg.cholesky(tspd)))
    _close(cr.cholesky_inverse(L), torch.cholesky_inverse(torch.linalg.cholesky(tspd)))


def test_lu_solve_every_side_and_transpose() -> None:
    (a, ta), (b, tb) = _pair(3, 3), _pair(3, 3, seed=1)
    LU, piv = cr.linalg.lu_factor(a)
    tLU, tpiv = torch.linalg.lu_factor(ta)
    for left in (True, False):
        for adjoint in (True, False):
            ours = cr.linalg.lu_solve(LU, piv, b, left=left, adjoint=adjoint)
            _close(ours, torch.linalg.lu_solve(tLU, tpiv, tb, left=left, adjoint=adjoint))


def test_the_nodes_are_named_as_pytorch_names_them() -> None:
    a = cr.randn(3, 3, dtype=cr.float64, requires_grad=True)
    assert cr.linalg.inv(a).grad_fn.name() == "LinalgInvExBackward0"
    assert cr.linalg.det(a).grad_fn.name() == "LinalgDetBackward0"
    assert cr.linalg.slogdet(a).logabsdet.grad_fn.name() == "LinalgSlogdetBackward0"
    assert cr.linalg.matrix_exp(a).grad_fn.name() == "LinalgMatrixExpBackward0"
    assert cr.linalg.vector_norm(a).grad_fn.name() == "LinalgVectorNormBackward0"


def test_det_of_a_singular_matrix_has_pytorchs_gradient() -> None:
    base = np.diag([1.0, 2.0, 0.0])  # the adjugate is not 0, but PyTorch's gradient is
    a = cr.tensor(base, requires_grad=True)
    ta = torch.tensor(base, requires_grad=True)
    cr.linalg.det(a).backward()
    torch.linalg.det(ta).backward()
    _close(a.grad, ta.grad, atol=1e-12)


def test_matrix_rank_cond_and_friends() -> None:
    a, ta = _pair(2, 4, 3)
    assert cr.linalg.matrix_rank(a).tolist() == torch.linalg.matrix_rank(ta).tolist()
    for p in (None, 2, -2, "fro", "nuc", 1, -1, float("inf")):
        sq, tsq = a[..., :3, :], ta[..., :3, :]
        _close(cr.linalg.cond(sq, p), torch.linalg.cond(tsq, p))
    b, tb = _pair(4, 2, 2)
    _close(cr.linalg.tensorinv(b, ind=1), torch.linalg.tensorinv(tb, ind=1))
    x, tx = _pair(4)
    _close(cr.linalg.vander(x, N=3), torch.linalg.vander(tx, N=3))
    _close(cr.linalg.diagonal(a, offset=1), torch.linalg.diagonal(ta, offset=1))
    _close(cr.linalg.vecdot(a, a), torch.linalg.vecdot(ta, ta))


def test_ldl_factor_and_solve_agree_with_pytorch() -> None:
    a, ta = _pair(2, 4, 4)
    a, ta = a + a.mT, ta + ta.mT
    ours, theirs = cr.linalg.ldl_factor_ex(a), torch.linalg.ldl_factor_ex(ta)
    for o, t in zip(ours, theirs, strict=True):
        _close(o, t)
    b, tb = _pair(4, 2, seed=1)
    _close(cr.linalg.ldl_solve(ours.LD, ours.pivots, b), torch.linalg.ldl_solve(*theirs[:2], tb))
    with pytest.raises(cr.linalg.LinAlgError, match="ldl_factor: the input is singular"):
        cr.linalg.ldl_factor_ex(cr.zeros(3, 3), check_errors=True)


def test_the_method_mixin_calls_the_functions_as_pytorchs_methods_do() -> None:
    M = cr.Tensor

    (a, ta), (b, tb) = _pair(3, 3), _pair(3, 2, seed=1)
    spd, tspd = (
        a @ a.mT + 3 * cr.eye(3, dtype=cr.float64),
        ta @ ta.mT + 3 * torch.eye(3, dtype=torch.float64),
    )
    for name in ("det", "logdet", "inverse", "matrix_exp", "pinverse"):
        _close(getattr(M, name)(spd), getattr(tspd, name)())
    _close(M.slogdet(a)[1], ta.slogdet()[1])
    _close(M.matrix_power(a, 3), ta.matrix_power(3))
    L, tL = M.cholesky(spd), tspd.cholesky()
    _close(L, tL)
    _close(M.cholesky_solve(b, L), tb.cholesky_solve(tL))
    _close(M.cholesky_inverse(L), tL.cholesky_inverse())
    _close(M.svd(a)[1], ta.svd()[1])
    _close(M.qr(a)[1], ta.qr()[1])
    LU, piv = M.lu(a)
    tLU, tpiv = ta.lu()
    _close(LU, tLU)
    _close(M.lu_solve(b, LU, piv), tb.lu_solve(tLU, tpiv))
    _close(M.triangular_solve(b, a)[0], tb.triangular_solve(ta)[0])


def test_out_receives_the_result_as_in_pytorch() -> None:
    a, ta = _pair(3, 3)
    out = cr.empty(0, dtype=cr.float64)
    assert cr.linalg.inv(a, out=out) is out
    _close(out, torch.linalg.inv(ta))
    inverse, info = cr.empty(0, dtype=cr.float64), cr.empty(0, dtype=cr.int32)
    result = cr.linalg.inv_ex(a, out=(inverse, info))
    assert result.inverse is inverse and result.info is info
    assert info.tolist() == 0
    with pytest.raises(TypeError, match="linalg.inv_ex: out must be a tuple of 2 tensors"):
        cr.linalg.inv_ex(a, out=inverse)
    y = cr.empty(3, dtype=cr.float64)
    cr.special.erfcx(a[0], out=y)
    _close(y, torch.special.erfcx(ta[0]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_2_norm_of_many_short_rows_is_pytorchs(dtype: Any) -> None:
    """Past 2,048 elements the rows' sums of squares are BLAS products (with the switch on):
    the norms (of a row of zeros, of one holding inf), keepdim either way, and the gradient,
    as PyTorch's."""
    a = np.random.default_rng(1).standard_normal((2, 600, 3)).astype(dtype)
    a[0, 0] = 0.0
    a[1, 1, 2] = np.inf
    tol = {"rtol": 1e-6 if dtype == np.float32 else 1e-12}
    for keepdim in (False, True):
        ours = cr.linalg.vector_norm(cr.tensor(a), 2, -1, keepdim)
        theirs = torch.linalg.vector_norm(torch.tensor(a), 2, -1, keepdim)
        assert ours.shape == theirs.shape and str(ours.dtype) == f"chainrule.{a.dtype}"
        _close(ours, theirs, **tol)
    finite = np.where(np.isinf(a), 1.0, a) + 0.5  # no row of zeros: 0 / 0 in the rule
    x = cr.tensor(finite, requires_grad=True)
    tx = torch.tensor(finite, requires_grad=True)
    g = np.random.default_rng(2).standard_normal((2, 600)).astype(dtype)
    (cr.linalg.vector_norm(x, 2, -1) * cr.tensor(g)).sum().backward()
    (torch.linalg.vector_norm(tx, 2, -1) * torch.tensor(g)).sum().backward()
    _close(x.grad, tx.grad, **tol)
