"""A decomposition's parts made directly from LAPACK's arrays where nothing is recorded
(linalg/decompose.py's untracked): the same values as each part's apply, with the switch on
and off, and nodes where a gradient is wanted, inside vmap and on a dual level."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule import fastpath

_A = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
_S = (_A.T @ _A + np.eye(3)).astype(np.float32)

CALLS = {
    "eigh": lambda x: cr.linalg.eigh(x[:3] + x[:3].mT),
    "svd_full": lambda x: cr.linalg.svd(x),
    "svd_reduced": lambda x: cr.linalg.svd(x.mT, full_matrices=False),
    "svdvals": lambda x: (cr.linalg.svdvals(x),),
    "qr_reduced": lambda x: cr.linalg.qr(x),
    "qr_complete": lambda x: cr.linalg.qr(x, mode="complete"),
    "qr_r": lambda x: cr.linalg.qr(x.mT, mode="r"),
    "lu": lambda x: cr.linalg.lu(x),
    "lu_factor": lambda x: cr.linalg.lu_factor(x[:3]),
    "Tensor.qr": lambda x: x.qr(),
}


def _run(call: Any, on: bool, grad: bool) -> list[Any]:
    before = fastpath.enabled()
    fastpath.set_enabled(on)
    try:
        x = cr.tensor(_A, requires_grad=grad)
        return list(call(x))
    finally:
        fastpath.set_enabled(before)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_parts_are_the_applies_values_with_nothing_recorded(name: str) -> None:
    fast, plain = (_run(CALLS[name], on, grad=False) for on in (True, False))
    for f, p in zip(fast, plain, strict=True):
        assert f.grad_fn is None and not f.requires_grad
        assert f.dtype == p.dtype and f.shape == p.shape
        np.testing.assert_array_equal(f.numpy(), p.numpy())
    with cr.no_grad():
        nograd = _run(CALLS[name], True, grad=True)
    assert all(t.grad_fn is None for t in nograd)


@pytest.mark.parametrize("name", ["eigh", "svd_full", "svdvals", "qr_reduced", "lu"])
def test_a_gradient_wanted_takes_the_applies(name: str) -> None:
    parts = _run(CALLS[name], True, grad=True)
    parts = parts[1:] if name == "lu" else parts  # P needs no gradient, as PyTorch's
    assert all(p.grad_fn is not None for p in parts)


def test_vmap_and_dual_levels_take_the_applies() -> None:
    x = cr.tensor(np.stack([_A, 2 * _A]))
    got = cr.func.vmap(lambda m: cr.linalg.qr(m).R)(x)
    for i in range(2):
        np.testing.assert_allclose(got[i].numpy(), cr.linalg.qr(x[i]).R.numpy(), rtol=1e-6)
    import chainrule.autograd.forward_ad as fwAD

    with fwAD.dual_level():
        d = fwAD.make_dual(cr.tensor(_S), cr.tensor(np.eye(3, dtype=np.float32)))
        L = cr.linalg.eigh(d).eigenvalues
        assert fwAD.unpack_dual(L).tangent is not None
