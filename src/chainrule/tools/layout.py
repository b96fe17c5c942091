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
    than running past its edge: width 100%, at most its own, the height following the viewBox.
    An SVG without a width and a viewBox is given back as it is."""
    head = re.search(r"<svg\b[^>]*>", svg)
    width = None if head is None else re.search(r'\swidth="([\d.]+)(pt|px)?"', head.group(0))
    if head is None or width is None or "viewBox" not in head.group(0):
        return svg
    tag = re.sub(r'\sheight="[^"]*"', "", head.group(0).replace(width.group(0), ' width="100%"'))
    style = f' style="max-width: {width.group(1)}{width.group(2) or "px"}; height: auto"'
    tag = re.sub(r"\s*(/?)>$", lambda m: style + m.group(1) + ">", tag)
    return svg[: head.start()] + tag + svg[head.end() :]
