"""A leaf's ``.grad`` owns its memory: a tensor user code hands the engine (a hook's or a
custom Function's return, a seed) or is shown by it never becomes a ``.grad`` itself, so
accumulating, zeroing or clipping the gradient later leaves the user's tensor as it was, as
in torch. Every way user code meets a gradient is a row, checked along every path that
writes a ``.grad`` in place."""

from __future__ import annotations

import pytest
import torch

import chainrule as cr


def _constant(lib, ctx_kind):
    """A custom Function whose backward returns a tensor the user holds: a ctx attribute,
    a saved tensor, or a module-level constant."""

    class Held(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, held):
            ctx.held = held
            ctx.save_for_backward(held)
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            if ctx_kind == "ctx":
                return ctx.held, None
            (saved,) = ctx.saved_tensors
            return saved, None

    return Held


def _identity(lib, w):
    return w + 0.0  # Add's rule hands on its gradient as it is, up to the leaf


# Each row: how a tensor the user holds becomes w's gradient (torch's names as keys).
SOURCES = {
    "Tensor.register_hook on the leaf": lambda lib, w, held: (
        w.register_hook(lambda g: held),
        w * 1.0,
    )[1],
    "Tensor.register_hook returns a view of it": lambda lib, w, held: (
        w.register_hook(lambda g: held.view(3)),
        w * 1.0,
    )[1],
    "Tensor.register_hook returns its detach()": lambda lib, w, held: (
        w.register_hook(lambda g: held.detach()),
        w * 1.0,
    )[1],
    "Tensor.register_hook returns its .data": lambda lib, w, held: (
        w.register_hook(lambda g: held.data),
        w * 1.0,
    )[1],
    "Tensor.register_hook on a non-leaf": lambda lib, w, held: (
        (h := _identity(lib, w)).register_hook(lambda g: held),
        h,
    )[1],
    "grad_fn.register_hook": lambda lib, w, held: (
        (h := _identity(lib, w)).grad_fn.register_hook(
            lambda gi, go: tuple(None if g is None else held for g in gi)
        ),
        h,
    )[1],
    "grad_fn.register_prehook": lambda lib, w, held: (
        (h := _identity(lib, w)).grad_fn.register_prehook(lambda go: (held,)),
        h,
    )[1],
    "Function.backward returns a ctx attribute": lambda lib, w, held: _constant(lib, "ctx").apply(
        w, held
    ),
    "Function.backward returns a saved tensor": lambda lib, w, held: _constant(lib, "saved").apply(
        w, held
    ),
    "Tensor.register_post_accumulate_grad_hook": lambda lib, w, held: (
        w.register_hook(lambda g: held),
        w.register_post_accumulate_grad_hook(_scale_in_place),
        w * 1.0,
    )[2],
}


def _scale_in_place(t) -> None:
    t.grad.mul_(1.0)  # a write into .grad where PyTorch lets a hook step early


def _backward(lib, out, held, how):
    """out's backward seeded as a user seeds it: with the held tensor as ``gradient``
    (a tensor the caller keeps), or from its sum."""
    if how == "seed":
        out.backward(held.clone())
    else:
        out.sum().backward()


PATHS = ["once", "twice", "optimizer.zero_grad", "module.zero_grad", "clip", "create_graph"]


def scenario(lib, source, path):
    """The held tensor and w.grad after the path's writes into w.grad, in ``lib``."""
    held = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)
    m = lib.nn.Module()
    m.w = lib.nn.Parameter(lib.zeros(3, dtype=lib.float64))
    w = m.w
    if path == "create_graph":
        SOURCES[source](lib, w, held).sum().backward(create_graph=True)
        w.grad.detach().zero_()  # through its memory, as a user zeroes it
        return held.tolist(), w.grad.tolist()
    SOURCES[source](lib, w, held).sum().backward()
    if path == "twice":
        SOURCES[source](lib, w, held).sum().backward()
    elif path == "optimizer.zero_grad":
        lib.optim.SGD([w], lr=0.1).zero_grad(set_to_none=False)
    elif path == "module.zero_grad":
        m.zero_grad(set_to_none=False)
    elif path == "clip":
        lib.nn.utils.clip_grad_norm_([w], max_norm=0.5)
    return held.tolist(), w.grad.tolist()


# PyTorch keeps a new Tensor on the held one's memory (a view, detach(), .data) as the .grad
# itself, since it counts the references to the Tensor, not to its memory, so the held
# tensor changes with the .grad there; here it does not, as for the held tensor itself.
ALIASES_IN_TORCH = {s for s in SOURCES if "returns" in s and s.startswith("Tensor.")}


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("source", sorted(SOURCES))
def test_a_held_tensor_never_becomes_a_grad(source, path) -> None:
    ours = scenario(cr, source, path)
    theirs = scenario(torch, source, path)
    assert ours[0] == [1.0, 2.0, 3.0], (source, path)
    if source in ALIASES_IN_TORCH:
        assert ours[1] == theirs[1], (source, path)
    else:
        assert ours == theirs, (source, path)  # small integers: exact in both


def _hook_names(cls) -> set[str]:
    return {n for n in dir(cls) if n.startswith("register_") and n.endswith("hook")}


def test_every_hook_kind_has_a_row() -> None:
    # derived from the classes: a new register_*hook needs a row in SOURCES
    node = (cr.tensor(1.0, requires_grad=True) * 2).grad_fn
    names = {f"Tensor.{n}" for n in _hook_names(cr.Tensor)} | {
        f"grad_fn.{n}" for n in _hook_names(type(node))
    }
    covered = {s.split(" ")[0] for s in SOURCES}
    assert names <= covered, sorted(names - covered)


@pytest.mark.parametrize("lib", [cr, torch], ids=["chainrule", "torch"])
def test_a_seed_is_copied_into_a_leaf_grad(lib) -> None:
    seed = lib.tensor([1.0, 2.0])
    for leaf in (True, False):
        w = lib.zeros(2, requires_grad=True)
        (w if leaf else w + 0.0).backward(seed)
        (w if leaf else w + 0.0).backward(seed)
        w.grad.zero_()
        assert seed.tolist() == [1.0, 2.0] and w.grad.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("first", ["leaf", "hooked"])
def test_what_a_hook_keeps_is_not_a_grad_another_leaf_took(first) -> None:
    # Add hands one gradient to both inputs; whichever the walk reaches first, the leaf's
    # .grad and the gradient the hook kept are two arrays, in torch and here
    results = []
    for lib in (cr, torch):
        a = lib.ones(3, requires_grad=True)
        w = lib.zeros(3, requires_grad=True)
        kept: list = []
        t = a * 1.0
        t.register_hook(lambda g, kept=kept: kept.append(g))
        y = w + t if first == "leaf" else t + w
        y.sum().backward()
        (w * 2.0).sum().backward()
        w.grad.mul_(10.0)
        results.append(([g.tolist() for g in kept], w.grad.tolist(), a.grad.tolist()))
    assert results[0] == results[1]


def test_a_hook_edit_in_place_goes_on_but_not_into_a_taken_grad() -> None:
    # a hook that edits its gradient in place (returning None) changes what flows on; a
    # .grad that took the same array before is not changed with it
    results = []
    for lib in (cr, torch):
        a = lib.ones(3, requires_grad=True)
        w = lib.zeros(3, requires_grad=True)
        t = a * 1.0
        t.register_hook(lambda g: g.mul_(5.0))
        ((w + t) * lib.tensor([1.0, 2.0, 3.0])).sum().backward()  # a gradient of its own
        results.append((w.grad.tolist(), a.grad.tolist()))
    assert results[0] == results[1]


def test_a_retained_grad_and_a_leaf_grad_are_two_arrays() -> None:
    results = []
    for lib in (cr, torch):
        w = lib.zeros(3, requires_grad=True)
        h = w + 0.0
        h.retain_grad()
        h.sum().backward()
        h.grad.add_(1.0)
        results.append((h.grad.tolist(), w.grad.tolist()))
    assert results[0] == results[1]


def test_what_grad_returns_is_not_a_retained_grad() -> None:
    results = []
    for lib in (cr, torch):
        w = lib.zeros(3, requires_grad=True)
        h = w * 2.0
        h.retain_grad()
        (g,) = lib.autograd.grad((h * lib.tensor([1.0, 2.0, 3.0])).sum(), h)
        g.add_(100.0)
        results.append((g.tolist(), h.grad.tolist()))
    assert results[0] == results[1]


def test_a_grad_assigned_as_a_view_of_a_flat_buffer_collects_into_it() -> None:
    # the other side of ownership: a .grad the user assigned is the user's to share, and
    # backward and zero_grad write into it in place, as PyTorch's (flat gradient buffers)
    results = []
    for lib in (cr, torch):
        flat = lib.zeros(5)
        w = lib.ones(3, requires_grad=True)
        w.grad = flat[1:4]
        (w * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
        seen = [flat.tolist()]
        lib.optim.SGD([w], lr=0.1).zero_grad(set_to_none=False)
        seen.append(flat.tolist())
        (w * 2.0).sum().backward()
        results.append((seen, flat.tolist(), w.grad.tolist()))
    assert results[0] == results[1]
