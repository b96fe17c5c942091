"""The in-place shape methods against PyTorch's: the same tensor returned with its new shape,
its version bumped once, the node PyTorch names (TBackward1, SqueezeBackward4, ...) and its
gradient; PyTorch's refusals (a leaf or a view of one that requires grad, split's pieces, a
value saved before the change, resize_ of a tensor that requires grad, detach_ of a view);
resize_'s kept and grown memory."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr

CALLS = [
    ("t_", (), (2, 3)),
    ("transpose_", (0, 2), (1, 2, 3)),
    ("swapdims_", (1, 2), (1, 2, 3)),
    ("swapaxes_", (0, 1), (1, 2, 3)),
    ("squeeze_", (), (1, 2, 3)),
    ("squeeze_", (0,), (1, 2, 3)),
    ("squeeze_", ((0,),), (1, 2, 3)),
    ("squeeze_", (1,), (1, 2, 3)),  # nothing to squeeze: still a node, still a bump
    ("unsqueeze_", (1,), (1, 2, 3)),
    ("as_strided_", ((2, 2), (1, 2), 1), (1, 2, 3)),
]


def _in_graph(lib: Any, method: str, args: tuple, shape: tuple) -> tuple:
    x = lib.tensor(np.arange(6.0).reshape(shape), requires_grad=True)
    y = x * 1.0
    before = y._version
    got = getattr(y, method)(*args)
    weights = lib.tensor(np.arange(float(y.numel())).reshape(tuple(y.shape)))
    (y * weights).sum().backward()
    return got is y, tuple(y.shape), y.grad_fn.name(), y._version - before, x.grad.tolist()


@pytest.mark.parametrize(("method", "args", "shape"), CALLS, ids=lambda v: str(v))
def test_in_a_graph_as_torchs(method: str, args: tuple, shape: tuple) -> None:
    assert _in_graph(cr, method, args, shape) == _in_graph(torch, method, args, shape)


def test_outside_a_graph_the_same_memory_takes_the_new_shape() -> None:
    y = cr.zeros(2, 3)
    y.t_()
    y[0, 1] = 5.0
    assert y.shape == (3, 2) and y.stride() == (1, 3)
    base = cr.zeros(2, 3)
    view = base[0:2]
    view.t_()
    view[2, 0] = 7.0  # writes the base through the turned view
    assert base[0, 2].item() == 7.0 and base.shape == (2, 3)


def _message(call: Callable[[Any], Any], lib: Any) -> str:
    with pytest.raises((RuntimeError, ValueError, IndexError)) as err:
        call(lib)
    return str(err.value)


REFUSED = [
    ("leaf", lambda m: m.ones(2, 3, requires_grad=True).t_(), "a leaf"),
    ("view of a leaf", lambda m: m.ones(2, 3, requires_grad=True)[0:1].t_(), "view of a leaf"),
    ("split's piece", lambda m: (m.ones(2, 3, requires_grad=True) * 1).split(1)[0].t_(), "Split"),
    (
        "a saved value",
        lambda m: (lambda y: (y.sin(), y.t_())[0].sum().backward())(
            m.ones(2, 3, requires_grad=True) * 1
        ),
        "modified by an inplace operation",
    ),
    ("resize_ in a graph", lambda m: (m.ones(2, requires_grad=True) * 1).resize_(3), "resize"),
    ("detach_ of a view", lambda m: m.ones(3)[0:2].detach_(), "detach views in-place"),
    ("a dim out of range", lambda m: m.ones(2).transpose_(0, 3), "out of range"),
]


@pytest.mark.parametrize(("case", "call", "words"), REFUSED, ids=lambda v: str(v)[:24])
def test_refused_as_torch_refuses(case: str, call: Callable[[Any], Any], words: str) -> None:
    _message(call, torch)
    ours = _message(call, cr)
    assert words.lower() in ours.lower()
    assert ours.split(":")[0].replace("_", "").isalnum()  # our message names the op first


def test_a_leaf_under_no_grad_is_turned() -> None:
    for lib in (torch, cr):
        x = lib.ones(2, 3, requires_grad=True)
        with lib.no_grad():
            x.t_()
        assert tuple(x.shape) == (3, 2) and x.requires_grad and x.grad_fn is None


@pytest.mark.parametrize(
    ("call", "shape"),
    [
        (lambda m: m.arange(6.0).resize_(2, 2), (2, 2)),
        (lambda m: m.arange(6.0).resize_([3, 2]), (3, 2)),
        (lambda m: m.arange(4.0).resize_(0), (0,)),
        (lambda m: m.arange(6.0).resize_as_(m.ones(2, 2)), (2, 2)),
        (lambda m: m.arange(6.0).view(2, 3).t().resize_(3, 2), (3, 2)),  # its own shape
    ],
)
def test_resize_keeps_the_first_elements(call: Callable[[Any], Any], shape: tuple) -> None:
    ours, theirs = call(cr), call(torch)
    assert tuple(ours.shape) == tuple(theirs.shape) == shape
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_resize_grows_keeping_what_it_held_and_bumps_the_version() -> None:
    x = cr.arange(4.0)
    before = x._version
    x.resize_(2, 3)
    assert x.shape == (2, 3) and x._version == before + 1
    assert x.reshape(-1)[:4].tolist() == [0.0, 1.0, 2.0, 3.0]
    shrunk = cr.arange(6.0)
    kept = shrunk._array
    shrunk.resize_(3)
    assert np.shares_memory(shrunk._array, kept)  # within its memory: no copy


def test_resize_of_a_scrambled_layout_to_another_shape_is_refused() -> None:
    with pytest.raises(RuntimeError, match=r"^resize_: a tensor whose elements are not in"):
        cr.arange(6.0).view(2, 3).t().resize_(6)
    with pytest.raises(ValueError, match=r"^resize_: only the contiguous memory format"):
        cr.arange(24.0).resize_(1, 2, 3, 4, memory_format=cr.channels_last)


def test_detach_cuts_a_result_from_the_graph_in_place() -> None:
    y = cr.ones(3, requires_grad=True) * 2.0
    assert y.detach_() is y
    assert not y.requires_grad and y.grad_fn is None
