"""Where a PyTorch program means one thing, chainrule means the same, checked against torch:
what assigning to a Parameter's, a buffer's or a submodule's name does, unique's NaNs, and
clip_grad_norm_ on float16 gradients."""

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import nn


def torch_error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return info.type, str(info.value)


# -- unique and clip_grad_norm_ -------------------------------------------------------------


@pytest.mark.parametrize("values", [[float("nan"), 1.0, float("nan"), 1.0], [float("nan")] * 3])
def test_unique_keeps_each_nan_as_its_own_value(values):
    ours = cr.tensor(values).unique(return_inverse=True, return_counts=True)
    theirs = torch.tensor(values).unique(return_inverse=True, return_counts=True)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(
        cr.unique(cr.tensor(values)).numpy(), torch.unique(torch.tensor(values)).numpy()
    )


def test_clip_grad_norm_of_float16_gradients_computes_the_norm_wider():
    p, q = (
        nn.Parameter(cr.zeros(2, dtype=cr.float16)),
        torch.nn.Parameter(torch.zeros(2, dtype=torch.float16)),
    )
    p.grad = cr.tensor([300.0, 400.0], dtype=cr.float16)
    q.grad = torch.tensor([300.0, 400.0], dtype=torch.float16)
    ours = nn.utils.clip_grad_norm_([p], 1.0)
    theirs = torch.nn.utils.clip_grad_norm_([q], 1.0)
    assert ours.dtype == cr.float16 and float(ours) == float(theirs) == 500.0
    np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())


# -- assigning to a member's name -----------------------------------------------------------


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 3)
        self.register_buffer("scale", cr.ones(3))


class TorchNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(2, 3)
        self.register_buffer("scale", torch.ones(3))


def members(m):
    return (
        [n for n, _ in m.named_parameters()],
        [n for n, _ in m.named_buffers()],
        [n for n, _ in m.named_children()],
        list(m.state_dict()),
    )


def same_message(torch_error, value):
    """torch's message as chainrule words it: its package's names, and the value's type as
    chainrule's (a Linear is chainrule.nn.layers.Linear, not torch.nn.modules.linear.Linear)."""
    text = str(torch_error)
    if isinstance(value, nn.Module):
        text = text.replace("torch.nn.modules.linear.Linear", "chainrule.nn.layers.Linear")
    return text.replace("torch", "chainrule").replace("chainrule.nn.Buffer, ", "")


def assign(m, path, value):
    *owners, name = path.split(".")
    for o in owners:
        m = getattr(m, o)
    setattr(m, name, value)


def ours_and_theirs(kind, shape=(3, 2)):
    if kind == "tensor":
        return cr.zeros(*shape), torch.zeros(*shape)
    if kind == "parameter":
        return nn.Parameter(cr.zeros(*shape)), torch.nn.Parameter(torch.zeros(*shape))
    if kind == "module":
        return nn.Linear(2, 2), torch.nn.Linear(2, 2)
    return {"int": (3, 3), "none": (None, None), "list": ([1], [1])}[kind]


KINDS = ["tensor", "parameter", "module", "int", "none", "list"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("path", ["fc.weight", "scale", "fc", "fc.bias"])
def test_assigning_to_a_members_name_does_what_torch_does(path, kind):
    ours, theirs = Net(), TorchNet()
    value, torch_value = ours_and_theirs(kind)
    try:
        assign(theirs, path, torch_value)
    except TypeError as e:
        with pytest.raises(TypeError) as info:
            assign(ours, path, value)
        assert str(info.value) == same_message(e, value)
        assert members(ours) == members(theirs)  # nothing changed
        return
    assign(ours, path, value)
    assert members(ours) == members(theirs)


@pytest.mark.parametrize("kind", KINDS)
def test_a_name_set_to_none_keeps_its_kind(kind):
    ours, theirs = Net(), TorchNet()
    for m in (ours, theirs):
        m.fc.weight = None
        m.fc = None if kind == "module" else m.fc
    path = "fc" if kind == "module" else "fc.weight"
    value, torch_value = ours_and_theirs(kind)
    raised = []
    for m, v in ((theirs, torch_value), (ours, value)):
        try:
            assign(m, path, v)
        except TypeError as e:
            raised.append(same_message(e, value) if m is theirs else str(e))
    assert len(raised) in (0, 2) and len(set(raised)) <= 1
    assert members(ours) == members(theirs)


def test_linear_without_bias_takes_only_a_parameter_there():
    for lin in (nn.Linear(2, 3, bias=False), torch.nn.Linear(2, 3, bias=False)):
        with pytest.raises(TypeError, match="as parameter 'bias'"):
            lin.bias = (cr if isinstance(lin, nn.Module) else torch).zeros(3)


def test_a_replaced_weight_stays_in_parameters_and_state_dict():
    ours = nn.Linear(2, 3)
    new = nn.Parameter(cr.ones(3, 3))
    ours.weight = new
    assert next(ours.parameters()) is new
    np.testing.assert_array_equal(ours.state_dict()["weight"].numpy(), np.ones((3, 3)))
