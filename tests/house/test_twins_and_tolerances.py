"""The tests' two shared places: tests/twins.py copies weights both ways and names the first
difference between twins that do not match; tests/tolerances.py answers for every way a
dtype is spelled and refuses what it has no entry for."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.tolerances import LAYER, OP, STACK, TOLERANCES, tol
from tests.twins import copy_back, copy_into


def test_copy_into_and_back_carry_weights_and_buffers():
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    theirs.train()(torch.randn(6, 3))  # running statistics move away from their start
    ours = cr.nn.Sequential(cr.nn.Linear(3, 4), cr.nn.BatchNorm1d(4))
    copy_into(ours, theirs)
    for (k, a), (j, b) in zip(ours.state_dict().items(), theirs.state_dict().items(), strict=True):
        assert k == j
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)
    other = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    copy_back(other, ours)
    for k, v in other.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), theirs.state_dict()[k].numpy(), err_msg=k)


@pytest.mark.parametrize(
    "ours, theirs, message",
    [
        (
            cr.nn.Linear(3, 2),
            torch.nn.Linear(3, 4),
            r"copy_into: entry 0 of the state_dicts differs; chainrule has 'weight' of shape "
            r"\(2, 3\), torch has 'weight' of shape \(4, 3\)",
        ),
        (
            cr.nn.Linear(3, 2, bias=False),
            torch.nn.Linear(3, 2),
            r"copy_into: chainrule's state_dict has 1 entries, torch's 2; "
            r"the first unmatched is 'bias'",
        ),
        (
            cr.nn.Sequential(cr.nn.Linear(3, 2)),
            torch.nn.Linear(3, 2),
            r"chainrule has '0.weight' of shape \(2, 3\), torch has 'weight'",
        ),
    ],
)
def test_copy_into_names_the_first_difference(ours, theirs, message):
    with pytest.raises(AssertionError, match=message):
        copy_into(ours, theirs)


def test_copy_back_names_the_first_difference():
    with pytest.raises(AssertionError, match="copy_back: chainrule's state_dict has 1 entries"):
        copy_back(torch.nn.Linear(3, 2), cr.nn.Linear(3, 2, bias=False))


@pytest.mark.parametrize("depth", [OP, LAYER, STACK])
def test_tol_takes_every_spelling_of_a_dtype(depth):
    for name in ("float32", "float64"):
        want = TOLERANCES[depth][name]
        for spelling in (name, np.dtype(name), getattr(np, name), getattr(cr, name)):
            assert tol(spelling, depth) == want, spelling
        assert tol(getattr(torch, name), depth) == want
        assert tol(cr.zeros(1, dtype=getattr(cr, name)).dtype, depth) == want


def test_tolerances_grow_with_depth_and_shrink_with_precision():
    for key in ("rtol", "atol"):
        for name in ("float32", "float64"):
            assert tol(name, OP)[key] <= tol(name, LAYER)[key] <= tol(name, STACK)[key]
        for depth in (OP, LAYER, STACK):
            assert tol("float64", depth)[key] < tol("float32", depth)[key]


def test_tol_refuses_what_it_has_no_entry_for():
    with pytest.raises(ValueError, match=r"tol: unknown depth 'deep'; expected one of"):
        tol(np.float32, "deep")
    with pytest.raises(ValueError, match=r"tol: no tolerance for dtype 'int64'"):
        tol(np.int64)


def test_tol_returns_a_fresh_dict():
    tol(np.float32)["rtol"] = 1.0
    assert tol(np.float32)["rtol"] == TOLERANCES[LAYER]["float32"]["rtol"]
