"""A leaf's .grad is always a tensor of its shape and dtype, as PyTorch keeps it: assigning
another shape, dtype or a non-tensor is refused where it is written, and a tensor hook that
returns its gradient in another dtype is refused naming the hook, in both libraries."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.ones(2, dtype=lib.float64),
        lambda lib: lib.ones(3),
        lambda lib: lib.ones(1, 2),
    ],
    ids=["float64", "longer", "other rank"],
)
def test_a_mismatched_grad_is_refused_as_torch_refuses_it(make: Any) -> None:
    for lib in (torch, cr):
        leaf = lib.zeros(2, requires_grad=True)
        with pytest.raises(RuntimeError):
            leaf.grad = make(lib)
        assert leaf.grad is None  # nothing written


def test_the_message_names_both_shapes_and_dtypes() -> None:
    leaf = cr.zeros(2, requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match=r"grad: assigned grad has shape \(2,\) and dtype "
        r"chainrule\.float64, but the tensor has shape \(2,\) and dtype "
        r"chainrule\.float32",
    ):
        leaf.grad = cr.ones(2, dtype=cr.float64)
    with pytest.raises(TypeError, match="grad: assigned grad must be a Tensor or None; got list"):
        leaf.grad = [1.0, 2.0]


def test_a_matching_grad_is_kept_and_accumulated_into() -> None:
    leaf = cr.zeros(2, requires_grad=True)
    leaf.grad = cr.tensor([1.0, 2.0])
    (leaf * 3).sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), [4.0, 5.0])
    leaf.grad = None
    assert leaf.grad is None


def test_a_hook_that_changes_the_dtype_is_refused_naming_it() -> None:
    def widen(g: Any) -> Any:
        return g.double()

    for lib in (torch, cr):
        leaf = lib.ones(2, requires_grad=True)
        leaf.register_hook(widen)
        with pytest.raises(RuntimeError, match="widen"):
            (leaf * 2).sum().backward()
    leaf = cr.ones(2, requires_grad=True)
    leaf.register_hook(widen)
    with pytest.raises(
        RuntimeError,
        match=r"hook 'widen' has changed the type of the gradient "
        r"\(was chainrule\.float32 on cpu, got chainrule\.float64 on cpu\)",
    ):
        (leaf * 2).sum().backward()
