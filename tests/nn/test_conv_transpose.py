"""ConvTranspose2d and conv_transpose2d as PyTorch's: the layer's weights copied from torch's,
outputs and every gradient equal over strides, paddings, output paddings, groups and
dilations; output_size; the repr; and the errors, each naming the layer and the values."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.tolerances import LAYER, tol
from tests.twins import copy_into

GEOMETRIES = [  # in, out, kernel, stride, padding, output_padding, groups, dilation, size
    (4, 3, 3, 2, 1, 1, 1, 1, 3),
    (4, 6, 3, 2, 0, 0, 2, 1, 4),
    (2, 2, 2, 1, 0, 0, 1, 2, 5),
    (3, 5, (2, 3), (2, 1), (1, 0), (1, 0), 1, 1, 4),
    (1, 1, 1, 3, 0, 2, 1, 1, 2),
]


@pytest.mark.parametrize("geometry", GEOMETRIES, ids=[str(g) for g in GEOMETRIES])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_the_layer_matches_torch(geometry: tuple, dtype: str) -> None:
    cin, cout, k, s, p, op, g, d, size = geometry
    torch.manual_seed(0)
    theirs = torch.nn.ConvTranspose2d(cin, cout, k, s, p, op, g, True, d).to(getattr(torch, dtype))
    ours = cr.nn.ConvTranspose2d(cin, cout, k, s, p, op, g, True, d, dtype=getattr(cr, dtype))
    assert [(n, tuple(v.shape)) for n, v in ours.state_dict().items()] == [
        (n, tuple(v.shape)) for n, v in theirs.state_dict().items()
    ]
    copy_into(ours, theirs)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, cin, size, size)).astype(dtype)
    xt, xc = torch.tensor(x, requires_grad=True), cr.tensor(x, requires_grad=True)
    yt, yc = theirs(xt), ours(xc)
    assert yc.shape == tuple(yt.shape) and yc.dtype == getattr(cr, dtype)
    up = rng.standard_normal(tuple(yt.shape)).astype(dtype)
    yt.backward(torch.tensor(up))
    yc.backward(cr.tensor(up))
    limits = tol(dtype, LAYER)
    np.testing.assert_allclose(yc.numpy(), yt.detach().numpy(), **limits)
    np.testing.assert_allclose(xc.grad.numpy(), xt.grad.numpy(), **limits)
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), **limits)
    np.testing.assert_allclose(ours.bias.grad.numpy(), theirs.bias.grad.numpy(), **limits)
    assert repr(ours) == repr(theirs)


def test_the_function_takes_an_unbatched_input_and_no_bias() -> None:
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((3, 4, 4)), rng.standard_normal((3, 2, 3, 3))
    got = cr.nn.functional.conv_transpose2d(cr.tensor(x), cr.tensor(w), stride=2)
    want = torch.nn.functional.conv_transpose2d(torch.tensor(x), torch.tensor(w), stride=2)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)


def test_output_size_picks_the_output_padding_as_torch() -> None:
    torch.manual_seed(0)
    theirs = torch.nn.ConvTranspose2d(2, 2, 3, stride=2, padding=1).double()
    ours = cr.nn.ConvTranspose2d(2, 2, 3, stride=2, padding=1, dtype=cr.float64)
    copy_into(ours, theirs)
    x = np.random.default_rng(3).standard_normal((1, 2, 4, 4))
    for size in ([7, 7], [8, 8], [7, 8], (1, 2, 8, 7)):
        yt, yc = theirs(torch.tensor(x), output_size=size), ours(cr.tensor(x), output_size=size)
        np.testing.assert_allclose(yc.numpy(), yt.detach().numpy(), rtol=1e-10, atol=1e-12)
    with pytest.raises(
        ValueError,
        match=r"ConvTranspose2d: output_size \(10, 10\) is out of "
        r"reach for input shape \(1, 2, 4, 4\): each size must be from \(7, 7\) "
        r"to \(8, 8\)",
    ):
        ours(cr.tensor(x), output_size=[10, 10])


def test_errors_name_the_layer_and_the_values() -> None:
    with pytest.raises(
        ValueError,
        match=r"ConvTranspose2d: output_padding must be .* smaller "
        r"than stride or dilation; got output_padding \(2, 2\), stride \(2, 2\)",
    ):
        cr.nn.ConvTranspose2d(2, 2, 3, stride=2, output_padding=2)
    with pytest.raises(ValueError, match="ConvTranspose2d: only padding_mode 'zeros'"):
        cr.nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect")
    with pytest.raises(ValueError, match="ConvTranspose2d: padding must be an int or a tuple"):
        cr.nn.ConvTranspose2d(2, 2, 3, padding="same")
    x, w = cr.zeros(1, 3, 4, 4), cr.zeros(2, 2, 3, 3)
    with pytest.raises(
        ValueError,
        match=r"conv_transpose2d: the input's channels must equal "
        r"the weight's first dim .*input shape \(1, 3, 4, 4\) and weight shape "
        r"\(2, 2, 3, 3\)",
    ):
        cr.nn.functional.conv_transpose2d(x, w)
    with pytest.raises(
        ValueError,
        match=r"conv_transpose2d: bias must have shape \(2,\); got "
        r"bias shape \(3,\)",
    ):
        cr.nn.functional.conv_transpose2d(cr.zeros(1, 2, 4, 4), w, cr.zeros(3))
    with pytest.raises(TypeError, match="conv_transpose2d: input, weight and bias must share"):
        cr.nn.functional.conv_transpose2d(cr.zeros(1, 2, 4, 4, dtype=cr.float64), w)


def test_the_default_initialisation_has_torchs_bounds() -> None:
    """kaiming_uniform_(a=sqrt(5)) over the fan-in of the transposed weight, out/groups *
    kh * kw, as PyTorch computes it; bias in +-1/sqrt(fan_in)."""
    layer = cr.nn.ConvTranspose2d(64, 8, 3, groups=2)
    assert layer.weight.shape == (64, 4, 3, 3)
    bound = 1 / np.sqrt(4 * 9)
    for p in (layer.weight, layer.bias):
        values = p.detach().numpy()
        assert values.min() >= -bound and values.max() <= bound
    weight = layer.weight.detach().numpy()  # 2,304 draws: over the whole range, no narrower
    assert weight.max() > 0.95 * bound and weight.min() < -0.95 * bound
