"""The page `viz.walkthrough` writes: a recorded backward pass (its nodes, and its steps in the
engine's order), or forward-mode pass, or both, laid out with modules folded into boxes, in
one HTML file.

What the engine did is recorded by viz.py; this module folds and lays out the record, and
leaves drawing and stepping to chainrule/assets/walkthrough.js, which draws only what is in
view (a page of 10^5 nodes opens in seconds). Nothing it writes refers to anything outside
the file.

The page's data (JSON in #data), every text an index into ``strings``:
  nodes  {label, kind, shape, value, rule, module, inputs, num, box}, a field left out at
         its default (kind "op", texts "", inputs [], num null: not swept, box -1: none); num
         is the node's place in the sweep, box the innermost box it is drawn in
  boxes  [key, name, parent box]: name "Linear (0)", its module's class and path
  steps  [node, grad short, grad full, gives, final short, final full]; a give is
         [to, role, short, full, part, of, extras]: what the rule handed input ``to``,
         contribution ``part`` of its ``of``; extras (optional) hold "total" (its gradient
         so far), "fitted" / "dims" / "given" (a broadcast undone), "cast", "local";
         empty where only the forward pass was recorded
  forward (where recorded) the forward-mode pass, a step per node in topological order:
         [node, tangent short, tangent full, takes, jvp rule]; a take is [from, role,
         its tangent short, full, its part J_i t_i short, full]; a seeded leaf takes none
  leaves {node, name, text, grad}: each leaf's final .grad, as text and as numbers (NaN and
         infinities as strings); the page builds its table's rows from these, a few hundred
         at a time as the table scrolls into sight (20,000 rows of HTML took 2 s to parse)
  views  the keys of the views: "" (the whole graph), then each box's
  layouts one per view, {cols, rows, items, edges}: items flat [code, column, half-row] with code
         3 * node (a node), 3 * node + 1 (a port: outside the view) or 3 * box + 2;
         edges flat [from item, to item]
"""

from __future__ import annotations

import gc
import html
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..autograd.reference import toposort
from .outputs import write_output

ASSETS = Path(__file__).resolve().parent.parent / "assets"  # chainrule/assets
WRAP = 120  # a view wider than this many columns wraps into bands, one under another


MODES = ("backward", "forward", "both")


def forward_mode(mode: str) -> bool:
    """Whether the page steps through forward mode ("forward" or "both"); another mode
    than those and "backward" is refused."""
    if mode not in MODES:
        raise ValueError(f"walkthrough: mode must be 'backward', 'forward' or 'both'; got {mode!r}")
    return mode != "backward"


def write(path: str, record: dict[str, Any]) -> None:
    """Write the page of ``record`` (viz.walkthrough's: nodes, steps, leaves, and the
    classes of the modules by path) to ``path``."""
    # The page's data is millions of small lists and strings, none in a cycle: the garbage
    # collector's passes over them took 40% of the time a page of 2x10^4 leaves took.
    was = gc.isenabled()
    gc.disable()
    try:
        _write(path, record)
    finally:
        if was:
            gc.enable()


def _write(path: str, record: dict[str, Any]) -> None:
    nodes = record["nodes"]
    inputs = [n["inputs"] for n in nodes]
    consumers: list[list[int]] = [[] for _ in nodes]
    for i, xs in enumerate(inputs):
        for x in dict.fromkeys(xs):
            consumers[x].append(i)
    rank = {i: k for k, i in enumerate(toposort(range(len(nodes)), lambda i: inputs[i]))}
    paths = fold(nodes, inputs, consumers)
    keys = sorted({b for p in paths for b in p}, key=lambda b: (b.count("."), b))
    box = {b: k for k, b in enumerate(keys)}
    parent = {p[k]: p[k - 1] for p in paths for k in range(1, len(p))}
    classes = record.get("classes", {})
    members: dict[str, list[int]] = {b: [] for b in keys}
    for i, p in enumerate(paths):
        for b in p:
            members[b].append(i)
    layouts = [_layout("", list(range(len(nodes))), paths, inputs, consumers, rank, box)]
    layouts += [_layout(b, members[b], paths, inputs, consumers, rank, box) for b in keys]
    s = _Strings()
    data = {
        "nodes": [_node(n, p[-1] if p else "", box, s) for n, p in zip(nodes, paths, strict=True)],
        "boxes": [[s(b), s(_box_name(b, classes)), box.get(parent.get(b, ""), -1)] for b in keys],
        "steps": [_step(st, s) for st in record["steps"]],
        "leaves": [{**leaf, "grad": _finite(leaf["grad"])} for leaf in record["leaves"]],
        "views": ["", *keys],
        "layouts": layouts,
    }
    if "forward" in record:
        data["forward"] = [_forward_step(st, s) for st in record["forward"]]
    data["strings"] = s.strings
    page = PAGE.format(
        style=(ASSETS / "walkthrough.css").read_text(encoding="utf-8"),
        script=(ASSETS / "walkthrough.js").read_text(encoding="utf-8"),
        views="\n".join(
            f'<section class="view" data-view="{html.escape(k, quote=True)}" hidden></section>'
            for k in ["", *keys]
        ),
        data=script_json(data),
        total=len(record["steps"]) or len(record.get("forward", [])),
    )
    write_output(path, page, "walkthrough")


class _Strings:
    """Each distinct text once (a long graph repeats its shapes, rules and values)."""

    def __init__(self) -> None:
        self.strings: list[str] = []
        self.ids: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        k = self.ids.get(text)
        if k is None:
            k = self.ids[text] = len(self.strings)
            self.strings.append(text)
        return k


def _box_name(key: str, classes: dict[str, str]) -> str:
    """A box's name: its module's class and path, ``Linear (0)``; the path alone where the
    class is not known."""
    return f"{classes[key]} ({key})" if key in classes else key


def _node(node: dict[str, Any], inner: str, box: dict[str, int], s: _Strings) -> dict[str, Any]:
    out: dict[str, Any] = {"label": node["label"]}
    if node["kind"] != "op":
        out["kind"] = node["kind"]
    for key in ("shape", "value", "rule", "module"):
        if node[key]:
            out[key] = s(node[key])
    if node["inputs"]:
        out["inputs"] = node["inputs"]
    if node["num"] is not None:
        out["num"] = node["num"]
    if inner:
        out["box"] = box[inner]
    return out


def _step(step: dict[str, Any], s: _Strings) -> list[Any]:
    gives = []
    for g in step["gives"]:
        give = [g["to"], s(g["role"]), s(g["raw"][0]), s(g["raw"][1]), g["part"], g["of"]]
        extras: dict[str, Any] = {}
        if g["of"] > 1:
            extras["total"] = [s(g["total"][0]), s(g["total"][1])]
        for key in ("fitted", "dims", "cast", "local"):
            if key in g:
                extras[key] = g[key]
        if "given" in g:
            extras["given"] = [s(g["given"][0]), s(g["given"][1])]
        gives.append([*give, extras] if extras else give)
    out = [step["node"], s(step["grad"][0]), s(step["grad"][1]), gives]
    if "final" in step:
        out += [s(step["final"][0]), s(step["final"][1])]
    return out


def _forward_step(step: dict[str, Any], s: _Strings) -> list[Any]:
    takes = [
        [g["from"], s(g["role"]), s(g["tangent"][0]), s(g["tangent"][1]), s(g["part"][0]),
         s(g["part"][1])]
        for g in step["takes"]
    ]  # fmt: skip
    return [step["node"], s(step["tangent"][0]), s(step["tangent"][1]), takes, s(step["jvp"])]


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
# One view's layout: the nodes and boxes directly inside it, in columns by depth, data
# flowing left to right; nodes outside it that feed it or read from it are its ports. Past
# WRAP columns the view wraps into bands, one under another, an empty row between them.


def _layout(
    key: str,
    members: list[int],
    paths: Sequence[list[str]],
    inputs: Sequence[list[int]],
    consumers: Sequence[list[int]],
    rank: dict[int, int],
    box: dict[str, int],
) -> dict[str, Any]:
    inside = set(members)

    def rep(i: int) -> int:
        if i not in inside:
            return 3 * i + 1
        p = paths[i]
        k = p.index(key) + 1 if key else 0
        return 3 * box[p[k]] + 2 if k < len(p) else 3 * i

    order: dict[int, int] = {}  # each item's place: its first node's in topological order
    edges: dict[tuple[int, int], None] = {}
    for i in members:
        r = rep(i)
        order[r] = min(order.get(r, rank[i]), rank[i])
        for x in inputs[i]:
            if rep(x) != r:
                edges[(rep(x), r)] = None
        for c in consumers[i]:
            if c not in inside:
                edges[(r, rep(c))] = None
    for a, b in edges:
        for r in (a, b):
            if r % 3 == 1:
                order.setdefault(r, rank[r // 3])
    items = sorted(order, key=order.__getitem__)
    preds: dict[int, list[int]] = {r: [] for r in items}
    for a, b in edges:
        if order[a] < order[b]:  # never a cycle, whatever the folding left
            preds[b].append(a)
    layer: dict[int, int] = {}
    succs: dict[int, list[int]] = {r: [] for r in items}
    for r in items:
        layer[r] = max((layer[a] + 1 for a in preds[r]), default=0)
        for a in preds[r]:
            succs[a].append(r)
    for r in items:  # what nothing feeds (leaves) sits just before its first consumer
        if not preds[r] and succs[r]:
            layer[r] = min(layer[c] for c in succs[r]) - 1
    columns: list[list[int]] = [[] for _ in range(max(layer.values(), default=0) + 1)]
    row: dict[int, float] = {}
    for r in items:  # placed by the mean row of what feeds them (fewer crossings)
        columns[layer[r]].append(r)
    for col in columns:
        col.sort(key=lambda r: (_mean([row[a] for a in preds[r]], order[r]), order[r]))
        for k, r in enumerate(col):
            row[r] = k
    tallest = max(len(col) for col in columns)
    index: dict[int, int] = {}
    flat: list[int] = []
    for d, col in enumerate(columns):
        band, c = divmod(d, WRAP)
        top = band * 2 * (tallest + 1) + tallest - len(col)  # in half rows: centred
        for k, r in enumerate(col):
            index[r] = len(index)
            flat += [r, c, top + 2 * k]
    bands = (len(columns) + WRAP - 1) // WRAP
    return {
        "cols": min(len(columns), WRAP),
        "rows": bands * (tallest + 1) - 1,
        "items": flat,
        "edges": [index[r] for edge in edges for r in edge],
    }


def _mean(xs: list[float], default: float) -> float:
    return sum(xs) / len(xs) if xs else default


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>chainrule: the chain rule's passes, step by step</title>
<style>{style}</style></head>
<body>
<header>
<h1 id="title">The backward pass, step by step</h1>
<div class="controls">
<span id="modes"></span>
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
<table><thead><tr><th>leaf</th><th>.grad</th></tr></thead><tbody></tbody></table>
</section>
<script id="data" type="application/json">{data}</script>
<script>{script}</script>
</body></html>
"""
