"""draw_graph's layout: left to right for a short graph, top to bottom for a long one, as asked
otherwise; and an SVG that shrinks to a notebook cell's width rather than running past it."""

from __future__ import annotations

from typing import Any

import pytest

import chainrule as cr
from chainrule.tools.layout import LONG_GRAPH, fit_width

pytest.importorskip("graphviz")

SVG = (
    '<?xml version="1.0"?>\n<svg width="1932pt" height="116pt"\n viewBox="0.00 0.00 1932.00 '
    '116.00" xmlns="http://www.w3.org/2000/svg">\n<g id="graph0"></g>\n</svg>\n'
)


def chain(n: int) -> cr.Tensor:
    x = cr.ones(2, requires_grad=True)
    for _ in range(n):
        x = x * 2
    return x.sum()


def test_the_direction_follows_the_depth() -> None:
    assert cr.viz.draw_graph(chain(3)).graph_attr["rankdir"] == "LR"
    assert cr.viz.draw_graph(chain(LONG_GRAPH)).graph_attr["rankdir"] == "TB"
    assert cr.viz.draw_graph(chain(LONG_GRAPH), rankdir="LR").graph_attr["rankdir"] == "LR"
    assert cr.viz.draw_graph(chain(3), rankdir="TB").graph_attr["rankdir"] == "TB"
    with pytest.raises(
        ValueError, match=r"draw_graph: rankdir must be 'LR', 'TB' or None; got 'BT'"
    ):
        cr.viz.draw_graph(chain(3), rankdir="BT")


def test_the_svg_fits_the_cell() -> None:
    fitted = fit_width(SVG)
    head = fitted.split(">", 2)[1]
    assert 'width="1932pt" height="116pt"' in head and "viewBox=" in head  # its own size
    assert head.endswith(' style="max-width: 100%; height: auto"')
    assert fitted.split("\n", 1)[0] == SVG.split("\n", 1)[0]
    assert fitted.endswith('<g id="graph0"></g>\n</svg>\n')
    assert fit_width(fitted) == fitted
    no_viewbox = '<svg width="10pt" height="5pt"></svg>'
    assert fit_width(no_viewbox) == no_viewbox


def test_a_notebook_shows_the_fitted_svg(monkeypatch: pytest.MonkeyPatch) -> None:
    import graphviz

    def bundle(self: Any, include: Any = None, exclude: Any = None, **kw: Any) -> dict:
        return {"image/svg+xml": SVG}

    monkeypatch.setattr(graphviz.Digraph, "_repr_mimebundle_", bundle)
    shown = cr.viz.draw_graph(chain(2))._repr_mimebundle_()
    assert shown["image/svg+xml"] == fit_width(SVG)
