"""mvlgamma as one node, PyTorch's MvlgammaBackward0: values, first and second derivatives,
saved values, dtypes and the refusal of a bad p, against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr

_X = np.array([[1.6, 2.3, 5.0], [3.1, 1.7, 9.0]])


@pytest.mark.parametrize("p", [1, 2, 5])
def test_mvlgamma_and_its_two_derivatives_agree_with_pytorch(p: int) -> None:
    results = []
    for lib in (torch, cr):
        x = lib.tensor(_X + p / 2, requires_grad=True)
        y = x.mvlgamma(p)
        (g,) = lib.autograd.grad((y * lib.tensor(_X)).sum(), x, create_graph=True)
        (h,) = lib.autograd.grad(g.sum(), x)
        results.append((y.detach().numpy(), g.detach().numpy(), h.numpy(), y.grad_fn))
    (y0, g0, h0, f0), (y1, g1, h1, f1) = results
    np.testing.assert_allclose(y1, y0, rtol=1e-13)
    np.testing.assert_allclose(g1, g0, rtol=1e-12)
    np.testing.assert_allclose(h1, h0, rtol=1e-12)
    assert f1.name() == f0.name() == "MvlgammaBackward0"
    assert f1._saved_p == f0._saved_p == p
    np.testing.assert_array_equal(f1._saved_self.detach().numpy(), f0._saved_self.detach().numpy())


def test_mvlgamma_dtypes_and_empty_agree_with_pytorch() -> None:
    for lib in (torch, cr):
        assert str(lib.tensor([2, 3]).mvlgamma(2).dtype).endswith("float32")
        assert tuple(lib.zeros((0, 2)).mvlgamma(3).shape) == (0, 2)
    ours = cr.tensor(np.float32(3.0)).mvlgamma(2)
    theirs = torch.tensor(np.float32(3.0)).mvlgamma(2)
    assert ours.dtype == cr.float32
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


@pytest.mark.parametrize("p", [0, -1, 1.5, True])
def test_mvlgamma_refuses_a_p_that_is_not_a_positive_integer(p: object) -> None:
    with pytest.raises(ValueError, match=r"mvlgamma: p must be an integer >= 1; got"):
        cr.tensor([3.0]).mvlgamma(p)  # type: ignore[arg-type]
