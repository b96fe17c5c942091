"""The backward engine: graph shapes, grad mode, higher-order gradients, memory, misuse."""

from __future__ import annotations

import threading
import weakref
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.autograd import sum_to_shape, toposort
from chainrule.autograd.primitive import Function
from tests.helpers import gc_off


def _pair(*shape: int, seed: int = 0) -> tuple[cr.Tensor, torch.Tensor]:
    arr = np.random.default_rng(seed).standard_normal(shape)
    return cr.tensor(arr, requires_grad=True), torch.tensor(arr, requires_grad=True)


# -- graph shapes ---------------------------------------------------------------------------


def test_reused_node_x_times_x() -> None:
    x = cr.tensor([3.0, -2.0], requires_grad=True)
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, -4.0])


def test_diamond_matches_torch() -> None:
    x, tx = _pair(3, 4)
    for t in (x, tx):
        a = t * 2.0
        b, c = a.exp(), a.sin()
        (b * c + a).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)


def test_node_used_by_three_consumers_runs_once_after_all() -> None:
    calls = []

    class Spy(Function):
        def forward(self, a: Any) -> Any:
            return a.copy()

        def backward(self, grad: cr.Tensor, out: cr.Tensor) -> tuple[cr.Tensor]:
            calls.append(grad.numpy().copy())
            return (grad,)

    x = cr.tensor([1.0, 2.0], requires_grad=True)
    s = Spy.apply(x)
    (s * 2.0 + s.exp() + s).sum().backward()
    assert len(calls) == 1  # one call, with every consumer's gradient already summed
    np.testing.assert_allclose(calls[0], 3.0 + np.exp([1.0, 2.0]))


def test_long_chain_has_no_recursion_limit() -> None:
    x = cr.tensor([0.0], dtype=cr.float64, requires_grad=True)
    with gc_off():  # the graph has no cycles; the collector would only rescan it
        y = x
        for _ in range(100_000):  # a hundred times Python's default recursion limit
            y = y + 1.0
        assert y.item() == 100_000.0
        y.backward(cr.ones(1, dtype=cr.float64))
        del y
    assert x.grad.item() == 1.0


def test_toposort_is_deterministic_and_parents_first() -> None:
    parents = {"d": ["b", "c"], "b": ["a"], "c": ["a"], "a": []}
    assert toposort(["d"], parents.__getitem__) == ["a", "b", "c", "d"]


def test_leaf_as_root() -> None:
    x = cr.tensor(2.0, requires_grad=True)
    x.backward()
    assert x.grad.item() == 1.0


def test_output_not_requiring_grad_inputs_mix() -> None:
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    c = cr.tensor([3.0, 4.0])
    y = x * c
    assert y.requires_grad and not (c * c).requires_grad
    y.sum().backward()
    assert c.grad is None
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 4.0])


# -- accumulation, retain, freed graphs -------------------------------------------------------


def test_accumulation_over_two_backward_calls() -> None:
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    (x * 3.0).sum().backward()
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0 + 2.0, 3.0 + 4.0])


def test_leaf_grad_accumulates_in_place_as_in_torch() -> None:
    # PyTorch keeps .grad the same tensor over backward calls (first order) and adds into it:
    # a reference taken before the second call sees the sum, and no array is allocated.
    x, tx = _pair(2, 3)
    held = []
    for t in (x, tx):
        (t * 3.0).sum().backward()
        held.append(t.grad)
        (t * t).sum().backward()
        assert t.grad is held[-1]
    np.testing.assert_allclose(held[0].numpy(), held[1].numpy(), rtol=1e-15)


def test_grad_that_is_part_of_a_graph_accumulates_out_of_place() -> None:
    # After backward(create_graph=True), x.grad is a node of the graph of the gradient; a
    # later first-order backward must not change the values that graph may use.
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    (x**3).sum().backward(create_graph=True)
    first = x.grad
    (x * 5.0).sum().backward()
    np.testing.assert_array_equal(first.numpy(), [3.0, 12.0])
    np.testing.assert_array_equal(x.grad.numpy(), [8.0, 17.0])


def test_retained_grad_of_a_non_leaf_accumulates_out_of_place_as_in_torch() -> None:
    x, tx = _pair(3)
    for t in (x, tx):
        h = t * 2.0
        h.retain_grad()
        h.sum().backward(retain_graph=True)
        first = h.grad
        (h * h).sum().backward()
        assert h.grad is not first
        np.testing.assert_array_equal(first.numpy(), np.ones(3))


def test_retain_graph_allows_a_second_backward() -> None:
    x = cr.tensor(2.0, requires_grad=True)
    y = x * x * x
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.item() == 24.0


def test_second_backward_over_freed_graph_says_so() -> None:
    x = cr.tensor(2.0, requires_grad=True)
    y = (x * x).exp()
    y.backward()
    with pytest.raises(RuntimeError, match="a second time.*retain_graph=True"):
        y.backward()


def test_using_a_result_of_a_freed_graph_says_so() -> None:
    x = cr.tensor(2.0, requires_grad=True)
    h = x * x
    h.sum().backward()
    with pytest.raises(RuntimeError, match="Mul: backward: trying to backward through the graph"):
        (h * 2.0).backward()


def test_freed_graph_releases_saved_values() -> None:
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.sum().backward()
    assert y.grad_fn.inputs is None


def test_leaf_grads_are_not_aliased() -> None:
    """Regression: Add hands one gradient array to both inputs; accumulating it by reference
    made a.grad and b.grad the same array (and the caller's), so an in-place update of one
    (an optimizer, zero_()) changed the others."""
    a = cr.tensor([1.0, 2.0], requires_grad=True)
    b = cr.tensor([3.0, 4.0], requires_grad=True)
    g = cr.tensor([1.0, 1.0])
    (a + b).backward(g)
    assert not np.shares_memory(a.grad.numpy(), b.grad.numpy())
    assert not np.shares_memory(a.grad.numpy(), g.numpy())
    a.grad.zero_()
    np.testing.assert_array_equal(b.grad.numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(g.numpy(), [1.0, 1.0])


def test_leaf_root_grad_is_not_the_callers_array() -> None:
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    g = cr.tensor([5.0, 6.0])
    x.backward(g)
    g.numpy()[0] = 0.0
    np.testing.assert_array_equal(x.grad.numpy(), [5.0, 6.0])


class _GradIsY(Function):
    """x * y with a wrong but legal backward: it hands y itself over as x's gradient."""

    def forward(self, x, y):
        return x * y

    def backward(self, grad, out):
        return self.inputs[1], None


def test_leaf_grad_that_a_formula_returned_as_an_input_is_a_copy() -> None:
    # As PyTorch clones a gradient it cannot steal: x.grad must not be y, nor share y's memory.
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    y = cr.tensor([3.0, 4.0], requires_grad=True)
    _GradIsY.apply(x, y).backward(cr.ones(2))
    assert x.grad is not y and not x.grad.requires_grad
    x.grad.numpy()[0] = 0.0
    np.testing.assert_array_equal(y.numpy(), [3.0, 4.0])
    assert y.grad is None


# -- seeds and roots ------------------------------------------------------------------------


def test_non_scalar_root_without_gradient_raises() -> None:
    x = cr.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"only for outputs with one element; got shape \(3,\)"):
        (x * 2.0).backward()


def test_non_scalar_root_with_gradient() -> None:
    x, tx = _pair(2, 3)
    v = np.random.default_rng(5).standard_normal((2, 3))
    x.tanh().backward(cr.tensor(v))
    tx.tanh().backward(torch.tensor(v))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)


def test_one_element_non_scalar_root_is_seeded() -> None:
    x = cr.tensor([[2.0]], requires_grad=True)
    (x * x).backward()
    assert x.grad.shape == (1, 1) and x.grad.item() == 4.0


def test_gradient_of_wrong_shape_raises() -> None:
    x = cr.ones(3, requires_grad=True)
    pattern = r"gradient has shape \(2,\) but the output has shape \(3,\)"
    with pytest.raises(RuntimeError, match=pattern):
        (x * 2.0).backward(cr.ones(2))


def test_gradient_of_other_dtype_is_cast_to_the_outputs() -> None:
    """Regression: a float64 gradient seeding a float32 leaf root made a float64 .grad."""
    x = cr.ones(3, requires_grad=True)
    x.backward(cr.ones(3, dtype=cr.float64))
    assert x.grad.dtype == cr.float32


def test_backward_of_tensor_without_grad_raises() -> None:
    with pytest.raises(RuntimeError, match="does not require grad"):
        cr.ones(2).sum().backward()


def test_gradients_have_their_tensors_dtype() -> None:
    x = cr.ones(3, requires_grad=True)  # float32
    w = cr.tensor(np.arange(3.0), requires_grad=True)  # float64
    (x * w).sum().backward()
    assert x.grad.dtype == cr.float32 and w.grad.dtype == cr.float64
    assert (x * w).dtype == cr.float64


# -- grad mode --------------------------------------------------------------------------------


def test_no_grad_records_nothing() -> None:
    x = cr.ones(2, requires_grad=True)
    with cr.no_grad():
        assert not cr.is_grad_enabled()
        y = x * 2.0
    assert cr.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None


def test_enable_grad_inside_no_grad() -> None:
    x = cr.ones(2, requires_grad=True)
    with cr.no_grad():
        with cr.enable_grad():
            y = x * 2.0
        z = x * 2.0
    assert y.requires_grad and not z.requires_grad


def test_grad_modes_as_decorators() -> None:
    @cr.no_grad()
    def off() -> bool:
        return cr.is_grad_enabled()

    @cr.enable_grad()
    def on() -> bool:
        return cr.is_grad_enabled()

    assert off() is False and cr.is_grad_enabled()
    with cr.no_grad():
        assert on() is True
        assert not cr.is_grad_enabled()


def test_grad_mode_restored_after_exception() -> None:
    with pytest.raises(KeyError), cr.no_grad():
        raise KeyError
    assert cr.is_grad_enabled()


def test_grad_mode_is_thread_local() -> None:
    inside, release, seen = threading.Event(), threading.Event(), {}

    def worker() -> None:
        with cr.no_grad():
            inside.set()
            release.wait(10)
            seen["worker"] = cr.is_grad_enabled()

    th = threading.Thread(target=worker)
    th.start()
    assert inside.wait(10)
    assert cr.is_grad_enabled()
    assert (cr.ones(1, requires_grad=True) * 2.0).requires_grad
    release.set()
    th.join()
    assert seen["worker"] is False


def test_one_no_grad_instance_open_in_two_threads() -> None:
    """Regression: the mode to restore was kept on the context object, so a shared
    instance (or decorator) open in two threads restored the other thread's mode."""
    shared = cr.no_grad()
    entered, left = threading.Event(), threading.Event()

    def worker() -> None:
        with shared:
            entered.set()
        left.set()

    with cr.no_grad():
        with shared:
            th = threading.Thread(target=worker)
            th.start()
            assert entered.wait(10) and left.wait(10)
            th.join()
        assert not cr.is_grad_enabled()  # still inside the outer block
    assert cr.is_grad_enabled()


def test_detach_shares_data_and_cuts_the_graph() -> None:
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    d = (x * 2.0).detach()
    assert not d.requires_grad and d.grad_fn is None
    y = x * d
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])
    e = x.detach()
    assert np.shares_memory(e.numpy(), x.numpy())


def test_retain_grad_keeps_a_non_leaf_gradient() -> None:
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3.0
    h.retain_grad()
    (h * h).sum().backward()
    np.testing.assert_array_equal(h.grad.numpy(), [6.0, 12.0])
    assert (x * 3.0).grad is None


# -- higher order ---------------------------------------------------------------------------


def test_grad_of_grad() -> None:
    x = cr.tensor(2.0, dtype=cr.float64, requires_grad=True)
    (g,) = cr.grad(x**3, x, create_graph=True)
    assert g.item() == 12.0 and g.requires_grad
    (h,) = cr.grad(g, x)
    assert h.item() == 12.0


def test_backward_create_graph_then_backward_again() -> None:
    x = cr.tensor(3.0, dtype=cr.float64, requires_grad=True)
    (x.sin() * x).backward(create_graph=True)
    g = x.grad
    assert g.requires_grad
    x.grad = None
    g.backward()
    np.testing.assert_allclose(x.grad.item(), 2 * np.cos(3.0) - 3.0 * np.sin(3.0), rtol=1e-12)


def _mlp_loss(m: Any, x: Any, w1: Any, w2: Any) -> Any:
    h = (x @ w1).tanh()
    return (h @ w2).log_softmax(-1).sum() + (x * x).sum() * h.sigmoid().mean()


def test_hessian_vector_product_matches_torch() -> None:
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s) for s in ((4, 3), (3, 5), (5, 2))]
    v = rng.standard_normal((4, 3))
    ours = [cr.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    (g,) = cr.grad(_mlp_loss(cr, *ours), ours[0], create_graph=True)
    hv = cr.grad((g * cr.tensor(v)).sum(), ours)
    (tg,) = torch.autograd.grad(_mlp_loss(torch, *theirs), theirs[0], create_graph=True)
    thv = torch.autograd.grad((tg * torch.tensor(v)).sum(), theirs)
    for a, b in zip(hv, thv, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)


def test_third_derivative() -> None:
    x = cr.tensor(0.7, dtype=cr.float64, requires_grad=True)
    (g,) = cr.grad(x.tanh(), x, create_graph=True)
    (h,) = cr.grad(g, x, create_graph=True)
    (k,) = cr.grad(h, x)
    t = np.tanh(0.7)
    np.testing.assert_allclose(k.item(), -2 * (1 - t * t) * (1 - 3 * t * t), rtol=1e-12)


# -- cr.grad --------------------------------------------------------------------------------


def test_grad_returns_without_accumulating() -> None:
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    (g,) = cr.grad((x * x).sum(), x)
    np.testing.assert_array_equal(g.numpy(), [2.0, 4.0])
    assert x.grad is None


def test_grad_several_outputs_and_grad_outputs_match_torch() -> None:
    x, tx = _pair(2, 3)
    w, tw = _pair(3, seed=1)
    v1, v2 = np.random.default_rng(2).standard_normal((2, 2, 3))
    outs = [x * w, (x.exp() + w).tanh()]
    touts = [tx * tw, (tx.exp() + tw).tanh()]
    gs = cr.grad(outs, [x, w], [cr.tensor(v1), cr.tensor(v2)])
    tgs = torch.autograd.grad(touts, [tx, tw], [torch.tensor(v1), torch.tensor(v2)])
    for a, b in zip(gs, tgs, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)


def test_grad_allow_unused() -> None:
    x = cr.ones(2, requires_grad=True)
    u = cr.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"input 1 \(shape \(3,\)\) was not used"):
        cr.grad((x * 2.0).sum(), [x, u])
    g, none = cr.grad((x * 2.0).sum(), [x, u], allow_unused=True)
    assert none is None and g.shape == (2,)


def test_grad_retain_graph_defaults_to_create_graph() -> None:
    x = cr.tensor(1.5, requires_grad=True)
    y = x.exp()
    cr.grad(y, x)
    with pytest.raises(RuntimeError, match="second time"):
        cr.grad(y, x)
    z = x.exp()
    cr.grad(z, x, retain_graph=True)
    (g,) = cr.grad(z, x)
    np.testing.assert_allclose(g.item(), np.exp(1.5), rtol=1e-6)


def test_grad_of_intermediate_input() -> None:
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2.0
    (g,) = cr.grad((h * h).sum(), h)
    np.testing.assert_array_equal(g.numpy(), [4.0, 8.0])


def test_grad_outputs_of_another_length_raise() -> None:
    """Regression: a grad_outputs list shorter than outputs was cut by zip, silently leaving
    outputs unseeded."""
    x = cr.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="grad: got 1 grad_outputs for 2 outputs"):
        cr.grad([x * 2.0, x * 3.0], x, [cr.ones(2)])


def test_grad_input_not_requiring_grad_raises() -> None:
    x = cr.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="grad: input 1 does not require grad"):
        cr.grad((x * 2.0).sum(), [x, cr.ones(2)])


# -- memory: no reference cycles --------------------------------------------------------------


@pytest.mark.parametrize("run", ["no_backward", "backward", "retain_graph", "create_graph"])
def test_dropped_graph_is_freed_without_the_collector(run: str) -> None:
    x = cr.randn(3, requires_grad=True)
    with gc_off():
        a = x.exp()
        b = a * x
        c = b.softmax(0)[1:].sum()
        refs = [weakref.ref(t) for t in (a, b, c)] + [weakref.ref(t.grad_fn) for t in (a, b, c)]
        if run == "backward":
            c.backward()
        elif run == "retain_graph":
            c.backward(retain_graph=True)
        elif run == "create_graph":
            (g,) = cr.grad(c, x, create_graph=True)
            refs.append(weakref.ref(g))
            del g
        del a, b, c
        assert [r() for r in refs] == [None] * len(refs)


def test_tensor_supports_weakrefs() -> None:
    t = cr.ones(1)
    r = weakref.ref(t)
    del t
    assert r() is None


# -- misbehaving ops and anomaly mode -------------------------------------------------------


class _WrongShape(Function):
    def forward(self, a: Any) -> Any:
        return a * 2.0

    def backward(self, grad: cr.Tensor, out: cr.Tensor) -> tuple[cr.Tensor]:
        return (grad.reshape(-1),)


class _WrongCount(Function):
    def forward(self, a: Any) -> Any:
        return a * 2.0

    def backward(self, grad: cr.Tensor, out: cr.Tensor) -> tuple[Any, ...]:
        return (grad, grad)


def test_backward_returning_a_wrong_shape_raises() -> None:
    """Regression: sum_to_shape reshaped any gradient with the input's number of elements,
    hiding an op that returned (6,) for an input of shape (2, 3)."""
    x = cr.ones(2, 3, requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match=r"_WrongShape: backward returned a gradient of shape "
        r"\(6,\) for input 0 of shape \(2, 3\) "
        r"\(the backward of _WrongShape in .*test_autograd.py\)",
    ):
        _WrongShape.apply(x).sum().backward()


def test_backward_returning_a_wrong_count_raises() -> None:
    x = cr.ones(2, requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match=r"_WrongCount: backward returned 2 gradients for 1 inputs "
        r"\(the backward of _WrongCount in .*test_autograd.py\)",
    ):
        _WrongCount.apply(x).sum().backward()


def test_sum_to_shape() -> None:
    g = cr.ones(2, 3, 4)
    assert sum_to_shape(g, (3, 1)).shape == (3, 1)
    np.testing.assert_array_equal(sum_to_shape(g, (3, 1)).numpy(), np.full((3, 1), 8.0))
    assert sum_to_shape(g, ()).item() == 24.0
    with pytest.raises(ValueError, match=r"shape \(2, 3, 4\) is not a broadcast of \(2, 4\)"):
        sum_to_shape(g, (2, 4))


def test_forward_errors_name_the_op_and_shapes() -> None:
    class Fails(Function):
        def forward(self, a: Any, b: Any) -> Any:
            raise ValueError("something is off")

    with pytest.raises(ValueError, match=r"^fails: something is off; got shapes \(2,\) and \(\)$"):
        Fails.apply(cr.ones(2), 3.0)

    class Says(Function):  # "; got " alone does not name the op: the message is wrapped
        def forward(self, a: Any) -> Any:
            raise ValueError("a bad value; got 3")

    with pytest.raises(ValueError, match=r"^says: a bad value; got 3; got shape \(2,\)$"):
        Says.apply(cr.ones(2))


def test_detect_anomaly_names_the_op() -> None:
    x = cr.tensor([-1.0, 1.0], requires_grad=True)
    with cr.detect_anomaly(), pytest.raises(RuntimeError, match="Log: forward produced NaN"):
        with np.errstate(invalid="ignore"):
            x.log()
    y = cr.tensor([0.0, 1.0], requires_grad=True)
    pattern = "Sqrt: backward produced NaN or inf"
    with cr.detect_anomaly(), pytest.raises(RuntimeError, match=pattern):
        with np.errstate(divide="ignore"):
            y.sqrt().sum().backward()
    with np.errstate(invalid="ignore"):
        assert np.isnan(x.log().numpy()[0])  # off again: no error


def test_set_grad_enabled_as_a_call_a_block_and_a_decorator_like_torch() -> None:
    """As in PyTorch, the call itself sets the mode (a plain statement switches it); a block
    restores on exit the mode from before the call; decorating changes nothing until the
    function runs, and each run sets and restores the mode. The same for anomaly mode."""
    x = cr.ones(2, requires_grad=True)
    for lib in (cr, torch):
        lib.set_grad_enabled(False)
        assert not lib.is_grad_enabled()
        lib.set_grad_enabled(True)
        assert lib.is_grad_enabled()
        with lib.set_grad_enabled(False):
            assert not lib.is_grad_enabled()
        assert lib.is_grad_enabled()

        @lib.set_grad_enabled(False)
        def inside(lib=lib) -> bool:
            return lib.is_grad_enabled()

        assert lib.is_grad_enabled() and inside() is False and lib.is_grad_enabled()
        with lib.no_grad():
            assert inside() is False and not lib.is_grad_enabled()
    cr.set_grad_enabled(False)
    try:
        assert not (x * 2).requires_grad
    finally:
        cr.set_grad_enabled(True)
    assert (x * 2).requires_grad
    cr.autograd.set_detect_anomaly(True)
    try:
        with np.errstate(invalid="ignore"), pytest.raises(RuntimeError, match="Log: forward"):
            (x - 2).log()
    finally:
        cr.autograd.set_detect_anomaly(False)
    with np.errstate(invalid="ignore"):
        assert np.isnan((x - 2).log().numpy()).all()


def test_grad_mode_set_by_a_call_is_per_thread() -> None:
    seen = {}

    def worker() -> None:
        cr.set_grad_enabled(False)
        seen["worker"] = cr.is_grad_enabled()

    th = threading.Thread(target=worker)
    th.start()
    th.join()
    assert seen == {"worker": False} and cr.is_grad_enabled()


# -- the rule the engine runs: on arrays (fast path) or in Tensor ops (plain) ---------------


class _Probe(Function):
    """2x, noting which of its two rules the engine ran."""

    seen: list[str] = []
    rule = "grad_a = 2 * grad"

    def forward(self, a):
        return 2.0 * a

    def backward(self, grad, out):
        _Probe.seen.append("tensors")
        return (grad * 2.0,)

    def backward_arrays(self, grad, out):
        _Probe.seen.append("arrays")
        return (grad * 2.0,)


@pytest.mark.parametrize(
    "mode, expected",
    [
        ("backward", "arrays"),
        ("grad", "arrays"),
        ("create_graph", "tensors"),
        ("anomaly", "tensors"),
        ("explain", "tensors"),
        ("fastpath off", "tensors"),
    ],
)
def test_the_engine_picks_the_rule_on_arrays_only_for_first_order_gradients(mode, expected):
    before = cr.autograd.fastpath.enabled()
    cr.autograd.fastpath.set_enabled(True)  # the choice is the switched-on engine's
    try:
        _picks_the_rule(mode, expected)
    finally:
        cr.autograd.fastpath.set_enabled(before)


def _picks_the_rule(mode: str, expected: str) -> None:
    _Probe.seen = []
    x = cr.tensor([1.0, -2.0], requires_grad=True)
    loss = (_Probe.apply(x) * 3.0).sum()
    if mode == "backward":
        loss.backward()
    elif mode == "grad":
        (gx,) = cr.grad(loss, x)
        assert gx.tolist() == [6.0, 6.0]
    elif mode == "create_graph":
        loss.backward(create_graph=True)
    elif mode == "anomaly":
        with cr.detect_anomaly():
            loss.backward()
    elif mode == "explain":
        cr.explain(loss)
    else:
        with cr.autograd.fastpath.disabled():
            loss.backward()
    assert _Probe.seen == [expected]
    assert mode == "grad" or x.grad.tolist() == [6.0, 6.0]


def test_fastpath_switch_restores_itself() -> None:
    before = cr.autograd.fastpath.enabled()
    with cr.autograd.fastpath.disabled():
        assert not cr.autograd.fastpath.enabled()
    assert cr.autograd.fastpath.enabled() == before


@pytest.mark.parametrize("act", ["relu", "clamp"])
def test_relu_and_clamp_in_a_shared_graph_match_torch(act: str) -> None:
    """An MLP with a pre-activation shared by two activations, an activation used twice
    and a retained gradient: every gradient as torch's."""
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal(s) for s in [(6, 5), (5, 7), (7, 7), (7, 3)]]
    grads = []
    for lib in (cr, torch):
        x, w1, w2, w3 = (lib.tensor(a, requires_grad=True) for a in arrays)
        f = (lambda t: t.relu()) if act == "relu" else (lambda t: t.clamp(-0.3, 0.5))
        h = x @ w1
        a, b = f(h), f(h * 0.5)
        a.retain_grad()
        c = f(a @ w2)
        loss = ((c @ w3).sum() + (c * c).sum()) * (b @ w2).mean()
        loss.backward()
        grads.append([t.grad.numpy() for t in (x, w1, w2, w3, a)])
    for ours, theirs in zip(*grads, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def _random_program(seed: int):
    """A random graph over three leaves, rich in what the two kinds of rule must agree on:
    relu and clamp after fan-out, adds (one gradient to two inputs), views,
    concatenation, products and retained gradients. Returns (leaves, loss, retained)."""
    rng = np.random.default_rng(seed)
    leaves = [cr.tensor(rng.standard_normal((4, 5)), requires_grad=True) for _ in range(3)]
    w = cr.tensor(rng.standard_normal((5, 5)))
    pool = list(leaves)
    retained = []
    for _ in range(int(rng.integers(4, 12))):
        a, b = (pool[int(i)] for i in rng.integers(0, len(pool), 2))
        op = int(rng.integers(0, 9))
        if op == 0:
            t = a.relu()
        elif op == 1:
            t = a.clamp(-0.5, 0.8)
        elif op == 2:
            t = a + b
        elif op == 3:
            t = a * b
        elif op == 4:
            t = (a.reshape(2, 10) * 1.5).reshape(4, 5)
        elif op == 5:
            t = sum(cr.cat([a, b], 0).split(4, 0)) * 0.5
        elif op == 6:
            t = a @ w
        elif op == 7:
            t = a.T.T - b
        else:
            t = (a @ w).relu() + a.relu()
        if rng.random() < 0.2:
            t.retain_grad()
            retained.append(t)
        pool.append(t)
    loss = sum((t * float(k + 1)).sum() for k, t in enumerate(pool[3:]) if rng.random() < 0.7)
    return leaves, (loss if isinstance(loss, cr.Tensor) else pool[-1].sum()), retained


def test_the_fast_path_never_changes_a_gradient() -> None:
    """200 random programs, each run with the fast path and without: every leaf's and every
    retained gradient is the same to the bit."""

    def grads(seed):
        leaves, loss, retained = _random_program(seed)
        loss.backward()
        return [t.grad.numpy().copy() for t in leaves + retained if t.grad is not None]

    for seed in range(200):
        fast = grads(seed)
        with cr.autograd.fastpath.disabled():
            without = grads(seed)
        assert len(fast) == len(without)
        for a, b in zip(fast, without, strict=True):
            np.testing.assert_array_equal(a, b)
