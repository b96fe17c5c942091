"""Function: one differentiable primitive, forward and backward side by side, and the graph
node that records it once applied.

The contract every op in ops/ follows is stated here once; the backward walk is engine.py's,
the node as PyTorch shows it node.py's, the version counters and views versions.py's.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from .. import array
from ..array.tensor_type import tensor_type
from .mode import state
from .node import BY_CALL, Node, fixed_name, node_type
from .versions import make_view, shares_memory, version, writes

if TYPE_CHECKING:
    from ..tensor import Tensor

    Grads = tuple[Tensor | None, ...]  # what a rule returns: one gradient per input, or None


class Function(Node):
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
      ``saves_inputs = "others"`` (or the tuple of the inputs it reads so, where it reads
      some not at all: addmm's added term), and one whose rule reads its output's values says
      ``saves_out = True``. An op
      whose output is a view of its first input (it shares the array) says ``view = True``,
      so the two share one version counter.

    ``self.inputs`` holds the inputs (Tensors, or plain numbers), and
    ``self.needs_input_grad`` says which want a gradient; ``self.versions`` the version of
    each input Tensor as the node saw it. The node keeps its inputs, never its output, so a
    graph holds no reference cycle.
    """

    __slots__ = ("needs_input_grad",)  # and Node's: inputs, __dict__

    # What the rules read: a rule runs only on a node not yet freed (the engine checks that
    # first; Node.free sets inputs to None).
    inputs: tuple[Any, ...]
    needs_input_grad: tuple[bool, ...]
    versions: tuple[int | None, ...]
    stamp = -1  # the process's count of in-place writes when the node was recorded (freed: -1)
    out_version: int
    rule = ""
    backward_arrays: Any = None  # a method where an op has one (see the contract above)
    saves_inputs: bool | str | tuple[int, ...] = True
    saves_out = False
    view = False
    users_rule = False  # backward is user code (a custom Function's), whose arrays it may keep
    # The op's class itself, and the type its nodes take: a subclass with PyTorch's name
    # (MulBackward0), or None where the name depends on the call (name_by_call gives it from
    # forward's arrays and options, or "" where forward sets node_name). Set as each op is
    # defined.
    primitive: type
    node_type: type | None
    node_types: dict[str, type]  # the op's node types made so far, by name
    name_by_call: Any = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "primitive" in cls.__dict__:  # a node type (node.node_type): the op's, named
            return
        cls.primitive, cls.node_types = cls, {}
        by_call = BY_CALL.get(cls.__name__)
        cls.name_by_call = None if by_call is None else staticmethod(by_call)
        cls.node_type = None if by_call else node_type(cls, fixed_name(cls.__name__))

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"no forward; {_write_in(self, 'forward')}")  # named by apply

    def backward(self, grad: Tensor, out: Tensor) -> Grads:
        raise NotImplementedError(f"{self.op}: no backward; {_write_in(self, 'backward')}")

    @property
    def op(self) -> str:
        """The primitive's own name (``Mul``), as errors and explanations give it."""
        return self.primitive.__name__

    @classmethod
    def named(cls, name: str) -> Any:
        """The op whose nodes take the name ``name``: where one primitive serves several of
        PyTorch's ops, the method calling it says which (``MatMul.named("BmmBackward0")
        .apply(a, b)``), so that the node is made with its name. Keep it where the method's
        module is loaded (``_BMM = MatMul.named("BmmBackward0")``): its ``apply`` is the op's."""
        return node_type(cls.primitive, name)

    def copied(self, name: str) -> Function:
        """The node of a view's copy (``expand_copy``'s, of this expand's node): a node of
        this op named ``name`` (PyTorch's ``ExpandBackward0_copy``) on the same inputs,
        keeping what forward saved, so that its rule is the view's."""
        node = object.__new__(node_type(self.primitive, name))
        node.inputs, node.needs_input_grad = self.inputs, self.needs_input_grad
        node.__dict__.update(self.__dict__)
        return node

    @classmethod
    def apply(cls, *inputs: Any, **options: Any) -> Tensor:
        """Run forward on the inputs' arrays; record a node if grad mode is on and an input
        requires grad. Inputs are Tensors or plain Python numbers."""
        if batching[0] is not None:  # inside vmap: an input may be batched (batching.py)
            batched = batching[0](cls.primitive, inputs, options)
            if batched is not None:
                return batched
        T = tensor_type()
        # The arrays, and whether an input requires grad, on the hot path of every op; what
        # a node keeps of its inputs is gathered below, only where one is recorded. Loops,
        # not comprehensions: each of those is a call of its own (until Python 3.12).
        arrays, wants = [], False
        for x in inputs:
            if isinstance(x, T):
                arrays.append(x._array)
                if x.requires_grad:
                    wants = True
            else:
                arrays.append(x)
        if ACCELERATED:
            arrays = _same_device(cls.primitive.__name__.lower(), arrays, inputs)
        record = wants and state.grad_enabled
        named = cls.node_type  # the node's type: the op's, or the one named (Function.named)
        if named is None:  # PyTorch's name depends on the call: chosen from it, or by
            # forward (node_name); with no node to record, no name to choose
            named = node_type(cls, cls.name_by_call(arrays, options)) if record else cls
        fn = named()
        try:
            out_data = fn.forward(*arrays, **options)
        except Exception as err:
            # NumPy's own message names neither the op nor the shapes; add them.
            raise _forward_error(cls.primitive.__name__.lower(), err, inputs) from None
        out = T._make(out_data, record)
        if cls.view and shares_memory(out_data, arrays[0]):
            make_view(out, inputs[0])
        if record:
            needs, seen = [], []  # one loop: as versions(inputs) gives them
            for x in inputs:
                if isinstance(x, T):
                    needs.append(x.requires_grad)
                    vc = x._vc
                    seen.append(0 if vc is None else vc[0])
                else:
                    needs.append(False)
                    seen.append(None)
            fn.inputs = inputs
            fn.needs_input_grad = tuple(needs)
            fn.versions = tuple(seen)
            fn.stamp = writes[0]
            if named is cls and cls.node_type is None:  # forward named the node (node_name)
                fn.__class__ = node_type(cls, fn.node_name)
            if cls.saves_out:  # and the output's array, PyTorch's _saved_result
                fn.out_version, fn.saved_result = version(out), out_data
            out.grad_fn = fn
        if dual[0] is not None:  # a dual level is open: the output's tangent, if any
            dual[0](cls.primitive, inputs, options, out)
        if state.anomaly and not all_finite(out_data) and all(all_finite(x) for x in inputs):
            _forward_anomaly(cls.primitive.__name__, inputs, out_data)
        return out


# forward_ad.push while a dual level is open (forward_ad.py sets it), else None
dual: list[Any] = [None]
# batching.dispatch while a vmap level is open (batching.py sets it), else None
batching: list[Any] = [None]
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


def _write_in(fn: Function, method: str) -> str:
    """Where an op's missing method goes, for its error: the file that defines the op."""
    path = "src/" + fn.primitive.__module__.replace(".", "/") + ".py"
    what = "on arrays" if method == "forward" else "in Tensor ops, one gradient per input"
    return f"write {fn.op}.{method} ({what}) in {path}"


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


_NAMED = re.compile(r"[\w.]+: .*; got ", re.DOTALL)  # "op: what is wrong; got shapes ..."


def _forward_error(op: str, err: Exception, inputs: tuple[Any, ...]) -> Exception:
    """The exception a failed forward re-raises: the same type, naming the op and the shapes
    (and, for a TypeError, the dtypes) of its inputs."""
    msg = str(err).rstrip(". ")
    if msg.startswith(op + ":") or _NAMED.match(msg):  # already says which op (maybe by
        # its public name: linalg.cholesky for LinalgCholeskyEx), what is wrong and the shapes
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
