"""Function: one differentiable primitive, forward and backward side by side, and the graph
node that records it once applied.

The contract every op in ops/ follows is stated here once; the backward walk is engine.py's.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from .. import array
from ..array.tensor_type import tensor_type
from .hooks import add_hook
from .mode import state

if TYPE_CHECKING:
    from ..tensor import Tensor


class Function:
    """A differentiable primitive and, once applied, the graph node that recorded it.

    The contract, for every subclass:

    - ``forward(self, *arrays, **options) -> array`` computes on arrays, saving on ``self``
      whatever backward needs.
    - ``backward(self, grad, out) -> tuple`` is the rule, written with Tensor ops so that
      it is differentiable (create_graph and anomaly mode run it as it is): ``grad`` is the
      gradient of the output Tensor ``out``; it returns one gradient (a Tensor, or None) per
      input, in the *output's* broadcast shape. The engine alone sums a gradient back to
      its input's shape and dtype.
    - ``rule`` (a class attribute) is the rule as one line of text, in the words of the
      backward pass (``grad``, ``out``, inputs a, b, ...): what explanations and drawings
      show. The docstring's first line gives the forward formula.
    - Optionally, ``backward_arrays(self, grad, out)``: the same rule on arrays (``grad``
      and ``out`` arrays, arrays or None returned), for first-order gradients when it pays
      to skip the Tensor ops' bookkeeping (see fastpath/rules.py, which decides when it runs).
      It must not write into ``grad``, which other nodes may hold. A rule of operators on
      ``grad``, ``out`` and saved arrays only reads the same on arrays: such an op says
      ``backward_arrays = backward``.

    - What the rule reads, for the version check (see engine.check_versions): by default
      a rule reads its inputs' values; an op whose rule does not says ``saves_inputs =
      False``, one that reads each input only for the others' gradients (a product) says
      ``saves_inputs = "others"``, and one whose rule reads its output's values says
      ``saves_out = True``. An op
      whose output is a view of its first input (it shares the array) says ``view = True``,
      so the two share one version counter.

    ``self.inputs`` holds the inputs (Tensors, or plain numbers), and
    ``self.needs_input_grad`` says which want a gradient; ``self.versions`` the version of
    each input Tensor as the node saw it. The node keeps its inputs, never its output, so a
    graph holds no reference cycle.
    """

    __slots__ = ("inputs", "needs_input_grad", "__dict__")

    inputs: tuple[Any, ...] | None
    needs_input_grad: tuple[bool, ...]
    versions: tuple[int | None, ...]
    stamp = -1  # the process's count of in-place writes when the node was recorded (freed: -1)
    out_version: int
    rule = ""
    backward_arrays: Any = None  # a method where an op has one (see the contract above)
    saves_inputs: bool | str = True
    saves_out = False
    view = False
    node_hooks: dict[str, dict[int, Any]] | None = None  # register_hook's and register_prehook's
    users_rule = False  # backward is user code (a custom Function's), whose arrays it may keep

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def backward(self, grad: Tensor, out: Tensor) -> tuple[Tensor | None, ...]:
        raise NotImplementedError

    @property
    def op(self) -> str:
        """The primitive's own name (``Mul``), as errors and explanations give it."""
        return type(self).__name__

    # -- the node as PyTorch shows it (grad_fn.name(), next_functions, hooks, metadata) ---

    def name(self) -> str:
        """PyTorch's name for this node (``MulBackward0``, ``AddmmBackward0``), also once
        backward has freed it (release keeps the name where it depends on the call)."""
        return self.__dict__.get("_name") or torch_name(self)

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        """Where each input's gradient goes, as PyTorch gives it: ``(node, 0)`` for an input
        made by an op, ``(AccumulateGrad, 0)`` for a leaf that requires grad, ``(None, 0)``
        for the rest (numbers among them); also once backward has freed the node."""
        ends = self.__dict__["_edges"] if self.inputs is None else edges(self.inputs)
        T = tensor_type()
        return tuple(((AccumulateGrad.of(e) if isinstance(e, T) else e), 0) for e in ends)

    @property
    def metadata(self) -> dict:
        """A dict of the user's, kept with the node (PyTorch's ``grad_fn.metadata``)."""
        return self.__dict__.setdefault("_metadata", {})

    def register_prehook(self, hook: Any) -> Any:
        """``hook(grad_outputs)`` runs as the backward pass reaches this node, before its
        rule; it may return new grad_outputs (a tuple of one gradient)."""
        return self._hook("pre", hook)

    def register_hook(self, hook: Any) -> Any:
        """``hook(grad_inputs, grad_outputs)`` runs once the rule has given the inputs'
        gradients; it may return new grad_inputs (one per input, None for none)."""
        return self._hook("post", hook)

    def _hook(self, kind: str, hook: Any) -> Any:
        if self.node_hooks is None:
            self.node_hooks = {"pre": {}, "post": {}}
        return add_hook(self.node_hooks[kind], hook)

    def __getattr__(self, attr: str) -> Any:
        """PyTorch's ``_saved_self`` and ``_saved_other``: the inputs the node keeps."""
        if attr in ("_saved_self", "_saved_other"):
            inputs = getattr(self, "inputs", None)
            if inputs is None:
                raise RuntimeError(f"{self.op}: {attr}: the graph was freed by backward")
            return inputs[0 if attr == "_saved_self" else 1]
        raise AttributeError(f"{type(self).__name__!r} node has no attribute {attr!r}")

    def release(self) -> None:
        """Free what the node saved (its inputs, their versions, forward's arrays) once a
        backward pass without retain_graph has used it; a later pass finds ``inputs`` None and
        says the graph was freed. What PyTorch's node keeps stays, so that printing it
        after backward still works: its edges (the inputs' nodes, never their arrays),
        its name and the user's metadata."""
        kept = self.__dict__
        name = torch_name(self) if type(self).__name__ in NAMED_BY_CALL else None
        meta = kept.get("_metadata")
        ends = edges(self.inputs or ())
        self.inputs = None
        kept.clear()
        kept["_edges"] = ends
        if name is not None:
            kept["_name"] = name
        if meta is not None:
            kept["_metadata"] = meta

    @classmethod
    def apply(cls, *inputs: Any, **options: Any) -> Tensor:
        """Run forward on the inputs' arrays; record a node if grad mode is on and an input
        requires grad. Inputs are Tensors or plain Python numbers."""
        T = tensor_type()
        fn = cls()
        # One loop for the arrays, what needs a gradient and the versions the node would
        # record: cheaper than three comprehensions, each a call of its own (until Python
        # 3.12), on the hot path of every op.
        arrays, needs, seen = [], [], []
        for x in inputs:
            if isinstance(x, T):
                arrays.append(x._array)
                needs.append(x.requires_grad)
                vc = x._vc
                seen.append(0 if vc is None else vc[0])
            else:
                arrays.append(x)
                needs.append(False)
                seen.append(None)
        if ACCELERATED:
            arrays = _same_device(cls.__name__.lower(), arrays, inputs)
        try:
            out_data = fn.forward(*arrays, **options)
        except Exception as err:
            # NumPy's own message names neither the op nor the shapes; add them.
            raise _forward_error(cls.__name__.lower(), err, inputs) from None
        record = state.grad_enabled and True in needs
        out = T._make(out_data, record)
        if cls.view and shares_memory(out_data, arrays[0]):
            make_view(out, inputs[0])
        if record:
            fn.inputs = inputs
            fn.needs_input_grad = tuple(needs)
            fn.versions = tuple(seen)  # as versions(inputs) gives them
            fn.stamp = writes[0]
            if cls.saves_out:
                fn.out_version = version(out)
            out.grad_fn = fn
        if state.anomaly and not all_finite(out_data) and all(all_finite(x) for x in inputs):
            _forward_anomaly(cls.__name__, inputs, out_data)
        return out


ACCELERATED = array.ACCELERATED  # whether arrays may live on two devices in this process
_HOST = array.host.ndarray
_ACCEL = None if array.accelerator is None else array.accelerator.ndarray
_ONE_GPU = array.cuda_count() <= 1  # then CUDA arrays of one module share one device


def _same_device(op: str, arrays: list, inputs: tuple) -> list:
    """An op's input arrays, checked to be on one device, as PyTorch checks them: a 0-d CPU
    tensor beside CUDA ones on one GPU is a number, and moved (as PyTorch allows); anything
    else on two devices is PyTorch's error, naming the op, the devices and the shapes."""
    first = None  # the common case first, in one loop: every array of one module
    for a in arrays:
        t = type(a)
        if t is _HOST or t is _ACCEL:
            if first is None:
                first = t
            elif t is not first:
                break
    else:
        if first is not _ACCEL or _ONE_GPU:
            return arrays
    arrs = [a for a in arrays if isinstance(a, array.ndarray)]
    devs = {array.device_of(a) for a in arrs}
    if len(devs) < 2:
        return arrays
    gpus = [a for a in arrs if type(a) is not _HOST]
    if len({array.device_of(a) for a in gpus}) == 1 and all(
        a.ndim == 0 for a in arrs if type(a) is _HOST
    ):
        return [array.from_host(a, gpus[0]) if type(a) is _HOST else a for a in arrays]
    names = " and ".join(sorted((str(d) for d in devs), reverse=True))
    shapes = ", ".join(
        f"{tuple(x.shape)} on {x.device}" for x in inputs if isinstance(x, tensor_type())
    )
    raise RuntimeError(
        f"{op}: expected all tensors to be on the same device, but found at least two "
        f"devices, {names}; got {shapes}"
    )


def version(t: Any) -> int:
    """How many times ``t``'s array was written in place through ``t`` or a tensor sharing
    its counter (a view, ``detach``; not ``.data``, which counts its own writes)."""
    vc = t._vc
    return 0 if vc is None else vc[0]


def versions(inputs: tuple[Any, ...]) -> tuple[int | None, ...]:
    """Each input Tensor's version (None for a plain number), as a node records them."""
    T = tensor_type()
    out: list[int | None] = []  # a loop, not a comprehension: see Function.apply
    for x in inputs:
        if isinstance(x, T):
            vc = x._vc
            out.append(0 if vc is None else vc[0])
        else:
            out.append(None)
    return tuple(out)


def shares_memory(out: Any, of: Any) -> bool:
    """Whether the array an op made lies in its input's memory, a view of it. NumPy and CuPy
    give a view the array that owns the memory as its base, so identity answers the common
    cases (about 20 ns, where may_share_memory takes 200); any other base asks NumPy."""
    base = out.base
    if base is None:  # it owns its memory: a copy
        return False
    return base is of or base is of.base or bool(array.xp.may_share_memory(out, of))


def make_view(out: Any, of: Any) -> None:
    """Make ``out``, which shares ``of``'s array, a view of it: one version counter, and
    the base (``of``'s own base where it is a view). The counter's box also holds a weak
    reference to each view made of it, which a write that joins the graph re-points at the
    base's new node (tensor/views.py); dead ones are dropped as the box doubles in size."""
    box = counter(of)
    out._vc, out._base = box, of._base if of._base is not None else of
    if of._multi_output is not None:  # a view of one of split's outputs is one too
        out._multi_output = of._multi_output
    box.append(weakref.ref(out))
    n = len(box)
    if n > 64 and not n & (n - 1):
        box[1:] = [r for r in box[1:] if r() is not None]


class Counter(list):
    """A version counter's box: the count first, then weak references to the views made of
    the tensor (make_view). Pickled and copied as the count alone, the references having no
    meaning anywhere else (and a weak reference no pickled form)."""

    __slots__ = ()

    def __reduce__(self) -> tuple[type, tuple[list[int]]]:
        return Counter, ([self[0]],)


def counter(t: Any) -> list[Any]:
    """``t``'s version counter, a Counter that views of ``t`` share; made on first use, as
    most tensors are never written in place."""
    vc = t._vc
    if vc is None:
        vc = t._vc = Counter([0])
    return vc


# How many in-place writes this process has recorded, in every thread: a node stamped
# with the count when it was recorded, and finding it unchanged in backward, knows that
# nothing it saved was written since, and skips comparing its inputs' versions one by one
# (engine.unchanged). Any change of the count, in any thread, makes every node check.
writes = [0]


def bump(t: Any) -> None:
    """Record that ``t``'s array was written in place."""
    counter(t)[0] += 1
    writes[0] += 1


def arrays_of(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """A node's inputs as its forward saw them, for ``backward_arrays``: each Tensor's array,
    anything else as it is."""
    T = tensor_type()
    out = []  # a loop, not a comprehension: see Function.apply
    for x in inputs:
        out.append(x._array if isinstance(x, T) else x)
    return tuple(out)


def all_finite(x: Any) -> bool:
    """Whether a Tensor, array or number holds no NaN or inf (integers always)."""
    arr = x._array if isinstance(x, tensor_type()) else x
    if isinstance(arr, array.ndarray) and arr.dtype.kind != "f":
        return True
    return bool(array.xp.all(array.xp.isfinite(arr)))


def _forward_anomaly(op: str, inputs: tuple[Any, ...], out: Any) -> None:
    """An op made NaN or inf from finite inputs: raise, naming it, its input shapes and what
    it made; inside a backward formula, only note it for the engine's check of the node."""
    ops = state.backward_ops
    if ops is not None:
        ops.append(op)
        return
    shapes = listed([str(tuple(getattr(x, "shape", ()))) for x in inputs])
    xp = array.xp
    nan = int(xp.isnan(out).sum())
    inf = int(xp.size(out)) - int(xp.isfinite(out).sum()) - nan
    raise RuntimeError(
        f"{op}: forward produced NaN or inf from finite inputs (detect_anomaly); got input "
        f"shape{'s' if len(inputs) > 1 else ''} {shapes}; the output of shape "
        f"{xp.shape(out)} holds {nan} NaN and {inf} inf"
    )


def _forward_error(op: str, err: Exception, inputs: tuple[Any, ...]) -> Exception:
    """The exception a failed forward re-raises: the same type, naming the op and the shapes
    (and, for a TypeError, the dtypes) of its inputs."""
    msg = str(err).rstrip(". ")
    if msg.startswith(op + ":"):  # already says which op and what is wrong
        return err
    shapes = listed([str(tuple(getattr(x, "shape", ()))) for x in inputs])
    if "broadcast" in msg:
        text = f"{op}: shapes {shapes} cannot be broadcast together"
    else:
        text = f"{op}: {msg}; got shape{'s' if len(inputs) > 1 else ''} {shapes}"
        if isinstance(err, TypeError):
            text += ", dtypes " + listed(
                [str(getattr(x, "dtype", type(x).__name__)) for x in inputs]
            )
    try:
        return type(err)(text)
    except Exception:  # an exception type that needs other arguments keeps its own message
        return err


def listed(items: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return " and ".join([", ".join(items[:-1]), items[-1]]) if len(items) > 1 else "".join(items)


class AccumulateGrad:
    """PyTorch's node for a leaf: the end of each edge into a tensor that requires grad and
    was made by no op, where backward adds the gradient into ``variable.grad``."""

    next_functions: tuple = ()

    def __init__(self, variable: Any) -> None:
        self.variable = variable

    @staticmethod
    def of(leaf: Any) -> AccumulateGrad:
        """The leaf's one AccumulateGrad, kept on it as PyTorch keeps it."""
        node = leaf.__dict__.get("_accumulate_grad")
        if node is None:
            node = leaf.__dict__["_accumulate_grad"] = AccumulateGrad(leaf)
        return node

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {id(self):#x}>"


# PyTorch's names for the nodes of chainrule's primitives, where they are not <Op>Backward0
_TORCH_NAMES = {
    "Reshape": "ViewBackward0", "GetItem": "IndexBackward0",
    "LayerNorm": "NativeLayerNormBackward0",
    "LogSumExp": "LogsumexpBackward0", "CrossEntropy": "NllLossBackward0",
    "NLLLoss": "NllLossBackward0", "Conv2d": "ConvolutionBackward0",
    "ConvTranspose2d": "ConvolutionBackward0", "MaxPool2d": "MaxPool2DWithIndicesBackward0",
    "Pad": "ConstantPadNdBackward0",
    "ScaledDotProductAttention": "ScaledDotProductFlashAttentionForCpuBackward0",
    "Einsum": "ViewBackward0", "Amax": "AmaxBackward0", "Amin": "AminBackward0",
    "CopySlices": "CopySlices", "AsStrided": "AsStridedBackward0",
}  # fmt: skip


def edges(inputs: tuple[Any, ...]) -> list[Any]:
    """Where each input's gradient goes, as next_functions gives it: the node that made it,
    the input itself for a leaf that requires grad (its AccumulateGrad's variable), or None
    (a number, or a tensor that wants no gradient)."""
    T = tensor_type()
    out = []  # a loop, not a comprehension: see Function.apply
    for x in inputs:
        out.append((x.grad_fn or x) if isinstance(x, T) and x.requires_grad else None)
    return out


# The ops whose PyTorch name depends on how they were called (see torch_name): release
# keeps theirs, which it could not tell once the inputs and options are gone.
NAMED_BY_CALL = frozenset(
    {"Pow", "MatMul", "Linear", "GetItem", "Permute", "Piecewise", "Sum", "Mean", "Clamp",
     "FloorDivide", "Cast"}
)  # fmt: skip


def torch_name(fn: Function) -> str:
    """The name PyTorch gives the node of the same op: by the op, and for a few by how it
    was called (pow's exponent a tensor or a number, matmul's and linear's ranks, a
    selection by an integer or a slice)."""
    op = type(fn).__name__
    inputs: Any = getattr(fn, "inputs", None) or ()
    T = tensor_type()
    if op == "Pow":
        return "PowBackward1" if isinstance(inputs[1], T) else (
            "PowBackward2" if not isinstance(inputs[0], T) else "PowBackward0")  # fmt: skip
    if op in ("MatMul", "Linear") and inputs:
        a, b = inputs[0], inputs[1]
        if op == "Linear":
            bias = len(inputs) > 2 and inputs[2] is not None
            return "AddmmBackward0" if a.ndim == 2 and bias else (
                "MmBackward0" if a.ndim == 2 else "ViewBackward0")  # fmt: skip
        ranks = (a.ndim, b.ndim)
        return {(2, 2): "MmBackward0", (1, 1): "DotBackward0", (2, 1): "MvBackward0"}.get(
            ranks, "UnsafeViewBackward0"
        )
    if op == "GetItem":  # basic indexing: an integer selects, slices slice; else advanced
        index = fn.__dict__.get("index")
        parts = index if isinstance(index, tuple) else (index,)
        basic = all(isinstance(p, (int, slice)) or p is None or p is Ellipsis for p in parts)
        if basic and any(isinstance(p, int) for p in parts):
            return "SelectBackward0"
        if basic:
            return "SliceBackward0"
    if op == "Permute":  # two dims swapped is torch's transpose
        dims = fn.__dict__.get("dims") or ()
        moved = [i for i, d in enumerate(dims) if i != d]
        return "TransposeBackward0" if len(moved) == 2 else "PermuteBackward0"
    if op in ("Clamp", "FloorDivide", "Cast"):  # forward names the node by how it was called
        return fn.__dict__["node_name"]
    if op == "Piecewise":
        return "LeakyReluBackward0" if fn.__dict__.get("slope") else "ThresholdBackward0"
    if op in ("Sum", "Mean") and fn.__dict__.get("dim", fn.__dict__.get("axis")) is not None:
        return f"{op}Backward1"
    return _TORCH_NAMES.get(op, f"{op}Backward0")


def once_differentiable(backward: Any) -> Any:
    """Mark a custom Function's backward that is not written in differentiable ops (it works
    on arrays, say): it runs with grad mode off, and a second derivative through it is
    PyTorch's error. Goes under ``@staticmethod``. Here, as programs import it from
    torch.autograd.function; custom.py's node reads the mark."""
    backward._once_differentiable = True
    return backward
