"""walkthrough: the page it writes holds the backward pass the engine ran (its order, what
each node handed on, the leaves' gradients), stands alone, and steps through in a browser."""

from __future__ import annotations

import json
import random
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from chainrule.autograd import engine
from chainrule.scalar.engine import Value
from chainrule.scalar.nn import MLP
from chainrule.tools import cli
from chainrule.tools.recipes import gpt

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")


def broadcast_graph() -> tuple[cr.Tensor, dict[str, cr.Tensor]]:
    """((a + b) * a).sum() with a (3, 4) and b (4,): b is broadcast, a has two consumers."""
    cr.manual_seed(0)
    a = cr.randn(3, 4, requires_grad=True)
    b = cr.randn(4, requires_grad=True)
    return ((a + b) * a).sum(), {"a": a, "b": b}


def scalar_mlp() -> tuple[Value, MLP]:
    """micrograd's MLP, two hidden layers of 4, on one input, with a squared error."""
    random.seed(0)
    model = MLP(1, [4, 4, 1])
    return (model([Value(0.5)]) - 0.25) ** 2, model


class Tags(HTMLParser):
    """Every start tag with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def read(path: str) -> tuple[str, dict[str, Any], list[tuple[str, dict[str, str | None]]]]:
    """The page's text, its data (decoded: see `decode`) and its start tags."""
    text = Path(path).read_text(encoding="utf-8")
    found = re.search(r'<script id="data" type="application/json">(.*?)</script>', text, re.S)
    assert found is not None
    tags = Tags()
    tags.feed(text)
    return text, decode(json.loads(found.group(1))), tags.tags


def decode(data: dict[str, Any]) -> dict[str, Any]:
    """The page's data with its texts looked up and its compact rows as named fields (as
    tools/walkthrough.py's docstring lays them out); boxes keep their names in "names"."""
    s = data["strings"]
    keys = [s[b[0]] for b in data["boxes"]]

    def path(k: int) -> list[str]:
        return [*path(data["boxes"][k][2]), keys[k]] if k >= 0 else []

    nodes = [
        {"label": n["label"], "kind": n.get("kind", "op"), "num": n.get("num"),
         **{f: s[n[f]] if f in n else "" for f in ("shape", "value", "rule", "module")},
         "inputs": n.get("inputs", []), "path": path(n.get("box", -1))}
        for n in data["nodes"]
    ]  # fmt: skip
    steps = []
    for st in data["steps"]:
        gives = []
        for g in st[3]:
            x = g[6] if len(g) > 6 else {}
            give = {"to": g[0], "role": s[g[1]], "raw": [s[g[2]], s[g[3]]], "part": g[4]}
            give.update({"of": g[5], **{k: v for k, v in x.items() if k in ("fitted", "dims")}})
            for k in ("given", "total"):
                if k in x:
                    give[k] = [s[x[k][0]], s[x[k][1]]]
            give.setdefault("total", give.get("given", give["raw"]))
            gives.append(give)
        step = {"node": st[0], "grad": [s[st[1]], s[st[2]]], "gives": gives}
        if len(st) > 4:
            step["final"] = [s[st[4]], s[st[5]]]
        steps.append(step)
    names = {keys[k]: s[b[1]] for k, b in enumerate(data["boxes"])}
    return {**data, "nodes": nodes, "steps": steps, "names": names}


def leaf_grads(data: dict[str, Any]) -> dict[str, Any]:
    """Each leaf's final .grad as the page keeps it, by name (the table's rows are built from
    these, data-leaf and data-grad on each)."""
    return {leaf["name"]: leaf["grad"] for leaf in data["leaves"]}


# -- the file ------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [broadcast_graph, scalar_mlp])
def test_page_is_one_file_that_asks_for_nothing_outside(tmp_path: Path, make: Any) -> None:
    root, params = make()
    path = str(tmp_path / "backward.html")
    assert cr.viz.walkthrough(root, path, params=params) == path
    text, _, tags = read(path)
    outside = [t for t, a in tags if t in ("link", "img", "iframe") or t == "script" and "src" in a]
    assert outside == []
    links = [a[k] for _, a in tags for k in ("src", "href") if a.get(k)]
    assert all(link == "#" for link in links), links
    assert re.search(r"https?://|//cdn|@import", text) is None
    assert "<svg" in text and "<style>" in text


def test_steps_are_the_engines_order_as_its_observer_sees_it(tmp_path: Path) -> None:
    root, params = broadcast_graph()
    names = {id(t): n for n, t in params.items()}
    cr.viz.walkthrough(root, str(tmp_path / "p.html"), params=params, retain_graph=True)
    _, data, _ = read(str(tmp_path / "p.html"))

    class Order(engine.Observer):
        def __init__(self) -> None:
            self.seen: list[tuple[str, str]] = []

        def node(self, t: cr.Tensor, grad: cr.Tensor) -> None:
            label = names[id(t)] if t.grad_fn is None else t.grad_fn.op
            self.seen.append((label, f"{tuple(t.shape)} {t.dtype.name}"))  # as labels say it

    order = Order()
    engine.backward(root, retain_graph=True, observer=order)
    nodes = data["nodes"]
    page = [(nodes[s["node"]]["label"], nodes[s["node"]]["shape"]) for s in data["steps"]]
    shapes = {"Sum": "()", "Mul": "(3, 4)", "Add": "(3, 4)", "b": "(4,)", "a": "(3, 4)"}
    expected = [(label, f"{shape} float32") for label, shape in shapes.items()]
    assert page == order.seen == expected
    assert [nodes[s["node"]]["num"] for s in data["steps"]] == [1, 2, 3, 4, 5]  # step 0's numbers


def test_scalar_steps_are_value_backwards_order(tmp_path: Path) -> None:
    root, model = scalar_mlp()
    cr.viz.walkthrough(root, str(tmp_path / "p.html"), params=model)
    _, data, _ = read(str(tmp_path / "p.html"))
    seen: list[tuple[str, str]] = []
    root.backward(on_step=lambda v, g, steps: seen.append((v._op, f"data {v.data:.4g}")))
    nodes = data["nodes"]
    page = [(nodes[s["node"]], nodes[s["node"]]["value"]) for s in data["steps"]]
    assert [(n["label"] if n["kind"] == "op" else "", v) for n, v in page] == seen
    assert len(seen) == len(data["nodes"]) > 40


def test_leaf_gradients_in_the_page_are_the_engines(tmp_path: Path) -> None:
    root, params = broadcast_graph()
    cr.viz.walkthrough(root, str(tmp_path / "p.html"), params=params)
    _, data, _ = read(str(tmp_path / "p.html"))
    grads = leaf_grads(data)
    assert sorted(grads) == ["a", "b"]
    for name, t in params.items():
        assert np.array_equal(np.array(grads[name]), t.grad.numpy())  # float32 exactly in JSON
    twin, twin_params = broadcast_graph()
    twin.backward()  # walkthrough leaves what backward would
    for name, t in twin_params.items():
        assert np.array_equal(params[name].grad.numpy(), t.grad.numpy())
    s_root, model = scalar_mlp()
    cr.viz.walkthrough(s_root, str(tmp_path / "s.html"), params=model)
    _, data, _ = read(str(tmp_path / "s.html"))
    grads = leaf_grads(data)
    assert [grads[f"p{i}"] for i in range(len(model.parameters()))] == [
        p.grad for p in model.parameters()
    ]


def test_broadcast_and_summed_contributions_are_recorded(tmp_path: Path) -> None:
    root, params = broadcast_graph()
    cr.viz.walkthrough(root, str(tmp_path / "p.html"), params=params)
    _, data, _ = read(str(tmp_path / "p.html"))
    nodes, steps = data["nodes"], data["steps"]
    add = next(s for s in steps if nodes[s["node"]]["label"] == "Add")
    to_b = next(g for g in add["gives"] if nodes[g["to"]]["label"] == "b")
    assert (to_b["fitted"], to_b["dims"]) == (["(3, 4)", "(4,)"], [0])
    assert nodes[add["node"]]["rule"] == "grad_a = grad, grad_b = grad"
    to_a = [g for s in steps for g in s["gives"] if nodes[g["to"]]["label"] == "a"]
    assert [(g["part"], g["of"]) for g in to_a] == [(1, 2), (2, 2)]
    leaf_a = next(leaf for leaf in data["leaves"] if leaf["name"] == "a")
    assert to_a[-1]["total"][1] == leaf_a["text"]  # the sum, filled in, is a's .grad


def test_a_modules_nodes_fold_into_boxes_and_a_small_gpt_page_stays_small(tmp_path: Path) -> None:
    cr.manual_seed(0)
    config = gpt.GPTConfig(vocab_size=20, block_size=8, n_layer=2, n_head=2, n_embd=16)
    model = gpt.GPT(config)
    idx, y = cr.randint(0, 20, (4, 8)), cr.randint(0, 20, (4, 8))
    loss = cr.nn.functional.cross_entropy(model(idx).view(-1, 20), y.view(-1))
    path = tmp_path / "gpt.html"
    cr.viz.walkthrough(loss, str(path), params=model)
    assert path.stat().st_size < 5_000_000
    _, data, tags = read(str(path))
    assert {"h", "h.0", "h.0.attn", "h.0.mlp", "h.1.attn.c_attn"} <= set(data["views"])
    ops = [n for n in data["nodes"] if n["kind"] == "op"]
    sdpa = [n for n in ops if "Attention" in n["label"]]
    assert [n["path"] for n in sdpa] == [["h", "h.0", "h.0.attn"], ["h", "h.1", "h.1.attn"]]
    sections = [a["data-view"] for _, a in tags if "data-view" in a and "class" in a]
    assert sections == data["views"] and len(data["layouts"]) == len(sections)
    assert data["names"]["h.0.attn"] == "CausalSelfAttention (h.0.attn)"
    assert len(leaf_grads(data)) == len(list(model.parameters()))


def test_a_tensor_that_needs_no_grad_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="walkthrough: the tensor does not require grad"):
        cr.viz.walkthrough(cr.ones(3).sum(), str(tmp_path / "p.html"))


def test_command_line_writes_the_page(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "backward.html"
    assert cli.main(["graph", "regression", "--html", str(path)]) == 0
    assert "written to" in capsys.readouterr().out
    _, data, _ = read(str(path))
    assert len(data["steps"]) > 3 and leaf_grads(data)
    assert cli.main(["graph", "regression"]) == 2
    assert "give --out FILE (a drawing) or --html FILE" in capsys.readouterr().err


# -- in a browser ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser(tmp_path_factory: Any) -> Any:
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.skip("needs Chromium and its driver: apt-get install chromium chromium-driver")
    webdriver = pytest.importorskip("selenium.webdriver")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless", "--no-sandbox", "--disable-gpu",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                 "--window-size=1200,760",
                 f"--user-data-dir={tmp_path_factory.mktemp('profile')}"):  # fmt: skip
        options.add_argument(flag)
    service = webdriver.ChromeService(executable_path=str(CHROMEDRIVER))
    driver = webdriver.Chrome(options=options, service=service)
    yield driver
    driver.quit()


def step_through(driver: Any, path: str) -> dict[str, Any]:
    """Open the page, click next through every step checking the counter and the lit node,
    and return the leaf gradients the page shows at the end."""
    from selenium.webdriver.common.by import By

    _, data, _ = read(path)
    driver.get(Path(path).as_uri())
    total = len(data["steps"])
    counter = driver.find_element(By.ID, "counter")
    assert counter.text == f"step 0 / {total}"
    lit_before = None
    for k in range(1, total + 1):
        driver.find_element(By.ID, "next").click()
        assert counter.text == f"step {k} / {total}"
        lit = driver.find_element(By.CSS_SELECTOR, "section.view:not([hidden]) .item.lit")
        assert lit.get_attribute("data-rep") == f"n{data['steps'][k - 1]['node']}"
        assert lit.get_attribute("data-rep") != lit_before
        lit_before = lit.get_attribute("data-rep")
    driver.find_element(By.ID, "next").click()  # past the end: stays
    assert counter.text == f"step {total} / {total}"
    assert driver.get_log("browser") == []  # no script error
    rows = driver.find_elements(By.CSS_SELECTOR, "#leaves tr[data-leaf]")
    assert rows and all(r.find_element(By.CLASS_NAME, "final").text != "\u2014" for r in rows)
    return {r.get_attribute("data-leaf"): json.loads(r.get_attribute("data-grad")) for r in rows}


@pytest.mark.slow
def test_browser_steps_through_a_scalar_mlp(browser: Any, tmp_path: Path) -> None:
    root, model = scalar_mlp()
    path = cr.viz.walkthrough(root, str(tmp_path / "mlp.html"), params=model)
    shown = step_through(browser, path)
    params = model.parameters()
    assert len(shown) == len(params) + 2  # and the input and the target's constant
    for i, p in enumerate(params):
        assert shown[f"p{i}"] == pytest.approx(p.grad, rel=1e-6, abs=1e-12)


def test_browser_steps_through_a_broadcast_and_keys_move_it(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    root, params = broadcast_graph()
    path = cr.viz.walkthrough(root, str(tmp_path / "t.html"), params=params)
    shown = step_through(browser, path)
    for name, t in params.items():
        np.testing.assert_allclose(np.array(shown[name]), t.grad.numpy(), rtol=1e-6)
    body = browser.find_element(By.TAG_NAME, "body")
    counter = browser.find_element(By.ID, "counter")
    body.send_keys(Keys.ARROW_LEFT, Keys.ARROW_LEFT)
    assert counter.text == "step 3 / 5"
    assert "summed over dim 0" in browser.find_element(By.ID, "panel").text  # the Add: b's sum
    browser.find_element(By.ID, "prev").click()
    assert counter.text == "step 2 / 5"
    play = browser.find_element(By.ID, "play")
    play.click()  # plays on from step 2, a step every 0.9 s, until paused
    WebDriverWait(browser, 10).until(lambda _: counter.text != "step 2 / 5")
    play.click()
    assert play.text == "play"
    browser.execute_script(
        "const s = document.getElementById('slider'); s.value = 1;"
        "s.dispatchEvent(new Event('input'));"
    )
    assert counter.text == "step 1 / 5"
    body.send_keys(Keys.HOME)
    assert counter.text == "step 0 / 5"
    assert "Step 0: the order" in browser.find_element(By.ID, "panel").text
    _, data, _ = read(path)
    a = next(i for i, n in enumerate(data["nodes"]) if n["label"] == "a")
    a_grad = browser.find_element(By.CSS_SELECTOR, f'.item[data-rep="n{a}"] text.g')
    seen = []
    for _ in range(3):  # Sum, then Mul hands a its first part, then Add its second
        body.send_keys(Keys.ARROW_RIGHT)
        seen.append(a_grad.text)
    assert seen[0] == "" and seen[1].endswith("(1 of 2)") and seen[2].endswith("(2 of 2)")


def test_browser_shows_each_leaf_grad_and_broadcast_at_the_end(
    browser: Any, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    cr.manual_seed(0)
    w, b = cr.randn(3, 3, requires_grad=True), cr.randn(3, requires_grad=True)
    loss = (cr.randn(2, 3) @ w + b).tanh().sum()  # b broadcast over a batch of 2
    path = cr.viz.walkthrough(loss, str(tmp_path / "bias.html"), params={"w": w, "b": b})
    _, data, _ = read(path)
    browser.get(Path(path).as_uri())
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.END)
    panel = browser.find_element(By.ID, "panel").text
    leaf_b = next(leaf for leaf in data["leaves"] if leaf["name"] == "b")
    assert "The pass is done" in panel
    assert f"b (3,) float32: {leaf_b['text']}" in panel
    add = next(s for s in data["steps"] if any("fitted" in g for g in s["gives"]))
    k = data["steps"].index(add) + 1
    assert f"at step {k} (#{k} " in panel
    assert "broadcast: the rule's gradient (2, 3) summed over dim 0 to the input's (3,)" in panel
    assert browser.get_log("browser") == []


def test_browser_opens_a_modules_box(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    cr.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    loss = (model(cr.randn(5, 3)) ** 2).mean()
    path = cr.viz.walkthrough(loss, str(tmp_path / "seq.html"), params=model)
    browser.get(Path(path).as_uri())
    shown = "section.view:not([hidden])"
    assert browser.find_element(By.CSS_SELECTOR, shown).get_attribute("data-view") == ""
    browser.find_element(By.CSS_SELECTOR, f'{shown} .box[data-box="0"]').click()
    assert browser.find_element(By.CSS_SELECTOR, shown).get_attribute("data-view") == "0"
    labels = [e.text for e in browser.find_elements(By.CSS_SELECTOR, f"{shown} .item .t1")]
    assert {"0.weight", "0.bias", "Linear"} <= set(labels)
    browser.find_element(By.CSS_SELECTOR, "#crumbs a").click()
    assert browser.find_element(By.CSS_SELECTOR, shown).get_attribute("data-view") == ""


# Names that end a <script> block or change how the page reads it, and a JS object's keys
HOSTILE = [
    "<!--<script>",
    "</script><script>alert(1)</script>",
    "'\"&amp;",
    "x\u2028y\u2029z",
    "constructor",
    "__proto__",
]


def test_browser_runs_the_page_whatever_the_names(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    cr.manual_seed(0)
    xs = {name: cr.randn(3, requires_grad=True) for name in HOSTILE}
    loss = cr.stack([(x * x).sum() for x in xs.values()]).sum()
    path = cr.viz.walkthrough(loss, str(tmp_path / "names.html"), params=xs)
    shown = step_through(browser, path)  # the script ran: every step, no error, no alert
    assert set(shown) == set(HOSTILE)
    rows = browser.find_elements(By.CSS_SELECTOR, "#leaves tr[data-leaf]")
    cells = [r.find_element(By.TAG_NAME, "td").get_attribute("textContent") for r in rows]
    assert sorted(cells) == sorted(HOSTILE)
    order = browser.find_element(By.ID, "first")
    order.click()
    listed = browser.find_element(By.ID, "panel").get_attribute("textContent")
    assert all(name in listed for name in HOSTILE)  # step 0 lists the nodes by name

    model = nn.Module()
    for name in HOSTILE[:2] + HOSTILE[-2:]:  # modules, each folding into a box of its own
        setattr(model, name, nn.Linear(2, 2))
    x = cr.randn(3, 2)
    for name in HOSTILE[:2] + HOSTILE[-2:]:
        x = getattr(model, name)(x)
    path = cr.viz.walkthrough(x.sum(), str(tmp_path / "modules.html"), params=model)
    browser.get(Path(path).as_uri())
    for name in HOSTILE[:2] + HOSTILE[-2:]:
        box = browser.execute_script(
            "return [...document.querySelectorAll('section.view:not([hidden]) .box')]"
            ".find((b) => b.dataset.box === arguments[0]);",
            name,
        )
        box.click()
        crumbs = browser.find_element(By.ID, "crumbs").get_attribute("textContent")
        assert crumbs.endswith(f"Linear ({name})")  # its class and path
        browser.find_element(By.CSS_SELECTOR, "#crumbs a").click()  # back to the whole graph
    browser.find_element(By.ID, "next").click()
    assert browser.find_element(By.ID, "counter").text.startswith("step 1 / ")
    assert browser.get_log("browser") == []
