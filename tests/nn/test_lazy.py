"""The lazy modules against PyTorch's: uninitialized parameters until the first input (or a
loaded state_dict) gives their shapes, then the concrete class, with PyTorch's parameter
names, state_dict keys and repr, and its outputs from copied weights."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.twins import copy_into

CASES = [
    ("LazyLinear", (3,), (2, 5), "Linear"),
    ("LazyConv1d", (4, 3), (2, 6, 9), "Conv1d"),
    ("LazyConv2d", (4, 3), (2, 6, 7, 7), "Conv2d"),
    ("LazyConv2d", (4, 3), (6, 7, 7), "Conv2d"),  # unbatched
    ("LazyConv3d", (2, 2), (1, 3, 4, 4, 4), "Conv3d"),
    ("LazyConvTranspose1d", (4, 3), (2, 6, 5), "ConvTranspose1d"),
    ("LazyConvTranspose2d", (4, 3, 2), (2, 6, 4, 4), "ConvTranspose2d"),
    ("LazyConvTranspose3d", (2, 2), (3, 2, 2, 2), "ConvTranspose3d"),  # unbatched
    ("LazyBatchNorm1d", (), (4, 3), "BatchNorm1d"),
    ("LazyBatchNorm2d", (), (4, 3, 2, 2), "BatchNorm2d"),
    ("LazyBatchNorm3d", (), (2, 3, 2, 2, 2), "BatchNorm3d"),
]


@pytest.mark.parametrize(("name", "args", "shape", "becomes"), CASES)
def test_before_and_after_the_first_input_as_torchs(name, args, shape, becomes):
    ours, theirs = getattr(cr.nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(theirs)
    assert ours.has_uninitialized_params() and theirs.has_uninitialized_params()
    assert [(k, repr(v)) for k, v in ours.state_dict().items()] == [
        (k, repr(v)) for k, v in theirs.state_dict().items()
    ]
    x = np.random.default_rng(0).standard_normal(shape)
    want = theirs(torch.tensor(x, dtype=torch.float32))
    weight = ours.weight
    got = ours(cr.tensor(x, dtype=cr.float32))
    assert type(ours).__name__ == type(theirs).__name__ == becomes
    assert repr(ours) == repr(theirs)
    assert ours.weight is weight and type(weight) is cr.nn.Parameter  # the same object
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in theirs.state_dict().items()
    ]
    copy_into(ours, theirs)  # the same weights: the same output
    got = ours(cr.tensor(x, dtype=cr.float32))
    want = theirs(torch.tensor(x, dtype=torch.float32))
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_the_draws_follow_the_concrete_classs_initialisation():
    cr.manual_seed(0)
    lazy = cr.nn.LazyLinear(3)
    lazy(cr.ones(1, 4))
    cr.manual_seed(0)
    plain = cr.nn.Linear(4, 3)
    assert np.array_equal(lazy.weight.detach().numpy(), plain.weight.detach().numpy())
    assert np.array_equal(lazy.bias.detach().numpy(), plain.bias.detach().numpy())


def test_a_parameter_given_to_an_optimizer_before_the_first_input_is_trained():
    model = cr.nn.Sequential(cr.nn.LazyLinear(4), cr.nn.Tanh(), cr.nn.LazyLinear(1))
    opt = cr.optim.SGD(model.parameters(), lr=0.1)
    x, y = cr.randn(8, 3), cr.randn(8, 1)
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]


def test_load_state_dict_materializes_as_torchs():
    source = cr.nn.Sequential(cr.nn.Conv2d(3, 4, 3), cr.nn.BatchNorm2d(4), cr.nn.Flatten(),
                              cr.nn.Linear(4 * 25, 2))  # fmt: skip
    lazy = cr.nn.Sequential(cr.nn.LazyConv2d(4, 3), cr.nn.LazyBatchNorm2d(), cr.nn.Flatten(),
                            cr.nn.LazyLinear(2))  # fmt: skip
    up = cr.nn.ConvTranspose1d(6, 4, 3, groups=2)
    lazy_up = cr.nn.LazyConvTranspose1d(4, 3, groups=2)
    lazy_up.load_state_dict(up.state_dict())
    assert repr(lazy_up) == repr(up) and lazy_up.weight.shape == (6, 2, 3)
    lazy.load_state_dict(source.state_dict())
    assert not any(isinstance(m, cr.nn.modules.lazy.LazyModuleMixin) for m in lazy.modules())
    assert repr(lazy) == repr(source)
    x = cr.randn(2, 3, 7, 7)
    source.eval(), lazy.eval()
    assert np.array_equal(lazy(x).detach().numpy(), source(x).detach().numpy())


def test_an_uninitialized_state_loads_into_an_uninitialized_module():
    lazy = cr.nn.LazyLinear(2)
    lazy.load_state_dict(cr.nn.LazyLinear(2).state_dict())
    assert lazy.has_uninitialized_params() and type(lazy) is cr.nn.LazyLinear


def test_an_uninitialized_module_saved_and_loaded_stays_lazy(tmp_path):
    lazy = cr.nn.LazyLinear(2, dtype=cr.float64)
    cr.save(lazy.state_dict(), tmp_path / "state.pt")
    again = cr.nn.LazyLinear(2, dtype=cr.float64)
    again.load_state_dict(cr.load(tmp_path / "state.pt"))
    assert again.has_uninitialized_params()
    cr.save(lazy, tmp_path / "whole.pt")
    whole = cr.load(tmp_path / "whole.pt", weights_only=False)
    assert repr(whole.weight) == "<UninitializedParameter>"
    assert whole(cr.ones(1, 3, dtype=cr.float64)).dtype == cr.float64


def test_dtype_set_before_the_first_input_is_kept():
    lazy = cr.nn.LazyLinear(2, dtype=cr.float64)
    assert lazy(cr.ones(1, 3, dtype=cr.float64)).dtype == cr.float64
    lazy = cr.nn.LazyConv1d(2, 1).double()
    assert lazy(cr.ones(1, 3, 4, dtype=cr.float64)).dtype == cr.float64


@pytest.mark.parametrize(
    ("module", "shape", "message"),
    [
        (lambda: cr.nn.LazyConv2d(4, 3), (2, 3), "LazyConv2d: expected 3D .* or 4D"),
        (lambda: cr.nn.LazyConv2d(4, 3, groups=2), (1, 3, 5, 5), "groups=2 must divide"),
        (lambda: cr.nn.LazyConvTranspose1d(4, 3, groups=2), (1, 3, 5), "groups=2 must divide"),
        (lambda: cr.nn.LazyBatchNorm2d(), (2, 3), "LazyBatchNorm2d: expected input of shape"),
        (lambda: cr.nn.LazyLinear(2), (), "LazyLinear: expected input with a last dim"),
    ],
)
def test_refusals_name_the_layer(module, shape, message):
    with pytest.raises(ValueError, match=message):
        module()(cr.ones(*shape))


def test_uninitialized_parameter_as_torchs():
    ours, theirs = cr.nn.UninitializedParameter(), torch.nn.UninitializedParameter()
    assert repr(ours) == repr(theirs) == "<UninitializedParameter>"
    assert isinstance(ours, cr.nn.Parameter) and ours.requires_grad
    ours.materialize((2, 3))
    assert type(ours) is cr.nn.Parameter and ours.shape == (2, 3)
    assert cr.nn.parameter.is_lazy(cr.nn.UninitializedBuffer())
    buffer = cr.nn.UninitializedBuffer(dtype=cr.float64)
    buffer.materialize((4,))
    assert type(buffer) is cr.Tensor and buffer.dtype == cr.float64
