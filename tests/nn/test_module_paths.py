"""PyTorch's module paths: every class of torch.nn that chainrule has is reachable at
chainrule.nn.modules.<the file PyTorch defines it in>, as the same class, and so are the
private bases programs subclass."""

from __future__ import annotations

import importlib
import inspect

import pytest
import torch

import chainrule as cr


def _torch_classes() -> list[tuple[str, str]]:
    """(file, name) for each class torch.nn defines under torch.nn.modules that chainrule's nn
    also has."""
    found = []
    for name, cls in vars(torch.nn).items():
        if inspect.isclass(cls) and cls.__module__.startswith("torch.nn.modules."):
            if hasattr(cr.nn, name):
                found.append((cls.__module__.rsplit(".", 1)[1], name))
    return sorted(found)


CLASSES = _torch_classes()


def test_the_table_is_not_empty():
    assert len(CLASSES) > 140


def test_each_class_is_at_pytorchs_path():
    wrong = []
    for file, name in CLASSES:
        module = importlib.import_module(f"chainrule.nn.modules.{file}")
        if getattr(module, name, None) is not getattr(cr.nn, name):
            wrong.append(f"chainrule.nn.modules.{file}.{name}")
        if getattr(cr.nn.modules, name, None) is not getattr(cr.nn, name):
            wrong.append(f"chainrule.nn.modules.{name}")  # the package holds it too
    assert wrong == [], f"not chainrule.nn's class: {wrong}"


def test_every_class_chainrule_places_is_where_torch_has_it():
    """The table holds nothing torch keeps elsewhere (a class in the wrong file)."""
    for file in cr.nn.modules.FILES:
        module = importlib.import_module(f"chainrule.nn.modules.{file}")
        theirs = importlib.import_module(f"torch.nn.modules.{file}")
        for name, cls in vars(module).items():
            if inspect.isclass(cls):
                assert hasattr(theirs, name), f"torch.nn.modules.{file} has no {name}"


@pytest.mark.parametrize(
    ("path", "base"),
    [
        ("loss._Loss", "MSELoss"),
        ("loss._WeightedLoss", "CrossEntropyLoss"),
        ("batchnorm._BatchNorm", "BatchNorm2d"),
        ("conv._ConvNd", "Conv2d"),
        ("conv._ConvTransposeNd", "ConvTranspose2d"),
        ("pooling._MaxPoolNd", "MaxPool2d"),
        ("pooling._AvgPoolNd", "AvgPool2d"),
        ("dropout._DropoutNd", "Dropout2d"),
        ("instancenorm._InstanceNorm", "InstanceNorm2d"),
        ("lazy.LazyModuleMixin", "LazyLinear"),
        ("rnn.RNNBase", "GRU"),
    ],
)
def test_private_bases_are_the_bases_of_the_same_classes_as_torchs(path, base):
    file, name = path.split(".")
    ours = getattr(importlib.import_module(f"chainrule.nn.modules.{file}"), name)
    theirs = getattr(importlib.import_module(f"torch.nn.modules.{file}"), name)
    assert issubclass(getattr(cr.nn, base), ours)
    assert issubclass(getattr(torch.nn, base), theirs)


def test_a_weighted_loss_subclassed_from_its_private_base():
    class Focal(cr.nn.modules.loss._WeightedLoss):
        def __init__(self, weight=None, gamma=2.0):
            super().__init__(weight)
            self.gamma = gamma

        def forward(self, input, target):
            logp = cr.nn.functional.log_softmax(input, 1)
            p = logp.exp()
            return cr.nn.functional.nll_loss((1 - p) ** self.gamma * logp, target, self.weight)

    loss = Focal(cr.tensor([1.0, 2.0, 0.5]))
    assert loss.reduction == "mean" and loss.weight.tolist() == [1.0, 2.0, 0.5]
    x = cr.tensor([[0.2, -1.0, 0.5], [1.5, 0.3, -0.2]], requires_grad=True)
    loss(x, cr.tensor([2, 0])).backward()
    assert x.grad.shape == (2, 3)


def test_multihead_attentions_out_proj_is_pytorchs_class():
    ours, theirs = cr.nn.MultiheadAttention(8, 2), torch.nn.MultiheadAttention(8, 2)
    assert type(ours.out_proj).__name__ == type(theirs.out_proj).__name__
    assert type(ours.out_proj) is cr.nn.modules.linear.NonDynamicallyQuantizableLinear
    assert isinstance(ours.out_proj, cr.nn.Linear)
    assert repr(ours.out_proj) == repr(theirs.out_proj)


def test_parameter_and_buffer_at_torch_nn_parameter():
    for name in ("Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"):
        assert getattr(cr.nn.parameter, name) is getattr(cr.nn, name)
        assert hasattr(torch.nn.parameter, name)


def test_modules_utils_as_torchs():
    ours, theirs = cr.nn.modules.utils, torch.nn.modules.utils
    for name in ("_single", "_pair", "_triple", "_quadruple"):
        for value in (3, (1, 2), [4]):
            assert getattr(ours, name)(value) == getattr(theirs, name)(value)
    assert ours._reverse_repeat_tuple((1, 2, 3), 2) == theirs._reverse_repeat_tuple((1, 2, 3), 2)
    args = ([None, 3], [1, 2, 5, 6])
    assert ours._list_with_default(*args) == theirs._list_with_default(*args)
    assert ours._list_with_default(4, [1]) == 4
    with pytest.raises(ValueError, match="adaptive pooling: the input needs more dims"):
        ours._list_with_default([2, 2], [5, 5])


def test_a_data_parallel_checkpoint_loads_into_the_bare_model():
    saved = cr.nn.DataParallel(cr.nn.Linear(3, 2)).state_dict()
    cr.nn.modules.utils.consume_prefix_in_state_dict_if_present(saved, "module.")
    assert list(saved) == ["weight", "bias"]
    cr.nn.Linear(3, 2).load_state_dict(saved)
