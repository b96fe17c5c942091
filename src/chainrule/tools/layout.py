"""How draw_graph's drawings are laid out: which way a graph runs, and an SVG that fits a
notebook cell. The drawing itself is viz.py's; `dot` (graphviz) places the nodes."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

# Deeper than this many ops, a left-to-right drawing is a row too long to read (a GPT's
# training step: ~20,000 px wide), so it is laid out top to bottom.
LONG_GRAPH = 30


def rankdir_for(order: Sequence[Any], parents: Callable[[Any], Iterable[Any]]) -> str:
    """ "LR" (data flowing left to right, as micrograd draws) for a graph at most LONG_GRAPH
    nodes deep, "TB" for a deeper one; ``order`` lists each node after its parents."""
    depth: dict[int, int] = {}  # the longest chain from a leaf to each node
    for node in order:
        depth[id(node)] = 1 + max((depth.get(id(p), 0) for p in parents(node)), default=0)
    return "TB" if max(depth.values(), default=0) > LONG_GRAPH else "LR"


def fit_width(svg: str) -> str:
    """An SVG drawn by `dot` that shrinks to its container's width (a notebook cell's) rather
    than running past its edge: at most 100% wide, its height following the viewBox; drawn
    inline, as VS Code and the classic notebook draw it, the root's style does it, and as an
    image (JupyterLab) its own width and height still say its size, so that a small drawing is
    not stretched. An SVG without a viewBox, or styled already, is given back as it is."""
    head = re.search(r"<svg\b[^>]*>", svg)
    if head is None or "viewBox" not in head.group(0) or "style=" in head.group(0):
        return svg
    tag = re.sub(r"\s*(/?)>$", r' style="max-width: 100%; height: auto"\1>', head.group(0))
    return svg[: head.start()] + tag + svg[head.end() :]
