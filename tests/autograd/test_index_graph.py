"""The whole graph of an index, of combinations and of kron is PyTorch's: every node's name,
next_functions and _saved_* down to the leaves, before and after backward; where chainrule's
one node takes an index at once, the nodes of PyTorch's steps before its last are shown
below it (x[1:, 0]: a select over a slice; x[1:, idx]: an index over a slice), and the
gradients are PyTorch's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.autograd.test_graph_as_torch import _surface

S = slice
# Basic indexes of a (3, 4, 5) tensor: a step each, several, none (PyTorch's alias), the parts
# PyTorch skips (a slice of the whole dim in an index of several parts), and ``x[:]`` itself.
BASIC = {
    "x[1:, :2]": (S(1, None), S(None, 2)),
    "x[0]": 0,
    "x[-1]": -1,
    "x[None]": None,
    "x[...]": Ellipsis,
    "x[()]": (),
    "x[:, :]": (S(None), S(None)),
    "x[:]": S(None),
    "x[0:]": S(0, None),
    "x[0:3]": S(0, 3),
    "x[(slice(None),)]": (S(None),),
    "x[0:3, :]": (S(0, 3), S(None)),
    "x[:, 0:100, 1:]": (S(None), S(0, 100), S(1, None)),
    "x[-3:, 1:]": (S(-3, None), S(1, None)),
    "x[0, 1:]": (0, S(1, None)),
    "x[1:, 0]": (S(1, None), 0),
    "x[0, 1]": (0, 1),
    "x[0, 0, 0]": (0, 0, 0),
    "x[1:, None, 2]": (S(1, None), None, 2),
    "x[None, None]": (None, None),
    "x[None, 1:]": (None, S(1, None)),
    "x[..., None]": (Ellipsis, None),
    "x[..., None, 0]": (Ellipsis, None, 0),
    "x[None, ..., 0]": (None, Ellipsis, 0),
    "x[1:, ..., ::2]": (S(1, None), Ellipsis, S(None, None, 2)),
    "x[::2, 1, ::3]": (S(None, None, 2), 1, S(None, None, 3)),
    "x[0, ..., None]": (0, Ellipsis, None),
    "x[-2:, :, 1::2]": (S(-2, None), S(None), S(1, None, 2)),
}


# Indexes of index arrays beside basic parts (a list stands for a tensor): PyTorch takes the
# basic parts first, each its own node, then indexes what they leave with the arrays; a lone
# bool is a new dim of 1 that an index of its one element (or of none) indexes.
MIXED = {
    "x[1:, idx]": (S(1, None), [0, 2]),
    "x[None, idx, ::2]": (None, [0, 2], S(None, None, 2)),
    "x[..., mask]": (Ellipsis, [True, False, True, True, False]),
    "x[idx, 1]": ([0, 2], 1),
    "x[-1, idx]": (-1, [0, 3]),
    "x[0, idx, :2]": (0, [0, 2], S(None, 2)),
    "x[1:2, idx, 0]": (S(1, 2), [0, 2], 0),
    "x[0:3, idx]": (S(0, 3), [0, 2]),
    "x[idx, None]": ([0, 2], None),
    "x[mask, 1:]": ([True, False, True], S(1, None)),
    "x[None, ..., idx, None]": (None, Ellipsis, [0, 4], None),
    "x[idx, True]": ([0, 2], True),
    "x[..., False, idx]": (Ellipsis, False, [1]),
    "x[..., mask2d]": (Ellipsis, [[True, False, False, True, True]] * 4),
    "x[mask2d, ..., idx]": (
        [[True, False, False, False], [False, False, True, False]] + [[False] * 4],
        Ellipsis,
        [0, 4],
    ),
}


def _index(lib: Any, parts: tuple) -> tuple:
    return tuple(lib.tensor(p) if isinstance(p, list) else p for p in parts)


def _with_indices(fn: Any, lib: Any) -> list[Any]:
    """_surface, an index's saved indices by their values (None a dim taken whole)."""
    shown = []
    for *node, saved in _surface(fn, lib):
        if isinstance(saved.get("_saved_indices"), tuple):
            saved["_saved_indices"] = [
                i if i is None else i.tolist() for i in saved["_saved_indices"]
            ]
        shown.append((*node, saved))
    return shown


def _leaf(lib: Any, shape: tuple[int, ...] = (3, 4, 5)) -> Any:
    data = np.random.default_rng(0).standard_normal(shape)
    return lib.tensor(data, requires_grad=True)


@pytest.mark.parametrize("name", list(BASIC))
def test_an_index_shows_torchs_nodes_per_step(name: str) -> None:
    shown, grads = [], []
    for lib in (torch, cr):
        x = _leaf(lib)
        y = x[BASIC[name]]
        before = _surface(y.grad_fn, lib)
        (y * lib.arange(y.numel(), dtype=y.dtype).reshape(y.shape)).sum().backward()
        shown.append((before, _surface(y.grad_fn, lib)))
        grads.append(x.grad.numpy())
    assert shown[1] == shown[0]
    np.testing.assert_array_equal(grads[1], grads[0])


@pytest.mark.parametrize("name", list(MIXED))
def test_an_index_of_arrays_shows_its_basic_steps_below_as_torch(name: str) -> None:
    shown, grads = [], []
    for lib in (torch, cr):
        x = _leaf(lib)
        y = x[_index(lib, MIXED[name])]
        before = _with_indices(y.grad_fn, lib)
        (y * lib.arange(y.numel(), dtype=y.dtype).reshape(y.shape)).sum().backward()
        shown.append((tuple(y.shape), before, _with_indices(y.grad_fn, lib)))
        grads.append(x.grad.numpy())
    assert shown[1] == shown[0]
    np.testing.assert_array_equal(grads[1], grads[0])


# Methods whose node is an index's step, and the copies of them: PyTorch's node keeps the
# arguments as given (a negative dim, slice_copy's bounds not given as None).
STEP_METHODS = {
    "select(-1, -2)": lambda lib, x: x.select(-1, -2),
    "select_copy(x, -1, -2)": lambda lib, x: lib.select_copy(x, -1, -2),
    "narrow(-1, -3, 2)": lambda lib, x: x.narrow(-1, -3, 2),
    "narrow of a whole dim": lambda lib, x: x.narrow(1, 0, 4),
    "slice_copy(x)": lambda lib, x: lib.slice_copy(x),
    "slice_copy(x, -1, -3, -1)": lambda lib, x: lib.slice_copy(x, -1, -3, -1),
    "slice_copy(x, 1, None, 3, 2)": lambda lib, x: lib.slice_copy(x, 1, None, 3, 2),
    "slice_copy(x, 2, -10, 100)": lambda lib, x: lib.slice_copy(x, 2, -10, 100),
}


@pytest.mark.parametrize("name", list(STEP_METHODS))
def test_a_step_method_saves_its_arguments_as_torch(name: str) -> None:
    shown = []
    for lib in (torch, cr):
        y = STEP_METHODS[name](lib, _leaf(lib))
        before = _surface(y.grad_fn, lib)
        y.sum().backward()
        shown.append((tuple(y.shape), before, _surface(y.grad_fn, lib)))
    assert shown[1] == shown[0]


@pytest.mark.parametrize(
    ("shape", "mask"),
    [((3, 1), (1, 4)), ((4,), (2, 4)), ((4, 1, 3), (2, 3)), ((1, 1), (2, 1, 3))]
    + [((0,), (2, 0)), ((1, 0), (2, 1, 0))],  # empty: a dim of 0 is no dim of 1
)
def test_masked_select_of_a_broadcast_input_is_one_node_as_torch(
    shape: tuple[int, ...], mask: tuple[int, ...]
) -> None:
    """No expand below: the node picks from the input itself, repeats adding up."""
    keep = np.random.default_rng(1).random(mask) > 0.3
    shown, grads = [], []
    for lib in (torch, cr):
        x = _leaf(lib, shape)
        y = lib.masked_select(x, lib.tensor(keep))
        before = _surface(y.grad_fn, lib)
        (y * lib.arange(y.numel(), dtype=y.dtype)).sum().backward()
        shown.append((tuple(y.shape), before, _surface(y.grad_fn, lib)))
        grads.append(x.grad.numpy())
    assert shown[1] == shown[0]
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)


def test_a_shown_step_is_the_same_node_each_time_and_stays() -> None:
    """The nodes below are made once (a walk meets the same node again), kept after backward,
    reach the leaf, and are never run: the gradient is the one node's."""
    x = _leaf(cr)
    y = x[1:, None, 2]
    fn = y.grad_fn
    unsqueeze = fn.next_functions[0][0]
    assert unsqueeze is fn.next_functions[0][0]
    slice_ = unsqueeze.next_functions[0][0]
    assert slice_.next_functions[0][0].variable is x
    y.sum().backward()
    assert fn.next_functions[0][0] is unsqueeze and unsqueeze._saved_dim == 1
    with pytest.raises(AttributeError, match="'SliceBackward0' node has no attribute"):
        _ = slice_._saved_self
    assert x.grad.numpy()[1:, 2].tolist() == np.ones((2, 5)).tolist()


def test_combinations_of_none_is_outside_the_graph_as_torch() -> None:
    made = []
    for lib in (torch, cr):
        y = lib.combinations(_leaf(lib, (4,)), 0)
        made.append((tuple(y.shape), y.requires_grad, y.grad_fn, y.is_leaf, str(y.dtype)[-7:]))
    assert made[1] == made[0]


@pytest.mark.parametrize(("r", "with_replacement"), [(1, False), (2, False), (3, False), (2, True)])
def test_combinations_stacks_r_selections_as_torch(r: int, with_replacement: bool) -> None:
    shown, grads = [], []
    for lib in (torch, cr):
        x = _leaf(lib, (4,))
        y = lib.combinations(x, r, with_replacement)
        before = _surface(y.grad_fn, lib)
        (y * lib.arange(y.numel(), dtype=y.dtype).reshape(y.shape)).sum().backward()
        shown.append((tuple(y.shape), before, _surface(y.grad_fn, lib)))
        grads.append(x.grad.numpy())
    assert shown[1] == shown[0]
    assert len(shown[1][1][0][2]) == r  # the stack's r edges
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)


@pytest.mark.parametrize(("a", "b"), [((2, 3), (4, 5)), ((3,), (4, 5)), ((2, 3), ()), ((), ())])
def test_kron_reshapes_as_torchs_unsafe_views(a: tuple, b: tuple) -> None:
    shown = []
    for lib in (torch, cr):
        x, y = _leaf(lib, a), _leaf(lib, b)
        shown.append(_surface(lib.kron(x, y).grad_fn, lib))
    assert shown[1] == shown[0]
