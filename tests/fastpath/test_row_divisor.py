"""a / b where b holds one value per row of a (a row normaliser, as makemore's
``counts / counts.sum(1, keepdims=True)``): both gradients as PyTorch's, with the fast path
(b's gradient as row dot products) and without it."""

import contextlib

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import fastpath


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize(
    "shape, need", [((5, 7), "ab"), ((2, 3, 4), "ab"), ((4, 6), "b"), ((4, 6), "a"), ((3, 1), "ab")]
)
def test_row_divisor_gradients_agree(fast: bool, shape: tuple, need: str) -> None:
    rng = np.random.default_rng(0)
    a_np = rng.random(shape, dtype=np.float32) + 0.5
    b_np = a_np.sum(-1, keepdims=True) * rng.random(shape[:-1] + (1,), dtype=np.float32)
    g_np = rng.standard_normal(shape).astype(np.float32)
    grads = []
    for lib in (cr, torch):
        a = lib.tensor(a_np, requires_grad="a" in need)
        b = lib.tensor(b_np, requires_grad="b" in need)
        with fastpath.disabled() if not fast else contextlib.nullcontext():
            (a / b).backward(lib.tensor(g_np))
        grads.append([None if t.grad is None else t.grad.numpy() for t in (a, b)])
    for ours, theirs in zip(*grads, strict=True):
        assert (ours is None) == (theirs is None)
        if ours is not None:
            assert ours.shape == theirs.shape
            np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_row_divisor_second_derivative() -> None:
    x = cr.tensor([[1.0, 2.0, 3.0], [0.5, 0.25, 4.0]], dtype=cr.float64, requires_grad=True)
    t = torch.tensor(x.detach().numpy(), requires_grad=True)
    outs = []
    for v, lib in ((x, cr), (t, torch)):
        p = v / v.sum(1, keepdim=True)
        (g,) = lib.autograd.grad((p * p).sum(), v, create_graph=True)
        (h,) = lib.autograd.grad(g.sum(), v)
        outs.append(h.detach().numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-12)
