"""Tensor.register_hook and register_post_accumulate_grad_hook against torch: when each
runs, with what, in which order, what a returned tensor changes, and removal."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr


def program(lib, log):
    """A small graph with hooks on a leaf, a non-leaf and a reused non-leaf."""
    x = lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64, requires_grad=True)
    w = lib.tensor([0.5, 0.25, -1.0], dtype=lib.float64, requires_grad=True)
    h = x * w
    h.register_hook(lambda g: log.append(("h", g.tolist())))
    h.register_hook(lambda g: g * 10)  # replaces h's gradient for what follows
    h.register_hook(lambda g: log.append(("h after", g.tolist())))
    y = h.tanh() + h * h
    x.register_hook(lambda g: log.append(("x", g.tolist())))
    handle = w.register_hook(lambda g: log.append(("w never", g.tolist())))
    handle.remove()
    handle.remove()  # twice is harmless, as torch's
    x.register_post_accumulate_grad_hook(lambda t: log.append(("x post", t.grad.tolist())))
    y.sum().backward()
    return x, w, log


def test_hooks_run_as_in_torch() -> None:
    ox, ow, ours = program(cr, [])
    tx, tw, theirs = program(torch, [])
    assert [name for name, _ in ours] == [name for name, _ in theirs]
    for (_, a), (_, b) in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_allclose(ox.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(ow.grad.numpy(), tw.grad.numpy(), rtol=1e-12)


def test_a_leaf_hook_changes_what_accumulates_and_post_hooks_see_the_sum() -> None:
    for lib in (cr, torch):
        x = lib.ones(2, requires_grad=True)
        x.register_hook(lambda g: g + 1)
        seen: list = []
        x.register_post_accumulate_grad_hook(lambda t, seen=seen: seen.append(t.grad.tolist()))
        (x * 3).sum().backward()
        (x * 3).sum().backward()
        assert seen == [[4.0, 4.0], [8.0, 8.0]], lib


def test_hooks_run_under_cr_grad_and_post_hooks_do_not() -> None:
    for lib in (cr, torch):
        x = lib.ones(2, requires_grad=True)
        calls: list = []
        x.register_hook(lambda g, calls=calls: calls.append("pre") or g * 2)
        x.register_post_accumulate_grad_hook(lambda t, calls=calls: calls.append("post"))
        (g,) = lib.autograd.grad((x * 3).sum(), x)
        assert g.tolist() == [6.0, 6.0] and calls == ["pre"] and x.grad is None, lib


def test_handles_work_as_context_managers() -> None:
    x = cr.ones(2, requires_grad=True)
    with x.register_hook(lambda g: g * 0):
        (x * 2).sum().backward()
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_hook_registration_errors() -> None:
    with pytest.raises(RuntimeError, match="^register_hook: cannot register a hook on a tensor"):
        cr.ones(2).register_hook(print)
    x = cr.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="^register_post_accumulate_grad_hook: .* a non-leaf"):
        (x * 2).register_post_accumulate_grad_hook(print)
    with pytest.raises(TypeError, match="the hook must be callable"):
        x.register_hook(3)
    x.register_hook(lambda g: cr.ones(3))
    with pytest.raises(RuntimeError, match=r"^hook: a tensor hook must return None or a Tensor"):
        (x * 2).sum().backward()


def test_a_post_accumulate_hook_that_returns_something_is_refused() -> None:
    for lib in (cr, torch):
        x = lib.ones(2, requires_grad=True)
        x.register_post_accumulate_grad_hook(lambda t: t.grad)
        with pytest.raises(RuntimeError, match="(?i)post accumulate grad hook"):
            (x * 3).sum().backward()
