"""backward(inputs=...) and grad(..., materialize_grads=True), as PyTorch's: gradients go
into the named tensors' .grad alone (leaves or not), and unused inputs get zeros."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr


def _graph(lib):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, -1.0], requires_grad=True)
    h = a * b
    h.retain_grad()
    return a, b, h, (h * h + a).sum()


@pytest.mark.parametrize("which", ["a", "b", "ab", "h", "ah"])
def test_backward_accumulates_into_the_inputs_only(which: str) -> None:
    got = []
    for lib in (torch, cr):
        a, b, h, loss = _graph(lib)
        named = {"a": a, "b": b, "h": h}
        loss.backward(inputs=[named[k] for k in which])
        got.append([None if t.grad is None else t.grad.tolist() for t in (a, b, h)])
    assert got[0] == got[1]


def test_backward_into_inputs_adds_to_what_is_there() -> None:
    for lib in (torch, cr):
        a, b, h, loss = _graph(lib)
        a.grad = lib.ones(2)
        loss.backward(inputs=a)
        np.testing.assert_allclose(a.grad.numpy(), [1 + 2 * 3 * 3 + 1, 1 + 2 * 2 * 1 + 1])
        assert b.grad is None


def test_materialize_grads_gives_zeros_for_unused_inputs() -> None:
    for lib in (torch, cr):
        x = lib.ones(3, requires_grad=True)
        unused = lib.ones(2, requires_grad=True)
        gx, gu = lib.autograd.grad((x * 2).sum(), [x, unused], materialize_grads=True)
        assert gx.tolist() == [2.0, 2.0, 2.0] and gu.tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="materialize_grads=True gives zeros"):
        cr.autograd.grad((x * 2).sum(), [x, unused], allow_unused=False, materialize_grads=True)
