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


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.nn.Linear(2, 3, bias=False),
        lambda lib: lib.nn.LayerNorm(3, bias=False),
        lambda lib: lib.nn.LayerNorm(3, elementwise_affine=False),
        lambda lib: lib.nn.BatchNorm1d(3, affine=False),
    ],
)
def test_a_layer_without_bias_takes_only_a_parameter_there(make):
    for lib in (torch, cr):
        layer = make(lib)
        with pytest.raises(TypeError, match="as parameter 'bias'"):
            layer.bias = lib.zeros(3)
    assert members(make(cr)) == members(make(torch))


def test_a_replaced_weight_stays_in_parameters_and_state_dict():
    ours = nn.Linear(2, 3)
    new = nn.Parameter(cr.ones(3, 3))
    ours.weight = new
    assert next(ours.parameters()) is new
    np.testing.assert_array_equal(ours.state_dict()["weight"].numpy(), np.ones((3, 3)))


# -- errors that name their cause -----------------------------------------------------------


@pytest.mark.parametrize(
    ("ours", "theirs", "message"),
    [
        (lambda: nn.LayerNorm(-3), lambda: torch.nn.LayerNorm(-3),
         r"^LayerNorm: normalized_shape must be a non-negative int; got -3$"),
        (lambda: nn.LayerNorm((4, -3)), lambda: torch.nn.LayerNorm((4, -3)),
         r"^LayerNorm: normalized_shape must be a non-negative int; got -3$"),
        (lambda: nn.BatchNorm1d(-3), lambda: torch.nn.BatchNorm1d(-3),
         r"^BatchNorm1d: num_features must be a non-negative int; got -3$"),
        (lambda: nn.BatchNorm2d(-3), lambda: torch.nn.BatchNorm2d(-3),
         r"^BatchNorm2d: num_features must be a non-negative int; got -3$"),
    ],
)  # fmt: skip
def test_a_negative_size_names_the_layer_and_the_value(ours, theirs, message):
    with pytest.raises(RuntimeError):
        theirs()
    with pytest.raises(ValueError, match=message):
        ours()


def test_load_state_dict_of_none_names_the_key():
    with pytest.raises(RuntimeError, match='parameter named "weight".*NoneType'):
        torch.nn.Linear(2, 2).load_state_dict({"weight": None, "bias": torch.zeros(2)})
    model = nn.Linear(2, 2)
    before = model.bias.numpy().copy()
    with pytest.raises(RuntimeError, match=r"cannot load weight: expected a Tensor or an array; "
                       r"got None"):  # fmt: skip
        model.load_state_dict({"weight": None, "bias": cr.ones(2)})
    np.testing.assert_array_equal(model.bias.numpy(), before)  # nothing was written


def test_linear_refuses_a_list_bias():
    with pytest.raises(TypeError, match="bias"):
        torch.nn.functional.linear(torch.ones(1, 2), torch.ones(3, 2), [1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match=r"^linear: bias must be a Tensor or None; got list"):
        nn.functional.linear(cr.ones(1, 2), cr.ones(3, 2), [1.0, 2.0, 3.0])


@pytest.mark.parametrize("target", [[0, 1, 1], [True, False, True]])
def test_bce_with_logits_refuses_integer_and_bool_targets(target):
    with pytest.raises(RuntimeError):
        torch.nn.functional.binary_cross_entropy_with_logits(torch.zeros(3), torch.tensor(target))
    kind = "bool" if isinstance(target[0], bool) else "int64"
    message = (
        r"^binary_cross_entropy_with_logits: target must be a floating-point tensor \(.*\); "
        rf"got dtype chainrule\.{kind} for input of dtype chainrule\.float32; "
        r"cast it: target.float\(\)"
    )
    with pytest.raises(TypeError, match=message):
        nn.functional.binary_cross_entropy_with_logits(cr.zeros(3), cr.tensor(target))
    with pytest.raises(TypeError, match=message):
        nn.BCEWithLogitsLoss()(cr.zeros(3), cr.tensor(target))
    # a float target of another width is fine, as PyTorch's
    ours = nn.functional.binary_cross_entropy_with_logits(cr.zeros(3), cr.ones(3, dtype=cr.float64))
    assert float(ours) == pytest.approx(float(np.log(2)))


@pytest.mark.skipif(cr.cuda.is_available(), reason="the error of a machine without a GPU")
def test_to_cuda_without_a_gpu_is_the_cuda_error():
    for call in (lambda: cr.ones(2).to(cr.device("cuda")), lambda: cr.ones(2).to("cuda:0"),
                 lambda: cr.ones(2).to(cr.device("cuda"), cr.float64)):  # fmt: skip
        with pytest.raises(ValueError, match=r"^to: chainrule computes on the CPU; got device "
                           r"'cuda(:0)?' \(no CUDA GPU was found"):  # fmt: skip
            call()


def sgd_state(lib):
    model = lib.nn.Linear(2, 2)
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(lib.ones(1, 2)).sum().backward()
    opt.step()
    return model, opt.state_dict()


def test_an_sgd_state_loaded_into_adam_names_both_optimizers():
    model, state = sgd_state(torch)
    adam = torch.optim.Adam(model.parameters())
    with pytest.raises(KeyError, match="step"):  # PyTorch's: a bare KeyError
        adam.load_state_dict(state)
    model, state = sgd_state(cr)
    adam = cr.optim.Adam(model.parameters())
    with pytest.raises(ValueError, match=r"^Adam.load_state_dict: the state dict was saved by "
                       r"SGD, not Adam \(.*dampening, momentum, nesterov"):  # fmt: skip
        adam.load_state_dict(state)
    assert adam.state == {} and "betas" in adam.param_groups[0]  # left as it was


def test_a_state_of_the_same_kind_with_keys_of_its_own_still_loads():
    model, state = sgd_state(cr)
    state["param_groups"][0]["initial_lr"] = 0.1  # what an LR scheduler adds
    state["param_groups"][0]["note"] = "mine"
    opt = cr.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    opt.load_state_dict(state)
    assert opt.param_groups[0]["lr"] == 0.1 and opt.param_groups[0]["note"] == "mine"
    adamw = cr.optim.AdamW(model.parameters())
    adamw.load_state_dict(cr.optim.Adam(model.parameters()).state_dict())  # the same options
