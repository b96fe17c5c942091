"""Module, Parameter and the containers: the attribute walker, state_dict and its loading
(both ways with PyTorch), tied weights, train/eval, zero_grad, repr."""

import copy
from collections import OrderedDict

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import nn
from tests.twins import copy_back, copy_into


def mlp_pair():
    """One architecture in both frameworks: Sequential(Linear, ReLU, Linear, BatchNorm1d)."""
    ours = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3), nn.BatchNorm1d(3))
    theirs = torch.nn.Sequential(
        torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3), torch.nn.BatchNorm1d(3)
    )
    return ours, theirs


class Net(nn.Module):
    """Submodules in a ModuleList, a plain list, a ModuleDict, a plain dict; a bare Parameter
    and a buffer (one not persistent)."""

    def __init__(self) -> None:
        super().__init__()
        self.scale = nn.Parameter(cr.ones(3))
        self.blocks = nn.ModuleList([nn.Linear(3, 3), nn.Linear(3, 3)])
        self.extra = [nn.Linear(3, 2)]
        self.heads = nn.ModuleDict({"a": nn.Linear(2, 1), "b": nn.LayerNorm(2)})
        self.named = {"x": nn.Linear(2, 2)}
        self.register_buffer("steps", cr.zeros(1))
        self.register_buffer("cache", cr.zeros(2), persistent=False)
        self.not_state = cr.zeros(5)  # a plain tensor attribute is not state
        self.note = "text"

    def forward(self, x):
        for b in self.blocks:
            x = b(x).relu()
        x = self.extra[0](x * self.scale)
        return self.heads["a"](self.named["x"](self.heads["b"](x)))


class TorchNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(3))
        self.blocks = torch.nn.ModuleList([torch.nn.Linear(3, 3), torch.nn.Linear(3, 3)])
        self.extra = torch.nn.ModuleList([torch.nn.Linear(3, 2)])
        self.heads = torch.nn.ModuleDict({"a": torch.nn.Linear(2, 1), "b": torch.nn.LayerNorm(2)})
        self.named = torch.nn.ModuleDict({"x": torch.nn.Linear(2, 2)})
        self.register_buffer("steps", torch.zeros(1))
        self.register_buffer("cache", torch.zeros(2), persistent=False)

    def forward(self, x):
        for b in self.blocks:
            x = b(x).relu()
        x = self.extra[0](x * self.scale)
        return self.heads["a"](self.named["x"](self.heads["b"](x)))


# -- Parameter ----------------------------------------------------------------------------


def test_parameter_is_a_trainable_tensor():
    p = nn.Parameter(cr.tensor([1.0, 2.0]))
    assert isinstance(p, cr.Tensor) and p.requires_grad and p.is_leaf
    assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    t = cr.zeros(3)
    assert nn.Parameter(t).numpy() is t.numpy()  # shares a Tensor's array, as PyTorch
    a = np.zeros(2, dtype=np.float32)
    assert nn.Parameter(a).numpy() is not a  # anything else is copied
    assert not nn.Parameter(cr.zeros(2), requires_grad=False).requires_grad
    assert nn.Parameter().shape == (0,)
    with pytest.raises(TypeError, match="only floating-point"):
        nn.Parameter(cr.tensor([1, 2]))
    y = (p * 2).sum()  # ops on a Parameter record a graph and reach it
    y.backward()
    np.testing.assert_array_equal(p.grad.numpy(), [2.0, 2.0])
    assert type(p * 2) is cr.Tensor


# -- the walker ---------------------------------------------------------------------------


def test_state_dict_keys_equal_torch_for_the_same_architecture():
    ours, theirs = mlp_pair()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]


def test_walker_finds_lists_dicts_and_buffers_in_definition_order():
    ours, theirs = Net(), TorchNet()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == ["steps", "cache"]  # both, cache not saved
    assert "cache" not in ours.state_dict() and "not_state" not in ours.state_dict()
    assert len(list(ours.parameters())) == 13
    assert [n for n, _ in ours.named_parameters(recurse=False)] == ["scale"]
    assert [n for n, _ in ours.named_children()] == ["blocks", "extra.0", "heads", "named.x"]
    assert len(list(ours.modules())) == 9
    assert [n for n, _ in ours.named_parameters(prefix="net")][0] == "net.scale"


def test_weights_move_both_ways_and_outputs_agree():
    ours, theirs = Net(), TorchNet()
    ours.double()
    theirs.double()
    copy_into(ours, theirs)
    x = np.random.default_rng(0).standard_normal((5, 3))
    np.testing.assert_allclose(
        ours(cr.tensor(x)).numpy(), theirs(torch.tensor(x)).detach().numpy(), rtol=1e-12
    )

    cr.manual_seed(1)
    ours2, theirs2 = mlp_pair()
    ours2.train()
    ours2(cr.randn(6, 4))  # running statistics move
    copy_back(theirs2, ours2)
    for k, v in theirs2.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), ours2.state_dict()[k].numpy())
    ours2.eval()
    theirs2.eval()
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(
        ours2(cr.tensor(x)).numpy(), theirs2(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6
    )


def test_state_dict_values_are_detached_and_share_arrays():
    m = nn.Linear(2, 3)
    sd = m.state_dict()
    assert isinstance(sd, OrderedDict)
    assert not sd["weight"].requires_grad and sd["weight"].grad_fn is None
    assert not isinstance(sd["weight"], nn.Parameter)
    assert sd["weight"].numpy() is m.weight.numpy()
    assert m.state_dict(keep_vars=True)["weight"] is m.weight


def test_load_state_dict_copies_in_place_and_casts():
    m = nn.Linear(2, 3)
    w_array = m.weight.numpy()
    new = {"weight": np.arange(6, dtype=np.float64).reshape(3, 2), "bias": cr.tensor([1, 2, 3])}
    result = m.load_state_dict(new)
    assert m.weight.numpy() is w_array  # an optimizer holding the array sees the new values
    assert m.weight.dtype == cr.float32 and m.bias.dtype == cr.float32
    np.testing.assert_array_equal(m.weight.numpy(), new["weight"])
    np.testing.assert_array_equal(m.bias.numpy(), [1, 2, 3])
    assert result.missing_keys == [] and result.unexpected_keys == []
    bn = nn.BatchNorm1d(2)
    bn.load_state_dict({k: v.numpy() for k, v in torch.nn.BatchNorm1d(2).state_dict().items()})
    assert bn.num_batches_tracked.dtype == cr.int64


def test_load_state_dict_lists_every_problem_at_once():
    ours, _ = mlp_pair()
    sd = {k: v.numpy() for k, v in ours.state_dict().items()}
    before = ours[0].weight.numpy().copy()
    del sd["0.bias"], sd["3.running_var"]
    sd["5.weight"] = np.zeros(2)
    sd["0.weight"] = np.ones((8, 5))
    sd["2.bias"] = np.ones(4)
    with pytest.raises(RuntimeError) as info:
        ours.load_state_dict(sd)
    msg = str(info.value)
    for part in [
        "Sequential",
        "Missing key(s)",
        "'0.bias'",
        "'3.running_var'",
        "Unexpected key(s)",
        "'5.weight'",
        "size mismatch for 0.weight",
        "(8, 5)",
        "(8, 4)",
        "size mismatch for 2.bias",
    ]:
        assert part in msg
    np.testing.assert_array_equal(ours[0].weight.numpy(), before)  # nothing copied


def test_load_state_dict_non_strict():
    m = nn.Linear(2, 3)
    result = m.load_state_dict({"weight": np.ones((3, 2)), "other": np.zeros(1)}, strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == ["other"]
    np.testing.assert_array_equal(m.weight.numpy(), 1)
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        m.load_state_dict({"weight": np.ones((2, 2))}, strict=False)  # shapes are always checked


def test_tied_weights_count_once():
    enc, dec = nn.Embedding(10, 4), nn.Linear(4, 10, bias=False)
    dec.weight = enc.weight
    model = nn.Sequential(enc, dec)
    assert len(list(model.parameters())) == 1
    assert [n for n, _ in model.named_parameters()] == ["0.weight"]
    assert len(list(model.named_parameters(remove_duplicate=False))) == 2
    assert list(model.state_dict()) == ["0.weight", "1.weight"]  # as PyTorch: both names saved
    shared = nn.Linear(2, 2)
    twice = nn.Sequential(shared, nn.ReLU(), shared)
    assert len(list(twice.parameters())) == 2
    assert [n for n, _ in twice.named_modules()] == ["", "0", "1"]
    assert list(twice.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    twice.load_state_dict(twice.state_dict())
    out = twice(cr.randn(3, 2)).sum()
    out.backward()  # both uses accumulate into one gradient
    assert shared.weight.grad.shape == (2, 2)


def test_train_eval_and_apply():
    ours = Net()
    assert ours.training and all(m.training for m in ours.modules())
    assert ours.eval() is ours
    assert not any(m.training for m in ours.modules())
    ours.train()
    assert all(m.training for m in ours.modules())
    seen = []
    assert ours.apply(lambda m: seen.append(type(m).__name__)) is ours
    assert seen[-1] == "Net" and seen.count("Linear") == 5 and len(seen) == 9

    def init_weights(m):
        if isinstance(m, nn.Linear):
            nn.init.zeros_(m.weight)

    ours.apply(init_weights)
    assert all(not m.weight.numpy().any() for m in ours.modules() if isinstance(m, nn.Linear))


def test_zero_grad_and_requires_grad():
    m, _ = mlp_pair()
    m(cr.randn(5, 4)).sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.numpy().any() for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())


def test_to_double_and_float():
    m, _ = mlp_pair()
    w = m[0].weight
    assert m.double() is m
    assert w.dtype == cr.float64 and m[3].running_mean.dtype == cr.float64
    assert m[3].num_batches_tracked.dtype == cr.int64  # integers are left alone
    m.float()
    assert w.dtype == cr.float32
    m.to(cr.float64)
    assert w.dtype == cr.float64
    m.to("cpu")
    assert w.dtype == cr.float64
    with pytest.raises(TypeError, match=r"only floating-point dtypes .*; got chainrule\.int64$"):
        m.to(cr.int64)


def test_deepcopy_makes_an_independent_model():
    m, _ = mlp_pair()
    c = copy.deepcopy(m)
    c[0].weight.numpy()[...] = 0
    assert m[0].weight.numpy().any()
    assert list(c.state_dict()) == list(m.state_dict())


# -- repr ---------------------------------------------------------------------------------


def test_repr_matches_torch():
    ours, theirs = mlp_pair()
    assert repr(ours) == repr(theirs)
    nested_ours = nn.Sequential(
        nn.Sequential(nn.Linear(2, 2), nn.Tanh()), nn.Dropout(0.1), nn.GELU()
    )
    nested_theirs = torch.nn.Sequential(
        torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Tanh()),
        torch.nn.Dropout(0.1),
        torch.nn.GELU(),
    )
    assert repr(nested_ours) == repr(nested_theirs)
    lists = nn.ModuleDict({"a": nn.ModuleList([nn.Identity(), nn.Sigmoid()]), "b": nn.Flatten()})
    lists_theirs = torch.nn.ModuleDict(
        {
            "a": torch.nn.ModuleList([torch.nn.Identity(), torch.nn.Sigmoid()]),
            "b": torch.nn.Flatten(),
        }
    )
    assert repr(lists) == repr(lists_theirs)
    assert repr(nn.Linear(2, 3)) == "Linear(in_features=2, out_features=3, bias=True)"
    assert repr(nn.MSELoss()) == "MSELoss()"


def test_forward_must_be_defined():
    class Empty(nn.Module):
        pass

    with pytest.raises(NotImplementedError, match="Empty: forward is not defined"):
        Empty()(1)


def test_module_without_super_init_still_works():
    class NoInit(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(2, 2)

    m = NoInit()
    assert m.training and len(list(m.parameters())) == 2
    m.eval()
    assert not m.fc.training


def test_register_buffer_and_names():
    m = nn.Module()
    m.register_buffer("stat", cr.zeros(2))
    m.register_buffer("none", None)
    assert list(m.state_dict()) == ["stat"]
    m.register_parameter("w", nn.Parameter(cr.ones(1)))
    assert list(m.state_dict()) == ["w", "stat"]  # parameters before buffers, as PyTorch
    del m.stat
    assert list(m.state_dict()) == ["w"]
    with pytest.raises(TypeError, match="register_buffer: buffer 'p' must be a Tensor"):
        m.register_buffer("p", nn.Parameter(cr.ones(1)))
    with pytest.raises(KeyError, match="register_buffer: invalid name 'a.b'"):
        m.register_buffer("a.b", cr.ones(1))
    with pytest.raises(KeyError, match="register_buffer: attribute 'w' already exists"):
        m.register_buffer("w", cr.ones(1))  # a Parameter's name
    m.note = 3
    with pytest.raises(KeyError, match="register_parameter: attribute 'note' already exists"):
        m.register_parameter("note", nn.Parameter(cr.ones(1)))
    with pytest.raises(TypeError, match="must be a Parameter"):
        m.register_parameter("q", cr.ones(1))
    with pytest.raises(KeyError, match="attribute 'train' already exists"):
        m.add_module("train", nn.ReLU())


# -- containers ---------------------------------------------------------------------------


def test_sequential_indexing_slicing_len_iter_append():
    a, b, c = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    s = nn.Sequential(a, b, c)
    assert len(s) == 3 and list(s) == [a, b, c]
    assert s[0] is a and s[-1] is c
    tail = s[1:]
    assert isinstance(tail, nn.Sequential) and list(tail) == [b, c]
    assert list(tail.state_dict()) == list(
        torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))[
            1:
        ].state_dict()
    )
    with pytest.raises(IndexError, match="Sequential: index 3 is out of range for length 3"):
        s[3]
    x = cr.randn(4, 2)
    np.testing.assert_allclose(s(x).numpy(), c(b(a(x))).numpy())
    d = nn.Sigmoid()
    assert s.append(d) is s and s[3] is d and len(s) == 4
    s[1] = nn.Tanh()
    assert isinstance(s[1], nn.Tanh)
    del s[1]
    assert [type(m).__name__ for m in s] == ["Linear", "Linear", "Sigmoid"]
    assert list(s.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]
    named = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.ReLU())]))
    assert list(named.state_dict()) == ["fc.weight", "fc.bias"] and named.fc is named[0]


def test_module_list_and_dict():
    ml = nn.ModuleList([nn.Linear(1, 1)])
    ml.append(nn.ReLU())
    ml.extend([nn.Tanh()])
    ml.insert(0, nn.Identity())
    assert [type(m).__name__ for m in ml] == ["Identity", "Linear", "ReLU", "Tanh"]
    assert list(ml.state_dict()) == ["1.weight", "1.bias"]
    assert isinstance(ml[1:3], nn.ModuleList) and len(ml[1:3]) == 2
    with pytest.raises(NotImplementedError):
        ml(cr.randn(1))
    md = nn.ModuleDict({"enc": nn.Linear(2, 2)})
    md["dec"] = nn.Linear(2, 1)
    assert "dec" in md and len(md) == 2 and list(md) == ["enc", "dec"]
    assert md.keys() == ["enc", "dec"] and [k for k, _ in md.items()] == ["enc", "dec"]
    assert len(md.values()) == 2
    md.update([("extra", nn.ReLU())])
    del md["enc"]
    assert list(md.state_dict()) == ["dec.weight", "dec.bias"]
    with pytest.raises(KeyError, match="ModuleDict: no module named 'nope'"):
        md["nope"]
    with pytest.raises(KeyError, match="attribute 'items' already exists"):
        md["items"] = nn.ReLU()


def test_private_names_are_walked_like_torch():
    class Private(nn.Module):
        def __init__(self):
            super().__init__()
            self._enc = nn.Linear(2, 2)

    class TorchPrivate(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self._enc = torch.nn.Linear(2, 2)

    assert (
        list(Private().state_dict())
        == list(TorchPrivate().state_dict())
        == [
            "_enc.weight",
            "_enc.bias",
        ]
    )


def test_a_module_holding_its_parent_does_not_loop():
    parent = nn.Sequential(nn.Linear(2, 2))
    parent[0].owner = parent  # a cycle
    assert len(list(parent.parameters())) == 2
    assert list(parent.state_dict()) == ["0.weight", "0.bias"]
    assert [n for n, _ in parent.named_modules(remove_duplicate=False)] == ["", "0"]
    parent.eval()
    assert not parent[0].training
    visited = []
    parent.apply(visited.append)
    assert visited == [parent[0], parent]
    assert "(owner): Sequential(...)" in repr(parent)


def test_non_persistent_buffer_moves_with_the_module_but_is_not_saved():
    ours, theirs = Net(), TorchNet()
    ours.double()
    theirs.double()
    assert ours.cache.dtype == np.float64 and theirs.cache.dtype == torch.float64
    assert "cache" not in ours.state_dict() and "cache" not in theirs.state_dict()
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    # a state_dict that carries it has an unexpected key, in both
    sd = {k: v.numpy() for k, v in theirs.state_dict().items()}
    with pytest.raises(RuntimeError, match="Unexpected key\\(s\\) in state_dict: 'cache'"):
        ours.load_state_dict({**sd, "cache": np.zeros(2)})
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "cache"'):
        theirs.load_state_dict({**theirs.state_dict(), "cache": torch.zeros(2)})
    assert ours.load_state_dict({**sd, "cache": np.zeros(2)}, strict=False).unexpected_keys == [
        "cache"
    ]
