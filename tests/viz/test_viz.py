"""draw_graph and explain: what they draw and say, and that explain leaves backward's gradients."""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from chainrule.autograd.primitive import Function
from chainrule.ops.elementwise import Relu
from chainrule.ops.reduce import CrossEntropy
from chainrule.scalar.engine import Value
from chainrule.viz import VALUE_RULES, draw_graph, explain

NODE = re.compile(r'^\t(\w+) \[label=("(?:[^"\\]|\\.)*"|\S+)', re.M)
EDGE = re.compile(r"^\t(\w+) -> (\w+)", re.M)


def parse(source: str) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """Node id -> label (quotes stripped), and edges as (tail label, head label)."""
    labels = {nid: lab.strip('"') for nid, lab in NODE.findall(source)}
    edges = [(labels[a], labels[b]) for a, b in EDGE.findall(source)]
    return labels, edges


def head(label: str) -> str:
    return label.split("\\n")[0]


def linear(seed: int = 0, retain: bool = False) -> tuple[cr.Tensor, cr.Tensor, cr.Tensor]:
    """sum(X @ W + b) with X (4, 3) data, W (3, 2) and b (2,) parameters."""
    cr.manual_seed(seed)
    X = cr.randn(4, 3)
    W = cr.randn(3, 2, requires_grad=True)
    b = cr.randn(2, requires_grad=True)
    return (X @ W + b).sum(), W, b


def neuron() -> tuple[Value, list[Value]]:
    x1, x2, w1, w2, b = Value(2.0), Value(0.0), Value(-3.0), Value(1.0), Value(6.5)
    return (x1 * w1 + x2 * w2 + b).tanh(), [x1, x2, w1, w2, b]


# ---------------------------------------------------------------------------------------
# draw_graph


def test_tensor_graph_nodes_and_edges() -> None:
    loss, W, b = linear()
    labels, edges = parse(draw_graph(loss, params={"weight": W, "bias": b}).source)
    assert sorted(labels.values()) == sorted(
        [
            "x0\\n(4, 3) float32",
            "weight\\n(3, 2) float32",
            "bias\\n(2,) float32",
            "MatMul\\n(4, 2) float32",
            "Add\\n(4, 2) float32",
            "Sum\\n() float32",
        ]
    )
    assert sorted((head(a), head(b)) for a, b in edges) == sorted(
        [("x0", "MatMul"), ("weight", "MatMul"), ("MatMul", "Add"), ("bias", "Add"), ("Add", "Sum")]
    )


def test_tensor_graph_grad_norms_after_backward_with_retain_graph() -> None:
    loss, W, b = linear()
    loss.backward(retain_graph=True)
    source = draw_graph(loss, params={"W": W, "b": b}).source
    assert f"W\\n(3, 2) float32\\ngrad norm {np.linalg.norm(W.grad.data):.4f}" in source
    assert f"b\\n(2,) float32\\ngrad norm {np.linalg.norm(b.grad.data):.4f}" in source
    assert "freed" not in source
    assert "grad norm" not in draw_graph(loss, show_grad=False).source


def test_tensor_graph_numbers_data_and_repeated_inputs() -> None:
    x = cr.tensor([1.0, -2.0], requires_grad=True)
    y = (x * x) ** 2
    labels, edges = parse(draw_graph(y, show_data=True).source)
    assert "x0\\n(2,) float32\\n[ 1., -2.]" in labels.values()
    assert [(head(a), head(b)) for a, b in edges].count(("x0", "Mul")) == 2  # x * x
    assert ("2", "Pow") in [(head(a), head(b)) for a, b in edges]


def test_leaf_names_from_a_module_or_parameters() -> None:
    loss, W, b = linear()

    class Named:
        def named_parameters(self) -> list[tuple[str, cr.Tensor]]:
            return [("0.weight", W), ("0.bias", b)]

    class Listed:
        def parameters(self) -> list[cr.Tensor]:
            return [W, b]

    named = {head(v) for v in parse(draw_graph(loss, params=Named()).source)[0].values()}
    assert {"x0", "0.weight", "0.bias"} <= named
    listed = {head(v) for v in parse(draw_graph(loss, params=Listed()).source)[0].values()}
    assert {"x0", "p0", "p1"} <= listed
    plain = {head(v) for v in parse(draw_graph(loss).source)[0].values()}
    assert {"x0", "x1", "x2"} <= plain
    with pytest.raises(TypeError, match="params: expected a Module"):
        draw_graph(loss, params=[W, b])


def test_value_graph_records_and_ops() -> None:
    o, (x1, x2, w1, w2, b) = neuron()
    o.backward()
    labels, edges = parse(draw_graph(o, params={"w1": w1}).source)
    g = 1 - o.data**2  # the gradient reaching the sum inside tanh
    assert f"{{ w1 | data -3.0000 | grad {2 * g:.4f} }}" in labels.values()
    assert f"{{ x0 | data 2.0000 | grad {-3 * g:.4f} }}" in labels.values()
    assert f"{{ data {o.data:.4f} | grad 1.0000 }}" in labels.values()
    assert (f"{{ w1 | data -3.0000 | grad {2 * g:.4f} }}", "*") in edges
    assert ("tanh", f"{{ data {o.data:.4f} | grad 1.0000 }}") in edges
    assert sorted(v for v in labels.values() if not v.startswith("{")) == [
        "*",
        "*",
        "+",
        "+",
        "tanh",
    ]
    no_grad = draw_graph(o, show_grad=False).source
    assert "{ x0 | data 2.0000 }" in no_grad and "grad" not in no_grad


def test_drawing_is_deterministic() -> None:
    first = draw_graph(linear()[0]).source
    assert draw_graph(linear()[0]).source == first  # a fresh, identical graph
    o = neuron()[0]
    assert draw_graph(o).source == draw_graph(o).source == draw_graph(neuron()[0]).source


def test_large_graphs_fold_beyond_max_nodes() -> None:
    x = cr.ones(3, requires_grad=True)
    y = x
    for _ in range(50):
        y = y.tanh()
    source = draw_graph(y, max_nodes=10).source
    labels, edges = parse(source)
    assert sum(head(v) == "Tanh" for v in labels.values()) == 10
    assert "41 more nodes folded (max_nodes=10)" in source
    assert [b for a, b in edges if a.startswith("41 more")] == ["Tanh\\n(3,) float32"]
    assert "folded" not in draw_graph(y, max_nodes=51).source
    with pytest.raises(ValueError, match="max_nodes must be at least 1; got 0"):
        draw_graph(y, max_nodes=0)


def test_freed_graph_is_drawn_as_far_as_it_goes() -> None:
    loss, W, b = linear()
    loss.backward()
    source = draw_graph(loss).source
    assert "freed by backward()" in source and "retain_graph=True" in source
    assert 'label="Sum\\n() float32" shape=ellipse style=dashed' in source
    assert "MatMul" not in source


def test_root_must_be_a_tensor_or_a_value() -> None:
    with pytest.raises(TypeError, match="root must be a Tensor or a Value; got float"):
        draw_graph(1.0)  # type: ignore[arg-type]


@pytest.mark.skipif(shutil.which("dot") is None, reason="the graphviz `dot` program is missing")
def test_renders_svg_and_png_with_dot() -> None:
    g = draw_graph(linear()[0])
    svg = g.pipe(format="svg").decode()
    assert "<svg" in svg and "MatMul" in svg
    assert g.pipe(format="png")[:8] == b"\x89PNG\r\n\x1a\n"


# ---------------------------------------------------------------------------------------
# explain


def test_explain_names_ops_shapes_rules_and_broadcasting() -> None:
    loss, W, b = linear()
    text = explain(loss, params={"W": W, "b": b})
    assert "#1 Sum -> (), incoming grad ()" in text
    assert "Add -> (4, 2), incoming grad (4, 2)" in text
    assert "rule: grad_a = grad @ b.T, grad_b = a.T @ grad" in text
    assert "b = W (3, 2) gets grad (3, 2) = a.T @ grad: (3, 4) @ (4, 2) -> (3, 2)" in text
    assert "\n      b: (2,) was broadcast to (4, 2); gradient summed over dim 0\n" in text
    assert "leaf W (3, 2): gradient (3, 2) added to its .grad" in text
    # Sweep order: each node after all of its consumers.
    assert text.index("Sum ->") < text.index("Add ->") < text.index("MatMul ->")


def test_explain_a_sequential_mlp_names_its_layers() -> None:
    """cross_entropy is one CrossEntropy node; explain gives each node's rule."""
    cr.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    text = explain(F.cross_entropy(model(cr.randn(5, 3)), cr.tensor([0, 1, 1, 0, 1])), params=model)
    assert f"#1 CrossEntropy -> (), incoming grad ()\n    rule: {CrossEntropy.rule}" in text
    assert "a = #2 Linear (5, 2) gets grad (5, 2)" in text
    assert f"#5 Relu -> (5, 4), incoming grad (5, 4)\n    rule: {Relu.rule}" in text
    assert "b = 0.weight (4, 3) gets grad (4, 3)" in text


def test_explain_broadcast_over_several_dims_and_matmul_first_input() -> None:
    a = cr.randn(2, 1, 4, requires_grad=True)
    b = cr.randn(3, 1, requires_grad=True)
    text = explain((a + b).sum())
    assert "a: (2, 1, 4) was broadcast to (2, 3, 4); gradient summed over dim 1" in text
    assert "b: (3, 1) was broadcast to (2, 3, 4); gradient summed over dims 0 and 2" in text
    x = cr.randn(4, 3, requires_grad=True)
    text = explain((x @ cr.randn(3, 2)).sum())
    assert "a = x0 (4, 3) gets grad (4, 3) = grad @ b.T: (4, 2) @ (2, 3) -> (4, 3)" in text


def grads_of(make, run) -> list[np.ndarray | None]:  # noqa: ANN001
    root, leaves = make()
    run(root)
    return [None if p.grad is None else p.grad.numpy().copy() for p in leaves]


def mixed() -> tuple[cr.Tensor, list[cr.Tensor]]:
    """Reuse (x*x), broadcasting, matmul, a reduction and a softmax, in float64."""
    rng = np.random.default_rng(3)
    x = cr.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    w = cr.tensor(rng.standard_normal((3, 5)), requires_grad=True)
    c = cr.tensor(rng.standard_normal((1, 5)), requires_grad=True)
    h = (x * x) @ w + c
    out = (h.log_softmax(-1)[:, 1:] * h[:, :4].tanh()).mean(1)  # (4,): a non-scalar root
    return out, [x, w, c]


def test_explain_leaves_exactly_the_gradients_of_backward() -> None:
    seed = cr.tensor(np.arange(4.0))
    expected = grads_of(mixed, lambda r: r.backward(seed))
    got = grads_of(mixed, lambda r: explain(r, seed))
    for e, g in zip(expected, got, strict=True):
        assert e is not None and g is not None and np.array_equal(e, g)
    # Accumulation over two calls, as backward does (retain_graph keeps the graph).
    twice = grads_of(mixed, lambda r: (explain(r, seed, retain_graph=True), explain(r, seed)))
    for e, g in zip(expected, twice, strict=True):
        np.testing.assert_allclose(g, 2 * e, rtol=1e-12)


def test_explain_frees_the_graph_like_backward_unless_retained() -> None:
    loss, W, b = linear()
    assert "saved values are now freed" in explain(loss)
    with pytest.raises(RuntimeError, match="second time"):
        explain(loss)
    loss, W, b = linear()
    assert "freed" not in explain(loss, retain_graph=True)
    assert "MatMul" in draw_graph(loss).source
    with pytest.raises(RuntimeError, match="explain: the tensor does not require grad"):
        explain(cr.ones(2).sum())


def test_explain_falls_back_to_the_docstring_for_unknown_ops() -> None:
    class Cube(Function):
        """out = a ** 3;  grad_a = 3 g a**2."""

        def forward(self, a):  # noqa: ANN001, ANN201
            return a**3

        def backward(self, grad, out):  # noqa: ANN001, ANN201
            return (grad * 3 * self.inputs[0] ** 2,)

    x = cr.tensor([1.0, 2.0], requires_grad=True)
    text = explain(Cube.apply(x).sum())
    assert (
        "#2 Cube -> (2,), incoming grad (2,)\n    rule: out = a ** 3;  grad_a = 3 g a**2." in text
    )
    assert x.grad.tolist() == [3.0, 12.0]


def test_explain_shows_the_ops_own_rule() -> None:
    x = cr.tensor([1.0, -2.0], requires_grad=True)
    assert f"rule: {type(x.relu().grad_fn).rule}" in explain(x.relu().sum())


def test_explain_a_value_graph() -> None:
    o, leaves = neuron()
    text = explain(o, params={"x1": leaves[0], "w1": leaves[2]})
    assert text.startswith(f"Backward pass from #1 tanh (data {o.data:.4f}), seeded with grad 1.")
    assert f"rule: {VALUE_RULES['tanh']}" in text and f"rule: {VALUE_RULES['*']}" in text
    g = 1 - o.data**2
    assert f"a = #2 + gets 1.0000 * {g:.4f} = {g:.4f}" in text
    assert f"a = x1 gets {g:.4f} * -3.0000 = {-3 * g:.4f}" in text
    assert f"leaf w1 (data -3.0000): grad {2 * g:.4f}" in text
    x = Value(3.0)
    assert "rule: d/da = 2 * a**(2-1)" in explain(x**2)
    with pytest.raises(ValueError, match="mode='forward' needs a Tensor; got a Value"):
        explain(x**2, mode="forward")  # told as text for tensors; the page shows a Value's
    assert x.grad == 6.0  # refused before anything ran backward again


def test_explain_value_leaves_the_gradients_of_backward() -> None:
    def make() -> tuple[Value, list[Value]]:
        a, b = Value(1.5), Value(-0.5)
        c = a * b + a**2
        d = (c.relu() + (b * 2).exp() - (a + 3).log() + c.sigmoid() ** b) / a
        return d, [a, b, c]

    expected = [v.grad for v in (lambda r: (r[0].backward(), r[1])[1])(make())]
    root, leaves = make()
    explain(root)
    assert [v.grad for v in leaves] == expected  # exact: the same arithmetic
    explain(root)  # and a second call accumulates, as backward() does
    root2, leaves2 = make()
    root2.backward()
    root2.backward()
    assert [v.grad for v in leaves] == [v.grad for v in leaves2]


def test_explain_names_the_inputs_of_every_arity() -> None:
    a = cr.tensor([1.0, -1.0], requires_grad=True)
    b = cr.tensor([2.0, 3.0], requires_grad=True)
    text = explain(cr.where(a > 0, a, b).sum())
    assert "rule: grad_x = grad where cond, grad_y = grad where not cond" in text
    assert "    x = x0 (2,) gets grad (2,)" in text and "    y = x1 (2,) gets grad (2,)" in text
    text = explain(cr.cat([a] * 9).sum())
    assert "    input 0 = x0 (2,) gets grad (2,)" in text and "    input 8 = x0 (2,)" in text
    assert a.grad.tolist() == [10.0, 9.0]  # once through where, nine times through cat


def test_value_fallback_rule_and_escaped_record_names() -> None:
    a = Value(3.0)
    double = Value(6.0, (a,), "double", (2.0,))  # a node made by hand, with its derivative
    assert "rule: the local derivatives it recorded\n    a = x0 gets 1.0000 * 2.0000" in explain(
        double
    )
    assert a.grad == 2.0
    assert "{ w\\|1 | data 3.0000 | grad 2.0000 }" in draw_graph(double, params={"w|1": a}).source


def test_explain_a_neuron_names_its_weights_and_inputs() -> None:
    """A micrograd Neuron's weighted sum is one node: explain names its parents b, w1, x1,
    w2, x2 and gives each its local derivative; a node made by hand with more than 26
    parents gets numbered names."""
    from chainrule.scalar import weighted_sum

    b, w1, w2 = Value(0.5), Value(2.0), Value(3.0)
    x1, x2 = Value(1.5), Value(0.25)
    names = {"bias": b, "w1": w1, "w2": w2, "in1": x1, "in2": x2}
    text = explain(weighted_sum(b, [w1, w2], [x1, x2]).relu(), params=names)
    assert f"rule: {VALUE_RULES['wx+b']}" in text
    assert "    b = bias gets 1.0000 * 1.0000 = 1.0000" in text
    assert "    w1 = w1 gets 1.0000 * 1.5000 = 1.5000" in text
    assert "    x2 = in2 gets 1.0000 * 3.0000 = 3.0000" in text
    assert (b.grad, w1.grad, w2.grad, x1.grad, x2.grad) == (1.0, 1.5, 0.25, 2.0, 3.0)
    many = [Value(float(i)) for i in range(30)]
    total = Value(sum(v.data for v in many), tuple(many), "sum30", (1.0,) * 30)
    text = explain(total)
    assert "    z = " in text and "    a27 = " in text and "    a30 = " in text
    assert "wx+b" in draw_graph(weighted_sum(b, [w1], [x1])).source
