"""Converters of the primitives of the layers before the sequence models (elementwise math,
products, shapes, indexing, reductions, convolution and pooling): one per primitive, from a
traced Step to the ONNX nodes of its value. The graph and the tracing are export.py's."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from .. import array
from ..tensor import Tensor
from .export import (
    INT64_MAX,
    INT64_MIN,
    Graph,
    UnsupportedOperatorError,
    changes,
    converts,
    dtype_of,
    onnx_type,
    reduce_over,
    resolve,
)
from .trace import Step

_SAME_NAME = ("Add", "Sub", "Mul", "Div", "Pow", "Neg", "Exp", "Log", "Sqrt", "Sin", "Cos")
_ELEMENTWISE = {op: op for op in _SAME_NAME} | {
    "Tanh": "Tanh",
    "Sigmoid": "Sigmoid",
    "Relu": "Relu",
    "Abs": "Abs",
    "Sign": "Sign",
    "Erf": "Erf",
    "Maximum": "Max",
    "Minimum": "Min",
}


@converts(*_ELEMENTWISE)
def _elementwise(g: Graph, s: Step) -> str:
    # Numbers and integer operands take the output's dtype, as the op's promotion did.
    return g.add(_ELEMENTWISE[s.op], [g.value(x, dtype_of(s)) for x in s.inputs])


_COMPARE = {
    "equal": "Equal",
    "less": "Less",
    "less_equal": "LessOrEqual",
    "greater": "Greater",
    "greater_equal": "GreaterOrEqual",
    "logical_and": "And",
    "logical_or": "Or",
}


@converts("Compare")
def _compare(g: Graph, s: Step) -> str:
    """A comparison (both sides in the dtype they promote to) or logical and, or (both as
    bool); not_equal as Not of Equal."""
    a, b = s.inputs
    fn = s.options["fn"]
    if fn.startswith("logical_"):
        common = array.bool_
    else:
        values = [x._array if isinstance(x, Tensor) else x for x in (a, b)]
        common = array.xp.result_type(*values)
    names = [g.value(x, common) for x in (a, b)]
    if fn == "not_equal":
        return g.add("Not", [g.add("Equal", names, dtype=array.bool_)])
    return g.add(_COMPARE[fn], names, dtype=array.bool_)


@converts("Invert")
def _invert(g: Graph, s: Step) -> str:
    (x,) = s.inputs
    if x.dtype != array.bool_:
        raise UnsupportedOperatorError(
            f"onnx.export: op Invert of integers has no ONNX mapping here (of bools, Not); got "
            f"dtype {x.dtype}"
        )
    return g.add("Not", [g.value(x)])


@converts("LayerNorm")
def _layer_norm(g: Graph, s: Step) -> str:
    """ONNX's LayerNormalization from opset 17, else the mean, variance and scale it
    computes, written out."""
    dtype = dtype_of(s)
    x, weight, bias = s.inputs
    k, eps = s.options["k"], s.options["eps"]
    xs = g.value(x, dtype)
    if g.opset >= 17:
        shape = tuple(x.shape[x.ndim - k :])
        scale = g.value(weight) if weight is not None else g.const(array.xp.ones(shape, dtype))
        names = [xs, scale] + ([g.value(bias)] if bias is not None else [])
        return g.add("LayerNormalization", names, axis=-k, epsilon=float(eps))
    axes = list(range(x.ndim - k, x.ndim))
    centred = g.add("Sub", [xs, reduce_over(g, "ReduceMean", [xs], axes, keepdims=1)])
    var = reduce_over(g, "ReduceMean", [g.add("Mul", [centred, centred])], axes, keepdims=1)
    std = g.add("Sqrt", [g.add("Add", [var, g.value(float(eps), dtype)])])
    out = g.add("Div", [centred, std])
    if weight is not None:
        out = g.add("Mul", [out, g.value(weight)])
    if bias is not None:
        out = g.add("Add", [out, g.value(bias)])
    return out


@converts("Log1p", "Expm1")
def _log1p_expm1(g: Graph, s: Step) -> str:
    """ONNX has neither: log(x + 1) and exp(x) - 1 (as exact as the runtime's float)."""
    dtype = dtype_of(s)
    x, one = g.value(s.inputs[0], dtype), g.value(1.0, dtype)
    if s.op == "Log1p":
        return g.add("Log", [g.add("Add", [x, one])])
    return g.add("Sub", [g.add("Exp", [x]), one])


@converts("Embedding")
def _embedding(g: Graph, s: Step) -> str:
    """weight's rows at the indices as Gather (padding_idx and the scale act on gradients only)."""
    names = [g.value(s.inputs[0]), g.value(s.options["indices"], array.int64)]
    return g.add("Gather", names, axis=0)


@converts("InPlace")
def _in_place(g: Graph, s: Step) -> str:
    """The value an in-place op wrote, broadcast to the tensor's shape (as the tensor's
    value before it has it): the tensor is named by it from here on."""
    value, old = g.value(s.inputs[0], dtype_of(s)), g.value(s.out)
    if getattr(s.inputs[0], "shape", ()) == s.out.shape:
        return g.add("Identity", [value])
    return g.add("Expand", [value, g.add("Shape", [old], dtype=array.int64)])


@converts("Cast")
def _cast(g: Graph, s: Step) -> str:
    return g.value(s.inputs[0], dtype_of(s))


@converts("Clamp")
def _clamp(g: Graph, s: Step) -> str:
    x = g.value(s.inputs[0], dtype_of(s))
    tensors = len(s.inputs) > 1  # tensor bounds are inputs, number bounds options
    lo, hi = s.inputs[1:] if tensors else (s.options.get("lo"), s.options.get("hi"))
    bounds = [b for b in (lo, hi) if b is not None]
    if all(isinstance(b, (int, float)) for b in bounds):
        limits = ["" if b is None else g.value(b, dtype_of(s)) for b in (lo, hi)]
        return g.add("Clip", [x, *limits])
    if lo is not None:
        x = g.add("Max", [x, g.value(lo, dtype_of(s))])
    if hi is not None:
        x = g.add("Min", [x, g.value(hi, dtype_of(s))])
    return x


@converts("Where")
def _where(g: Graph, s: Step) -> str:
    cond, x, y = s.inputs
    dtype = dtype_of(s)
    if isinstance(x, Tensor) and isinstance(y, Tensor) and g.known(x) and g.known(y):
        if g.value(x) == g.value(y):  # the same values either way (a gradient stopped at some)
            g.ignore(cond)
            return g.add("Identity", [g.value(x)])
        if not g.known(cond):
            slope = _leaky_slope(g, cond, x, y)
            if slope is not None:
                g.ignore(cond)
                return g.add("LeakyRelu", [g.value(x)], alpha=slope)
    return g.add("Where", [g.value(cond, array.bool_), g.value(x, dtype), g.value(y, dtype)])


@converts("Piecewise")
def _piecewise(g: Graph, s: Step) -> str:
    """x where mask, else slope * x + other: hardtanh (and relu6) as Clip, threshold as Where
    of Greater, their bounds read from the call (trace.py); else, where the mask is x > 0 and
    other a number, leaky_relu as LeakyRelu (other 0) or Where. Each is written only where
    the step's mask and values (in the second forward too) are the ones the graph computes."""
    (x,) = s.inputs
    o = s.options
    kind = "clip" if "clip" in o else "threshold" if "threshold" in o else "leaky"
    if not _piecewise_is(kind, s):
        raise UnsupportedOperatorError(
            f"onnx.export: op Piecewise has no ONNX mapping but as hardtanh, relu6, threshold "
            f"or leaky_relu (a mask x > 0 and a number for the other part); got input shape "
            f"{x.shape}, other {type(o['other']).__name__}"
        )
    if not _piecewise_is(kind, g.again[g.step]):
        raise changes(s, "mask")
    g.follows[g.step] = {"mask", "other"}
    dtype = dtype_of(s)
    xs = g.value(x, dtype)
    if kind == "clip":
        lo, hi = (g.value(float(b), dtype) for b in o["clip"])
        if o["clip"][0] <= o["clip"][1]:
            return g.add("Clip", [xs, lo, hi])
        return g.add("Min", [g.add("Max", [xs, lo]), hi])  # NumPy's clip: hi everywhere
    if kind == "threshold":
        at, value = (g.value(float(b), dtype) for b in o["threshold"])
        return g.add("Where", [g.add("Greater", [xs, at], dtype=array.bool_), xs, value])
    slope, rest = float(o["slope"]), float(o["other"])
    if rest == 0.0:
        return g.add("LeakyRelu", [xs], alpha=slope)
    below = g.add("Add", [g.add("Mul", [xs, g.value(slope, dtype)]), g.value(rest, dtype)])
    keep = g.add("Greater", [xs, g.value(0.0, dtype)], dtype=array.bool_)
    return g.add("Where", [keep, xs, below])


def _piecewise_is(kind: str, s: Step) -> bool:
    """Whether a Piecewise step's mask and other part are those of hardtanh ("clip"),
    threshold or leaky_relu ("leaky") of its input."""
    xp = array.xp
    a, o = s.inputs[0]._array, s.options
    other = o["other"]
    if kind == "clip":
        lo, hi = o["clip"]
        inside = (a > lo) & (a < hi)
        clipped = xp.clip(a, lo, hi)
        return bool(
            o["slope"] == 0
            and xp.array_equal(o["mask"], inside)
            and isinstance(other, array.ndarray)
            and xp.array_equal(other, clipped, equal_nan=True)
        )
    if kind == "threshold":
        at, value = o["threshold"]
        number = isinstance(other, (int, float)) and other == value
        return bool(o["slope"] == 0 and number and xp.array_equal(o["mask"], a > at))
    return isinstance(other, (int, float)) and bool(xp.array_equal(o["mask"], a > 0))


def _leaky_slope(g: Graph, cond: Any, x: Tensor, y: Tensor) -> float | None:
    """leaky_relu's where(x > 0, x, x * slope): its slope, or None for another where."""
    made = g.producers.get(g.value(y))
    if made is None or made.op != "Mul" or made.inputs[0] is not x:
        return None
    slope = made.inputs[1]
    cond = cond._array if isinstance(cond, Tensor) else cond
    if not isinstance(slope, (int, float)) or not array.xp.array_equal(cond, x._array > 0):
        return None
    return float(slope)


@converts("MatMul")
def _matmul(g: Graph, s: Step) -> str:
    return g.add("MatMul", [g.value(x, dtype_of(s)) for x in s.inputs])


@converts("Linear")
def _linear(g: Graph, s: Step) -> str:
    x, weight, bias = s.inputs
    names = [g.value(x, dtype_of(s)), g.value(weight)]
    if bias is not None:
        names.append(g.value(bias))
    if x.ndim == 2:
        return g.add("Gemm", names, transB=1)
    out = g.add("MatMul", [names[0], g.add("Transpose", [names[1]], perm=[1, 0])])
    return g.add("Add", [out, names[2]]) if bias is not None else out


@converts("Einsum")
def _einsum(g: Graph, s: Step) -> str:
    names = [g.value(x, dtype_of(s)) for x in s.inputs]
    return g.add("Einsum", names, equation=s.options["equation"].replace(" ", ""))


@converts("Reshape")
def _reshape(g: Graph, s: Step) -> str:
    """The target shape holds a dim that the second forward leaves as it is as its number;
    one that changes there as 0 (keep) where the input has it at the same place, else as
    the size of a free axis of an input that changes alike (read from the graph's shape),
    else as -1 (one at most): (N, C, H, W) -> (N, C*H*W) with N free is (0, C*H*W), and
    (N*h, L, d) -> (N, h, L, d) with N and L free is (-1, h, L of the input, d)."""
    src, dst = s.inputs[0].shape, s.out.shape
    other = g.again[g.step]
    src2, dst2 = other.inputs[0].shape, other.out.shape
    spec: list[Any] = list(dst)
    if 0 not in dst and len(dst2) == len(dst):
        for j, (n, m) in enumerate(zip(dst, dst2, strict=True)):
            if n != m:
                same = j < len(src) and (src[j], src2[j]) == (n, m)
                spec[j] = 0 if same else _free_axis(g, n, m) or -1
    if all(isinstance(n, int) for n in spec) and spec.count(-1) <= 1:
        g.reshapes[g.step] = spec
        return g.add("Reshape", [g.value(s.inputs[0]), g.ints(spec)])
    _follows(g, s, spec, src2, dst2)
    return g.add("Reshape", [g.value(s.inputs[0]), _shape(g, spec)])


def _free_axis(g: Graph, n: int, m: int) -> tuple[str, int] | None:
    """A free axis of an input of size n here and m in the second forward: (name, axis)."""
    for name, k, axis, size in g.free:
        if size == n and g.varied[k].shape[axis] == m:
            return name, axis
    return None


def _shape(g: Graph, spec: list[Any]) -> str:
    """The shape spec as a graph value: numbers as they are, (name, axis) read from the
    shape of the input name."""
    if all(isinstance(n, int) for n in spec):
        return g.ints(spec)
    parts = []
    for n in spec:
        if isinstance(n, int):
            parts.append(g.ints([n]))
        else:
            shape = g.add("Shape", [n[0]], dtype=array.int64)
            parts.append(g.add("Gather", [shape, g.ints([n[1]])]))
    return g.add("Concat", parts, axis=0)


def _follows(g: Graph, s: Step, spec: list[Any], src2: tuple, dst2: tuple) -> None:
    """Refuse a Reshape or Expand whose shape spec does not give the second forward's."""
    sizes = {(name, axis): g.varied[k].shape[axis] for name, k, axis, _ in g.free}
    made: list[Any] = [sizes[n] if isinstance(n, tuple) else n for n in spec]
    if s.op == "Reshape":
        made = list(resolve([-1 if n == -1 else n for n in made], src2, math.prod(dst2)))
    else:
        made = list(array.xp.broadcast_shapes(tuple(made), src2))
    if spec.count(-1) > 1 or tuple(made) != tuple(dst2):
        raise RuntimeError(
            f"onnx.export: {s.op} to {s.out.shape} cannot follow the dynamic axes: for input "
            f"shape {src2} the graph's shape gives {tuple(made)}, where the forward made "
            f"{tuple(dst2)}"
        )


@converts("Permute")
def _permute(g: Graph, s: Step) -> str:
    return g.add("Transpose", [g.value(s.inputs[0])], perm=list(s.options["dims"]))


@converts("Expand")
def _expand(g: Graph, s: Step) -> str:
    """Dims the input already has at full size are written 1, which Expand's broadcasting
    keeps, so a free batch dim stays free; a dim made larger that the second forward
    changes is the size of a free axis of an input that changes alike."""
    src, dst = s.inputs[0].shape, s.out.shape
    src = (1,) * (len(dst) - len(src)) + tuple(src)
    spec: list[Any] = [1 if a == b else b for a, b in zip(src, dst, strict=True)]
    other = g.again[g.step]
    dst2 = other.out.shape
    if len(dst2) == len(dst):
        for j, (n, m) in enumerate(zip(dst, dst2, strict=True)):
            if spec[j] != 1 and n != m:
                spec[j] = _free_axis(g, n, m) or n
    if all(isinstance(n, int) for n in spec):
        g.reshapes[g.step] = spec
        return g.add("Expand", [g.value(s.inputs[0]), g.ints(spec)])
    _follows(g, s, spec, other.inputs[0].shape, dst2)
    return g.add("Expand", [g.value(s.inputs[0]), _shape(g, spec)])


@converts("Cat")
def _cat(g: Graph, s: Step) -> str:
    return g.add("Concat", [g.value(x, dtype_of(s)) for x in s.inputs], axis=s.options["dim"])


@converts("Stack")
def _stack(g: Graph, s: Step) -> str:
    axis = g.ints([s.options["dim"]])
    pieces = [g.add("Unsqueeze", [g.value(x, dtype_of(s)), axis]) for x in s.inputs]
    return g.add("Concat", pieces, axis=s.options["dim"])


@converts("Pad")
def _pad(g: Graph, s: Step) -> str:
    widths = s.options["widths"]
    pads = [lo for lo, _ in widths] + [hi for _, hi in widths]
    fill = g.value(s.options.get("value", 0.0), dtype_of(s))
    return g.add("Pad", [g.value(s.inputs[0]), g.ints(pads), fill], mode="constant")


@converts("Gather")
def _gather(g: Graph, s: Step) -> str:
    a, index = s.inputs[0], s.inputs[1]
    names = [g.value(a), g.value(index, array.int64)]
    return g.add("GatherElements", names, axis=s.options["dim"])


@converts("GetItem", "Unbind")
def _getitem(g: Graph, s: Step) -> str:
    """Basic indexing (ints, slices, None, ...) as Slice, Squeeze and Unsqueeze; one integer
    array with full slices elsewhere as Gather. A bound is written as given; where the
    second forward shows it follows the end of its dim instead (``x[:, t - 1]`` for a
    sequence of free length t), it is written from the end (-1)."""
    a = s.inputs[0]
    index = _full_index(s.options["index"], a.ndim)
    arrays = [k for k, i in enumerate(index) if isinstance(i, array.ndarray)]
    x = g.value(a)
    if arrays:
        rest = [i for k, i in enumerate(index) if k != arrays[0]]
        full = all(isinstance(i, slice) and i == slice(None) for i in rest)
        if len(arrays) > 1 or index[arrays[0]].dtype == array.bool_ or not full:
            raise UnsupportedOperatorError(
                f"onnx.export: op GetItem with this index has no ONNX mapping (one integer "
                f"array with full slices elsewhere has); got input shape {a.shape}, output "
                f"shape {s.out.shape}"
            )
        idx = g.value(index[arrays[0]], array.int64)
        if id(index[arrays[0]]) in g.aranges:  # arange(n), n a free axis's size: a Slice
            name, _, axis = g.aranges[id(index[arrays[0]])]
            size = g.add("Gather", [g.add("Shape", [name], dtype=array.int64), g.ints([axis])])
            return g.add("Slice", [x, g.ints([0]), size, g.ints([arrays[0]])])
        return g.add("Gather", [x, idx], axis=arrays[0])
    bounds = _bounds(index)
    squeeze = [dim for dim, i in _dims(index) if not isinstance(i, slice)]
    unsqueeze = [k for k, i in enumerate(i for i in index if not _is_int(i)) if i is None]
    if bounds:
        written = _following(g, s, bounds)
        starts, ends, axes_, steps = _slices(bounds, written)
        ints = [g.ints(v) for v in (starts, ends, axes_, steps)]
        x = g.add("Slice", [x, *ints])
    if squeeze:
        x = g.add("Squeeze", [x, g.ints(squeeze)])
    if unsqueeze:
        x = g.add("Unsqueeze", [x, g.ints(unsqueeze)])
    return x


@converts("IndexPut")
def _index_put(g: Graph, s: Step) -> str:
    """x with v written at an index (x[index] = v) as ScatterND: for each dim of x, the
    positions that the index's result takes along it (NumPy's layout: integer arrays, with
    ints among them, broadcast together, their dims in place of theirs where they stand
    together, else in front; a slice's positions a Slice of the dim's Range, its bounds
    written as GetItem writes them, so a free dim stays free; None a dim of 1), expanded to
    the result's shape, and v broadcast to it. Negative array entries count from the end.
    Repeated positions write in an order ONNX leaves open (as PyTorch's index_put_), so
    they are refused where the index is a constant. A bool mask is _masked_put's."""
    a, v = s.inputs
    index = _whole_index(s.options["index"], a.ndim)
    arrays = [i for i in index if isinstance(i, array.ndarray)]
    if any(i.dtype == array.bool_ for i in arrays):
        return _masked_put(g, s, s.options["index"])
    dtype = dtype_of(s)
    x = g.value(a, dtype)
    bounds = _bounds(index)
    chosen = _following(g, s, bounds) if bounds else []
    spans = {b[0]: ([b], [w]) for b, w in zip(bounds, chosen, strict=True)}  # dim -> its bounds
    shape = g.add("Shape", [x], dtype=array.int64)
    zero, one = (g.const(array.xp.asarray(c, dtype=array.int64)) for c in (0, 1))
    # where the dims of the result stand: a slice's or None's own, the arrays' (with the
    # ints) together in place of the first where they stand together, else in front
    together = [k for k, i in enumerate(index) if _is_int(i)]  # the arrays and ints
    joined = not together or together == list(range(together[0], together[-1] + 1))
    rank = max((i.ndim for i in arrays), default=0)
    first = sum(1 for i in index[: together[0]] if not _is_int(i)) if together and joined else 0
    n_out = sum(1 for i in index if not _is_int(i)) + rank
    coords: list[str] = []  # along each dim of x, broadcasting to the result's shape
    axis = 0 if joined else rank  # the next result dim of a slice or None
    for k, i in enumerate(index):
        if joined and together and k == together[0]:
            axis += rank
        if i is None:
            axis += 1
            continue
        d = len(coords)
        size = g.add("Gather", [shape, g.const(array.xp.asarray(d, dtype=array.int64))])
        if isinstance(i, array.ndarray):
            c = _positions(g, i, size)
            lead = first + rank - i.ndim  # broadcast from the right among the arrays' dims
            axes = [j for j in range(n_out) if not lead <= j < first + rank]
        else:
            c = g.add("Range", [zero, size, one], dtype=array.int64)
            if d in spans:
                lo, hi, _, st = (v[0] for v in _slices(*spans[d]))
                c = g.add("Slice", [c, g.ints([lo]), g.ints([hi]), g.ints([0]), g.ints([st])])
            if isinstance(i, slice):
                axes = [j for j in range(n_out) if j != axis]
                axis += 1
            else:  # an int: the one position, a dim of none
                c = g.add("Squeeze", [c, g.ints([0])])
                axes = list(range(n_out))
        coords.append(g.add("Unsqueeze", [c, g.ints(axes)]) if axes else c)
    total = coords[0]
    for c in coords[1:]:
        total = g.add("Add", [total, c])
    _constant_arrays_hold(g, s, index)
    region = g.add("Shape", [total], dtype=array.int64)  # x[index]'s shape
    grid = [g.add("Unsqueeze", [g.add("Expand", [c, region]), g.ints([-1])]) for c in coords]
    where = g.add("Concat", grid, axis=-1)  # (*x[index].shape, x.ndim): each position written
    value = g.value(v, dtype)
    extra = getattr(v, "ndim", 0) - n_out  # leading dims of 1 beyond the result's, as NumPy
    if extra > 0:
        value = g.add("Squeeze", [value, g.ints(list(range(extra)))])
    return g.add("ScatterND", [x, where, g.add("Expand", [value, region])])


def _masked_put(g: Graph, s: Step, index: tuple) -> str:
    """x[mask] = v with the mask over x's first dims (the rest whole) and v the same for
    every position it picks (v broadcasting to the rest): Where(mask, v, x), so the mask may
    come from the inputs. Other bool indexes, and a v of one value per picked position
    (their number depends on the mask's values), are refused."""
    a, v = s.inputs
    mask, rest = index[0], index[1:]  # as given: a bool mask stands for mask.ndim dims
    first = isinstance(mask, array.ndarray) and mask.dtype == array.bool_
    whole = all(i is Ellipsis or (isinstance(i, slice) and i == slice(None)) for i in rest)
    if not first or not whole or getattr(v, "ndim", 0) > a.ndim - mask.ndim:
        raise UnsupportedOperatorError(
            f"onnx.export: op IndexPut with a bool mask has no ONNX mapping but as the first "
            f"index, over the first dims, with one value for every position it picks; got "
            f"input shape {a.shape}, value shape {tuple(getattr(v, 'shape', ()))}, index "
            f"{_describe(index)}; write x = cr.where(mask, value, x) instead"
        )
    dtype = dtype_of(s)
    keep = g.value(mask, array.bool_)
    trailing = list(range(mask.ndim, a.ndim))
    if trailing:
        keep = g.add("Unsqueeze", [keep, g.ints(trailing)])  # (*mask.shape, 1, ...)
    return g.add("Where", [keep, g.value(v, dtype), g.value(a, dtype)])


def _positions(g: Graph, i: Any, size: str) -> str:
    """An index array as int64 positions, a negative one counted from the end (size)."""
    c = g.value(i, array.int64)
    if not g.known(i) and (i >= 0).all():
        return c
    zero = g.const(array.xp.asarray(0, dtype=array.int64))
    below = g.add("Less", [c, zero], dtype=array.bool_)
    return g.add("Where", [below, g.add("Add", [c, size]), c])


def _constant_arrays_hold(g: Graph, s: Step, index: tuple) -> None:
    """Refuse a constant index array that the second forward does not share (its check
    leaves the index out where a bound follows the end), or, with more than one or with
    ints, one whose positions repeat (which ONNX's ScatterND writes in no set order)."""
    xp = array.xp
    other = g.again[g.step]
    theirs = _whole_index(other.options["index"], other.inputs[0].ndim)
    arrays = [i for i in index if isinstance(i, array.ndarray)]
    for i, j in zip(index, theirs, strict=True):
        if isinstance(i, array.ndarray) and not g.known(i) and id(i) not in g.aranges:
            if not isinstance(j, array.ndarray) or not xp.array_equal(i, j):
                raise changes(s, "index")
    if not arrays or any(g.known(i) for i in arrays):
        return
    picked = array.xp.zeros(s.inputs[0].shape, dtype=array.int64)
    array.xp.add.at(picked, index, 1)
    if (picked > 1).any():
        raise UnsupportedOperatorError(
            f"onnx.export: op IndexPut at repeated positions has no ONNX mapping (ScatterND "
            f"writes them in no set order); got input shape {s.inputs[0].shape}, index "
            f"{_describe(index)}"
        )


def _describe(index: tuple) -> str:
    """An index as written, its arrays by their shapes."""
    parts = [
        f"array{i.shape}" if isinstance(i, array.ndarray) else "None" if i is None else repr(i)
        for i in index
    ]
    return f"[{', '.join(parts)}]"


def _is_int(i: Any) -> bool:
    return i is not None and not isinstance(i, slice)


def _full_index(index: tuple, ndim: int) -> tuple:
    """The index with its Ellipsis spelled out as full slices."""
    if any(i is Ellipsis for i in index):
        at = next(k for k, i in enumerate(index) if i is Ellipsis)
        fill = ndim - sum(1 for i in index if i is not None and i is not Ellipsis)
        index = index[:at] + (slice(None),) * fill + index[at + 1 :]
    return index


def _whole_index(index: tuple, ndim: int) -> tuple:
    """The index with its Ellipsis spelled out and a full slice for each dim after it."""
    index = _full_index(index, ndim)
    return index + (slice(None),) * (ndim - sum(1 for i in index if i is not None))


def _dims(index: tuple) -> Iterator[tuple[int, Any]]:
    """The input dim each entry but None indexes, with the entry."""
    dim = 0
    for i in index:
        if i is not None:
            yield dim, i
            dim += 1


def _bounds(index: tuple) -> list[tuple[int, Any, Any]]:
    """(dim, entry, the bounds as written: (start, stop)) of each int and each slice that is
    not the whole dim (an index array has none)."""
    out: list[tuple[int, Any, Any]] = []
    for dim, i in _dims(index):
        if isinstance(i, slice):
            if i != slice(None):
                out.append((dim, i, (i.start, i.stop)))
        elif not isinstance(i, array.ndarray):
            out.append((dim, int(i), (int(i), None)))
    return out


def _slices(bounds: list, written: list[Any]) -> tuple[list[int], ...]:
    """Slice's starts, ends, axes and steps for the bounds as written (a start or stop of
    None is the end its direction runs to)."""
    starts, ends, axes, steps = [], [], [], []
    for (dim, i, _), (lo, hi) in zip(bounds, written, strict=True):
        if isinstance(i, slice):
            step = 1 if i.step is None else i.step
            forward = step > 0
            starts.append(lo if lo is not None else (0 if forward else -1))
            ends.append(hi if hi is not None else (INT64_MAX if forward else INT64_MIN))
        else:  # an int: a slice of one, squeezed away
            step = 1
            starts.append(lo)
            ends.append(lo + 1 if lo != -1 else INT64_MAX)
        axes.append(dim)
        steps.append(step)
    return starts, ends, axes, steps


def _taken(i: Any, written: tuple, n: int) -> list[int]:
    """The positions of a dim of size n that an entry takes with its bounds as written."""
    lo, hi = written
    if not isinstance(i, slice):
        return [lo + n if lo < 0 else lo]
    return list(range(*slice(lo, hi, i.step).indices(n)))


def _from_end(v: Any, n: int) -> Any:
    """A bound v of a dim of size n counted from the other side: from the end if it was
    from the start, and back."""
    if v is None:
        return None
    return v - n if v >= 0 else v + n


def _following(g: Graph, s: Step, bounds: list) -> list[tuple]:
    """Each bound as written where it takes in the second forward what that one takes;
    else counted from the other end where that does (and the index is then left out of
    the plain comparison); else the index changes with the inputs."""
    other = g.again[g.step]
    index = _full_index(other.options["index"], other.inputs[0].ndim)
    theirs = _bounds(index)
    mine = _full_index(s.options["index"], s.inputs[0].ndim)
    kinds = [(d, isinstance(i, slice)) for d, i, _ in bounds]
    if kinds != [(d, isinstance(i, slice)) for d, i, _ in theirs] or [i is None for i in mine] != [
        i is None for i in index
    ]:
        raise changes(s, "index")
    chosen = []
    for (dim, i, (lo, hi)), (_, j, want) in zip(bounds, theirs, strict=True):
        n, m = s.inputs[0].shape[dim], other.inputs[0].shape[dim]
        if isinstance(i, slice) and i.step != j.step:
            raise changes(s, "index")
        target = _taken(j, want, m)
        flip = (_from_end(lo, n), INT64_MAX if hi == n else _from_end(hi, n))
        forms = [(lo, hi), (flip[0], hi), (lo, flip[1]), flip]
        fit = next(
            (w for w in forms[: 4 if isinstance(i, slice) else 2] if _taken(i, w, m) == target),
            None,
        )
        if fit is None:
            raise changes(s, "index")
        chosen.append(fit)
    if chosen != [w for _, _, w in bounds]:
        g.follows[g.step] = {"index"}
    return chosen


_REDUCE = {"Sum": "ReduceSum", "Mean": "ReduceMean", "Amax": "ReduceMax", "Amin": "ReduceMin"}
_REDUCE["LogSumExp"] = "ReduceLogSumExp"


@converts(*_REDUCE)
def _reduce(g: Graph, s: Step) -> str:
    x = g.value(s.inputs[0], dtype_of(s))
    dims = s.options.get("dims")
    keep = int(bool(s.options.get("keepdim", False)))
    op = _REDUCE[s.op]
    if dims is None:
        return g.add(op, [x], keepdims=keep)
    axes = [dims] if isinstance(dims, int) else list(dims)
    return reduce_over(g, op, [x], axes, keepdims=keep)


@converts("Var")
def variance(g: Graph, s: Step) -> str:
    """sum((x - mean)^2) / max(n - correction, 0), with n read from the input's shape, so
    that a free axis reduced over counts what it holds."""
    dtype = dtype_of(s)
    x = g.value(s.inputs[0], dtype)
    dims = s.options.get("dims")
    keep = int(bool(s.options.get("keepdim", False)))
    if dims is None:
        n = g.add("Size", [x], dtype=array.int64)
        mean = g.add("ReduceMean", [x], keepdims=1)
    else:
        axes = [dims] if isinstance(dims, int) else list(dims)
        sizes = g.add("Gather", [g.add("Shape", [x], dtype=array.int64), g.ints(axes)])
        n = reduce_over(g, "ReduceProd", [sizes], [0], keepdims=0)
        mean = reduce_over(g, "ReduceMean", [x], axes, keepdims=1)
    centred = g.add("Sub", [x, mean])
    square = g.add("Mul", [centred, centred])
    if dims is None:
        total = g.add("ReduceSum", [square], keepdims=keep)
    else:
        total = reduce_over(g, "ReduceSum", [square], axes, keepdims=keep)
    correction = g.value(s.options.get("correction", 1), dtype)
    dof = g.add("Sub", [g.add("Cast", [n], dtype=dtype, to=onnx_type(g.onnx, dtype)), correction])
    return g.add("Div", [total, g.add("Max", [dof, g.value(0.0, dtype)])])


@converts("Cumsum")
def _cumsum(g: Graph, s: Step) -> str:
    axis = g.const(array.xp.asarray(s.options["dim"], dtype=array.int64))
    return g.add("CumSum", [g.value(s.inputs[0], dtype_of(s)), axis])


@converts("Softmax", "LogSoftmax")
def _softmax(g: Graph, s: Step) -> str:
    return g.add(s.op, [g.value(s.inputs[0])], axis=s.options["dim"])


def _pads(padding: Any) -> list[int]:
    """((before, after), ...) per spatial axis as ONNX's [befores..., afters...]."""
    return [lo for lo, _ in padding] + [hi for _, hi in padding]


@converts("Convolution", "ConvTranspose")
def _convolution(g: Graph, s: Step) -> str:
    x, weight, bias = s.inputs
    o, kernel = s.options, weight.shape[2:]
    names = [g.value(x), g.value(weight, dtype_of(s))]
    if bias is not None:
        names.append(g.value(bias, dtype_of(s)))
    stride, dilation, padding = o["stride"], o["dilation"], o["padding"]
    geometry = dict(kernel_shape=list(kernel), strides=list(stride), pads=_pads(padding),
                    dilations=list(dilation), group=o["groups"])  # fmt: skip
    if s.op == "Convolution":
        return g.add("Conv", names, **geometry)
    # the sizes past ONNX's formula for the output: its output_padding
    spans = zip(x.shape[2:], o["size"], kernel, stride, dilation, padding, strict=True)
    extra = [m - (n - 1) * t + lo + hi - d * (k - 1) - 1 for n, m, k, t, d, (lo, hi) in spans]
    return g.add("ConvTranspose", names, output_padding=extra, **geometry)


@converts("AvgPool2d")
def _avgpool2d(g: Graph, s: Step) -> str:
    """weight times each window's sum: AveragePool counting the padding (every window then
    divides by kh * kw), times kh * kw * weight."""
    o = s.options
    (kh, kw), weight = o["kernel"], o["weight"]
    out = g.add(
        "AveragePool",
        [g.value(s.inputs[0])],
        kernel_shape=[kh, kw],
        strides=list(o["stride"]),
        pads=_pads(o["padding"]),
        count_include_pad=1,
    )
    if isinstance(weight, float) and kh * kw * weight == 1:  # else a number or an array
        return out
    return g.add("Mul", [out, g.value(kh * kw * weight, dtype_of(s))])


@converts("AdaptiveAvgPool2d", "AdaptiveAvgPool3d")
def _adaptive_avgpool(g: Graph, s: Step) -> str:
    """Each pooled axis times its averaging matrix (a constant): one Einsum."""
    names, terms, out = [g.value(s.inputs[0])], [], "ab"
    for m, axis, pooled in zip(s.options["maps"], "pqr", "uvw", strict=False):
        out += axis if m is None else pooled
        if m is not None:
            names.append(g.value(m.astype(dtype_of(s))))
            terms.append(pooled + axis)
    given = "ab" + "pqr"[: len(s.options["maps"])]
    return g.add("Einsum", names, equation=",".join([given, *terms]) + "->" + out)


@converts("MaxPool2d")
def _maxpool2d(g: Graph, s: Step) -> str:
    o = s.options
    return g.add(
        "MaxPool",
        [g.value(s.inputs[0])],
        kernel_shape=list(o["kernel"]),
        strides=list(o["stride"]),
        pads=_pads(o["padding"]),
        dilations=list(o["dilation"]),
    )
