"""chainrule.scalar: every op against PyTorch (float64) and finite differences, the engine's
graph walk and memory, and compatibility with micrograd 0.1.0 down to its moons demo."""

from __future__ import annotations

import math
import random
import sys
import weakref
from collections.abc import Callable

import micrograd.engine
import micrograd.nn
import numpy as np
import pytest
import torch

import chainrule.scalar.nn
import chainrule.tools.demo
from chainrule.scalar import Value, demo_moons, train_moons, weighted_sum
from chainrule.scalar.nn import MLP, Layer, Module, Neuron
from tests.helpers import gc_off


def close(a: float, b: float, rtol: float = 1e-12, atol: float = 1e-12) -> bool:
    """math.isclose that also holds for equal infinities and for two NaNs."""
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=rtol, abs_tol=atol)


def ours(fn: Callable, xs: list[float], upstream: float = 1.0) -> tuple[float, list[float]]:
    vs = [Value(x) for x in xs]
    out = fn(*vs)
    (out * upstream).backward()
    return out.data, [v.grad for v in vs]


def theirs(fn: Callable, xs: list[float], upstream: float = 1.0) -> tuple[float, list[float]]:
    ts = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in xs]
    out = fn(*ts)
    (out * upstream).backward()
    return out.item(), [0.0 if t.grad is None else t.grad.item() for t in ts]


# ---------------------------------------------------------------------------------------
# The op catalog: (name, function written for both engines, input range per argument).
# Ranges keep clear of kinks and poles; the edge cases have their own table below.

OPS = [
    ("add", lambda a, b: a + b, [(-3, 3), (-3, 3)]),
    ("sub", lambda a, b: a - b, [(-3, 3), (-3, 3)]),
    ("mul", lambda a, b: a * b, [(-3, 3), (-3, 3)]),
    ("div", lambda a, b: a / b, [(-3, 3), (0.5, 3)]),
    ("pow_value", lambda a, b: a**b, [(0.2, 3), (-2, 2)]),
    ("add_number", lambda a: a + 1.5, [(-3, 3)]),
    ("radd", lambda a: 1.5 + a, [(-3, 3)]),
    ("sub_number", lambda a: a - 1.5, [(-3, 3)]),
    ("rsub", lambda a: 1.5 - a, [(-3, 3)]),
    ("mul_number", lambda a: a * -2.5, [(-3, 3)]),
    ("rmul", lambda a: -2.5 * a, [(-3, 3)]),
    ("div_number", lambda a: a / 1.5, [(-3, 3)]),
    ("rdiv", lambda a: 1.5 / a, [(0.5, 3)]),
    ("rpow", lambda a: 2.0**a, [(-3, 3)]),
    ("pow_2", lambda a: a**2, [(-3, 3)]),
    ("pow_3", lambda a: a**3, [(-3, 3)]),
    ("pow_-1", lambda a: a**-1, [(0.5, 3)]),
    ("pow_0.5", lambda a: a**0.5, [(0.2, 3)]),
    ("pow_-2.5", lambda a: a**-2.5, [(0.5, 3)]),
    ("neg", lambda a: -a, [(-3, 3)]),
    ("relu", lambda a: a.relu(), [(-3, 3)]),
    ("tanh", lambda a: a.tanh(), [(-3, 3)]),
    ("exp", lambda a: a.exp(), [(-3, 3)]),
    ("log", lambda a: a.log(), [(0.2, 3)]),
    ("sigmoid", lambda a: a.sigmoid(), [(-6, 6)]),
]


def draws(ranges: list[tuple[float, float]], seed: int, n: int = 5) -> list[list[float]]:
    rng = random.Random(seed)
    return [[rng.uniform(lo, hi) for lo, hi in ranges] for _ in range(n)]


@pytest.mark.parametrize("name, fn, ranges", OPS, ids=[row[0] for row in OPS])
def test_op_matches_torch(name: str, fn: Callable, ranges: list) -> None:
    for i, xs in enumerate(draws(ranges, seed=len(name))):
        upstream = random.Random(i).uniform(-2, 2)  # a random upstream gradient, not just 1
        out, grads = ours(fn, xs, upstream)
        out_t, grads_t = theirs(fn, xs, upstream)
        assert close(out, out_t), (name, xs)
        assert all(close(g, gt) for g, gt in zip(grads, grads_t, strict=True)), (name, xs)


@pytest.mark.parametrize("name, fn, ranges", OPS, ids=[row[0] for row in OPS])
def test_op_matches_finite_differences(name: str, fn: Callable, ranges: list) -> None:
    eps = 1e-6
    for xs in draws(ranges, seed=len(name) + 100):
        _, grads = ours(fn, xs)
        for i in range(len(xs)):
            hi = fn(*[Value(x + eps * (j == i)) for j, x in enumerate(xs)]).data
            lo = fn(*[Value(x - eps * (j == i)) for j, x in enumerate(xs)]).data
            assert close(grads[i], (hi - lo) / (2 * eps), rtol=1e-6, atol=1e-7), (name, xs, i)


def test_op_catalog_covers_every_primitive_and_operator() -> None:
    names = {row[0] for row in OPS}
    assert {"relu", "tanh", "exp", "log", "sigmoid", "pow_value", "rpow", "rdiv", "rsub"} <= names
    assert len(OPS) == 25


# Edge cases: kinks, saturation, overflow and poles, with PyTorch's float64 as the reference.
EDGES = [
    ("relu'(0) = 0", lambda a: a.relu(), [0.0]),
    ("tanh(1000)", lambda a: a.tanh(), [1000.0]),
    ("tanh(-1000)", lambda a: a.tanh(), [-1000.0]),
    ("sigmoid(1000)", lambda a: a.sigmoid(), [1000.0]),
    ("sigmoid(-1000)", lambda a: a.sigmoid(), [-1000.0]),
    ("sigmoid(-1e308)", lambda a: a.sigmoid(), [-1e308]),
    ("exp(1000) = inf", lambda a: a.exp(), [1000.0]),
    ("exp(-1000) = 0", lambda a: a.exp(), [-1000.0]),
    ("log(0) = -inf", lambda a: a.log(), [0.0]),
    ("log(-1) = nan", lambda a: a.log(), [-1.0]),
    ("0 ** -1 = inf", lambda a: a**-1, [0.0]),
    ("x / 0 = inf", lambda a: a / 0, [1.0]),
    ("x / 0.0 = inf", lambda a: a / 0.0, [-1.0]),
    ("1 / Value(0) = inf", lambda a: 1 / a, [0.0]),
    ("0 ** 0.5", lambda a: a**0.5, [0.0]),
    ("0 ** 0 (grad 0)", lambda a: a**0, [0.0]),
    ("(-8) ** (1/3) = nan", lambda a: a ** (1 / 3), [-8.0]),
    ("1e200 ** 2 = inf", lambda a: a**2, [1e200]),
    ("0 ** Value(2)", lambda a, b: a**b, [0.0, 2.0]),
    ("(-8) ** Value(2)", lambda a, b: a**b, [-8.0, 2.0]),
    ("(-8) ** Value(1/3)", lambda a, b: a**b, [-8.0, 1 / 3]),
]


@pytest.mark.parametrize("name, fn, xs", EDGES, ids=[row[0] for row in EDGES])
def test_edge_cases_match_torch_without_exceptions(name: str, fn: Callable, xs: list) -> None:
    out, grads = ours(fn, xs)
    out_t, grads_t = theirs(fn, xs)
    assert type(out) is float and close(out, out_t), (out, out_t)
    assert all(close(g, gt) for g, gt in zip(grads, grads_t, strict=True)), (grads, grads_t)


def test_tanh_and_sigmoid_saturate_finitely_at_1000() -> None:
    for x in (1000.0, -1000.0):
        for op in (Value.tanh, Value.sigmoid):
            v = Value(x)
            y = op(v)
            y.backward()
            assert math.isfinite(y.data) and v.grad == 0.0
    assert Value(1000.0).tanh().data == 1.0 and Value(-1000.0).sigmoid().data == 0.0


def test_a_zero_gradient_is_not_passed_on() -> None:
    # A dead ReLU stops the walk: log's infinite derivative at 0 never meets 0 * inf = NaN
    # (PyTorch gives NaN here).
    x = Value(0.0)
    x.log().relu().backward()
    assert x.grad == 0.0


# ---------------------------------------------------------------------------------------
# The graph: records, reuse, order.


def test_records_parents_in_operand_order_and_micrograds_op_names() -> None:
    a, b = Value(2.0), Value(3.0)
    assert (a + b)._prev == (a, b) and (a + b)._op == "+"
    assert (b * a)._prev == (b, a) and (b * a)._op == "*"
    assert (a**2)._op == "**2" and (a**-1)._op == "**-1" and (a**0.5)._op == "**0.5"
    assert (a**b)._op == "**" and (a**b)._prev == (a, b)
    ops = [f(a)._op for f in (Value.relu, Value.tanh, Value.exp, Value.log, Value.sigmoid)]
    assert ops == ["ReLU", "tanh", "exp", "log", "sigmoid"]
    c = a + 1  # a number becomes a leaf, as in micrograd
    assert c._prev[0] is a and c._prev[1].data == 1.0 and c._prev[1]._prev == ()
    assert (a * b)._local == (3.0, 2.0)


def test_reused_node() -> None:
    x = Value(3.0)
    y = x * x
    assert y._prev == (x, x)
    y.backward()
    assert x.grad == 6.0
    x2 = Value(3.0)
    (x2 + x2 + x2).backward()
    assert x2.grad == 3.0


def test_diamond() -> None:
    def f(x):
        a = x * 2.0
        b = x.exp()
        return a * b + a.tanh() * b

    out, grads = ours(f, [0.7])
    out_t, grads_t = theirs(f, [0.7])
    assert close(out, out_t) and close(grads[0], grads_t[0])


def micrograd_sanity(x):
    # micrograd's test_sanity_check, the same expression for either engine.
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    return h + q + q * x


def micrograd_more_ops(a, b):
    # micrograd's test_more_ops, the same expressions for either engine.
    c = a + b
    d = a * b + b**3
    c += c + 1
    c += 1 + c + (-a)
    d += d * 2 + (b + a).relu()
    d += 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    g += 10.0 / f
    return g


def test_micrograd_sanity_check() -> None:
    out, grads = ours(micrograd_sanity, [-4.0])
    out_t, grads_t = theirs(micrograd_sanity, [-4.0])
    assert out == out_t and grads == grads_t  # exact, as micrograd's own test asserts
    mg_x = micrograd.engine.Value(-4.0)
    mg_y = micrograd_sanity(mg_x)
    mg_y.backward()
    assert (out, grads[0]) == (mg_y.data, mg_x.grad)


def test_micrograd_more_ops() -> None:
    out, grads = ours(micrograd_more_ops, [-4.0, 2.0])
    out_t, grads_t = theirs(micrograd_more_ops, [-4.0, 2.0])
    assert abs(out - out_t) < 1e-6 and all(
        abs(g - t) < 1e-6 for g, t in zip(grads, grads_t, strict=True)
    )
    mg = [micrograd.engine.Value(-4.0), micrograd.engine.Value(2.0)]
    mg_g = micrograd_more_ops(*mg)
    mg_g.backward()
    assert close(out, mg_g.data) and all(close(g, m.grad) for g, m in zip(grads, mg, strict=True))


def test_a_second_backward_adds_the_same_gradients_again() -> None:
    # micrograd re-sends inner nodes' old gradients and gets 3x here; the sum is 2x.
    x = Value(0.5)
    h = (x * 3.0).tanh()
    y = h * h + x.exp()
    y.backward()
    first = (x.grad, h.grad, y.grad)
    y.backward()
    assert (x.grad, h.grad, y.grad) == tuple(2 * g for g in first)
    assert y.grad == 2.0
    x.grad = h.grad = y.grad = 0.0  # zeroed: the next pass gives the first gradients again
    y.backward()
    assert (x.grad, h.grad, y.grad) == first


@pytest.mark.slow  # heavy; `make test-all` runs it
def test_chain_of_a_million_nodes() -> None:
    x = Value(0.5)
    y = x
    for _ in range(500_000):
        y = y.exp().log()  # two nodes a round, value and gradient stay about 0.5 and 1
    y.backward()
    assert abs(y.data - 0.5) < 1e-6 and abs(x.grad - 1.0) < 1e-6
    del y  # a million-deep chain is freed by reference counting without a recursion error


def random_graph(rng: random.Random, size: int = 40) -> Value:
    """A random graph over a few leaves: sums, products, unary ops, powers, weighted sums
    and nodes made by hand, with shared nodes and repeated operands."""
    nodes = [Value(rng.uniform(-1, 1)) for _ in range(3)]
    for _ in range(size):
        a, b, c = rng.choice(nodes), rng.choice(nodes), rng.choice(nodes)
        kind = rng.randrange(6)
        if kind == 0:
            v = a + b
        elif kind == 1:
            v = a * b
        elif kind == 2:
            v = a.tanh() if rng.random() < 0.5 else a.relu()
        elif kind == 3:
            v = a**2 - 0.5 / (b * b + 1)
        elif kind == 4:
            v = weighted_sum(a, [b, a], [c, 2.0])
        else:
            v = Value(a.data + b.data + c.data, (a, b, c), "sum3", (1.0, 1.0, 1.0))
        nodes.append(v)
    return sum(nodes[-5:], nodes[0])


def test_backward_sweeps_autograds_topological_order() -> None:
    """The scalar engine walks the graph itself, marking nodes instead of keeping a set, in
    exactly the order of autograd's toposort (the one both engines' explanations number)."""
    from chainrule.autograd import toposort
    from chainrule.scalar.engine import _walk

    rng = random.Random(0)
    for _ in range(50):
        root = random_graph(rng)
        expected = toposort((root,), lambda v: v._prev)
        order, held = _walk(root)
        assert order == expected and held == []  # Values compare by identity
        assert _walk(root)[0] == expected  # and again, marked by an earlier walk


def test_on_step_tells_each_node_as_backward_sweeps_it() -> None:
    """backward(on_step) reports every node once, after all of its consumers, with the
    gradient it received and what it gave each parent; the gradients are bit for bit those
    of backward() without an observer."""
    from chainrule.autograd import toposort

    rng = random.Random(1)
    for _ in range(30):
        root = random_graph(rng)
        order = toposort((root,), lambda v: v._prev)
        root.backward()
        plain = [v.grad for v in order]
        for v in order:
            v.grad = 0.0
        told: list = []
        root.backward(on_step=lambda *step: told.append(step))  # noqa: B023 (called here)
        assert [v.grad for v in order] == plain
        assert [v for v, _, _ in told] == order[::-1]
        received = {id(v): 0.0 for v in order}
        received[id(root)] = 1.0
        for v, g, steps in told:
            assert g == received[id(v)] == v.grad  # a fresh graph: all of it from this pass
            assert [p for p, _, _ in steps] == list(v._prev)
            assert [d for _, d, _ in steps] == list(v._local)
            for p, d, given in steps:
                assert given == (g * d if g else 0.0)
                received[id(p)] += given


def test_on_step_with_a_zero_gradient_and_a_second_pass() -> None:
    x = Value(0.0)
    y = x.log().relu()  # relu'(0) = 0 stops the gradient before log's infinite derivative
    told: list = []
    y.backward(on_step=lambda v, g, steps: told.append((v._op, g, steps)))
    assert [(op, g) for op, g, _ in told] == [("ReLU", 1.0), ("log", 0.0), ("", 0.0)]
    assert told[1][2] == [(x, math.inf, 0.0)] and told[2][2] == [] and x.grad == 0.0
    a = Value(2.0)
    b = a * a
    b.backward()
    told.clear()
    b.backward(on_step=lambda v, g, steps: told.append((g, steps)))
    assert told == [(1.0, [(a, 2.0, 2.0), (a, 2.0, 2.0)]), (4.0, [])]  # this pass's gradients
    assert (a.grad, b.grad) == (8.0, 2.0)  # added to the first pass's


def test_explain_tells_what_backward_did() -> None:
    """explain reads its numbers off backward's on_step: where a dead ReLU stops the
    gradient before log's infinite derivative, the text shows no NaN either."""
    from chainrule.viz import explain

    x = Value(0.0)
    text = explain(x.log().relu() * 2.0)
    assert "    a = #4 log gets 2.0000 * 0.0000 = 0.0000\n" in text
    assert "    a = x0 gets 0.0000 * inf = 0.0000\n" in text
    assert "leaf x0 (data 0.0000): grad 0.0000\n" in text and "nan" not in text
    assert x.grad == 0.0


def test_gradients_are_deterministic() -> None:
    def grads() -> list[float]:
        random.seed(0)
        model = MLP(3, [8, 8, 1])
        loss = sum((model([0.1 * i, -0.2, 0.3 * i]) - i) ** 2 for i in range(10))
        loss.backward()
        return [p.grad for p in model.parameters()]

    assert grads() == grads()
    assert list(train_moons(3)) == list(train_moons(3))


# ---------------------------------------------------------------------------------------
# Memory: no node refers to itself, so a dropped graph goes with reference counting alone.


def test_a_dropped_graph_is_freed_without_the_collector() -> None:
    random.seed(1)
    model = MLP(2, [4, 1])
    with gc_off():
        x = [Value(0.5), Value(-1.5)]
        loss = (model(x) - 1.0) ** 2 + 0.1 * sum(p * p for p in model.parameters())
        loss.backward()
        inner = loss._prev[0]._prev[0]  # the model's output, under ** 2
        refs = [weakref.ref(v) for v in (loss, inner, inner._prev[1], *x)]
        del x, loss, inner
        assert all(r() is None for r in refs)
        assert any(p.grad != 0.0 for p in model.parameters())  # the parameters live on


def test_value_is_small() -> None:
    v = Value(1)
    assert not hasattr(v, "__dict__")
    assert set(Value.__slots__) >= {"data", "grad", "_prev", "_op"}


# ---------------------------------------------------------------------------------------
# Construction, numbers and mistakes.


def test_data_and_grad_are_floats() -> None:
    for x in (2, 2.0, np.float32(2.0), np.float64(2.0), np.int64(2), True):
        v = Value(x)
        assert type(v.data) is float and v.data == float(x) and type(v.grad) is float
    assert repr(Value(2)) == "Value(data=2.0, grad=0.0)"


def test_numpy_scalars_on_either_side() -> None:
    x = Value(3.0)
    for s in (np.float64(2.0), np.int64(2), np.float32(2.0)):
        left, right = s * x, x * s
        assert isinstance(left, Value) and left.data == right.data == 6.0
    y = np.int64(-1) * x + 1  # the moons demo's `1 + -yi * score`
    y.backward()
    assert y.data == -2.0 and x.grad == -1.0


def test_mistakes_raise() -> None:
    with pytest.raises(TypeError, match="Value: data must be a real number; got str"):
        Value("1.5")
    with pytest.raises(TypeError):
        Value(1.0) + "a"
    with pytest.raises(TypeError):
        Value(1.0) ** "a"
    with pytest.raises(ValueError, match="got 2 children and 1 derivatives"):
        Value(1.0, (Value(1.0), Value(2.0)), "+", (1.0,))
    with pytest.raises(ValueError, match="Neuron: expected 2 inputs; got 3"):
        Neuron(2)([1.0, 2.0, 3.0])


def test_a_node_made_by_hand_backpropagates() -> None:
    # micrograd's constructor, with the local derivatives that replace its closures.
    a, b, c = Value(2.0), Value(3.0), Value(4.0)
    s = Value(a.data + b.data + c.data, (a, b, c), "sum3", (1.0, 1.0, 1.0))
    (s * s).backward()
    assert (a.grad, b.grad, c.grad) == (18.0, 18.0, 18.0)


# ---------------------------------------------------------------------------------------
# micrograd's nn, and its moons demo.


def test_nn_matches_micrograd() -> None:
    def build(nn):
        random.seed(7)
        return nn.MLP(3, [4, 4, 1]), nn.Layer(2, 1), nn.Neuron(2, nonlin=False)

    ours_, theirs_ = build(chainrule.scalar.nn), build(micrograd.nn)
    for m, mg in zip(ours_, theirs_, strict=True):
        assert repr(m) == repr(mg)
        assert [p.data for p in m.parameters()] == [p.data for p in mg.parameters()]
    model, mg_model = ours_[0], theirs_[0]
    x = [0.3, -1.2, 2.0]
    out, mg_out = model(x), mg_model(x)
    assert isinstance(out, Value) and out.data == mg_out.data  # a one-neuron Layer: a Value
    (out * out).backward()
    (mg_out * mg_out).backward()
    assert all(
        close(p.grad, q.grad)
        for p, q in zip(model.parameters(), mg_model.parameters(), strict=True)
    )
    model.zero_grad()
    assert all(p.grad == 0.0 for p in model.parameters())
    assert Module().parameters() == [] and len(Layer(3, 2)([1.0, 2.0, 3.0])) == 2
    assert repr(MLP(2, [3, 1])) == (
        "MLP of [Layer of [ReLUNeuron(2), ReLUNeuron(2), ReLUNeuron(2)], "
        "Layer of [LinearNeuron(3)]]"
    )


@pytest.mark.parametrize("n", [1, 2, 5, 33])
def test_weighted_sum_is_micrograds_chain_bit_for_bit(n: int) -> None:
    """One node with the value and the gradients of micrograd's b + w0*x0 + w1*x1 + ...
    (2n nodes), exactly: the same products, added in the same order."""
    rng = random.Random(n)
    data = [rng.uniform(-2, 2) for _ in range(2 * n + 1)]
    up = rng.uniform(-2, 2)

    def build(V, fused):
        b, ws, xs = V(data[0]), [V(d) for d in data[1 : n + 1]], [V(d) for d in data[n + 1 :]]
        terms = (w * x for w, x in zip(ws, xs, strict=True))
        out = weighted_sum(b, ws, xs) if fused else sum(terms, b)
        (out * out * up).backward()
        return out.data, [v.grad for v in (b, *ws, *xs)], out

    fused = build(Value, True)
    assert fused[2]._op == "wx+b" and len(fused[2]._prev) == 2 * n + 1
    for chain in (build(Value, False), build(micrograd.engine.Value, False)):
        assert fused[:2] == chain[:2]
    t = [torch.tensor(d, dtype=torch.float64, requires_grad=True) for d in data]
    s = t[0] + sum(a * b for a, b in zip(t[1 : n + 1], t[n + 1 :], strict=True))
    (s * s * up).backward()
    assert all(close(g, x.grad.item()) for g, x in zip(fused[1], t, strict=True))


def test_weighted_sum_with_numbers_repeats_and_no_terms() -> None:
    b, w, x = Value(0.5), Value(-1.5), Value(2.0)
    out = weighted_sum(b, [w, w], [3, x])  # a number input, a weight used twice
    assert out.data == 0.5 + -1.5 * 3 + -1.5 * 2.0
    assert out._local == (1.0, 3.0, -1.5, 2.0, -1.5)
    out.backward()
    assert (b.grad, w.grad, x.grad) == (1.0, 5.0, -1.5)
    assert weighted_sum(b, [], []) is b  # as micrograd's sum([], b): no new node
    with pytest.raises(ValueError, match="weighted_sum: got 2 weights and 1 inputs"):
        weighted_sum(b, [w, w], [x])
    with pytest.raises(TypeError, match="Value: data must be a real number; got str"):
        weighted_sum(b, [w], ["a"])


def test_neuron_is_one_weighted_sum_node_then_relu() -> None:
    random.seed(3)
    n = Neuron(3)
    act = n([1.0, Value(-2.0), 0.5])
    assert act._op == "ReLU" and act._prev[0]._op == "wx+b"
    assert act._prev[0]._prev[1::2] == tuple(n.w) and act._prev[0]._prev[0] is n.b


def test_moons_demo_gives_micrograds_final_loss() -> None:
    # micrograd 0.1.0 running its demo.ipynb prints this loss at step 99 (before that
    # step's update); the tests of the benchmark show micrograd's own steps agree.
    loss, accuracy = demo_moons()
    assert math.isclose(loss, 0.010978370135492717, rel_tol=1e-9) and accuracy == 1.0


def test_moons_demo_first_steps_match_micrograd() -> None:
    mine = list(train_moons(2))
    mg = list(train_moons(2, value=micrograd.engine.Value, mlp=micrograd.nn.MLP, pause_gc=False))
    assert mine[0] == (0.8958441028683222, 0.5)
    assert all(
        close(a, b) and acc == acc_mg for (a, acc), (b, acc_mg) in zip(mine, mg, strict=True)
    )


def test_demo_main_prints_each_step_and_the_result(monkeypatch, capsys) -> None:
    monkeypatch.setattr(
        chainrule.tools.demo, "train_moons", lambda: iter([(0.5, 0.75), (0.25, 1.0)])
    )
    assert chainrule.tools.demo.main() == 0
    assert capsys.readouterr().out.splitlines() == [
        "step 0 loss 0.5, accuracy 75.0%",
        "step 1 loss 0.25, accuracy 100.0%",
        "final loss 0.25, accuracy 1.0",
    ]


def test_demo_without_scikit_learn_says_how_to_install_it(monkeypatch, capsys) -> None:
    for name in ("sklearn", "sklearn.datasets"):
        monkeypatch.setitem(sys.modules, name, None)  # importing it fails
    assert chainrule.tools.demo.main() == 1
    assert 'pip install "chainrule[datasets]"' in capsys.readouterr().err
    with pytest.raises(ImportError, match="chainrule\\[datasets\\]"):
        next(train_moons())
    with pytest.raises(ValueError, match="demo_moons: steps must be at least 1; got 0"):
        demo_moons(steps=0)
