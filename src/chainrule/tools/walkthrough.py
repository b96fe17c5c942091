"""The page `viz.walkthrough` writes: a recorded backward pass (its nodes, and its steps in the
engine's order) laid out as inline SVG, with modules folded into boxes, in one HTML file.

What the engine did is recorded by viz.py; this module only draws the record and leaves the
stepping to chainrule/assets/walkthrough.js. Nothing it writes refers to anything outside the file.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..autograd.reference import toposort
from .outputs import write_output

ASSETS = Path(__file__).resolve().parent.parent / "assets"  # chainrule/assets
NODE_W, NODE_H = 170, 62  # a node's box, in SVG units (pixels at zoom 1)
GAP_X, GAP_Y, PAD = 46, 16, 14


def write(path: str, record: dict[str, Any]) -> None:
    """Write the page of ``record`` (viz.walkthrough's: nodes, steps, leaves) to ``path``."""
    nodes = record["nodes"]
    inputs = [n["inputs"] for n in nodes]
    consumers: list[list[int]] = [[] for _ in nodes]
    for i, xs in enumerate(inputs):
        for x in dict.fromkeys(xs):
            consumers[x].append(i)
    rank = {i: k for k, i in enumerate(toposort(range(len(nodes)), lambda i: inputs[i]))}
    paths = fold(nodes, inputs, consumers)
    for node, p in zip(nodes, paths, strict=True):
        node["path"] = p
    boxes = sorted({b for p in paths for b in p}, key=lambda b: (b.count("."), b))
    views = [("", list(range(len(nodes))))]
    views += [(b, [i for i, p in enumerate(paths) if b in p]) for b in boxes]
    sections = [
        _view_svg(key, members, nodes, paths, inputs, consumers, rank) for key, members in views
    ]
    data = {
        "nodes": nodes,
        "steps": record["steps"],
        "leaves": [{k: v for k, v in leaf.items() if k != "grad"} for leaf in record["leaves"]],
        "views": [key for key, _ in views],
    }
    text = script_json(data)
    rows = "\n".join(_leaf_row(leaf) for leaf in record["leaves"])
    page = PAGE.format(
        style=(ASSETS / "walkthrough.css").read_text(encoding="utf-8"),
        script=(ASSETS / "walkthrough.js").read_text(encoding="utf-8"),
        views="\n".join(sections),
        rows=rows,
        data=text,
        total=len(record["steps"]),
    )
    write_output(path, page, "walkthrough")


# What an HTML parser could take for markup inside a <script> block (<!--, <script, </script:
# whichever of them, the page's scripts stop there), and what some JavaScript parsers end a
# line at (U+2028, U+2029; other characters stay as they are, the page being UTF-8): each as
# JSON's own \u escape, which JSON.parse reads back as the same character.
_SCRIPT_UNSAFE = str.maketrans({c: f"\\u{ord(c):04x}" for c in "<>&\u2028\u2029"})


def script_json(data: Any) -> str:
    """``data`` as JSON to place inside a <script> element: no name in it (a leaf, a
    parameter, a module or an op, all chosen by the user) can end the block or change how
    the page parses it."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text.translate(_SCRIPT_UNSAFE)


def _finite(x: Any) -> Any:
    """JSON's numbers for a gradient: NaN and infinities as the strings "nan", "inf", "-inf"."""
    if isinstance(x, list):
        return [_finite(v) for v in x]
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    return x


def _leaf_row(leaf: dict[str, Any]) -> str:
    grad = html.escape(json.dumps(_finite(leaf["grad"]), allow_nan=False), quote=True)
    name = html.escape(leaf["name"], quote=True)
    return (
        f'<tr data-leaf="{name}" data-node="{leaf["node"]}" data-grad="{grad}">'
        f'<td>{html.escape(leaf["name"])}</td><td class="final"></td></tr>'
    )


# ---------------------------------------------------------------------------------------
# Folding: a module's nodes become one box. A parameter belongs to its module, an op to the
# module of the parameters it takes. A box must be convex (every node on a path between two
# of its nodes inside it), or its view would have a cycle: the nodes in between that belong
# to no module at that level join it, and a module that would need another's nodes stays
# unfolded. Boxes nest as the names do (h, then h.0, then h.0.attn).


def fold(
    nodes: Sequence[dict[str, Any]], inputs: Sequence[list[int]], consumers: Sequence[list[int]]
) -> list[list[str]]:
    """For each node, the boxes it is drawn in, outermost first."""
    module: list[tuple[str, ...]] = []
    for node, xs in zip(nodes, inputs, strict=True):
        if node["module"]:
            module.append(tuple(node["module"].split(".")))
            continue
        owners = [module[x] for x in xs if nodes[x]["kind"] == "leaf" and module[x]]
        module.append(_common(owners) if owners else ())
    paths: list[list[str]] = [[] for _ in nodes]
    _fold_view(list(range(len(nodes))), (), module, paths, inputs, consumers)
    for i, node in enumerate(nodes):  # a leaf of no module is drawn with its consumers
        if node["kind"] != "op" and not module[i] and consumers[i]:
            common = paths[consumers[i][0]]
            for c in consumers[i][1:]:
                common = [a for a, b in zip(common, paths[c], strict=False) if a == b]
            paths[i] = list(common)
    return paths


def _common(mods: Sequence[tuple[str, ...]]) -> tuple[str, ...]:
    first = mods[0]
    n = len(first)
    for m in mods[1:]:
        n = min(n, len(m))
        while first[:n] != m[:n]:
            n -= 1
    return first[:n]


def _fold_view(
    view: list[int],
    prefix: tuple[str, ...],
    module: list[tuple[str, ...]],
    paths: list[list[str]],
    inputs: Sequence[list[int]],
    consumers: Sequence[list[int]],
) -> None:
    depth = len(prefix)
    inside = set(view)
    child: dict[int, str | None] = {}
    for i in view:
        m = module[i]
        child[i] = m[depth] if len(m) > depth and m[:depth] == prefix else None
    names = list(dict.fromkeys(c for c in child.values() if c is not None))
    changed = True
    while changed:
        changed = False
        for name in names:
            members = [i for i in view if child[i] == name]
            if not members:
                continue
            between = _reach(members, consumers, inside) & _reach(members, inputs, inside)
            between -= set(members)
            if any(child[i] is not None for i in between):  # would swallow another module
                for i in members:
                    child[i] = None
                    module[i] = prefix
            else:
                for i in between:
                    child[i] = name
                    module[i] = (*prefix, name)
            changed = changed or bool(between)
    for name in names:
        members = [i for i in view if child[i] == name]
        if len(members) < 2:
            continue  # one node is drawn as itself, its module named under it
        key = ".".join((*prefix, name))
        for i in members:
            paths[i].append(key)
        _fold_view(members, (*prefix, name), module, paths, inputs, consumers)


def _reach(start: list[int], edges: Sequence[list[int]], inside: set[int]) -> set[int]:
    seen = set(start)
    todo = list(start)
    while todo:
        for j in edges[todo.pop()]:
            if j in inside and j not in seen:
                seen.add(j)
                todo.append(j)
    return seen


# ---------------------------------------------------------------------------------------
# One view: the nodes and boxes directly inside it, in layers by depth, data flowing left to
# right; nodes outside it that feed it or read from it are drawn as dashed ports.


def _view_svg(
    key: str,
    members: list[int],
    nodes: Sequence[dict[str, Any]],
    paths: Sequence[list[str]],
    inputs: Sequence[list[int]],
    consumers: Sequence[list[int]],
    rank: dict[int, int],
) -> str:
    inside = set(members)

    def rep(i: int) -> str:
        if i not in inside:
            return f"p{i}"
        p = paths[i]
        k = p.index(key) + 1 if key else 0
        return f"b:{p[k]}" if k < len(p) else f"n{i}"

    order: dict[str, int] = {}  # each item's place: its first node's in topological order
    count: dict[str, int] = {}
    edges: dict[tuple[str, str], None] = {}
    for i in members:
        r = rep(i)
        order[r] = min(order.get(r, rank[i]), rank[i])
        count[r] = count.get(r, 0) + 1
        for x in inputs[i]:
            if rep(x) != r:
                edges[(rep(x), r)] = None
        for c in consumers[i]:
            if c not in inside:
                edges[(r, rep(c))] = None
    for a, b in edges:
        for r in (a, b):
            if r.startswith("p"):
                order.setdefault(r, rank[int(r[1:])])
    items = sorted(order, key=order.__getitem__)
    preds: dict[str, list[str]] = {r: [] for r in items}
    for a, b in edges:
        if order[a] < order[b]:  # never a cycle, whatever the folding left
            preds[b].append(a)
    layer: dict[str, int] = {}
    succs: dict[str, list[str]] = {r: [] for r in items}
    for r in items:
        layer[r] = max((layer[a] + 1 for a in preds[r]), default=0)
        for a in preds[r]:
            succs[a].append(r)
    for r in items:  # what nothing feeds (leaves) sits just before its first consumer
        if not preds[r] and succs[r]:
            layer[r] = min(layer[c] for c in succs[r]) - 1
    columns: list[list[str]] = [[] for _ in range(max(layer.values(), default=0) + 1)]
    row: dict[str, float] = {}
    for r in items:  # placed by the mean row of what feeds them (fewer crossings)
        columns[layer[r]].append(r)
    for col in columns:
        col.sort(key=lambda r: (_mean([row[a] for a in preds[r]], order[r]), order[r]))
        for k, r in enumerate(col):
            row[r] = k
    tallest = max(len(col) for col in columns)
    xy: dict[str, tuple[float, float]] = {}
    for d, col in enumerate(columns):
        top = (tallest - len(col)) * (NODE_H + GAP_Y) / 2
        for k, r in enumerate(col):
            xy[r] = (PAD + d * (NODE_W + GAP_X), PAD + top + k * (NODE_H + GAP_Y))
    width = PAD * 2 + len(columns) * (NODE_W + GAP_X) - GAP_X
    height = PAD * 2 + tallest * (NODE_H + GAP_Y) - GAP_Y
    out = [
        f'<section class="view" data-view="{html.escape(key, quote=True)}" hidden>',
        f'<svg width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}">',
    ]
    for a, b in edges:
        (x1, y1), (x2, y2) = xy[a], xy[b]
        x1, y1, y2 = x1 + NODE_W, y1 + NODE_H / 2, y2 + NODE_H / 2
        mid = (x1 + x2) / 2
        out.append(
            f'<path class="edge" data-from="{_attr(a)}" data-to="{_attr(b)}" '
            f'd="M{x1:.0f},{y1:.0f} C{mid:.0f},{y1:.0f} {mid:.0f},{y2:.0f} {x2:.0f},{y2:.0f}"/>'
        )
    for r in items:
        out.append(_item(r, xy[r], nodes, count.get(r, 0)))
    out.append("</svg></section>")
    return "\n".join(out)


def _mean(xs: list[float], default: float) -> float:
    return sum(xs) / len(xs) if xs else default


def _attr(r: str) -> str:
    return html.escape(r, quote=True)


def _cut(text: str, n: int = 27) -> str:
    return text if len(text) <= n else text[: n - 1] + "\u2026"


def _item(r: str, at: tuple[float, float], nodes: Sequence[dict[str, Any]], count: int) -> str:
    x, y = at
    e = html.escape
    if r.startswith("b:"):
        key = r[2:]
        return (
            f'<g class="item box" data-rep="{_attr(r)}" data-box="{_attr(key)}" '
            f'transform="translate({x:.0f},{y:.0f})"><title>{e(key)}: {count} nodes; click to '
            f'open</title><rect width="{NODE_W}" height="{NODE_H}" rx="4"/>'
            f'<text class="t1" x="8" y="17">{e(_cut(key))}</text>'
            f'<text class="t2" x="8" y="34">{count} nodes \u25b8 open</text>'
            f'<text class="g" x="8" y="52"></text></g>'
        )
    i = int(r[1:])
    node = nodes[i]
    port = r.startswith("p")
    kind = "port" if port else node["kind"]
    sub = node["shape"] or node["value"]
    if not port and node["kind"] == "op" and node["module"]:
        sub = node["module"]  # a node alone in its module: named by it
    tip = "\n".join(t for t in (node["label"], node["shape"], node["value"], node["rule"]) if t)
    if port:
        tip = "outside this box: " + tip
    num = f"#{node['num']}" if node["num"] is not None else ""
    return (
        f'<g class="item {kind}" data-rep="{_attr(r)}" data-node="{i}" '
        f'transform="translate({x:.0f},{y:.0f})"><title>{e(tip)}</title>'
        f'<rect width="{NODE_W}" height="{NODE_H}" rx="{4 if kind == "op" else 1}"/>'
        f'<text class="num" x="{NODE_W - 6}" y="14">{num}</text>'
        f'<text class="t1" x="8" y="17">{e(_cut(node["label"], 20))}</text>'
        f'<text class="t2" x="8" y="34">{e(_cut(sub))}</text>'
        f'<text class="g" x="8" y="52"></text></g>'
    )


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>chainrule: the backward pass, step by step</title>
<style>{style}</style></head>
<body>
<header>
<h1>The backward pass, step by step</h1>
<div class="controls">
<button id="first" type="button" title="step 0 (Home)">&#x21E4; 0</button>
<button id="prev" type="button" title="previous step (left arrow)">&#x25C0; prev</button>
<button id="play" type="button" title="play or pause (space)">play</button>
<button id="next" type="button" title="next step (right arrow)">next &#x25B6;</button>
<input id="slider" type="range" min="0" max="{total}" value="0" aria-label="step">
<span id="counter">step 0 / {total}</span>
</div>
<nav id="crumbs"></nav>
</header>
<main>
<div id="graph">
{views}
</div>
<aside id="panel" data-node=""></aside>
</main>
<section id="leaves"><h2>Leaf gradients</h2>
<p class="note">Filled in at the last step: each leaf's <code>.grad</code> after the pass.</p>
<table><thead><tr><th>leaf</th><th>.grad</th></tr></thead><tbody>
{rows}
</tbody></table></section>
<script id="data" type="application/json">{data}</script>
<script>{script}</script>
</body></html>
"""
