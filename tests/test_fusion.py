"""nn.fusion: what it plans for a Sequential, and that fusion on and off give the same
outputs and gradients."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from chainrule.nn import fusion
from chainrule.nn.fusion import Fused


@pytest.mark.parametrize("value, on", [(None, True), ("1", True), ("0", False)])
def test_enabled_reads_the_fastpath_switch(monkeypatch, value, on):
    if value is None:
        monkeypatch.delenv("CHAINRULE_FASTPATH", raising=False)
    else:
        monkeypatch.setenv("CHAINRULE_FASTPATH", value)
    assert fusion.enabled() is on


def test_plan_fuses_each_layer_with_the_relu_after_it(monkeypatch):
    monkeypatch.setenv("CHAINRULE_FASTPATH", "1")
    lin, relu, conv2, relu2, conv1, relu3, last = (
        nn.Linear(2, 3), nn.ReLU(), nn.Conv2d(1, 1, 1), nn.ReLU(inplace=True),
        nn.Conv1d(1, 1, 1), nn.ReLU(), nn.Linear(3, 1),
    )  # fmt: skip
    assert fusion.plan([lin, relu, conv2, relu2, conv1, relu3, last]) == [
        Fused(lin, relu, fusion.linear_relu),
        Fused(conv2, relu2, fusion.conv_relu),
        Fused(conv1, relu3, fusion.conv_relu),
        last,
    ]


class MyReLU(nn.ReLU):
    pass


class MyLinear(nn.Linear):
    pass


def with_forward(m):
    m.forward = lambda x: x
    return m


UNFUSED = {  # modules that run one by one
    "relu then linear": lambda: [nn.ReLU(), nn.Linear(2, 2)],
    "linear then tanh": lambda: [nn.Linear(2, 2), nn.Tanh()],
    "a subclass of ReLU": lambda: [nn.Linear(2, 2), MyReLU()],
    "a subclass of Linear": lambda: [MyLinear(2, 2), nn.ReLU()],
    "forward set on the layer": lambda: [with_forward(nn.Linear(2, 2)), nn.ReLU()],
    "forward set on the relu": lambda: [nn.Linear(2, 2), with_forward(nn.ReLU())],
    "a linear alone": lambda: [nn.Linear(2, 2)],
    "nothing": lambda: [],
}


@pytest.mark.parametrize("make", list(UNFUSED.values()), ids=list(UNFUSED))
def test_plan_leaves_other_modules_as_they_are(monkeypatch, make):
    monkeypatch.setenv("CHAINRULE_FASTPATH", "1")
    modules = make()
    assert list(fusion.plan(modules)) == modules


def test_plan_fuses_a_relu_once(monkeypatch):
    monkeypatch.setenv("CHAINRULE_FASTPATH", "1")
    lin, relu, again = nn.Linear(2, 2), nn.ReLU(), nn.ReLU()
    assert fusion.plan([lin, relu, again]) == [Fused(lin, relu, fusion.linear_relu), again]


def test_plan_with_fusion_off_is_the_modules(monkeypatch):
    monkeypatch.setenv("CHAINRULE_FASTPATH", "0")
    modules = [nn.Linear(2, 3), nn.ReLU(), nn.Conv2d(1, 1, 1), nn.ReLU()]
    assert list(fusion.plan(modules)) == modules


# -- the same answers on and off ---------------------------------------------------------


def mlp():
    return nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 3))


def cnn():
    return nn.Sequential(
        nn.Conv2d(2, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(4, 3, 3, bias=False), nn.ReLU(), nn.Flatten(), nn.Linear(3, 2),
    )  # fmt: skip


def conv1d_net():
    return nn.Sequential(nn.Conv1d(2, 3, 3, padding="same"), nn.ReLU(), nn.Flatten())


MODELS = {  # model, input shape, the node its first layer and ReLU make with fusion on
    "mlp": (mlp, (7, 4), "LinearReLU"),
    "mlp-batched": (mlp, (2, 3, 4), "LinearReLU"),
    "cnn": (cnn, (3, 2, 6, 6), "Conv2dReLU"),
    "conv1d": (conv1d_net, (3, 2, 8), "Conv2dReLU"),
}


def outputs_and_gradients(make, shape, dtype):
    """The model's output, the node its first ReLU made, and the gradients of the input and
    of every parameter for a random upstream gradient."""
    cr.manual_seed(0)
    model = make().to(dtype)
    rng = np.random.default_rng(3)
    x = cr.tensor(rng.standard_normal(shape).astype(dtype), requires_grad=True)
    first = model[:2](x).grad_fn
    while first.name == "Reshape":  # a Conv1d's output is reshaped from its 2-D convolution
        first = first.inputs[0].grad_fn
    out = model(x)
    out.backward(cr.tensor(rng.standard_normal(out.shape).astype(dtype)))
    return out.numpy(), first.name, [x.grad.numpy()] + [p.grad.numpy() for p in model.parameters()]


@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-12), (np.float32, 1e-5)])
@pytest.mark.parametrize("make, shape, fused", list(MODELS.values()), ids=list(MODELS))
def test_fusion_on_and_off_give_the_same_outputs_and_gradients(
    monkeypatch, make, shape, fused, dtype, tol
):
    monkeypatch.setenv("CHAINRULE_FASTPATH", "1")
    out_on, node_on, grads_on = outputs_and_gradients(make, shape, dtype)
    monkeypatch.setenv("CHAINRULE_FASTPATH", "0")
    out_off, node_off, grads_off = outputs_and_gradients(make, shape, dtype)
    assert (node_on, node_off) == (fused, "Relu")
    np.testing.assert_allclose(out_on, out_off, rtol=tol, atol=tol)
    assert len(grads_on) == len(grads_off) > 1
    for g_on, g_off in zip(grads_on, grads_off, strict=True):
        assert g_on.dtype == g_off.dtype == dtype
        np.testing.assert_allclose(g_on, g_off, rtol=tol, atol=tol)
