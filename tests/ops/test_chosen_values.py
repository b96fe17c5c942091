"""The values median, kthvalue and mode take from their sort (no gather), and median's
whole-tensor gradient found from the input it saves: equal to PyTorch's, laid out in C order,
and refused after the input is written in place, as PyTorch refuses it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr

CALLS = {
    "median_dim0": lambda x: x.median(0),
    "median_last_keepdim": lambda x: x.median(-1, keepdim=True),
    "kthvalue_dim0": lambda x: x.kthvalue(2, 0),
    "kthvalue_dim1_keepdim": lambda x: x.kthvalue(3, 1, keepdim=True),
    "mode_dim0_distinct": lambda x: x.mode(0),
    "mode_last": lambda x: x.mode(-1),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_values_from_the_sort_are_torchs_in_c_order(name: str) -> None:
    data = np.random.default_rng(3).permutation(24).reshape(2, 3, 4).astype(np.float64)
    ours, theirs = (CALLS[name](lib.tensor(data)) for lib in (cr, torch))
    np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
    np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())
    assert ours.values.is_contiguous() and ours.values.shape == theirs.values.shape


def test_mode_with_repeats_keeps_torchs_choice() -> None:
    data = [[2.0, 1.0, 2.0, 1.0], [0.0, 3.0, 3.0, 5.0]]
    ours, theirs = (lib.tensor(data).mode(1) for lib in (cr, torch))
    assert ours.values.tolist() == theirs.values.tolist()
    assert ours.indices.tolist() == theirs.indices.tolist()


def _median_after_write(lib: Any) -> None:
    x = lib.tensor([3.0, 1.0, 2.0, 2.0], requires_grad=True)
    y = x * 1.0
    m = y.median()
    with lib.no_grad():
        y.add_(1.0)
    m.backward()


def test_median_of_all_is_refused_after_its_input_is_written() -> None:
    for lib in (torch, cr):
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            _median_after_write(lib)


def test_median_of_all_shares_its_gradient_among_ties() -> None:
    grads = []
    for lib in (cr, torch):
        x = lib.tensor([3.0, 2.0, 1.0, 2.0, 5.0], requires_grad=True)
        x.median().backward()
        grads.append(np.asarray(x.grad.tolist()))
    np.testing.assert_array_equal(grads[0], grads[1])


@pytest.mark.parametrize("k", [0, 1])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_of_a_0d_tensor_gives_its_value_for_k_0_and_1(k: int, largest: bool) -> None:
    """PyTorch's topk of a 0-d tensor: the value itself and index 0, for k = 0 as for 1."""
    ours, theirs = cr.tensor(3.5, requires_grad=True), torch.tensor(3.5, requires_grad=True)
    (v, i), (tv, ti) = ours.topk(k, largest=largest), theirs.topk(k, largest=largest)
    assert v.shape == tv.shape == () and float(v) == float(tv) and int(i) == int(ti) == 0
    assert v.grad_fn.name() == tv.grad_fn.name()
    v.backward(), tv.backward()
    assert float(ours.grad) == float(theirs.grad) == 1.0
    with pytest.raises((RuntimeError, ValueError), match="topk"):
        cr.tensor(3.5).topk(2)
