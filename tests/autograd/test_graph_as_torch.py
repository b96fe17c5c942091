"""The recorded graph as PyTorch shows it, side by side with torch: grad_fn.name() (MulBackward0,
AddmmBackward0, ...), next_functions down to AccumulateGrad nodes with .variable, node hooks
(register_prehook, register_hook), metadata and the saved inputs, so that the beginner
tutorial's walk and learners' own graph printers give the same answers."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr


def walk(root: Any) -> list[str]:
    """Every node's name, depth first through next_functions, as a learner's printer walks."""
    seen, out, stack = set(), [], [root]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        out.append(node.name())
        stack.extend(fn for fn, _ in reversed(node.next_functions))
    return out


PROGRAMS = {  # (linear is one node here, where torch's addmm takes w.t(): see below)
    "mlp": lambda lib, x, w, b: (x @ w.transpose(0, 1) + b).relu().sum(),
    "product": lambda lib, x, w, b: (x * 2 + x.exp()).mean(),
    "matmul": lambda lib, x, w, b: (x @ w.transpose(0, 1)).tanh().sum(),
    "pow": lambda lib, x, w, b: (x**2).sum() + (b**b).sum(),
    "index": lambda lib, x, w, b: x[0].sum() + x[:, 1].sum(),
}


def _leaves(lib: Any) -> tuple[Any, Any, Any]:
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    w = lib.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    b = lib.tensor(rng.uniform(0.5, 1.5, 4), requires_grad=True)
    return x, w, b


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_the_walk_names_the_nodes_as_torch(name: str) -> None:
    walks = [walk(PROGRAMS[name](lib, *_leaves(lib)).grad_fn) for lib in (torch, cr)]
    assert walks[1] == walks[0]


def test_the_tutorials_walk_reaches_the_leaves() -> None:
    for lib in (torch, cr):
        x, w, b = _leaves(lib)
        loss = lib.nn.functional.linear(x, w, b).sum()
        first = loss.grad_fn.next_functions[0][0]  # AddmmBackward0
        assert first.name() == "AddmmBackward0"
        kinds = [fn.name() if fn is not None else None for fn, _ in first.next_functions]
        assert kinds[0] == "torch::autograd::AccumulateGrad"  # the bias, first in addmm
        variables = [fn.variable for fn, _ in first.next_functions if hasattr(fn, "variable")]
        assert any(v is b for v in variables) and any(v is x for v in variables)


def test_a_fused_loss_is_named_as_torchs_last_node() -> None:
    """cross_entropy is one node here (torch's is nll_loss over log_softmax): named as the
    node torch's loss ends in."""
    x, _, _ = _leaves(cr)
    assert cr.nn.functional.cross_entropy(x, cr.tensor([0, 2])).grad_fn.name() == "NllLossBackward0"


def test_a_leaf_has_one_accumulate_grad_node() -> None:
    x = cr.ones(2, requires_grad=True)
    a, b = (x * 2).grad_fn, (x + 1).grad_fn
    assert a.next_functions[0][0] is b.next_functions[0][0]
    assert a.next_functions[1] == (None, 0)  # the number 2, as torch shows it


def test_node_hooks_run_and_replace_as_torchs() -> None:
    got = []
    for lib in (torch, cr):
        seen: list[Any] = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        y.grad_fn.register_prehook(lambda go: (go[0] * 10,))
        y.grad_fn.register_hook(
            lambda gi, go, seen=seen: seen.append((gi[0].tolist(), go[0].tolist()))
        )
        y.sum().backward()
        got.append((x.grad.tolist(), seen))
    assert got[0] == got[1] == ([30.0, 30.0], [([30.0, 30.0], [10.0, 10.0])])


def test_a_removed_node_hook_no_longer_runs() -> None:
    x = cr.tensor([1.0], requires_grad=True)
    y = x * 3
    handle = y.grad_fn.register_prehook(lambda go: (go[0] * 10,))
    handle.remove()
    y.backward(cr.ones(1))
    assert x.grad.tolist() == [3.0]


def test_metadata_and_the_saved_inputs() -> None:
    for lib in (torch, cr):
        x, w, _ = _leaves(lib)
        y = x * w[:2, :]
        y.grad_fn.metadata["note"] = "kept"
        assert y.grad_fn.metadata == {"note": "kept"}
        np.testing.assert_array_equal(y.grad_fn._saved_self.detach().numpy(), x.detach().numpy())
        assert tuple(y.grad_fn._saved_other.shape) == (2, 3)


def test_the_repr_names_the_node_as_torch() -> None:
    x = cr.ones(2, requires_grad=True)
    assert repr(x * 2).endswith("grad_fn=<MulBackward0>)")


def _surface(fn: Any, lib: Any) -> list[Any]:
    """What a learner reads of a node and the nodes behind it: names, next_functions with
    their indices, metadata and every _saved_* (a tensor by its shape, else its value, or the
    refusal's kind)."""
    shown = []
    for node in _nodes(fn):
        saved = {}
        for attr in [a for a in dir(node) if a.startswith("_saved_")]:
            try:
                value = getattr(node, attr)
            except RuntimeError:
                value = "refused"
            saved[attr] = tuple(value.shape) if isinstance(value, lib.Tensor) else value
        nexts = [(None if f is None else type(f).__name__, i) for f, i in node.next_functions]
        shown.append((type(node).__name__, node.name(), nexts, dict(node.metadata), saved))
    return shown


def _nodes(fn: Any) -> list[Any]:
    seen, out, stack = set(), [], [fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        out.append(node)
        stack.extend(f for f, _ in reversed(node.next_functions))
    return out


def _program(lib: Any) -> Any:
    x, w, b = _leaves(lib)
    h = lib.nn.functional.linear(x, w, b).relu()  # addmm, with W through TBackward0
    y = (h.softmax(1)[:, 1:] ** 2).sum(0) + h.exp().mean((0, 1)) * 3 - x.transpose(0, 1)[0].sum()
    y.grad_fn.metadata["step"] = 1
    return y


@pytest.mark.parametrize("retain", [False, True])
def test_the_node_surface_is_torchs_and_stays_through_backward(retain: bool) -> None:
    """Names, next_functions (indices too), metadata and _saved_* equal torch's before
    backward, and after it: a saved tensor is refused once backward has freed the graph, the
    other saved values stay; with retain_graph all stay."""
    ys = {lib: _program(lib) for lib in (torch, cr)}
    before = {lib: _surface(y.grad_fn, lib) for lib, y in ys.items()}
    assert before[cr] == before[torch]
    for y in ys.values():
        y.sum().backward(retain_graph=retain)
    after = {lib: _surface(y.grad_fn, lib) for lib, y in ys.items()}
    assert after[cr] == after[torch]
    assert (after[cr] == before[cr]) is retain
    names = [n[0] for n in after[cr]]  # the same nodes, unchanged by backward
    assert names == [n[0] for n in before[cr]] and "TBackward0" in names


def test_a_saved_input_written_in_place_is_refused_naming_the_node() -> None:
    for lib in (torch, cr):
        a = lib.ones(3, requires_grad=True) * 1
        b = a * a
        a.mul_(2)
        with pytest.raises(RuntimeError, match="(?i)modified by an in-?place operation"):
            _ = b.grad_fn._saved_self
    ours = r"^MulBackward0: _saved_other: input 1, of shape \(3,\), was modified"
    with pytest.raises(RuntimeError, match=ours):
        _ = b.grad_fn._saved_other


def test_saved_values_as_torchs() -> None:
    """A number operand is a 0-d tensor; an input whose gradient no one wants is not saved;
    the result is the output's value, made by the node itself."""
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    assert y.grad_fn._saved_self is None and y.grad_fn._saved_other.shape == ()
    e = x.exp()
    r = e.grad_fn._saved_result
    assert r is not e and r.grad_fn is e.grad_fn and r.tolist() == e.tolist()
    assert (x**2).grad_fn._saved_exponent == 2
    with pytest.raises(AttributeError, match="'ExpBackward0' node has no attribute '_saved_self'"):
        _ = e.grad_fn._saved_self


def test_a_node_pickles_and_copies_as_its_named_type() -> None:
    fn = (cr.tensor([1.0, 2.0], requires_grad=True) * 3).grad_fn
    for again in (pickle.loads(pickle.dumps(fn)), copy.deepcopy(fn)):
        assert type(again) is type(fn) and again.inputs[1] == 3


def test_a_linear_layers_weight_passes_a_tbackward0_as_torchs() -> None:
    names = []
    for lib in (torch, cr):
        x, w, b = _leaves(lib)
        fn = lib.nn.functional.linear(x, w, b).grad_fn
        t = fn.next_functions[2][0]
        assert t is fn.next_functions[2][0] and t.next_functions[0][0].variable is w
        with pytest.raises(AttributeError):
            _ = t._saved_self
        names.append([(type(f).__name__, i) for f, i in fn.next_functions])
    assert names[0] == names[1] == [("AccumulateGrad", 0), ("AccumulateGrad", 0), ("TBackward0", 0)]


def test_a_number_first_reads_as_torchs_reflected_operator() -> None:
    """2 * x and 1 + x are PyTorch's x.mul(2) and x.add(1): the tensor's edge first, and the
    number saved as other, before and after backward."""
    shown = []
    for lib in (torch, cr):
        x = lib.ones(3, requires_grad=True)
        y = 2 * (1 + x)
        fn = y.grad_fn
        before = [(type(f).__name__ if f is not None else None, i) for f, i in fn.next_functions]
        other, self_ = fn._saved_other, fn._saved_self
        y.sum().backward()
        after = [(type(f).__name__ if f is not None else None, i) for f, i in fn.next_functions]
        shown.append((before, after, tuple(other.shape), self_))
    assert shown[0] == shown[1] == ([("AddBackward0", 0), (None, 0)],) * 2 + ((), None)
