"""A view op asked for the shape a tensor already has makes a new view, as PyTorch's (y is x is
False, y.grad_fn the op's node), where PyTorch does; flatten over one dim and broadcast_tensors
of a tensor already of the shape give the tensor itself, as there."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr

# (name, call on a (2, 3) tensor x; "v": on a (3,) tensor, "s": on a 0-d tensor)
CALLS = [
    ("view", lambda x: x.view(x.shape)),
    ("view -1", lambda x: x.view(-1, 3)),
    ("view_as", lambda x: x.view_as(x)),
    ("reshape", lambda x: x.reshape(2, 3)),
    ("reshape_as", lambda x: x.reshape_as(x)),
    ("unflatten", lambda x: x.unflatten(1, (3,))),
    ("expand", lambda x: x.expand(2, 3)),
    ("expand -1", lambda x: x.expand(-1, -1)),
    ("expand_as", lambda x: x.expand_as(x)),
    ("broadcast_to", lambda x: x.broadcast_to((2, 3))),
    ("permute", lambda x: x.permute(0, 1)),
    ("movedim", lambda x: x.movedim(0, 0)),
    ("transpose", lambda x: x.transpose(1, 1)),
    ("swapaxes", lambda x: x.swapaxes(0, 0)),
    ("squeeze", lambda x: x.squeeze()),
    ("squeeze dim", lambda x: x.squeeze(0)),
    ("squeeze dims", lambda x: x.squeeze((0, 1))),
    ("flatten one dim", lambda x: x.flatten(1)),
    ("flatten 0 0", lambda x: x.flatten(0, 0)),
    ("v view", lambda x: x.view(3)),
    ("v ravel", lambda x: x.ravel()),
    ("v flatten", lambda x: x.flatten()),
    ("v t", lambda x: x.t()),
    ("v T", lambda x: x.T),
    ("s t", lambda x: x.t()),
    ("s T", lambda x: x.T),
    ("s reshape", lambda x: x.reshape(())),
    ("s transpose", lambda x: x.transpose(0, 0)),
    ("s squeeze", lambda x: x.squeeze()),
    ("s expand", lambda x: x.expand(())),
]


def _source(lib: Any, name: str) -> Any:
    shape = (3,) if name.startswith("v ") else () if name.startswith("s ") else (2, 3)
    return lib.tensor(np.arange(float(np.prod(shape))).reshape(shape), requires_grad=True) * 1


@pytest.mark.filterwarnings("ignore:.*(x|Tensor)\\.T.*:UserWarning")  # torch's T of 0-D, 1-D
@pytest.mark.parametrize(("name", "call"), CALLS, ids=[c[0] for c in CALLS])
def test_a_view_of_the_same_shape_is_new_where_torchs_is(name: str, call: Any) -> None:
    seen = []
    for lib in (torch, cr):
        x = _source(lib, name)
        y = call(x)
        fn = y.grad_fn
        seen.append((y is x, fn.name() if fn is not None else None, tuple(y.shape)))
        if y is not x:  # a view: the same memory, the same version counter
            with lib.no_grad():
                x.add_(1)
            assert np.array_equal(y.detach().numpy(), x.detach().numpy().reshape(y.shape))
            assert y._version == x._version
    assert seen[1] == seen[0]
    x = _source(cr, name).detach()
    y = call(x)
    assert (y is x) == seen[0][0] and not y.requires_grad  # without a graph too


def test_its_gradient_flows_back_through_the_view() -> None:
    for lib in (torch, cr):
        x = lib.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        (x.view(2, 3) * lib.tensor([[1.0, 2.0, 3.0]])).sum().backward()
        assert x.grad.tolist() == [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]


def test_broadcast_tensors_of_the_shape_already_give_the_tensors() -> None:
    for lib in (torch, cr):
        a, b = lib.ones(2, 3), lib.ones(3)
        out = lib.broadcast_tensors(a, b)
        assert out[0] is a and out[1] is not b and tuple(out[1].shape) == (2, 3)
