"""Converters of the primitives that stand for what used to be a composition of others
(std, var_mean, norms, flip, roll, the add-products, the shuffles, group norm, cross, 3-D
average and max pooling, grid_sample, aminmax, prod, prelu, gelu, silu, trace, the reflect,
replicate and circular pads), from a traced Step to the ONNX nodes of its value: each written
out in ONNX's operators as the composition computed it, or as the one ONNX operator that
computes it (MaxPool, GridSample). The graph and the tracing are export.py's; the other
primitives' converters are converters.py's."""

from __future__ import annotations

import math
from typing import Any

from .. import array
from ..ops.padding import positions
from ..ops.windows import strided_windows
from .converters import variance
from .export import (
    INT64_MAX,
    INT64_MIN,
    Graph,
    UnsupportedOperatorError,
    converts,
    dtype_of,
    reduce_over,
)
from .trace import Step


def _reduce(g: Graph, op: str, x: str, dims: Any, keep: bool) -> str:
    """op (ReduceMean, ReduceMax, ...) of x over dims (None: every dim)."""
    if dims is None:
        return g.add(op, [x], keepdims=int(bool(keep)))
    axes = [dims] if isinstance(dims, int) else list(dims)
    return reduce_over(g, op, [x], axes, keepdims=int(bool(keep)))


def _stacked(g: Graph, first: str, second: str) -> str:
    """The two outputs of a several-output primitive as it packs them: (2, *shape)."""
    zero = g.ints([0])
    parts = [g.add("Unsqueeze", [v, zero]) for v in (first, second)]
    return g.add("Concat", parts, axis=0)


@converts("Std")
def _std(g: Graph, s: Step) -> str:
    """sqrt of var's graph (its correction and count read as var's)."""
    return g.add("Sqrt", [variance(g, s)])


@converts("VarMean", "StdMean")
def _var_mean(g: Graph, s: Step) -> str:
    """(var or std, mean) over the dims, packed as the primitive packs them."""
    spread = variance(g, s)
    if s.op == "StdMean":
        spread = g.add("Sqrt", [spread])
    x = g.value(s.inputs[0], dtype_of(s))
    mean = _reduce(g, "ReduceMean", x, s.options.get("dims"), s.options.get("keepdim", False))
    return _stacked(g, spread, mean)


@converts("Aminmax")
def _aminmax(g: Graph, s: Step) -> str:
    """(amin, amax) over the dims, packed as the primitive packs them."""
    x = g.value(s.inputs[0])
    dims, keep = s.options.get("dims"), s.options.get("keepdim", False)
    return _stacked(
        g, _reduce(g, "ReduceMin", x, dims, keep), _reduce(g, "ReduceMax", x, dims, keep)
    )


@converts("Prod")
def _prod(g: Graph, s: Step) -> str:
    x = g.value(s.inputs[0], dtype_of(s))
    return _reduce(g, "ReduceProd", x, s.options.get("dims"), s.options.get("keepdim", False))


@converts("LinalgVectorNorm")
def _vector_norm(g: Graph, s: Step) -> str:
    """p = 2, 1: ReduceL2, ReduceL1; +-inf: the max, min of |x|; 0: the count of nonzeros;
    else (sum |x|^p)^(1/p)."""
    dtype = dtype_of(s)
    x = g.value(s.inputs[0], dtype)
    o = s.options
    p, dims, keep = float(o["p"]), o["dim"], o["keepdim"]
    if p == 2:
        return _reduce(g, "ReduceL2", x, dims, keep)
    if p == 1:
        return _reduce(g, "ReduceL1", x, dims, keep)
    size = g.add("Abs", [x])
    if p in (math.inf, -math.inf):
        return _reduce(g, "ReduceMax" if p > 0 else "ReduceMin", size, dims, keep)
    if p == 0:
        nonzero = g.add("Not", [g.add("Equal", [x, g.value(0.0, dtype)], dtype=array.bool_)])
        count = g.value_of(g.add("Identity", [nonzero], dtype=array.bool_), dtype)
        return _reduce(g, "ReduceSum", count, dims, keep)
    total = _reduce(g, "ReduceSum", g.add("Pow", [size, g.value(p, dtype)]), dims, keep)
    return g.add("Pow", [total, g.value(1.0 / p, dtype)])


@converts("AffineGridGenerator")
def _affine_grid(g: Graph, s: Step) -> str:
    """The base grid (P, dim + 1), a constant of the shapes, @ theta^T: (N, P, dim), viewed
    as (N, *spatial, dim), N kept (Reshape's 0)."""
    dtype = dtype_of(s)
    theta = g.add("Transpose", [g.value(s.inputs[0], dtype)], perm=[0, 2, 1])  # (N, dim + 1, dim)
    product = g.add("MatMul", [g.value(s.options["base"], dtype), theta])  # (N, P, dim)
    return g.add("Reshape", [product, g.ints([0, *s.out.shape[1:]])])


@converts("EuclideanDist")
def _euclidean_dist(g: Graph, s: Step) -> str:
    """cdist by products: sqrt(max(|x1_i|^2 + |x2_j|^2 - 2 x1_i . x2_j, 1e-30))."""
    dtype = dtype_of(s)
    x1, x2 = (g.value(x, dtype) for x in s.inputs)
    rank = len(s.inputs[1].shape)
    swap = [*range(rank - 2), rank - 1, rank - 2]  # the last two dims swapped
    sq1 = reduce_over(g, "ReduceSum", [g.add("Mul", [x1, x1])], [-1], keepdims=1)  # (..., P, 1)
    sq2 = reduce_over(g, "ReduceSum", [g.add("Mul", [x2, x2])], [-1], keepdims=1)  # (..., R, 1)
    dots = g.add("MatMul", [x1, g.add("Transpose", [x2], perm=swap)])  # (..., P, R)
    norms = g.add("Add", [sq1, g.add("Transpose", [sq2], perm=swap)])  # (..., P, R)
    squared = g.add("Sub", [norms, g.add("Mul", [dots, g.value(2.0, dtype)])])
    return g.add("Sqrt", [g.add("Max", [squared, g.value(1e-30, dtype)])])


@converts("Flip")
def _flip(g: Graph, s: Step) -> str:
    """A Slice of step -1 along each dim, from its end to before its start."""
    dims = list(s.options["dims"])
    x = g.value(s.inputs[0])
    if not dims:
        return g.add("Identity", [x])
    n = len(dims)
    ints = [g.ints(v) for v in ([-1] * n, [INT64_MIN] * n, dims, [-1] * n)]
    return g.add("Slice", [x, *ints])


@converts("Roll")
def _roll(g: Graph, s: Step) -> str:
    """Along each dim, the last shift values (the shift taken mod the dim's size) then the
    others: two Slices and a Concat; no dims: of the flattened input, reshaped back."""
    a = s.inputs[0]
    o = s.options
    x = g.value(a)
    shifts, dims = list(o["shifts"]), list(o["dims"])
    flat = not dims
    if flat:
        shape = g.add("Shape", [x], dtype=array.int64)
        x = g.add("Reshape", [x, g.ints([-1])])
        dims, sizes = [0], [math.prod(a.shape)]
    else:
        sizes = [a.shape[d] for d in dims]
    for shift, d, n in zip(shifts, dims, sizes, strict=True):
        k = shift % n if n else 0
        if not k:
            continue
        tail = g.add("Slice", [x, g.ints([-k]), g.ints([INT64_MAX]), g.ints([d])])
        head = g.add("Slice", [x, g.ints([0]), g.ints([-k]), g.ints([d])])
        x = g.add("Concat", [tail, head], axis=d)
    if flat:
        return g.add("Reshape", [x, shape])
    return x if x != g.value(a) else g.add("Identity", [x])


@converts("Addmm", "Baddbmm", "Addmv", "Addr", "Addbmm")
def _addmm(g: Graph, s: Step) -> str:
    """beta * t + alpha * the product (MatMul; Addr: the outer product, Addbmm: the batch's
    products summed); beta 0 reads nothing of t."""
    t, a, b = s.inputs
    o = s.options
    dtype = dtype_of(s)
    xa, xb = g.value(a, dtype), g.value(b, dtype)
    if s.op == "Addr":
        out = g.add(
            "Mul", [g.add("Unsqueeze", [xa, g.ints([1])]), g.add("Unsqueeze", [xb, g.ints([0])])]
        )
    else:
        out = g.add("MatMul", [xa, xb])
        if s.op == "Addbmm":
            out = reduce_over(g, "ReduceSum", [out], [0], keepdims=0)
    alpha, beta = o["alpha"], o["beta"]
    if alpha != 1:
        out = g.add("Mul", [out, g.value(alpha, dtype)])
    if beta == 0:
        g.ignore(t)
        return out
    bias = g.value(t, dtype)
    if beta != 1:
        bias = g.add("Mul", [bias, g.value(beta, dtype)])
    return g.add("Add", [out, bias])


def _shuffled(
    g: Graph, x: str, lead: int, split: list[int], perm: list[int], made: list[int]
) -> str:
    """x's dims after the first ``lead`` reshaped to split, permuted (perm over those), then
    reshaped to made: the leading dims kept as they are (0), so a free batch stays free."""
    keep = [0] * lead
    out = g.add("Reshape", [x, g.ints(keep + split)])
    out = g.add("Transpose", [out], perm=list(range(lead)) + [lead + p for p in perm])
    return g.add("Reshape", [out, g.ints(keep + made)])


@converts("PixelShuffle")
def _pixel_shuffle(g: Graph, s: Step) -> str:
    (x,) = s.inputs
    r = s.options["r"]
    *lead, c, h, w = x.shape
    split, made = [c // (r * r), r, r, h, w], [c // (r * r), h * r, w * r]
    return _shuffled(g, g.value(x), len(lead), split, [0, 3, 1, 4, 2], made)


@converts("PixelUnshuffle")
def _pixel_unshuffle(g: Graph, s: Step) -> str:
    (x,) = s.inputs
    r = s.options["r"]
    *lead, c, h, w = x.shape
    split, made = [c, h // r, r, w // r, r], [c * r * r, h // r, w // r]
    return _shuffled(g, g.value(x), len(lead), split, [0, 2, 4, 1, 3], made)


@converts("ChannelShuffle")
def _channel_shuffle(g: Graph, s: Step) -> str:
    (x,) = s.inputs
    groups = s.options["groups"]
    _, c, *rest = x.shape
    split = [groups, c // groups, *rest]
    perm = [1, 0, *range(2, 2 + len(rest))]
    return _shuffled(g, g.value(x), 1, split, perm, [c, *rest])


@converts("NativeGroupNorm")
def _group_norm(g: Graph, s: Step) -> str:
    """Each group's (x - mean) / sqrt(var + eps), over (N, G, -1), reshaped back, times the
    weight and plus the bias per channel."""
    x, weight, bias = s.inputs
    o = s.options
    dtype = dtype_of(s)
    xs = g.value(x, dtype)
    rows = g.add("Reshape", [xs, g.ints([0, o["groups"], -1])])
    centred = g.add("Sub", [rows, reduce_over(g, "ReduceMean", [rows], [2], keepdims=1)])
    var = reduce_over(g, "ReduceMean", [g.add("Mul", [centred, centred])], [2], keepdims=1)
    std = g.add("Sqrt", [g.add("Add", [var, g.value(float(o["eps"]), dtype)])])
    out = g.add("Reshape", [g.add("Div", [centred, std]), g.add("Shape", [xs], dtype=array.int64)])
    per_channel = g.ints([x.shape[1]] + [1] * (x.ndim - 2))
    if weight is not None:
        out = g.add("Mul", [out, g.add("Reshape", [g.value(weight, dtype), per_channel])])
    if bias is not None:
        out = g.add("Add", [out, g.add("Reshape", [g.value(bias, dtype), per_channel])])
    return out


@converts("NativeBatchNorm")
def _batch_norm(g: Graph, s: Step) -> str:
    """Each channel's (x - mean) / sqrt(var + eps), the running statistics' (read by name)
    or, training, the batch's, times the weight and plus the bias per channel."""
    x, weight, bias, mean, var = s.inputs
    o = s.options
    dtype = dtype_of(s)
    xs = g.value(x, dtype)
    per_channel = g.ints([x.shape[1]] + [1] * (x.ndim - 2))

    def channel(t: Any) -> str:  # a (C,) vector over (N, C, *)
        return g.add("Reshape", [g.value(t, dtype), per_channel])

    if o["training"]:
        axes = [0, *range(2, x.ndim)]
        centred = g.add("Sub", [xs, reduce_over(g, "ReduceMean", [xs], axes, keepdims=1)])
        spread = reduce_over(g, "ReduceMean", [g.add("Mul", [centred, centred])], axes, keepdims=1)
    else:
        centred, spread = g.add("Sub", [xs, channel(mean)]), channel(var)
    std = g.add("Sqrt", [g.add("Add", [spread, g.value(float(o["eps"]), dtype)])])
    out = g.add("Div", [centred, std])
    if weight is not None:
        out = g.add("Mul", [out, channel(weight)])
    if bias is not None:
        out = g.add("Add", [out, channel(bias)])
    return out


@converts("LinalgCross")
def _cross(g: Graph, s: Step) -> str:
    """a's components 1, 2, 0 times b's 2, 0, 1 less a's 2, 0, 1 times b's 1, 2, 0 (Gathers
    along dim), broadcast as the primitive does."""
    a, b = s.inputs
    dtype, dim = dtype_of(s), s.options["dim"]
    xa, xb = g.value(a, dtype), g.value(b, dtype)
    nxt, after = g.ints([1, 2, 0]), g.ints([2, 0, 1])

    def take(v: str, at: str) -> str:
        return g.add("Gather", [v, at], axis=dim)

    first = g.add("Mul", [take(xa, nxt), take(xb, after)])
    return g.add("Sub", [first, g.add("Mul", [take(xa, after), take(xb, nxt)])])


@converts("AvgPool3d")
def _avg_pool3d(g: Graph, s: Step) -> str:
    """As the primitive computes it: the input padded with zeros, each spatial axis's windows
    gathered ((k, n_out) positions) and summed over, times the weight (a number, or each
    window's 1 / divisor)."""
    (x,) = s.inputs
    o = s.options
    dtype = dtype_of(s)
    out = g.value(x, dtype)
    padding = o["padding"]
    if any(lo or hi for lo, hi in padding):
        pads = [0, 0, *(lo for lo, _ in padding), 0, 0, *(hi for _, hi in padding)]
        out = g.add("Pad", [out, g.ints(pads), g.value(0.0, dtype)], mode="constant")
    for axis in range(x.ndim - 1, 1, -1):
        where = array.xp.asarray(o["windows"][axis - 2]).T.astype(array.int64)  # (k, n_out)
        picked = g.add("Gather", [out, g.const(where)], axis=axis)
        out = reduce_over(g, "ReduceSum", [picked], [axis], keepdims=0)
    weight = o["weight"]
    if isinstance(weight, float) and weight == 1:
        return out
    return g.add("Mul", [out, g.value(array.xp.asarray(weight, dtype=dtype))])


@converts("PreluKernel")
def _prelu(g: Graph, s: Step) -> str:
    """ONNX's PRelu, the weight one slope or one per channel (dim 1)."""
    x, weight = s.inputs
    dtype = dtype_of(s)
    slope = g.value(weight, dtype)
    if math.prod(weight.shape) != 1:
        if x.ndim < 2:
            raise UnsupportedOperatorError(
                f"onnx.export: op PreluKernel with one slope per channel needs an input of 2 "
                f"dims or more; got input shape {x.shape}, weight shape {weight.shape}"
            )
        slope = g.add("Reshape", [slope, g.ints([-1] + [1] * (x.ndim - 2))])
    return g.add("PRelu", [g.value(x, dtype), slope])


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


@converts("Trace")
def _trace(g: Graph, s: Step) -> str:
    """The matrix times the identity of its shape (a constant), summed."""
    (a,) = s.inputs
    dtype = dtype_of(s)
    eye = g.const(array.xp.eye(*a.shape, dtype=dtype))
    return g.add("ReduceSum", [g.add("Mul", [g.value(a, dtype), eye])], keepdims=0)


def _strided(where: Any, n_in: int) -> tuple[int, int, int]:
    """An axis' windows ((n_out, k) positions in the padded axis) as ONNX's kernel, stride and
    dilation, where they are a strided pool's (window i reads i*stride + p*dilation, the first
    from 0): a single window's stride is one past the axis' last start, so that exactly one
    fits."""
    n_out, k = where.shape
    dilation = int(where[0, 1] - where[0, 0]) if k > 1 else 1
    stride = int(where[1, 0] - where[0, 0]) if n_out > 1 else max(1, n_in - (k - 1) * dilation)
    made = strided_windows(n_out, k, stride, dilation)
    if n_out < 1 or stride < 1 or dilation < 1 or not array.host.array_equal(where, made):
        raise UnsupportedOperatorError(
            "onnx.export: op MaxPool3dWithIndices with windows other than a strided pool's has "
            "no ONNX mapping"
        )
    return k, stride, dilation


@converts("MaxPool3dWithIndices")
def _max_pool3d(g: Graph, s: Step) -> str:
    """ONNX's MaxPool over the 3 spatial axes (its values; the indices are no output of the
    primitive): kernel, stride and dilation read from the windows, the padding (ceil_mode's
    grown after) as pads, or as a Pad of -inf first where a pad reaches the kernel's size,
    which MaxPool's pads may not."""
    (x,) = s.inputs
    o = s.options
    padding = [tuple(int(p) for p in pair) for pair in o["padding"]]
    sizes = [n + lo + hi for n, (lo, hi) in zip(x.shape[2:], padding, strict=True)]
    kernel, stride, dilation = zip(
        *(_strided(w, n) for w, n in zip(o["windows"], sizes, strict=True)), strict=True
    )
    pads = [lo for lo, _ in padding] + [hi for _, hi in padding]
    dtype = dtype_of(s)
    out = g.value(x, dtype)
    if any(p >= k for p, k in zip(pads, kernel * 2, strict=True)):
        lowest = -math.inf if array.is_floating(dtype) else array.xp.iinfo(dtype).min
        fill = g.value(array.xp.asarray(lowest, dtype=dtype))
        out = g.add("Pad", [out, g.ints([0, 0, *pads[:3], 0, 0, *pads[3:]]), fill])
        pads = [0] * 6
    return g.add(
        "MaxPool",
        [out],
        kernel_shape=list(kernel),
        strides=list(stride),
        pads=pads,
        dilations=list(dilation),
    )


_GRID_MODES = {"bilinear": "linear", "nearest": "nearest", "bicubic": "cubic"}  # opset 20's


@converts("GridSampler2d", "GridSampler3d")
def _grid_sample(g: Graph, s: Step) -> str:
    """ONNX's GridSample (opset 16; 3-D input from opset 20, which names the modes linear and
    cubic), the padding mode and align_corners as given."""
    x, grid = s.inputs
    o = s.options
    mode, padding, corners = o["mode"], o["padding"], o["corners"]
    need = 16 if x.ndim == 4 else 20
    if g.opset < need:
        raise UnsupportedOperatorError(
            f"onnx.export: op {s.op} (grid_sample of a {x.ndim}-D input) needs opset_version "
            f"{need} or later (ONNX's GridSample); got opset_version {g.opset}"
        )
    dtype = dtype_of(s)
    return g.add(
        "GridSample",
        [g.value(x, dtype), g.value(grid, dtype)],
        mode=_GRID_MODES[mode] if g.opset >= 20 else mode,
        padding_mode=padding,
        align_corners=int(bool(corners)),
    )


@converts("IndexPad")
def _index_pad(g: Graph, s: Step) -> str:
    """F.pad's reflect, replicate and circular modes: along each padded dim, one Gather of its
    source positions (which holds at any size of the dims it does not pad)."""
    a, padding, mode = s.inputs[0], s.options["padding"], s.options["mode"]
    x = g.value(a)
    for i in range(len(padding) // 2):
        dim = a.ndim - 1 - i
        where = positions(a.shape[dim], padding[2 * i], padding[2 * i + 1], mode)
        x = g.add("Gather", [x, g.value(where, array.int64)], axis=dim)
    return x
