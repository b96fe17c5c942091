"""The forward-mode program (programs/forward_gradients.py), run on torch and on chainrule with
``import torch`` aliased: a model's directional derivatives through functional_call and
make_dual, training by forward gradients, a custom Function's jvp and autograd.functional."""

from __future__ import annotations

import numpy as np

from tests.pytorch_programs.test_pytorch_programs import F32, assert_follows, twins


def test_forward_gradients_follow_torch() -> None:
    theirs, ours = twins("forward_gradients")
    np.testing.assert_allclose(ours["forward"], ours["reverse"], rtol=1e-5)
    np.testing.assert_allclose(ours["forward"], theirs["forward"], rtol=1e-5)
    assert_follows(ours["losses"], theirs["losses"], F32)
    assert ours["losses"][-1] < ours["losses"][0]  # it learns
    for key in ("cube", "plain", "jvp"):
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-5, err_msg=key)
    np.testing.assert_allclose(np.asarray(ours["hvp"]), theirs["hvp"], rtol=1e-4, atol=1e-6)
