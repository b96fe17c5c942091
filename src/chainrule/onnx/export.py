"""``export``: a model's forward pass, as recorded once, written as an ONNX graph (built with
the ``onnx`` package). Each primitive maps to ONNX operators here; composite layers
(BatchNorm, pooling by convolution) arrive as the primitives they apply."""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from .. import array
from ..autograd.mode import no_grad
from ..tensor import Tensor
from .trace import Step, recording

DEFAULT_OPSET = 17
MIN_OPSET = 13  # the opset where Softmax takes one axis and ReduceSum, Squeeze take axes inputs
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


class UnsupportedOperatorError(RuntimeError):
    """The forward pass applied a primitive that has no ONNX mapping here."""


def export(
    model: Any,
    args: Any,
    f: Any,
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
    dynamic_axes: Mapping[str, Any] | None = None,
    opset_version: int | None = None,
) -> Any:
    """Run ``model(*args)`` once in eval mode with grad off, and write the ONNX model of what
    it computed to ``f`` (a path or a binary file object); returns the ``onnx.ModelProto``.

    As ``torch.onnx.export``: ``args`` is a Tensor or a tuple of them; the graph's inputs and
    outputs are named ``input_names``/``output_names`` (``input_0``, ``output_0``, ... by
    default); ``dynamic_axes`` maps such a name to the axes left free (``{0: "batch"}`` or
    ``[0]``). Parameters and buffers become initializers named by their ``state_dict`` keys;
    other arrays the forward used are constants. The forward runs a second time, on the
    inputs' values shuffled and twice as long along the dynamic axes, and export refuses a
    graph that would be wrong for those: other ops (control flow), other constants or
    options (values that went through NumPy or ``.shape`` rather than through ops), or a
    Reshape or Expand whose written shape does not give the new one. An op with no mapping
    raises UnsupportedOperatorError, naming it.
    """
    onnx = _import_onnx()
    opset = DEFAULT_OPSET if opset_version is None else opset_version
    latest = onnx.defs.onnx_opset_version()
    if not MIN_OPSET <= opset <= latest:
        raise ValueError(
            f"onnx.export: opset_version must be between {MIN_OPSET} and {latest}; got {opset}"
        )
    inputs = _as_inputs(args)
    held = model.state_dict(keep_vars=True).values() if hasattr(model, "state_dict") else ()
    if any(t.is_cuda for t in [*inputs, *held]):
        # the graph is the same on any device: traced on a copy on the host, which writes it
        model, inputs = copy.deepcopy(model).cpu(), [t.cpu() for t in inputs]
    steps, outputs = _trace(model, inputs)
    in_names = _names(input_names, len(inputs), "input")
    out_names = _names(output_names, len(outputs), "output")
    dims = _dynamic_axes(dynamic_axes, in_names + out_names)

    state = model.state_dict(keep_vars=True) if hasattr(model, "state_dict") else {}
    params: dict[int, tuple[str, Any]] = {}
    for key, t in state.items():
        params.setdefault(id(t._array), (key, t._array))  # a tied weight keeps its first name
    g = _Graph(onnx, opset, params)
    for name, t in zip(in_names, inputs, strict=True):
        g.bind(t._array, name)
    for i, step in enumerate(steps):
        g.step = i
        convert = CONVERTERS.get(step.op)
        if convert is None:
            shapes = ", ".join(str(tuple(getattr(x, "shape", ()))) for x in step.inputs)
            raise UnsupportedOperatorError(
                f"onnx.export: op {step.op} has no ONNX mapping; got it applied to input "
                f"shapes {shapes}; supported: {', '.join(sorted(CONVERTERS))}"
            )
        g.bind(step.out._array, convert(g, step), step)
    _check_again(g, steps, model, _varied(inputs, [dims.get(n, {}) for n in in_names]))

    helper = onnx.helper
    for name, t in zip(out_names, outputs, strict=True):
        g.add("Identity", [g.value(t)], name=name)
    nodes, used = g.live(out_names)

    def info(name: str, t: Tensor) -> Any:
        free = dims.get(name, {})
        shape = [free.get(i, n) for i, n in enumerate(t.shape)]
        return helper.make_tensor_value_info(name, _onnx_type(onnx, t._array.dtype), shape)

    graph = helper.make_graph(
        nodes,
        "chainrule",
        [info(n, t) for n, t in zip(in_names, inputs, strict=True)],
        [info(n, t) for n, t in zip(out_names, outputs, strict=True)],
        [init for init in g.initializers if init.name in used],
    )
    opsets = [helper.make_opsetid("", opset)]
    proto = helper.make_model(graph, opset_imports=opsets, producer_name="chainrule")
    proto.ir_version = helper.find_min_ir_version_for(opsets)
    onnx.checker.check_model(proto, full_check=True)
    data = proto.SerializeToString()
    if hasattr(f, "write"):
        f.write(data)
    else:
        with open(os.fspath(f), "wb") as file:
            file.write(data)
    return proto


def _import_onnx() -> Any:
    try:
        import onnx
        import onnx.checker
        import onnx.helper
        import onnx.numpy_helper
    except ImportError:
        raise ImportError(
            "onnx.export: needs the onnx package; install it with pip install 'chainrule[onnx]'"
        ) from None
    return onnx


def _as_inputs(args: Any) -> list[Tensor]:
    items = list(args) if isinstance(args, (tuple, list)) else [args]
    out = []
    for x in items:
        if not isinstance(x, Tensor):
            raise TypeError(f"onnx.export: args must be Tensors; got {type(x).__name__}")
        out.append(x)
    return out


def _trace(model: Any, inputs: list[Tensor]) -> tuple[list[Step], list[Tensor]]:
    """The steps of one forward in eval mode, with no graph recorded; the modes are put
    back as they were."""
    modes = [(m, m.training) for m in model.modules()] if hasattr(model, "modules") else []
    try:
        if hasattr(model, "eval"):
            model.eval()
        with no_grad(), recording() as steps:
            result = model(*inputs)
    finally:
        for m, training in modes:
            m.training = training
    outputs = list(result) if isinstance(result, (tuple, list)) else [result]
    if not outputs or not all(isinstance(t, Tensor) for t in outputs):
        kinds = ", ".join(type(t).__name__ for t in outputs)
        raise TypeError(f"onnx.export: the model must return Tensors; got {kinds}")
    return steps, outputs


def _varied(inputs: list[Tensor], free: list[dict[int, Any]]) -> list[Tensor]:
    """Other inputs of the same kind: each one's values in another order (so indexes stay in
    range), repeated to twice the size along its free axes."""
    xp = array.xp
    rng = xp.random.default_rng(0)
    out = []
    for t, axes in zip(inputs, free, strict=True):
        x = rng.permutation(t._array.reshape(-1)).reshape(t.shape)
        for axis in axes:
            x = xp.concatenate([x, x], axis=axis)
        out.append(Tensor._make(x))
    return out


def _names(given: Sequence[str] | None, n: int, kind: str) -> list[str]:
    names = [f"{kind}_{i}" for i in range(n)] if given is None else list(given)
    if len(names) != n:
        raise ValueError(f"onnx.export: {n} {kind}s need {n} {kind}_names; got {len(names)}")
    return names


def _dynamic_axes(given: Mapping[str, Any] | None, names: list[str]) -> dict[str, dict[int, Any]]:
    out: dict[str, dict[int, Any]] = {}
    for name, axes in (given or {}).items():
        if name not in names:
            raise ValueError(
                f"onnx.export: dynamic_axes names {name!r}, which is no input or output; got "
                f"names {names}"
            )
        if isinstance(axes, Mapping):
            out[name] = {int(i): str(label) for i, label in axes.items()}
        else:
            out[name] = {int(i): f"{name}_dynamic_axes_{k + 1}" for k, i in enumerate(axes)}
    return out


def _onnx_type(onnx: Any, dtype: Any) -> int:
    return int(onnx.helper.np_dtype_to_tensor_dtype(array.xp.dtype(dtype)))


class _Graph:
    """The ONNX graph as it is built: nodes, initializers, and the name of every array the
    forward made or took, by the array's identity (the arrays are kept alive meanwhile)."""

    def __init__(self, onnx: Any, opset: int, params: dict[int, tuple[str, Any]]) -> None:
        self.onnx, self.opset, self.params = onnx, opset, params
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self.names: dict[int, str] = {}
        self.dtypes: dict[str, Any] = {}
        self.producers: dict[str, Step] = {}
        self.arrays: list[Any] = []  # keeps every named array alive, so no id is reused
        self.exempt: set[int] = set()  # arrays a mapping has read, which need not be constant
        self.reshapes: dict[int, list[int]] = {}  # step -> the shape given to Reshape or Expand
        self.step = -1
        self.count = 0

    def fresh(self, hint: str) -> str:
        self.count += 1
        return f"{hint}_{self.count}"

    def bind(self, a: Any, name: str, step: Step | None = None) -> None:
        self.names[id(a)] = name
        self.dtypes[name] = a.dtype
        self.arrays.append(a)
        if step is not None:
            self.producers[name] = step

    def add(
        self, op: str, inputs: list[str], dtype: Any = None, name: str | None = None, **attrs: Any
    ) -> str:
        """Append a node; its output's name."""
        out = name or self.fresh(op.lower())
        node = self.onnx.helper.make_node(op, inputs, [out], name=self.fresh(op), **attrs)
        self.nodes.append(node)
        if dtype is not None:
            self.dtypes[out] = array.xp.dtype(dtype)
        elif inputs and inputs[0] in self.dtypes:
            self.dtypes[out] = self.dtypes[inputs[0]]
        return out

    def const(self, a: Any, hint: str = "const") -> str:
        name = self.fresh(hint)
        a = array.xp.ascontiguousarray(a)
        self.initializers.append(self.onnx.numpy_helper.from_array(a, name))
        self.dtypes[name] = a.dtype
        return name

    def ints(self, values: Sequence[int]) -> str:
        return self.const(array.xp.asarray(list(values), dtype=array.int64), "ints")

    def ignore(self, x: Any) -> None:
        """A mapping left x out of the graph: it may change with the inputs."""
        self.exempt.add(id(x._array if isinstance(x, Tensor) else x))

    def known(self, x: Any) -> bool:
        a = x._array if isinstance(x, Tensor) else x
        return id(a) in self.names or id(a) in self.params

    def value(self, x: Any, dtype: Any = None) -> str:
        """The name of x (a Tensor, an array or a number), cast to dtype when given: an
        earlier value, a parameter or buffer (named by its key), or a new constant."""
        a = x._array if isinstance(x, Tensor) else x
        name = self.names.get(id(a))
        if name is None and id(a) in self.params:
            key, param = self.params[id(a)]
            self.initializers.append(self.onnx.numpy_helper.from_array(param, key))
            self.bind(param, key)
            name = key
        if name is None:
            arr = array.xp.asarray(a, dtype=dtype)
            return self.const(arr)
        if dtype is not None and self.dtypes[name] != array.xp.dtype(dtype):
            to = _onnx_type(self.onnx, dtype)
            return self.add("Cast", [name], dtype=dtype, to=to)
        return name

    def live(self, outputs: list[str]) -> tuple[list[Any], set[str]]:
        """The nodes the outputs need, in order, and every name they read."""
        needed = set(outputs)
        kept = []
        for node in reversed(self.nodes):
            if needed.intersection(node.output):
                kept.append(node)
                needed.update(i for i in node.input if i)
        return kept[::-1], needed


def _items(step: Step) -> Iterator[tuple[Any, Any]]:
    """Every argument of a step with where it sits: (position or keyword, index in a
    tuple)."""
    for where, x in [*enumerate(step.inputs), *step.options.items()]:
        if isinstance(x, tuple):
            for k, item in enumerate(x):
                yield (where, k), item
        else:
            yield (where, None), x


def _check_again(g: _Graph, steps: list[Step], model: Any, inputs: list[Tensor]) -> None:
    """Refuse a graph that would be wrong for other inputs: a second forward, on other values
    and other sizes of the free axes, must apply the same ops with the same constants and
    options, and the shapes written for Reshape and Expand must give its shapes."""
    try:
        again, _ = _trace(model, inputs)
    except Exception as err:
        raise RuntimeError(
            f"onnx.export: the forward fails for inputs of other values and other sizes along "
            f"the dynamic axes ({type(err).__name__}: {err}); check dynamic_axes"
        ) from err
    if [s.op for s in steps] != [s.op for s in again]:
        raise RuntimeError(
            "onnx.export: the forward applies other ops for other inputs (control flow on "
            "values or sizes), which one graph cannot hold"
        )
    for i, (step, other) in enumerate(zip(steps, again, strict=True)):
        theirs = dict(_items(other))
        for where, x in _items(step):
            y = theirs.get(where, ...)
            if isinstance(x, (Tensor, array.ndarray)):
                a = x._array if isinstance(x, Tensor) else x
                if g.known(a) or id(a) in g.exempt:
                    continue
                y = y._array if isinstance(y, Tensor) else y
                same = isinstance(y, array.ndarray) and array.xp.array_equal(a, y)
            else:
                same = where[0] == "shape" or _equal(x, y)
            if not same:
                raise RuntimeError(
                    f"onnx.export: argument {where[0]!r} of {step.op} changes with the inputs "
                    f"through a computation no op recorded (a comparison, .numpy(), .item(), a "
                    f"size read from .shape); the graph would hold it as a constant"
                )
        if i in g.reshapes:
            spec, src = g.reshapes[i], other.inputs[0].shape
            if step.op == "Reshape":
                made = _resolve(spec, src, other.out._array.size)
            else:
                made = tuple(array.xp.broadcast_shapes(tuple(spec), src))
            if made != other.out.shape:
                raise RuntimeError(
                    f"onnx.export: {step.op} to {step.out.shape} cannot follow the dynamic "
                    f"axes: for input shape {src} the graph's shape {tuple(spec)} gives {made}, "
                    f"where the forward made {other.out.shape}"
                )


def _equal(x: Any, y: Any) -> bool:
    try:
        return bool(type(x) is type(y) and x == y)
    except ValueError:  # an array inside a tuple, compared elementwise
        return False


def _resolve(spec: list[int], src: tuple[int, ...], size: int) -> tuple[int, ...]:
    """The shape ONNX's Reshape makes of spec (0 keeps the input's dim, -1 is inferred)."""
    dims = [src[k] if n == 0 else n for k, n in enumerate(spec)]
    known = 1
    for n in dims:
        known *= n if n != -1 else 1
    return tuple(size // known if n == -1 else n for n in dims)


# ---------------------------------------------------------------------------------------
# Converters: one per primitive, from a Step to the name of the value it made.

Converter = Callable[[_Graph, Step], str]
CONVERTERS: dict[str, Converter] = {}


def converts(*ops: str) -> Callable[[Converter], Converter]:
    def register(fn: Converter) -> Converter:
        for op in ops:
            CONVERTERS[op] = fn
        return fn

    return register


def _dtype(step: Step) -> Any:
    return step.out._array.dtype


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
def _elementwise(g: _Graph, s: Step) -> str:
    # Numbers and integer operands take the output's dtype, as the op's promotion did.
    return g.add(_ELEMENTWISE[s.op], [g.value(x, _dtype(s)) for x in s.inputs])


@converts("Gelu")
def _gelu(g: _Graph, s: Step) -> str:
    """x * 0.5 * (1 + erf(x / sqrt 2)), or the tanh form: ONNX's own Gelu needs opset 20."""
    dtype = _dtype(s)
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


@converts("LayerNorm")
def _layer_norm(g: _Graph, s: Step) -> str:
    """ONNX's LayerNormalization from opset 17, else the mean, variance and scale it
    computes, written out."""
    dtype = _dtype(s)
    x, weight, bias = s.inputs
    k, eps = s.options["k"], s.options["eps"]
    xs = g.value(x, dtype)
    if g.opset >= 17:
        shape = tuple(x.shape[x.ndim - k :])
        scale = g.value(weight) if weight is not None else g.const(array.xp.ones(shape, dtype))
        names = [xs, scale] + ([g.value(bias)] if bias is not None else [])
        return g.add("LayerNormalization", names, axis=-k, epsilon=float(eps))
    axes = list(range(x.ndim - k, x.ndim))
    centred = g.add("Sub", [xs, _axes(g, "ReduceMean", [xs], axes, keepdims=1)])
    var = _axes(g, "ReduceMean", [g.add("Mul", [centred, centred])], axes, keepdims=1)
    std = g.add("Sqrt", [g.add("Add", [var, g.value(float(eps), dtype)])])
    out = g.add("Div", [centred, std])
    if weight is not None:
        out = g.add("Mul", [out, g.value(weight)])
    if bias is not None:
        out = g.add("Add", [out, g.value(bias)])
    return out


@converts("Log1p", "Expm1")
def _log1p_expm1(g: _Graph, s: Step) -> str:
    """ONNX has neither: log(x + 1) and exp(x) - 1 (as exact as the runtime's float)."""
    dtype = _dtype(s)
    x, one = g.value(s.inputs[0], dtype), g.value(1.0, dtype)
    if s.op == "Log1p":
        return g.add("Log", [g.add("Add", [x, one])])
    return g.add("Sub", [g.add("Exp", [x]), one])


@converts("ScaleGrad")
def _identity(g: _Graph, s: Step) -> str:
    g.ignore(s.inputs[1])  # the scale acts on gradients only
    return g.add("Identity", [g.value(s.inputs[0])])


@converts("Cast")
def _cast(g: _Graph, s: Step) -> str:
    return g.value(s.inputs[0], _dtype(s))


@converts("Clamp")
def _clamp(g: _Graph, s: Step) -> str:
    x = g.value(s.inputs[0], _dtype(s))
    lo, hi = s.options.get("lo"), s.options.get("hi")
    bounds = [b for b in (lo, hi) if b is not None]
    if all(isinstance(b, (int, float)) for b in bounds):
        limits = ["" if b is None else g.value(b, _dtype(s)) for b in (lo, hi)]
        return g.add("Clip", [x, *limits])
    if lo is not None:
        x = g.add("Max", [x, g.value(lo, _dtype(s))])
    if hi is not None:
        x = g.add("Min", [x, g.value(hi, _dtype(s))])
    return x


@converts("Where")
def _where(g: _Graph, s: Step) -> str:
    cond, x, y = s.inputs
    dtype = _dtype(s)
    if isinstance(x, Tensor) and isinstance(y, Tensor) and g.known(x) and g.known(y):
        if g.value(x) == g.value(y):  # the same values either way (embedding's padding_idx)
            g.ignore(cond)
            return g.add("Identity", [g.value(x)])
        if not g.known(cond):
            slope = _leaky_slope(g, cond, x, y)
            if slope is not None:
                g.ignore(cond)
                return g.add("LeakyRelu", [g.value(x)], alpha=slope)
    return g.add("Where", [g.value(cond, array.bool_), g.value(x, dtype), g.value(y, dtype)])


def _leaky_slope(g: _Graph, cond: Any, x: Tensor, y: Tensor) -> float | None:
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
def _matmul(g: _Graph, s: Step) -> str:
    return g.add("MatMul", [g.value(x, _dtype(s)) for x in s.inputs])


@converts("Linear")
def _linear(g: _Graph, s: Step) -> str:
    x, weight, bias = s.inputs
    names = [g.value(x, _dtype(s)), g.value(weight)]
    if bias is not None:
        names.append(g.value(bias))
    if x.ndim == 2:
        return g.add("Gemm", names, transB=1)
    out = g.add("MatMul", [names[0], g.add("Transpose", [names[1]], perm=[1, 0])])
    return g.add("Add", [out, names[2]]) if bias is not None else out


@converts("Einsum")
def _einsum(g: _Graph, s: Step) -> str:
    names = [g.value(x, _dtype(s)) for x in s.inputs]
    return g.add("Einsum", names, equation=s.options["equation"].replace(" ", ""))


@converts("Reshape")
def _reshape(g: _Graph, s: Step) -> str:
    """The target shape says 0 (keep) for the dims it shares in front with the input and -1
    for the first after those, so a free batch dim stays free: (N, C, H, W) -> (N, C*H*W)
    is written (0, -1), and (N*C, 1, H, W) is (-1, 1, H, W)."""
    src, dst = s.inputs[0].shape, s.out.shape
    spec = list(dst)
    if 0 not in dst:
        same = 0
        while same < min(len(src), len(dst)) and src[same] == dst[same]:
            same += 1
        spec[:same] = [0] * same
        if same < len(dst):
            spec[same] = -1
    g.reshapes[g.step] = spec
    return g.add("Reshape", [g.value(s.inputs[0]), g.ints(spec)])


@converts("Permute")
def _permute(g: _Graph, s: Step) -> str:
    return g.add("Transpose", [g.value(s.inputs[0])], perm=list(s.options["dims"]))


@converts("Expand")
def _expand(g: _Graph, s: Step) -> str:
    """Dims the input already has at full size are written 1, which Expand's broadcasting
    keeps, so a free batch dim stays free."""
    src, dst = s.inputs[0].shape, s.out.shape
    src = (1,) * (len(dst) - len(src)) + tuple(src)
    spec = [1 if a == b else b for a, b in zip(src, dst, strict=True)]
    g.reshapes[g.step] = spec
    return g.add("Expand", [g.value(s.inputs[0]), g.ints(spec)])


@converts("Cat")
def _cat(g: _Graph, s: Step) -> str:
    return g.add("Concat", [g.value(x, _dtype(s)) for x in s.inputs], axis=s.options["dim"])


@converts("Pad")
def _pad(g: _Graph, s: Step) -> str:
    widths = s.options["widths"]
    pads = [lo for lo, _ in widths] + [hi for _, hi in widths]
    fill = g.value(s.options.get("value", 0.0), _dtype(s))
    return g.add("Pad", [g.value(s.inputs[0]), g.ints(pads), fill], mode="constant")


@converts("Gather")
def _gather(g: _Graph, s: Step) -> str:
    a, index = s.inputs[0], s.inputs[1]
    names = [g.value(a), g.value(index, array.int64)]
    return g.add("GatherElements", names, axis=s.options["dim"])


@converts("GetItem")
def _getitem(g: _Graph, s: Step) -> str:
    """Basic indexing (ints, slices, None, ...) as Slice, Squeeze and Unsqueeze; one integer
    array with full slices elsewhere as Gather."""
    a = s.inputs[0]
    index = s.options["index"]
    if any(i is Ellipsis for i in index):
        at = next(k for k, i in enumerate(index) if i is Ellipsis)
        fill = a.ndim - sum(1 for i in index if i is not None and i is not Ellipsis)
        index = index[:at] + (slice(None),) * fill + index[at + 1 :]
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
        return g.add("Gather", [x, idx], axis=arrays[0])
    starts, ends, axes, steps, squeeze, unsqueeze = [], [], [], [], [], []
    dim = out_dim = 0
    for i in index:
        if i is None:
            unsqueeze.append(out_dim)
            out_dim += 1
            continue
        if isinstance(i, slice):
            if i != slice(None):
                step = 1 if i.step is None else i.step
                forward = step > 0
                starts.append(i.start if i.start is not None else (0 if forward else -1))
                ends.append(i.stop if i.stop is not None else (INT64_MAX if forward else INT64_MIN))
                axes.append(dim)
                steps.append(step)
            out_dim += 1
        else:  # an int: a slice of one, squeezed away
            k = int(i)
            starts.append(k)
            ends.append(k + 1 if k != -1 else INT64_MAX)
            axes.append(dim)
            steps.append(1)
            squeeze.append(dim)
        dim += 1
    if axes:
        x = g.add("Slice", [x, g.ints(starts), g.ints(ends), g.ints(axes), g.ints(steps)])
    if squeeze:
        x = g.add("Squeeze", [x, g.ints(squeeze)])
    if unsqueeze:
        x = g.add("Unsqueeze", [x, g.ints(unsqueeze)])
    return x


_REDUCE = {"Sum": "ReduceSum", "Mean": "ReduceMean", "Amax": "ReduceMax", "Amin": "ReduceMin"}
_REDUCE["LogSumExp"] = "ReduceLogSumExp"


@converts(*_REDUCE)
def _reduce(g: _Graph, s: Step) -> str:
    x = g.value(s.inputs[0], _dtype(s))
    dims = s.options.get("dims")
    keep = int(bool(s.options.get("keepdim", False)))
    op = _REDUCE[s.op]
    if dims is None:
        return g.add(op, [x], keepdims=keep)
    axes = [dims] if isinstance(dims, int) else list(dims)
    return _axes(g, op, [x], axes, keepdims=keep)


def _axes(g: _Graph, op: str, inputs: list[str], axes: list[int], **attrs: Any) -> str:
    """A reduction over axes: an input from opset 18 (ReduceSum's from 13), else an
    attribute."""
    if op == "ReduceSum" or g.opset >= 18:
        return g.add(op, [*inputs, g.ints(axes)], **attrs)
    return g.add(op, inputs, axes=axes, **attrs)


@converts("Var")
def _var(g: _Graph, s: Step) -> str:
    """sum((x - mean)^2) / max(n - correction, 0), with n read from the input's shape, so
    that a free axis reduced over counts what it holds."""
    dtype = _dtype(s)
    x = g.value(s.inputs[0], dtype)
    dims = s.options.get("dims")
    keep = int(bool(s.options.get("keepdim", False)))
    if dims is None:
        n = g.add("Size", [x], dtype=array.int64)
        mean = g.add("ReduceMean", [x], keepdims=1)
    else:
        axes = [dims] if isinstance(dims, int) else list(dims)
        sizes = g.add("Gather", [g.add("Shape", [x], dtype=array.int64), g.ints(axes)])
        n = _axes(g, "ReduceProd", [sizes], [0], keepdims=0)
        mean = _axes(g, "ReduceMean", [x], axes, keepdims=1)
    centred = g.add("Sub", [x, mean])
    square = g.add("Mul", [centred, centred])
    if dims is None:
        total = g.add("ReduceSum", [square], keepdims=keep)
    else:
        total = _axes(g, "ReduceSum", [square], axes, keepdims=keep)
    correction = g.value(s.options.get("correction", 1), dtype)
    dof = g.add("Sub", [g.add("Cast", [n], dtype=dtype, to=_onnx_type(g.onnx, dtype)), correction])
    return g.add("Div", [total, g.add("Max", [dof, g.value(0.0, dtype)])])


@converts("Cumsum")
def _cumsum(g: _Graph, s: Step) -> str:
    axis = g.const(array.xp.asarray(s.options["dim"], dtype=array.int64))
    return g.add("CumSum", [g.value(s.inputs[0], _dtype(s)), axis])


@converts("Softmax", "LogSoftmax")
def _softmax(g: _Graph, s: Step) -> str:
    return g.add(s.op, [g.value(s.inputs[0])], axis=s.options["dim"])


def _pads(padding: Any) -> list[int]:
    """((top, bottom), (left, right)) as ONNX's [top, left, bottom, right]."""
    return [lo for lo, _ in padding] + [hi for _, hi in padding]


@converts("Conv2d")
def _conv2d(g: _Graph, s: Step) -> str:
    x, weight, bias = s.inputs
    o = s.options
    names = [g.value(x), g.value(weight, _dtype(s))]
    if bias is not None:
        names.append(g.value(bias, _dtype(s)))
    return g.add(
        "Conv",
        names,
        kernel_shape=list(weight.shape[2:]),
        strides=list(o["stride"]),
        pads=_pads(o["padding"]),
        dilations=list(o["dilation"]),
        group=o["groups"],
    )


@converts("MaxPool2d")
def _maxpool2d(g: _Graph, s: Step) -> str:
    o = s.options
    return g.add(
        "MaxPool",
        [g.value(s.inputs[0])],
        kernel_shape=list(o["kernel"]),
        strides=list(o["stride"]),
        pads=_pads(o["padding"]),
        dilations=list(o["dilation"]),
    )
