"""Converters of the activation primitives whose ONNX form is a few operators of its own
(GELU, exact or tanh; SiLU), from a traced Step to the ONNX nodes of its value. The graph
and the tracing are export.py's; the other primitives' converters are converters.py's."""

from __future__ import annotations

import math

from .export import Graph, converts, dtype_of
from .trace import Step


@converts("Gelu")
def _gelu(g: Graph, s: Step) -> str:
    """x * 0.5 * (1 + erf(x / sqrt 2)), or the tanh form: ONNX's own Gelu needs opset 20."""
    dtype = dtype_of(s)
    x = g.value(s.inputs[0], dtype)

    def num(v: float) -> str:
        return g.value(v, dtype)

    if s.options["approximate"] == "none":
        inner = g.add("Erf", [g.add("Mul", [x, num(1.0 / math.sqrt(2.0))])])
    else:  # tanh(sqrt(2/pi) (x + 0.044715 x^3))
        cube = g.add("Mul", [g.add("Mul", [x, x]), x])
        inner = g.add("Add", [x, g.add("Mul", [cube, num(0.044715)])])
        inner = g.add("Tanh", [g.add("Mul", [inner, num(math.sqrt(2.0 / math.pi))])])
    half = g.add("Mul", [x, num(0.5)])
    return g.add("Mul", [half, g.add("Add", [inner, num(1.0)])])


@converts("Silu")
def _silu(g: Graph, s: Step) -> str:
    """x * Sigmoid(x): ONNX's operators hold no SiLU."""
    x = g.value(s.inputs[0], dtype_of(s))
    return g.add("Mul", [x, g.add("Sigmoid", [x])])
