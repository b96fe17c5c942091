"""Converters of the sequence models' primitives: scaled dot-product attention, the recurrent
layers onto ONNX's RNN, LSTM and GRU, and sort, topk and argmax onto TopK and ArgMax. The
graph, the tracing and the other primitives are export.py's."""

from __future__ import annotations

from .. import array
from .export import Graph, UnsupportedOperatorError, converts, dtype_of, reduce_over
from .trace import Step


@converts("ScaledDotProductAttention")
def _attention(g: Graph, s: Step) -> str:
    """softmax(q @ k^T * scale + mask) @ v, the mask a bool one (keys where True) or a float
    one (added), causality as keys j <= i built from the lengths; a row whose keys are all
    masked gives 0, as the primitive's (Softmax alone would give NaN)."""
    q, k, v, mask = s.inputs
    o = s.options
    if o["dropout_p"] > 0:
        raise UnsupportedOperatorError(
            f"onnx.export: op ScaledDotProductAttention with dropout has no ONNX mapping; got "
            f"dropout_p {o['dropout_p']} (pass dropout_p=0.0 outside training)"
        )
    dtype = dtype_of(s)
    perm = [*range(k.ndim - 2), k.ndim - 1, k.ndim - 2]
    kt = g.add("Transpose", [g.value(k)], perm=perm)  # (..., E, S)
    scores = g.add("Mul", [g.add("MatMul", [g.value(q), kt]), g.value(o["scale"], dtype)])
    keep = None  # where a key takes part, (..., L, S) as it broadcasts
    if mask is not None and mask.dtype == array.bool_:
        keep = g.value(mask, array.bool_)
    elif mask is not None:
        scores = g.add("Add", [scores, g.value(mask, dtype)])
    if o["is_causal"]:
        causal = _causal(g, g.value(q), g.value(k))
        keep = causal if keep is None else g.add("And", [keep, causal])
    minus_inf = g.value(-float("inf"), dtype)
    if keep is not None:
        scores = g.add("Where", [keep, scores, minus_inf])
    p = g.add("Softmax", [scores], axis=-1)
    if mask is not None:
        top = reduce_over(g, "ReduceMax", [scores], [-1], keepdims=1)
        dead = g.add("Equal", [top, minus_inf], dtype=array.bool_)  # (..., L, 1)
        p = g.add("Where", [dead, g.value(0.0, dtype), p])
    return g.add("MatMul", [p, g.value(v)])


def _causal(g: Graph, q: str, k: str) -> str:
    """(L, S) bool: key j for query i where j <= i, from q's and k's lengths (dim -2)."""

    def positions(x: str) -> str:
        zero, one, at = (g.const(array.xp.asarray(c, dtype=array.int64)) for c in (0, 1, -2))
        n = g.add("Gather", [g.add("Shape", [x], dtype=array.int64), at])
        return g.add("Range", [zero, n, one])

    rows = g.add("Unsqueeze", [positions(q), g.ints([1])])  # (L, 1)
    cols = g.add("Unsqueeze", [positions(k), g.ints([0])])  # (1, S)
    return g.add("Not", [g.add("Greater", [cols, rows], dtype=array.bool_)])
