"""walkthrough's forward mode: the page steps through the tangents pushed from the leaves to
the root, each node's tangent equal to forward_ad's and to torch.func.jvp's, and where both
passes are recorded a switch moves between them, in a browser too."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.autograd import forward_ad
from chainrule.scalar.engine import Value
from chainrule.tools.explain_forward import JVP_TEXT, push_forward
from tests.viz import test_walkthrough as pages

browser, read = pages.browser, pages.read  # the module's Chromium, and the page's data

OPS = ["Linear", "Tanh", "Linear", "Sub", "Pow", "Mean"]  # the MLP's ops, in forward order


def mlp(lib: Any, w0: Any, b0: Any, w1: Any, b1: Any, x: Any, y: Any) -> list[Any]:
    """A two-layer MLP's squared error, every op's output in order (the last the loss)."""
    h0 = lib.nn.functional.linear(x, w0, b0)
    h1 = h0.tanh()
    h2 = lib.nn.functional.linear(h1, w1, b1)
    h3 = h2 - y
    h4 = h3**2
    return [h0, h1, h2, h3, h4, h4.mean()]


def arrays() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    shapes = {"w0": (4, 3), "b0": (4,), "w1": (2, 4), "b1": (2,), "x": (2, 3), "y": (2, 2)}
    return {k: rng.standard_normal(s) for k, s in shapes.items()}


def params(a: dict[str, np.ndarray]) -> dict[str, cr.Tensor]:
    return {k: cr.tensor(v, requires_grad=k[0] in "wb") for k, v in a.items()}


def tangents_of(a: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The direction: a random one for w0, every element 1 for b1 (given as a number)."""
    return {"w0": np.random.default_rng(1).standard_normal(a["w0"].shape), "b1": np.ones(2)}


def expected(a: dict[str, np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Every op's tangent by chainrule's forward_ad, and by torch.func.jvp."""
    t = tangents_of(a)
    p = params(a)
    with forward_ad.dual_level():
        duals = {k: forward_ad.make_dual(p[k], cr.tensor(t[k])) if k in t else p[k] for k in p}
        ours = [forward_ad.unpack_dual(h).tangent.detach().numpy() for h in mlp(cr, **duals)]
    names = list(t)
    rest = {k: torch.tensor(v) for k, v in a.items() if k not in t}
    _, theirs = torch.func.jvp(
        lambda *xs: tuple(mlp(torch, **dict(zip(names, xs, strict=True)), **rest)),
        tuple(torch.tensor(a[k]) for k in names),
        tuple(torch.tensor(t[k]) for k in names),
    )
    return ours, [h.numpy() for h in theirs]


def numbers(text: str) -> np.ndarray:
    return np.array([float(v) for v in re.findall(r"-?\d[\d.e+-]*", text)])


def forward_page(tmp_path: Path, mode: str) -> tuple[str, dict[str, Any], dict[str, cr.Tensor]]:
    a = arrays()
    p = params(a)
    loss = mlp(cr, **p)[-1]
    given = {p["w0"]: cr.tensor(tangents_of(a)["w0"]), p["b1"]: 1}
    path = cr.viz.walkthrough(
        loss, str(tmp_path / f"{mode}.html"), params=p, mode=mode, tangents=given
    )
    _, data, _ = read(path)
    return path, data, p


def test_each_nodes_tangent_is_forward_ads_and_torchs() -> None:
    a = arrays()
    p = params(a)
    outs = mlp(cr, **p)
    order = cr.viz._walk(outs[-1], "walkthrough")[0]
    t = tangents_of(a)
    steps = push_forward({p["w0"]: cr.tensor(t["w0"]), p["b1"]: 1.0}, order)
    assert [s.node for s in steps if s.node.grad_fn is None] == [p["w0"], p["b1"]]
    ops = [s for s in steps if s.node.grad_fn is not None]
    assert [s.node.grad_fn.op for s in ops] == OPS
    assert all(s.node is h for s, h in zip(ops, outs, strict=True))
    ours, theirs = expected(a)
    for s, want, torch_want in zip(ops, ours, theirs, strict=True):
        np.testing.assert_allclose(s.tangent.numpy(), want, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(s.tangent.numpy(), torch_want, rtol=1e-10, atol=1e-12)
        total = sum(part.numpy() for _, _, part in s.parts)
        np.testing.assert_allclose(total, want, rtol=1e-10, atol=1e-12)  # the parts add up
    second = next(s for s in ops if len(s.parts) == 2)  # the second Linear: h1's and b1's parts
    assert [i for i, _, _ in second.parts] == [0, 2]


def test_the_page_shows_forward_ads_tangents_and_leaves_grads_alone(tmp_path: Path) -> None:
    _, data, p = forward_page(tmp_path, "forward")
    assert data["steps"] == [] and data["leaves"] == []  # nothing ran backward
    assert all(t.grad is None for t in p.values())
    nodes, strings = data["nodes"], data["strings"]
    steps = data["forward"]
    seeded = [nodes[st[0]]["label"] for st in steps if not st[3]]
    assert seeded == ["w0", "b1"]
    ops = [st for st in steps if st[3]]
    assert [nodes[st[0]]["label"] for st in ops] == OPS
    ours, theirs = expected(arrays())
    for st, want, torch_want in zip(ops, ours, theirs, strict=True):
        shown = numbers(strings[st[2]].split(" (")[0])  # the full text: 4 to 6 digits
        np.testing.assert_allclose(shown, want.reshape(-1), rtol=2e-3, atol=1e-5)
        np.testing.assert_allclose(shown, torch_want.reshape(-1), rtol=2e-3, atol=1e-5)
    rules = [strings[st[4]] for st in ops]
    assert rules[:2] == [JVP_TEXT["Linear"], JVP_TEXT["Tanh"]]
    assert rules[4].startswith("t_out = J t, from the backward rule (grad_a = grad * b")  # Pow
    takes = [[strings[g[1]] for g in st[3]] for st in ops]
    assert takes[2] == ["a", "c"]  # the second Linear: its input and its bias carry tangents


def test_both_passes_on_one_page_agree(tmp_path: Path) -> None:
    _, data, p = forward_page(tmp_path, "both")
    assert len(data["steps"]) == 10  # backward swept the 4 parameters and the 6 ops
    grads = pages.leaf_grads(data)
    a = arrays()
    twin = params(a)
    mlp(cr, **twin)[-1].backward()
    for k in ("w0", "b0", "w1", "b1"):
        np.testing.assert_array_equal(np.array(grads[k]), twin[k].grad.numpy())
        np.testing.assert_array_equal(p[k].grad.numpy(), twin[k].grad.numpy())
    root = float(data["strings"][data["forward"][-1][2]].split()[0])
    dot = (twin["w0"].grad.numpy() * tangents_of(a)["w0"]).sum() + twin["b1"].grad.numpy().sum()
    assert root == pytest.approx(dot, rel=1e-5)  # J t = <grad, t>: the two modes agree


def test_a_view_op_says_its_tangent_is_the_same_view() -> None:
    x = cr.randn(2, 3, requires_grad=True)
    steps = push_forward({x: 1.0}, cr.viz._walk(x.t().sum(), "walkthrough")[0])
    from chainrule.tools.explain_forward import jvp_rule

    fn = steps[1].node.grad_fn
    assert jvp_rule(fn, cr.viz.rule).startswith("t_out = the same view of t_a")


def test_the_jvp_formulas_are_forward_ads_rules() -> None:
    assert set(JVP_TEXT) == set(forward_ad.JVP_RULES)


def test_refusals(tmp_path: Path) -> None:
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    path = str(tmp_path / "p.html")
    with pytest.raises(ValueError, match="walkthrough: mode must be 'backward', 'forward' or"):
        cr.viz.walkthrough(y, path, mode="sideways")
    with pytest.raises(ValueError, match="walkthrough: forward mode pushes tangents from leaves"):
        cr.viz.walkthrough(y, path, mode="forward")
    with pytest.raises(ValueError, match=r"walkthrough: a tangent's shape .* \(3,\) and \(2,\)"):
        cr.viz.walkthrough(y, path, mode="both", tangents={x: cr.ones(3)})
    with pytest.raises(ValueError, match="walkthrough: tangents are given at the graph's leaves"):
        cr.viz.walkthrough(y, path, mode="forward", tangents={x * 2: 1})
    assert x.grad is None  # refused before anything ran backward
    a = Value(2.0)
    with pytest.raises(ValueError, match="walkthrough: tangents are given at the graph's leaves"):
        cr.viz.walkthrough((a * 3.0) * 2.0, path, mode="forward", tangents={a * 3.0: 1.0})


def test_a_scalar_mlp_steps_through_forward_mode_too(tmp_path: Path) -> None:
    root, model = pages.scalar_mlp()
    p = model.parameters()
    path = cr.viz.walkthrough(
        root,
        str(tmp_path / "mlp.html"),
        params=model,
        mode="both",
        tangents={p[0]: 1.0, p[5]: -2.0},
    )
    _, data, _ = read(path)
    strings, steps = data["strings"], data["forward"]
    assert [data["nodes"][st[0]]["label"] for st in steps[:1]] == ["p0"]
    root_tangent = float(strings[steps[-1][2]])
    assert root_tangent == pytest.approx(p[0].grad - 2.0 * p[5].grad, rel=1e-5)  # J t = <grad, t>
    first = next(st for st in steps if st[3])
    assert strings[first[4]].startswith("t_out = the sum of d/da * t_a over the inputs a (")
    assert re.fullmatch(r"d/d\w+ \* t_\w+ = \S+ \* 1 = \S+", strings[first[3][0][5]])


# -- in a browser ---------------------------------------------------------------------------


def test_browser_switches_to_forward_mode_and_shows_each_tangent(
    browser: Any, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    path, data, _ = forward_page(tmp_path, "both")
    strings, steps = data["strings"], data["forward"]
    browser.get(Path(path).as_uri())
    counter = browser.find_element(By.ID, "counter")
    assert counter.text == f"step 0 / {len(data['steps'])}"  # it opens on the backward pass
    browser.find_element(By.CSS_SELECTOR, '#modes button[data-mode="forward"]').click()
    assert browser.find_element(By.ID, "title").text == "The forward-mode pass, step by step"
    panel = browser.find_element(By.ID, "panel")
    assert "Both modes apply the chain rule on this one graph" in panel.text
    assert not browser.find_element(By.ID, "leaves").is_displayed()
    ours, _ = expected(arrays())
    ops = iter(ours)
    for k, st in enumerate(steps, 1):
        browser.find_element(By.ID, "next").click()
        assert counter.text == f"step {k} / {len(steps)}"
        lit = browser.find_element(By.CSS_SELECTOR, "section.view:not([hidden]) .item.lit")
        assert lit.get_attribute("data-rep") == f"n{st[0]}"
        assert lit.find_element(By.CSS_SELECTOR, "text.g").text == f"tangent {strings[st[1]]}"
        text = panel.text
        assert f"tangent: {strings[st[2]]}" in text
        if st[3]:  # an op: its jvp rule and what each input's tangent contributes
            assert f"jvp rule: {strings[st[4]]}" in text
            assert text.count("its part of the tangent") == len(st[3])
            shown = numbers(strings[st[2]].split(" (")[0])
            np.testing.assert_allclose(shown, next(ops).reshape(-1), rtol=2e-3, atol=1e-5)
        else:
            assert "its tangent is the seed" in text
    assert "The pass is done" in panel.text and "torch.func.jvp" in panel.text
    browser.find_element(By.CSS_SELECTOR, '#modes button[data-mode="backward"]').click()
    assert counter.text == f"step 0 / {len(data['steps'])}"
    assert browser.find_element(By.ID, "leaves").is_displayed()
    assert browser.get_log("browser") == []


@pytest.mark.slow
def test_browser_runs_forward_mode_whatever_the_names(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    cr.manual_seed(0)
    xs = {name: cr.randn(3, requires_grad=True) for name in pages.HOSTILE}
    loss = cr.stack([(x * x).sum() for x in xs.values()]).sum()
    given = {x: 1 for x in xs.values()}
    path = cr.viz.walkthrough(loss, str(tmp_path / "names.html"), params=xs, mode="forward",
                              tangents=given)  # fmt: skip
    _, data, _ = read(path)
    browser.get(Path(path).as_uri())
    assert browser.find_element(By.ID, "modes").text == ""  # one pass: no switch
    listed = browser.find_element(By.ID, "panel").get_attribute("textContent")
    assert all(name in listed for name in pages.HOSTILE)  # step 0 lists the nodes by name
    seen = []
    for _ in data["forward"]:
        browser.find_element(By.ID, "next").click()
        seen.append(browser.find_element(By.CSS_SELECTOR, "#panel h2").text)
    assert seen[0] == f"Step 1: #1 {pages.HOSTILE[0]}"  # the first leaf, seeded
    root = float(data["strings"][data["forward"][-1][2]].split()[0])
    assert root == pytest.approx(float(sum(2 * x.sum() for x in xs.values())), rel=1e-5)
    assert browser.get_log("browser") == []
