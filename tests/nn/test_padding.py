"""The padding layers against PyTorch's: values, gradients, reprs and argument checks."""

import numpy as np
import pytest
import torch

import chainrule as cr

KINDS = ["ZeroPad", "ConstantPad", "ReflectionPad", "ReplicationPad", "CircularPad"]
PADDINGS = {1: [2, (1, 3)], 2: [1, (1, 0, 2, 1)], 3: [1, (1, 0, 0, 2, 1, 1)]}
SHAPES = {1: [(2, 5), (2, 3, 5)], 2: [(3, 4, 5), (2, 3, 4, 5)], 3: [(2, 4, 4, 5), (1, 2, 4, 4, 5)]}
CASES = [
    (kind, dims, padding, shape)
    for kind in KINDS
    for dims in (1, 2, 3)
    for padding in PADDINGS[dims]
    for shape in SHAPES[dims]
]


def _make(lib, kind, dims, padding):
    cls = getattr(lib.nn, f"{kind}{dims}d")
    return cls(padding, 2.5) if kind == "ConstantPad" else cls(padding)


@pytest.mark.parametrize(("kind", "dims", "padding", "shape"), CASES)
def test_padding_layers_match_torch(kind, dims, padding, shape):
    x = np.random.default_rng(0).standard_normal(shape)
    ours, theirs = _make(cr, kind, dims, padding), _make(torch, kind, dims, padding)
    a, b = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ya, yb = ours(a), theirs(b)
    np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=1e-12)
    up = np.random.default_rng(1).standard_normal(tuple(yb.shape))
    ya.backward(cr.tensor(up))
    yb.backward(torch.tensor(up))
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12)
    assert repr(ours) == repr(theirs)
    assert ours.padding == theirs.padding and ours.state_dict() == {}


def test_a_zero_pad_is_its_constant_pad_as_in_torch():
    for lib in (cr, torch):
        assert isinstance(lib.nn.ZeroPad2d(1), lib.nn.ConstantPad2d)


def test_bad_padding_is_refused_naming_the_layer():
    with pytest.raises(ValueError, match=r"ReflectionPad2d: padding must be an int or 4 ints"):
        cr.nn.ReflectionPad2d((1, 2))
    message = r"pad: mode='reflect' pads the last 1, 2 or 3 dims.*got pad \(1, 1, 1, 1\)"
    with pytest.raises(ValueError, match=message):
        cr.nn.ReflectionPad2d(1)(cr.ones(5, 3, 4, 4, 4))


def test_a_unet_style_block_pads_and_trains():
    cr.manual_seed(0)
    block = cr.nn.Sequential(cr.nn.ReflectionPad2d(1), cr.nn.Conv2d(2, 2, 3), cr.nn.ReLU())
    x = cr.randn(1, 2, 6, 6)
    assert block(x).shape == (1, 2, 6, 6)
    block(x).sum().backward()
    assert all(p.grad is not None for p in block.parameters())
