"""The outputs of split, chunk, unbind, split_with_sizes, unsafe_split and a custom Function
with several outputs share one node, as PyTorch's: the same object, PyTorch's name, each
output's ``output_nr``, the ``(node, k)`` pairs of its consumers' ``next_functions``, its
``_saved_*``, hooks that run once with one gradient per output, and the gradients (first
and second order) of the whole; each compared with torch running the same program."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr

X = np.random.default_rng(0).standard_normal((5, 4))

SPLITS: dict[str, Callable[[Any], tuple[Any, ...]]] = {
    "split": lambda y: y.split(2),
    "split_dim1": lambda y: y.split(3, dim=1),
    "split_sections": lambda y: y.split([1, 4]),
    "split_with_sizes": lambda y: y.split_with_sizes([2, 2], 1),
    "split_fn": lambda y: y.__class__.split(y, 5),
    "chunk": lambda y: y.chunk(2),
    "chunk_uneven": lambda y: y.chunk(3, 1),
    "unbind": lambda y: y.unbind(),
    "unbind_dim1": lambda y: y.unbind(1),
    "unsafe_split": lambda y: y.unsafe_split(2),
    "unsafe_chunk": lambda y: y.unsafe_chunk(2, 1),
}


def _outputs(lib: Any, split: Callable[[Any], tuple[Any, ...]]) -> tuple[Any, tuple[Any, ...]]:
    x = lib.tensor(X, requires_grad=True)
    return x, split(x * 1)


def _saved(fn: Any) -> dict[str, Any]:
    return {a: getattr(fn, a) for a in dir(fn) if a.startswith("_saved_")}


@pytest.mark.parametrize("split", list(SPLITS.values()), ids=list(SPLITS))
def test_the_outputs_share_one_node_as_torchs(split: Any) -> None:
    (_, theirs), (_, ours) = _outputs(torch, split), _outputs(cr, split)
    fn = ours[0].grad_fn
    assert all(o.grad_fn is fn for o in ours)
    assert fn.name() == type(fn).__name__ == theirs[0].grad_fn.name()
    assert [o.output_nr for o in ours] == [o.output_nr for o in theirs]
    assert _saved(fn) == _saved(theirs[0].grad_fn)
    assert [f.name() for f, _ in fn.next_functions] == ["MulBackward0"]
    pairs = [(f.name(), k) for f, k in theirs[0].grad_fn.next_functions]
    assert [(f.name(), k) for f, k in fn.next_functions] == pairs
    assert repr(ours[-1]).endswith(f"grad_fn=<{fn.name()}>)")


@pytest.mark.parametrize("split", list(SPLITS.values()), ids=list(SPLITS))
def test_a_consumer_names_each_output_by_its_number(split: Any) -> None:
    for lib in (torch, cr):
        _, outs = _outputs(lib, split)
        z = lib.stack([o.sum() for o in outs[::-1]])
        ends = [[f.next_functions[0] for f, _ in z.grad_fn.next_functions]]
        numbers = [k for _, k in ends[0]]
        assert numbers == list(range(len(outs)))[::-1]
        assert all(f is outs[0].grad_fn for f, _ in ends[0])


def test_a_view_of_an_output_and_the_input_are_output_0() -> None:
    x = cr.tensor(X, requires_grad=True)
    a, b = (x * 1).split([2, 3])
    assert b.output_nr == 1 and b[1:].output_nr == 0 and x.output_nr == 0
    assert (b * 1).grad_fn.next_functions == ((b.grad_fn, 1), (None, 0))


def _program(lib: Any, split: Any, seed: int) -> Any:
    x, outs = _outputs(lib, split)
    w = np.random.default_rng(seed).standard_normal(len(outs))
    loss = sum(float(w[k]) * (o**3).sum() for k, o in enumerate(outs) if k != 1)
    (g,) = lib.autograd.grad(loss, x, create_graph=True)
    (gg,) = lib.autograd.grad((g * g).sum(), x)
    return g.detach(), gg


@pytest.mark.parametrize("split", list(SPLITS.values()), ids=list(SPLITS))
def test_gradients_and_second_derivatives_are_torchs(split: Any) -> None:
    for theirs, ours in zip(_program(torch, split, 1), _program(cr, split, 1), strict=True):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)


def _hooked(lib: Any) -> tuple[list[Any], Any]:
    """Hooks on split's node: each call's gradient shapes (None for none), and x's grad."""
    calls: list[Any] = []

    def shapes(grads: Any) -> list[Any]:
        return [None if g is None else tuple(g.shape) for g in grads]

    x = lib.tensor(X, requires_grad=True)
    a, b, c = (x * 1).split(2)
    a.grad_fn.register_prehook(lambda go: calls.append(("pre", shapes(go))))
    post = a.grad_fn.register_hook(lambda gi, go: calls.append(("post", shapes(gi), shapes(go))))
    (b * 2).sum().backward(retain_graph=True)
    (a.sum() + c.sum()).backward(retain_graph=True)
    post.remove()
    a.grad_fn.register_prehook(lambda go: tuple(None if g is None else g * 10 for g in go))
    (a.sum() + b.sum()).backward()
    return calls, x.grad


def test_hooks_on_the_node_run_once_with_a_gradient_per_output_as_torchs() -> None:
    (theirs, their_grad), (ours, our_grad) = _hooked(torch), _hooked(cr)
    assert ours == theirs
    assert ours[0] == ("pre", [None, (2, 4), None])
    np.testing.assert_array_equal(our_grad.numpy(), their_grad.numpy())


class _SinCos:
    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        ctx.save_for_backward(x)
        ctx.scale = 2
        return x.sin(), x.cos() * 2

    @staticmethod
    def backward(ctx: Any, grad_sin: Any, grad_cos: Any) -> Any:
        (x,) = ctx.saved_tensors
        return grad_sin * x.cos() - 2 * grad_cos * x.sin()


def _custom(lib: Any) -> tuple[Any, list[Any], Any]:
    SinCos = type("SinCos", (lib.autograd.Function,), dict(vars(_SinCos)))
    x = lib.tensor(X, requires_grad=True)
    s, c = SinCos.apply(x * 1)
    calls: list[Any] = []
    s.grad_fn.register_prehook(lambda go: calls.append([g is None for g in go]))
    return x, calls, (s, c)


def test_a_custom_functions_outputs_share_its_node_as_torchs() -> None:
    (tx, their_calls, theirs), (x, calls, ours) = _custom(torch), _custom(cr)
    fn = ours[0].grad_fn
    assert ours[1].grad_fn is fn and fn.name() == theirs[0].grad_fn.name() == "SinCosBackward"
    assert [o.output_nr for o in ours] == [o.output_nr for o in theirs] == [0, 1]
    assert fn.scale == 2 and fn.saved_tensors[0].shape == (5, 4)
    assert [f.name() for f, _ in fn.next_functions] == ["MulBackward0"]
    pairs = [(f.name(), k) for f, k in (theirs[1] * theirs[0]).grad_fn.next_functions]
    assert [(f.name(), k) for f, k in (ours[1] * ours[0]).grad_fn.next_functions] == pairs
    for outs in (theirs, ours):
        outs[1].sum().backward(retain_graph=True)
        (outs[0] * outs[1]).sum().backward()
    assert calls == their_calls == [[True, False], [False, False]]
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)


def test_an_output_written_in_place_is_refused_as_torchs() -> None:
    a, b = (cr.tensor(X, requires_grad=True) * 1).split([2, 3])
    message = "mul_: Output 1 of SplitWithSizes is a view and is being modified inplace"
    with pytest.raises(RuntimeError, match=message):
        b.mul_(2)
    (u,) = (cr.tensor(X, requires_grad=True) * 1)[:1].unbind()
    with pytest.raises(RuntimeError, match="add_: Output 0 of Unbind is a view"):
        u.add_(1)


def test_an_output_read_after_its_base_was_written_keeps_its_number() -> None:
    """A node recorded before the write reaches the output as it was (its stand-in), which
    is still output 1: the gradient lands in the second part."""
    for lib in (torch, cr):
        x = lib.tensor(X, requires_grad=True)
        y = x * 1
        _, b = y.split([2, 3])
        z = b * 2
        with lib.no_grad():
            y.mul_(3)
        z.sum().backward()
        assert x.grad[:2].abs().sum().item() == 0 and x.grad[2:].sum().item() == 24


def test_a_split_graph_is_freed_without_the_garbage_collector() -> None:
    gc.disable()
    try:
        x = cr.tensor(X, requires_grad=True)
        a, b = (x * 1).split([2, 3])
        node = weakref.ref(a.grad_fn)
        a.grad_fn.register_hook(lambda gi, go: None)
        del a, b
        assert node() is None
    finally:
        gc.enable()


def test_without_a_graph_the_outputs_are_plain_views() -> None:
    with cr.no_grad():
        a, b = cr.tensor(X, requires_grad=True).split([2, 3])
    assert a.grad_fn is None and b.output_nr == 0 and b._base is not None


@pytest.mark.parametrize(
    "split",
    [lambda y: y.tensor_split(3), lambda y: y.hsplit(2), lambda y: y.vsplit([1])],
    ids=["tensor_split", "hsplit", "vsplit"],
)
def test_tensor_split_and_hsplit_give_a_slice_node_each_as_torchs(split: Any) -> None:
    """PyTorch composes these of slices: one SliceBackward0 per output, each output 0."""
    (_, theirs), (_, ours) = _outputs(torch, split), _outputs(cr, split)
    assert [o.grad_fn.name() for o in ours] == [o.grad_fn.name() for o in theirs]
    assert ours[0].grad_fn.name() == "SliceBackward0" and ours[0].grad_fn is not ours[1].grad_fn
    assert [o.output_nr for o in ours] == [o.output_nr for o in theirs] == [0] * len(ours)


class _Three:
    """Three outputs, the middle one an integer tensor marked non-differentiable."""

    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        signs = (x > 0).long()
        ctx.mark_non_differentiable(signs)
        ctx.save_for_backward(x)
        return x * 2, signs, x * 3

    @staticmethod
    def backward(ctx: Any, g1: Any, g2: Any, g3: Any) -> Any:
        (x,) = ctx.saved_tensors
        return g1 * 2 + g3 * 3 * x


def _three(lib: Any) -> list[Any]:
    Three = type("Three", (lib.autograd.Function,), dict(vars(_Three)))
    x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
    a, signs, b = Three.apply(x)
    seen: list[Any] = [signs.grad_fn, a.output_nr, b.output_nr]
    seen.append([(f.name(), k) for f, k in (a * b).grad_fn.next_functions])

    def listed(grads: Any) -> list[Any]:
        return [None if g is None else g.tolist() for g in grads]

    a.grad_fn.register_prehook(lambda go: seen.append(("pre", listed(go))))
    a.grad_fn.register_hook(lambda gi, go: seen.append(("post", listed(gi), listed(go))))
    (b * b).sum().backward(retain_graph=True)
    (a.sum() + b.sum()).backward()
    return [*seen, x.grad.tolist()]


def test_an_output_without_gradient_keeps_its_number_and_place_as_torchs() -> None:
    assert _three(cr) == _three(torch)


def test_chunks_of_an_empty_dim_are_torchs() -> None:
    shown = []
    for lib in (torch, cr):
        parts = (lib.zeros(0, 3, requires_grad=True) * 1).chunk(2)
        shown.append([(o.grad_fn.name(), tuple(o.shape), o.output_nr) for o in parts])
        shown.append(_saved(parts[0].grad_fn))
    assert shown[2:] == shown[:2]


def _hooked_late(lib: Any) -> list[Any]:
    """A hook registered after a first backward has run through the node."""
    x = lib.tensor(X, requires_grad=True)
    a, b = (x * 1).split([2, 3])
    z = (a * 3).sum() + b.sum()
    z.backward(retain_graph=True)
    seen: list[Any] = []
    a.grad_fn.register_prehook(lambda go: seen.append([g is None for g in go]))
    z.backward()
    return [*seen, x.grad.sum().item()]


def test_a_hook_registered_late_sees_the_graph_as_it_was_as_torchs() -> None:
    assert _hooked_late(cr) == _hooked_late(torch) == [[False, False], 2 * (3 * 8 + 12)]


def _shared_input(lib: Any, switch_at_split: bool) -> list[Any]:
    """split's input also read by another op, gradients reaching some outputs only, twice
    over a retained graph: the input's gradients as they accumulate."""
    big = np.random.default_rng(6).standard_normal((64, 36))  # large: SplitOutputs' way
    x = lib.tensor(big, requires_grad=True)
    y = x * 3
    if lib is cr and not switch_at_split:
        with cr.fastpath.disabled():
            a, b, c = y.split([9, 18, 9], dim=1)
    else:
        a, b, c = y.split([9, 18, 9], dim=1)
    g = np.random.default_rng(5).standard_normal(big.shape)
    (a * 2 + c).sum().backward(retain_graph=True)  # b takes none
    got = [x.grad.clone()]
    (y * lib.tensor(g)).sum().backward(retain_graph=True)  # y alone
    got.append(x.grad.clone())
    (a.sum() * (y * lib.tensor(g)).sum() + (b * b).sum() + (c * 4).sum()).backward()
    got.append(x.grad.clone())
    return [t.detach().numpy() for t in got]


@pytest.mark.parametrize("switch_at_split", [True, False])
def test_split_puts_its_outputs_gradients_in_one_array_as_torchs(switch_at_split: bool) -> None:
    """With the switch on, the outputs' gradients go into one array of the input's shape,
    the first to arrive in a pass made as zeros (SplitOutputs): the input's gradient is
    torch's where some outputs get none, where the input has another consumer and over a
    retained graph; a split made with the switch off takes each its own zeros."""
    theirs = _shared_input(torch, switch_at_split)
    ours = _shared_input(cr, switch_at_split)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
