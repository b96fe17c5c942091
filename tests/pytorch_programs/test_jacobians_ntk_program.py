"""The Jacobians-and-NTK program (programs/jacobians_ntk.py), run on torch and on chainrule
with ``import torch`` aliased: a layer's Jacobian by jacrev, jacfwd and vmap over vjp, batched
by vmap; Hessians by hessian and jacfwd(jacrev) and a Hessian-vector product by jvp of grad;
a small MLP's empirical NTK from its Jacobians and from vjp/jvp products."""

from __future__ import annotations

import numpy as np

from tests.pytorch_programs.test_pytorch_programs import twins


def test_jacobians_hessians_and_the_ntk_follow_torch() -> None:
    theirs, ours = twins("jacobians_ntk")
    assert set(ours) == set(theirs)
    for key, value in theirs.items():
        np.testing.assert_allclose(ours[key], value, rtol=1e-10, atol=1e-12, err_msg=key)
    # each way agrees with the others within chainrule
    np.testing.assert_allclose(ours["jacfwd"], ours["jacrev"], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ours["vjp_rows"], ours["jacrev"], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ours["jacfwd_jacrev"], ours["hessian"], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ours["hvp"], ours["hessian_v"], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours["by_products"], ours["kernel"], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours["hessian"], ours["hessian"].T, atol=1e-12)
    assert ours["kernel"].shape == (5, 7, 3, 3)
    np.testing.assert_allclose(ours["mlp_jacobian_fwd"], ours["mlp_jacobian"], rtol=1e-10)
    for h in ours["mlp_hessians"][1:]:
        np.testing.assert_allclose(h, ours["mlp_hessians"][0], rtol=1e-10, atol=1e-12)
