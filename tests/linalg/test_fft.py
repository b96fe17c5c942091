"""chainrule.fft: the shifts and frequencies against PyTorch's, the transforms refused by
name until chainrule has complex tensors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr


def test_shifts_and_frequencies_agree_with_pytorch() -> None:
    x = np.arange(30.0).reshape(5, 6)
    for dim in (None, 0, -1, (0, 1)):
        for name in ("fftshift", "ifftshift"):
            ours = getattr(cr.fft, name)(cr.tensor(x), dim)
            np.testing.assert_array_equal(
                ours.numpy(), getattr(torch.fft, name)(torch.tensor(x), dim)
            )
    for n, d in ((5, 1.0), (6, 0.5)):
        for name in ("fftfreq", "rfftfreq"):
            ours, theirs = getattr(cr.fft, name)(n, d), getattr(torch.fft, name)(n, d)
            assert str(ours.dtype) == "chainrule.float32"
            np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-7)


def test_a_shift_passes_the_gradient_back_unshifted() -> None:
    x = cr.randn(4, 5, requires_grad=True)
    g = cr.randn(4, 5)
    cr.fft.fftshift(x).backward(g)
    np.testing.assert_array_equal(x.grad.numpy(), cr.fft.ifftshift(g).numpy())


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "fft2", "ihfftn"])
def test_the_transforms_are_refused_for_want_of_complex_tensors(name: str) -> None:
    with pytest.raises(TypeError, match=f"fft.{name}: complex tensors are not supported yet"):
        getattr(cr.fft, name)(cr.randn(8))
