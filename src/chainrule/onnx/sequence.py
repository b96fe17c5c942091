"""Converters of the sequence models' primitives: scaled dot-product attention, the recurrent
layers onto ONNX's RNN, LSTM and GRU (a projected LSTM onto Scan), and sort, topk and argmax
onto TopK and ArgMax. The
graph, the tracing and the other primitives are export.py's."""

from __future__ import annotations

from typing import Any

from .. import array
from ..tensor import Tensor
from .export import (
    Graph,
    UnsupportedOperatorError,
    converts,
    dtype_of,
    onnx_type,
    reduce_over,
)
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


# PyTorch's gate blocks in ONNX's order: LSTM i, f, g, o -> i, o, f, c; GRU r, z, n -> z, r, h
_GATES = {"RNNLayer": [0], "LSTMLayer": [0, 3, 1, 2], "GRULayer": [1, 0, 2]}


@converts("RNNLayer", "LSTMLayer", "GRULayer")
def _recurrent(g: Graph, s: Step) -> str:
    """One layer in one direction onto ONNX's RNN, LSTM or GRU (direction forward or
    reverse): W, R and B = [b_ih, b_hh] with one direction in front and the gate blocks
    reordered, the initial state an input where it is not all zeros. The output is the
    primitive's: (L, N, H), and for the LSTM c_n after it as step L."""
    lstm = s.op == "LSTMLayer"
    x, h0 = s.inputs[0], s.inputs[1]
    c0 = s.inputs[2] if lstm else None
    w_ih, w_hh, b_ih, b_hh = s.inputs[3:] if lstm else s.inputs[2:]
    dtype = dtype_of(s)
    order = _GATES[s.op]
    hidden = w_hh.shape[1]
    rows = array.xp.concatenate([array.xp.arange(hidden) + b * hidden for b in order])

    def blocks(w: Any) -> str:  # (G*H, ...) in ONNX's gate order, one direction in front
        picked = g.add("Gather", [g.value(w, dtype), g.ints(rows.tolist())], axis=0)
        return g.add("Unsqueeze", [picked, g.ints([0])])

    names = [g.value(x, dtype), blocks(w_ih), blocks(w_hh)]
    if b_ih is not None or b_hh is not None:
        zeros = array.xp.zeros(w_hh.shape[0], dtype)
        both = [b if b is not None else zeros for b in (b_ih, b_hh)]
        biases = [g.add("Gather", [g.value(b, dtype), g.ints(rows.tolist())]) for b in both]
        names.append(g.add("Unsqueeze", [g.add("Concat", biases, axis=0), g.ints([0])]))
    else:
        names.append("")
    names.append("")  # sequence_lens: every sequence is whole
    states = [h0, c0] if lstm else [h0]
    for state in states:
        names.append(_state(g, state, dtype))
    while names[-1] == "":
        names.pop()
    attrs: dict[str, Any] = {
        "hidden_size": hidden,
        "direction": "reverse" if s.options["reverse"] else "forward",
    }
    op = {"RNNLayer": "RNN", "LSTMLayer": "LSTM", "GRULayer": "GRU"}[s.op]
    if op == "RNN":
        attrs["activations"] = ["Relu" if s.options["relu"] else "Tanh"]
    if op == "GRU":
        attrs["linear_before_reset"] = 1  # PyTorch's n = tanh(x W_n + b_in + r * (h R_n + b_hn))
    made = g.add_many(op, names, [dtype] * (3 if lstm else 1), **attrs)  # Y (, Y_h, Y_c)
    y = g.add("Squeeze", [made[0], g.ints([1])])  # (L, 1, N, H) -> (L, N, H)
    if lstm:
        return g.add("Concat", [y, made[2]], axis=0)  # (L + 1, N, H): c_n as the last step
    return y


def _state(g: Graph, state: Tensor, dtype: Any) -> str:
    """An initial state as ONNX's (1, N, H) input, or "" for none where it is a constant of
    zeros (the default state, of the batch's size; the second forward's must be zeros too)."""
    if not g.known(state) and not state._array.any():
        g.zeros.add(id(state._array))
        return ""
    return g.add("Unsqueeze", [g.value(state, dtype), g.ints([0])])


@converts("ProjectedLSTMLayer")
def _projected_lstm(g: Graph, s: Step) -> str:
    """A projected LSTM's layer in one direction as ONNX's Scan over time (ONNX's LSTM has no
    projection), so the length stays free: the input's share of the gates for every step at
    once, x W_ih^T + b_ih + b_hh (L, N, 4H), scanned (from the end where reverse) by a body
    of one step, PyTorch's: i, f, g, o = the quarters of xw_t + h W_hh^T; c' = sigmoid(f) c
    + sigmoid(i) tanh(g); h' = (sigmoid(o) tanh(c')) W_hr^T. The output is each step's h'
    (L, N, P); h_n and c_n are the step's others."""
    x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr = s.inputs
    dtype = dtype_of(s)
    helper, kind = g.onnx.helper, onnx_type(g.onnx, dtype)
    hidden = w_hh.shape[0] // 4
    xw = g.add("MatMul", [g.value(x, dtype), g.add("Transpose", [g.value(w_ih, dtype)])])
    biases = [g.value(b, dtype) for b in (b_ih, b_hh) if b is not None]
    if biases:
        xw = g.add("Add", [xw, biases[0] if len(biases) == 1 else g.add("Add", biases)])
    w_hh_t = g.add("Transpose", [g.value(w_hh, dtype)])  # (P, 4H), read by the body
    w_hr_t = g.add("Transpose", [g.value(w_hr, dtype)])  # (H, P)
    states = [_scan_state(g, state, g.value(x), dtype) for state in (h0, c0)]

    body: list[Any] = []

    def add(op: str, inputs: list[str], n: int = 1, **attrs: Any) -> list[str]:
        outs = [g.fresh(f"{op.lower()}_in_scan") for _ in range(n)]
        body.append(helper.make_node(op, inputs, outs, name=g.fresh(op), **attrs))
        return outs

    h, c, xw_t = (g.fresh(name) for name in ("h_prev", "c_prev", "xw_t"))
    (gates,) = add("Add", [xw_t, add("MatMul", [h, w_hh_t])[0]])  # (N, 4H)
    i, f, cell, o = add("Split", [gates, g.ints([hidden] * 4)], n=4, axis=1)
    (keep,) = add("Mul", [add("Sigmoid", [f])[0], c])
    (new,) = add("Mul", [add("Sigmoid", [i])[0], add("Tanh", [cell])[0]])
    (c_next,) = add("Add", [keep, new])
    (full,) = add("Mul", [add("Sigmoid", [o])[0], add("Tanh", [c_next])[0]])
    (h_next,) = add("MatMul", [full, w_hr_t])  # (N, P)
    (y,) = add("Identity", [h_next])
    typed = [helper.make_tensor_value_info(name, kind, None) for name in (h, c, xw_t)]
    outs = [helper.make_tensor_value_info(name, kind, None) for name in (h_next, c_next, y)]
    graph = helper.make_graph(body, g.fresh("lstm_step"), typed, outs)
    way = [1 if s.options["reverse"] else 0]
    h_n, c_n, ys = g.add_many(
        "Scan",
        [*states, xw],
        [dtype] * 3,
        body=graph,
        num_scan_inputs=1,
        scan_input_directions=way,
        scan_output_directions=way,
    )
    g.bind(s.more[0]._array, h_n, s)
    g.bind(s.more[1]._array, c_n, s)
    return ys


def _scan_state(g: Graph, state: Tensor, x: str, dtype: Any) -> str:
    """An initial state (N, size): its value, or zeros of x's batch (dim 1) where it is a
    constant of zeros (the default state; the second forward's must be zeros too)."""
    if g.known(state) or state._array.any():
        return g.value(state, dtype)
    g.zeros.add(id(state._array))
    batch = g.add("Gather", [g.add("Shape", [x], dtype=array.int64), g.ints([1])])
    shape = g.add("Concat", [batch, g.ints([state.shape[1]])], axis=0)
    zero = g.onnx.helper.make_tensor("zero", onnx_type(g.onnx, dtype), [1], [0.0])
    return g.add("ConstantOfShape", [shape], dtype=dtype, value=zero)


@converts("TopK")
def _topk(g: Graph, s: Step) -> str:
    """sort, argsort and topk as ONNX's TopK (sort: k the dim's size, read from the shape).
    TopK's order among equal values is the lower index first, as the stable sort's."""
    (x,) = s.inputs
    o = s.options
    dim = o["dim"] % max(x.ndim, 1)
    xs = g.value(x)
    if x.ndim == 0:
        xs = g.add("Reshape", [xs, g.ints([1])])
    if o["k"] is None:
        k = g.add("Gather", [g.add("Shape", [xs], dtype=array.int64), g.ints([dim])])
    else:
        k = g.ints([o["k"]])
    dtypes = [x._array.dtype, array.int64]
    largest = int(bool(o["largest"]))
    values, indices = g.add_many("TopK", [xs, k], dtypes, axis=dim, largest=largest, sorted=1)
    if x.ndim == 0 and s.out.ndim == 0:
        values = g.add("Reshape", [values, g.ints([])])
        indices = g.add("Reshape", [indices, g.ints([])])
    if s.more:
        g.bind(s.more[0]._array, indices, s)
    return values


@converts("ArgMax", "ArgMin", "MaxDim", "MinDim")
def _argmax(g: Graph, s: Step) -> str:
    """argmax and argmin as ONNX's ArgMax and ArgMin (the first of equal values, as ours);
    max and min along a dim as ReduceMax, ReduceMin with their ArgMax, ArgMin."""
    (x,) = s.inputs
    o = s.options
    dim, keep = o["dim"], int(bool(o["keepdim"]))
    largest = s.op in ("ArgMax", "MaxDim")
    xs = g.value(x)
    if dim is None:  # over every element: of the flattened input
        flat = g.add("Reshape", [xs, g.ints([-1])])
        out = g.add(
            "ArgMax" if largest else "ArgMin", [flat], dtype=array.int64, axis=0, keepdims=0
        )
        if keep:
            out = g.add("Reshape", [out, g.ints([1] * x.ndim)])
        return out
    if x.ndim == 0:
        raise UnsupportedOperatorError(
            f"onnx.export: op {s.op} of a 0-dim tensor has no ONNX mapping; got shape {x.shape}"
        )
    dim = dim % x.ndim
    arg = "ArgMax" if largest else "ArgMin"
    indices = g.add(arg, [xs], dtype=array.int64, axis=dim, keepdims=keep, select_last_index=0)
    if s.op in ("ArgMax", "ArgMin"):
        return indices
    g.bind(s.more[0]._array, indices, s)
    return reduce_over(g, "ReduceMax" if largest else "ReduceMin", [xs], [dim], keepdims=keep)
