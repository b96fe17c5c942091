"""``cr.grad`` and ``backward(inputs=...)`` walk only the part of the graph between the outputs
and the tensors asked for, as PyTorch's: what lies behind them is neither run nor freed, and
the hooks on an asked-for tensor shape what flows past it, not what ``grad`` returns for it
where its node runs. Every hook kind, on every kind of input, is compared with torch."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import chainrule as cr


def _attempt(f: Any) -> Any:
    try:
        out = f()
    except RuntimeError as e:
        return "refused: " + ("freed" if "second time" in str(e) else str(e))
    if isinstance(out, tuple):
        return [None if g is None else g.tolist() for g in out]
    return out


def graph_behind_a_non_leaf(lib: Any, make: str, then: str) -> list[Any]:
    """grad(y, x) with x made by an op, then something that needs the graph behind x."""
    a = lib.tensor(2.0, requires_grad=True)
    x = a * 3 if make == "mul" else a.clone()
    y = x**2 if make == "mul" else x * x * x
    first = _attempt(lambda: lib.autograd.grad(y, x))
    if then == "backward":
        second = _attempt(lambda: x.backward())
    elif then == "grad again":
        second = _attempt(lambda: lib.autograd.grad(y, x))
    else:  # a new graph on x
        second = _attempt(lambda: lib.autograd.grad((x * 5).sum(), a))
    return [first, second, None if a.grad is None else a.grad.item()]


@pytest.mark.parametrize("then", ["backward", "grad again", "grad from a new output"])
@pytest.mark.parametrize("make", ["mul", "clone"])
def test_grad_leaves_the_graph_behind_its_inputs(make: str, then: str) -> None:
    ours = graph_behind_a_non_leaf(cr, make, then)
    assert ours == graph_behind_a_non_leaf(torch, make, then)


def test_grad_of_a_non_leaf_then_backward_gives_torchs_numbers() -> None:
    a = cr.tensor(2.0, requires_grad=True)
    x = a * 3
    (g,) = cr.autograd.grad(x**2, x)
    x.backward()
    assert g.item() == 12.0 and a.grad.item() == 3.0


def test_backward_with_inputs_runs_their_nodes_but_nothing_behind() -> None:
    results = []
    for lib in (cr, torch):
        a = lib.tensor(2.0, requires_grad=True)
        b = a * 3
        x = b * 2
        (x**2).backward(inputs=[x])
        again_x = _attempt(lambda x=x: x.backward())  # x's own node ran, and was freed
        again_b = _attempt(lambda b=b: b.backward())  # behind it: never walked
        results.append((x.grad.item(), again_x, again_b, a.grad.item()))
    assert results[0] == results[1]


# -- hooks on what grad is asked for ------------------------------------------------------


def hooks_program(lib: Any, kind: str, where: str, api: str) -> tuple[Any, list[str]]:
    """y = (x * b)^2 summed with x = a * 3; grad (or backward(inputs=)) asks for ``where``'s
    tensors; a hook of ``kind`` on the first of them logs and scales what it sees."""
    log: list[str] = []
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([0.5, -1.0], requires_grad=True)
    x = a * 3
    y = ((x * b) ** 2).sum()
    asked = {"leaf": [a], "non-leaf": [x], "non-leaf and behind": [x, a], "both": [x, b]}[where]
    t = asked[0]
    if kind == "tensor hook":
        t.register_hook(lambda g: log.append(f"hook {g.tolist()}") or g * 7)
    elif kind == "retain_grad" and t.grad_fn is not None:
        t.retain_grad()
    elif kind == "node prehook" and t.grad_fn is not None:
        t.grad_fn.register_prehook(lambda go: log.append("prehook") or (go[0] * 7,))
    elif kind == "node hook" and t.grad_fn is not None:
        t.grad_fn.register_hook(lambda gi, go: log.append(f"hook {gi[0] is None}") or gi)
    elif kind == "post accumulate" and t.grad_fn is None:
        t.register_post_accumulate_grad_hook(lambda p: log.append(f"post {p.grad.tolist()}"))
    if api == "grad":
        got = _attempt(lambda: lib.autograd.grad(y, asked))
    else:
        got = _attempt(lambda: y.backward(inputs=asked))
    grads = [None if u.grad is None else u.grad.tolist() for u in (a, b, x)]
    return got, log + [str(grads)]


KINDS = ["tensor hook", "retain_grad", "node prehook", "node hook", "post accumulate"]


@pytest.mark.parametrize("api", ["grad", "backward(inputs=)"])
@pytest.mark.parametrize("where", ["leaf", "non-leaf", "non-leaf and behind", "both"])
@pytest.mark.parametrize("kind", KINDS)
def test_hooks_on_what_is_asked_for_act_as_torchs(kind: str, where: str, api: str) -> None:
    assert hooks_program(cr, kind, where, api) == hooks_program(torch, kind, where, api)


def test_every_hook_kind_is_in_the_table() -> None:
    # derived from the classes: a new register_*hook (or retain_grad) needs a KINDS row
    node = (cr.tensor(1.0, requires_grad=True) * 2).grad_fn
    names = {n for n in dir(cr.Tensor) if n.startswith("register_") and n.endswith("hook")}
    names |= {n for n in dir(type(node)) if n.startswith("register_") and n.endswith("hook")}
    table = {
        "register_hook": "tensor hook",  # (and the node's register_hook: "node hook")
        "register_prehook": "node prehook",
        "register_post_accumulate_grad_hook": "post accumulate",
    }
    assert names == set(table) and set(table.values()) <= set(KINDS)


def test_hooks_off_the_walk_do_not_run() -> None:
    results = []
    for lib in (cr, torch):
        log: list[str] = []
        a = lib.tensor(2.0, requires_grad=True)
        b = lib.tensor(3.0, requires_grad=True)
        b.register_hook(lambda g, log=log: log.append("b"))
        x = a * 3
        x.grad_fn.register_prehook(lambda go, log=log: log.append("x's node"))
        (g,) = lib.autograd.grad(x * b, x)
        results.append((g.item(), log))
    assert results[0] == results[1]
