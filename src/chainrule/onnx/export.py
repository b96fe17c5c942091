"""``export``: a model's forward pass, as recorded once (and once more on other inputs, to
check the graph and to let the shapes it writes follow the free axes), written as an ONNX
graph (built with the ``onnx`` package). Each primitive maps to ONNX operators in
converters.py and sequence.py, registered here; composite layers (BatchNorm, pooling by
convolution) arrive as the primitives they apply."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from .. import array, fastpath
from ..autograd.mode import no_grad
from ..tensor import Tensor
from ..tools.outputs import write_output
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
    constants: str = "refuse",
) -> Any:
    """Run ``model(*args)`` once in eval mode with grad off, and write the ONNX model of what
    it computed to ``f`` (a path or a binary file object); returns the ``onnx.ModelProto``.

    As ``torch.onnx.export``: ``args`` is a Tensor or a tuple of them; the graph's inputs and
    outputs are named ``input_names``/``output_names`` (``input_0``, ``output_0``, ... by
    default); ``dynamic_axes`` maps such a name to the axes left free (``{0: "batch"}`` or
    ``[0]``). Parameters and buffers become initializers named by their ``state_dict`` keys;
    other arrays the forward used are constants. The forward runs a second time, on the
    inputs' values shuffled and 2, 3, ... times as long along the dynamic axes (one factor
    per axis name). The mappings read it to write shapes, bounds and ranges that follow the
    free axes (from the inputs' shapes, from the end, or -1), and export refuses a graph
    that would be wrong for it: other ops (control flow), other constants or options
    (values that went through NumPy or ``.shape`` rather than through ops), a shape that
    cannot follow, or an in-place write that a view would not see. An op with no mapping
    raises UnsupportedOperatorError, naming it. A forward that reads a tensor's value as a
    Python value (``item()``, ``bool()`` as in an ``if``, ``int()``, ``float()``,
    ``tolist()``, ``numpy()``, ``__index__``) is refused, naming the operation and the line
    of the caller's code; with ``constants="allow"`` each such place is reported with a
    TracerWarning instead and the graph holds what it read. Nested tuples of outputs (an
    LSTM's ``(output, (h_n, c_n))``) are flattened in order.
    """
    if constants not in ("refuse", "allow"):
        raise ValueError(f"onnx.export: constants must be 'refuse' or 'allow'; got {constants!r}")
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
    steps, outputs = _trace(model, inputs, constants)
    in_names = _names(input_names, len(inputs), "input")
    out_names = _names(output_names, len(outputs), "output")
    dims = _dynamic_axes(dynamic_axes, in_names + out_names)

    state = model.state_dict(keep_vars=True) if hasattr(model, "state_dict") else {}
    params: dict[int, tuple[str, Any]] = {}
    for key, t in state.items():
        params.setdefault(id(t._array), (key, t._array))  # a tied weight keeps its first name
    varied = _varied(inputs, [dims.get(n, {}) for n in in_names], in_names)
    again, outputs_again = _trace_again(model, varied, constants, steps)

    g = Graph(onnx, opset, params)
    g.again, g.varied = again, varied
    for name, t in zip(in_names, inputs, strict=True):
        g.bind(t._array, name)
    for k, (name, t) in enumerate(zip(in_names, inputs, strict=True)):
        g.free += [(name, k, axis, t.shape[axis]) for axis in dims.get(name, {})]
    for i, step in enumerate(steps):
        g.step = i
        arrays = [x for _, x in _items(step) if isinstance(x, (Tensor, array.ndarray))]
        if step.op != "InPlace" and not any(g.known(x) for x in arrays):
            g.folded.add(i)  # constants in, a constant out: checked where it is used
            continue
        convert = CONVERTERS.get(step.op)
        if convert is None:
            shapes = ", ".join(str(tuple(getattr(x, "shape", ()))) for x in step.inputs)
            raise UnsupportedOperatorError(
                f"onnx.export: op {step.op} has no ONNX mapping; got it applied to input "
                f"shapes {shapes}; supported: {', '.join(sorted(CONVERTERS))}"
            )
        if step.op == "InPlace":
            _alone(g, steps, i, outputs)
        g.bind(step.out._array, convert(g, step), step)
    _check_again(g, steps, again, varied)
    for k, (t, other) in enumerate(zip(outputs, outputs_again, strict=True)):
        if not g.known(t) and not array.xp.array_equal(t._array, other._array):
            raise RuntimeError(
                f"onnx.export: output {k} is not computed from the inputs by recorded ops, and "
                f"changes with them (a value made from .shape, .numpy() or a comparison); the "
                f"graph would hold it as a constant"
            )

    helper = onnx.helper
    for name, t in zip(out_names, outputs, strict=True):
        g.add("Identity", [g.value(t)], name=name)
    nodes, used = g.live(out_names)

    def info(name: str, t: Tensor, other: Tensor) -> Any:
        # an output's dim that the second forward changes is free too, named after it
        free = dims.get(name, {})
        shape = [
            free.get(i, n if n == m else f"{name}_dim_{i}")
            for i, (n, m) in enumerate(zip(t.shape, other.shape, strict=True))
        ]
        return helper.make_tensor_value_info(name, onnx_type(onnx, t._array.dtype), shape)

    graph = helper.make_graph(
        nodes,
        "chainrule",
        [info(n, t, v) for n, t, v in zip(in_names, inputs, varied, strict=True)],
        [info(n, t, v) for n, t, v in zip(out_names, outputs, outputs_again, strict=True)],
        [init for init in g.initializers if init.name in used],
    )
    opsets = [helper.make_opsetid("", opset)]
    proto = helper.make_model(graph, opset_imports=opsets, producer_name="chainrule")
    proto.ir_version = helper.find_min_ir_version_for(opsets)
    onnx.checker.check_model(proto, full_check=True)
    data = proto.SerializeToString()
    if hasattr(f, "write"):
        f.write(data)
    else:  # beside the old file, then over it: a full disk midway leaves the old one whole
        write_output(f, data, "onnx.export")
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


def _trace(
    model: Any, inputs: list[Tensor], constants: str, quiet: bool = False
) -> tuple[list[Step], list[Tensor]]:
    """The steps of one forward in eval mode, with no graph recorded, and its outputs
    flattened; the modes are put back as they were. The fast path is on meanwhile: the
    recurrent layers then apply one primitive per layer and direction, which ONNX's RNN,
    LSTM and GRU take (with it off they apply the cell's step time after time, which one
    graph cannot hold for a free length)."""
    modes = [(m, m.training) for m in model.modules()] if hasattr(model, "modules") else []
    fast = fastpath.enabled()
    try:
        if hasattr(model, "eval"):
            model.eval()
        fastpath.set_enabled(True)
        with no_grad(), recording(constants, quiet) as steps:
            result = model(*inputs)
    finally:
        fastpath.set_enabled(fast)
        for m, training in modes:
            m.training = training
    outputs = list(_flat(result))
    if not outputs or not all(isinstance(t, Tensor) for t in outputs):
        kinds = ", ".join(type(t).__name__ for t in outputs)
        raise TypeError(f"onnx.export: the model must return Tensors; got {kinds}")
    return steps, outputs


def _flat(result: Any) -> Iterator[Any]:
    if isinstance(result, (tuple, list)):
        for item in result:
            yield from _flat(item)
    else:
        yield result


def _varied(inputs: list[Tensor], free: list[dict[int, Any]], names: list[str]) -> list[Tensor]:
    """Other inputs of the same kind: each one's values in another order (so indexes stay in
    range), repeated along its free axes, 2 times along the first axis named, 3 along the
    second, ... (so that two free axes of one size, or a multiple of one and the other, tell
    apart: axes named in a dict by their names, those in a list by their positions); one
    Tensor given twice is varied once."""
    xp = array.xp
    rng = xp.random.default_rng(0)
    labels: list[Any] = []
    done: dict[int, Tensor] = {}
    out = []
    for t, axes, name in zip(inputs, free, names, strict=True):
        if id(t) not in done:
            x = rng.permutation(t._array.reshape(-1)).reshape(t.shape)
            for axis, label in axes.items():
                if str(label).startswith(f"{name}_dynamic_axes_"):  # named in a list
                    label = axis
                if label not in labels:
                    labels.append(label)
                x = xp.concatenate([x] * (2 + labels.index(label)), axis=axis)
            done[id(t)] = Tensor._make(x)
        out.append(done[id(t)])
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


def onnx_type(onnx: Any, dtype: Any) -> int:
    return int(onnx.helper.np_dtype_to_tensor_dtype(array.xp.dtype(dtype)))


class Graph:
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
        self.folded: set[int] = set()  # steps of constants only, left out of the graph
        self.zeros: set[int] = set()  # arrays a mapping left out as all zeros: must stay so
        self.aranges: dict[int, tuple[str, int, int]] = {}  # arange(n) as Range: input, axis
        self.free: list[tuple[str, int, int, int]] = []  # free axes: input name, index, axis, size
        # step -> the options its mapping wrote to follow the second forward (GetItem's
        # index), which it checked against that one: the plain comparison leaves them out
        self.follows: dict[int, set[str]] = {}
        self.step = -1
        self.count = 0
        self.again: list[Step] = []  # the second forward's steps, and its inputs
        self.varied: list[Tensor] = []

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

    def add_many(self, op: str, inputs: list[str], dtypes: list[Any], **attrs: Any) -> list[str]:
        """Append a node of several outputs, of these dtypes; their names."""
        outs = [self.fresh(f"{op.lower()}_out") for _ in dtypes]
        self.nodes.append(
            self.onnx.helper.make_node(op, inputs, outs, name=self.fresh(op), **attrs)
        )
        for out, dtype in zip(outs, dtypes, strict=True):
            self.dtypes[out] = array.xp.dtype(dtype)
        return outs

    def const(self, a: Any, hint: str = "const") -> str:
        name = self.fresh(hint)
        a = array.xp.ascontiguousarray(a) if a.ndim else array.xp.asarray(a)  # 0-d stays 0-d
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
            return self._range(a, arr) or self.const(arr)
        if dtype is not None and self.dtypes[name] != array.xp.dtype(dtype):
            to = onnx_type(self.onnx, dtype)
            return self.add("Cast", [name], dtype=dtype, to=to)
        return name

    def _range(self, given: Any, a: Any) -> str | None:
        """arange(n) of integers where n is the size of a free axis of an input: written as a
        Range up to that size (the second forward checks that it grows with it)."""
        xp = array.xp
        if a.ndim != 1 or a.dtype.kind not in "iu" or len(a) < 2:
            return None
        if not xp.array_equal(a, xp.arange(len(a))):
            return None
        theirs = [
            y._array if isinstance(y, Tensor) else y for _, y in _items(self.again[self.step])
        ]
        arange = [  # the lengths of the second forward's aranges in this step
            len(y)
            for y in theirs
            if isinstance(y, array.ndarray) and y.ndim == 1 and y.dtype.kind in "iu"
            if xp.array_equal(y, xp.arange(len(y)))
        ]
        for name, k, axis, n in self.free:
            if n == len(a) and self.varied[k].shape[axis] in arange:
                zero, one, at = (self.const(xp.asarray(v, dtype=array.int64)) for v in (0, 1, axis))
                stop = self.add("Gather", [self.add("Shape", [name], dtype=array.int64), at])
                out = self.add("Range", [zero, stop, one], dtype=array.int64)
                self.aranges[id(given)] = (name, k, axis)
                return self.value_of(out, a.dtype)
        return None

    def value_of(self, name: str, dtype: Any) -> str:
        """name cast to dtype where it has another."""
        if self.dtypes[name] == array.xp.dtype(dtype):
            return name
        return self.add("Cast", [name], dtype=dtype, to=onnx_type(self.onnx, dtype))

    def live(self, outputs: list[str]) -> tuple[list[Any], set[str]]:
        """The nodes the outputs need, in order, and every name they read (a Scan's body
        included)."""
        needed = set(outputs)
        kept = []
        for node in reversed(self.nodes):
            if needed.intersection(node.output):
                kept.append(node)
                needed.update(i for i in node.input if i)
                for attr in node.attribute:  # a loop's body reads values of the graph too
                    needed.update(i for inner in attr.g.node for i in inner.input if i)
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


def _alone(g: Graph, steps: list[Step], i: int, outputs: list[Tensor]) -> None:
    """Refuse an in-place write (step i) into memory that another value read later shares (a
    view of the tensor, or the tensor a view of another): the graph names each value once,
    so the other would keep its old value there."""
    xp = array.xp
    arr = steps[i].out._array
    shared = {id(a) for a in g.arrays if a is not arr and xp.may_share_memory(a, arr)}
    later = [x for s in steps[i + 1 :] for _, x in _items(s)] + list(outputs)
    if any(id(x._array if isinstance(x, Tensor) else x) in shared for x in later):
        raise RuntimeError(
            f"onnx.export: the in-place {steps[i].options['op']} writes into a tensor of shape "
            f"{arr.shape} that shares memory with another value used after it (a view, or "
            f"the tensor a view of); the graph would keep the old value there; write into "
            f"the tensor itself, or use the out-of-place op"
        )


def _trace_again(
    model: Any, inputs: list[Tensor], constants: str, steps: list[Step]
) -> tuple[list[Step], list[Tensor]]:
    """The steps of a second forward, on other values and other sizes of the free axes,
    which must be the same ops (the mappings read them, to write shapes that follow)."""
    try:
        again, outputs = _trace(model, inputs, constants, quiet=True)
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
    return again, outputs


def _check_again(g: Graph, steps: list[Step], again: list[Step], inputs: list[Tensor]) -> None:
    """Refuse a graph that would be wrong for other inputs: the second forward's steps must
    have the same constants and options (where a mapping wrote them to follow the inputs, as
    it checks), and the shapes written for Reshape and Expand must give its shapes."""
    xp = array.xp
    for i, (step, other) in enumerate(zip(steps, again, strict=True)):
        if i in g.folded:
            continue
        theirs = dict(_items(other))
        for where, x in _items(step):
            if where[0] in g.follows.get(i, ()):
                continue
            y = theirs.get(where, ...)
            if isinstance(x, (Tensor, array.ndarray)):
                a = x._array if isinstance(x, Tensor) else x
                if g.known(a) or id(a) in g.exempt:
                    continue
                y = y._array if isinstance(y, Tensor) else y
                if not isinstance(y, array.ndarray):
                    same = False
                elif id(a) in g.zeros:
                    same = not y.any()
                elif id(a) in g.aranges:
                    _, k, axis = g.aranges[id(a)]
                    n = inputs[k].shape[axis]
                    same = y.ndim == 1 and xp.array_equal(y, xp.arange(n))
                else:  # a NaN constant is the same NaN in both runs
                    same = xp.array_equal(a, y, equal_nan=a.dtype.kind == "f")
            else:
                same = where[0] == "shape" or _equal(x, y)
            if not same:
                raise changes(step, where[0])
        if i in g.reshapes:
            spec, src = g.reshapes[i], other.inputs[0].shape
            if step.op == "Reshape":
                made = resolve(spec, src, other.out._array.size)
            else:
                made = tuple(array.xp.broadcast_shapes(tuple(spec), src))
            if made != other.out.shape:
                raise RuntimeError(
                    f"onnx.export: {step.op} to {step.out.shape} cannot follow the dynamic "
                    f"axes: for input shape {src} the graph's shape {tuple(spec)} gives {made}, "
                    f"where the forward made {other.out.shape}"
                )


def changes(step: Step, where: Any) -> RuntimeError:
    """The error for an argument of step that is not what the graph holds for other inputs."""
    return RuntimeError(
        f"onnx.export: argument {where!r} of {step.op} changes with the inputs through a "
        f"computation no op recorded (a comparison, .numpy(), .item(), a size read from "
        f".shape); the graph would hold it as a constant"
    )


def _equal(x: Any, y: Any) -> bool:
    if type(x) is float and type(y) is float and x != x and y != y:
        return True  # NaN, the same option in both runs
    try:
        return bool(type(x) is type(y) and x == y)
    except ValueError:  # an array inside a tuple, compared elementwise
        return False


def resolve(spec: list[int], src: tuple[int, ...], size: int) -> tuple[int, ...]:
    """The shape ONNX's Reshape makes of spec (0 keeps the input's dim, -1 is inferred)."""
    dims = [src[k] if n == 0 else n for k, n in enumerate(spec)]
    known = 1
    for n in dims:
        known *= n if n != -1 else 1
    return tuple(size // known if n == -1 else n for n in dims)


# ---------------------------------------------------------------------------------------
# Converters: one per primitive, from a Step to the name of the value it made.

Converter = Callable[[Graph, Step], str]
CONVERTERS: dict[str, Converter] = {}


def converts(*ops: str) -> Callable[[Converter], Converter]:
    def register(fn: Converter) -> Converter:
        for op in ops:
            CONVERTERS[op] = fn
        return fn

    return register


def dtype_of(step: Step) -> Any:
    return step.out._array.dtype


def reduce_over(g: Graph, op: str, inputs: list[str], dims: list[int], **attrs: Any) -> str:
    """A reduction over dims: an input from opset 18 (ReduceSum's from 13), else an
    attribute."""
    if op == "ReduceSum" or g.opset >= 18:
        return g.add(op, [*inputs, g.ints(dims)], **attrs)
    return g.add(op, inputs, axes=dims, **attrs)
