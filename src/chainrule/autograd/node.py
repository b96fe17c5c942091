"""The node as PyTorch shows it: ``grad_fn.name()``, ``next_functions``, ``metadata``, node
hooks and ``_saved_*``, PyTorch's names for chainrule's primitives, ``AccumulateGrad`` for a
leaf, and what a node keeps once backward has freed it. Function (primitive.py) is a Node."""

from __future__ import annotations

import re
from typing import Any

from ..array import ndarray
from ..array.tensor_type import tensor_type
from . import saved, saved_made, saved_read
from .handles import add_hook


class Node:
    """What every recorded Function shows as PyTorch's ``grad_fn`` does, beside its rule."""

    __slots__ = ("inputs", "__dict__")

    inputs: tuple[Any, ...] | None
    node_hooks: dict[str, dict[int, Any]] | None = None  # register_hook's and register_prehook's
    snapshots = False  # whether release keeps what its saved values read (saved.snapshot)
    several = False  # whether several outputs share the node (outputs.py), each its number

    def name(self) -> str:
        """PyTorch's name for this node (``MulBackward0``, ``AddmmBackward0``): its type's, as
        torchviz reads it, chosen as the node was recorded (see node_type); qualified for a
        node PyTorch writes by hand (``torch::autograd::CopyBackwards``)."""
        name = type(self).__name__
        return "torch::autograd::" + name if name in HANDWRITTEN else name

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {id(self):#x}>"

    def __reduce_ex__(self, protocol: Any) -> Any:
        """Pickled and copied as any object, its type found again by its op and name (a
        node type is made at run time: no module holds it by name)."""
        reduced = super().__reduce_ex__(protocol)
        op = getattr(self, "primitive", type(self))
        if op is type(self) or not isinstance(reduced, tuple):
            return reduced
        return (_remade, (op, type(self).__name__), *reduced[2:])

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        """Where each input's gradient goes, as PyTorch gives it: ``(node, 0)`` for an input
        made by an op (``(node, k)`` for its output k, where several share it: split's),
        ``(AccumulateGrad, 0)`` for a leaf that requires grad, ``(None, 0)`` for the rest
        (numbers among them); also once backward has freed the node."""
        ends = self.__dict__["_edges"] if self.inputs is None else edges(self.inputs)
        T = tensor_type()
        if type(self).__name__ in SCALAR_ARGS:
            ends = [e for e in ends if e is not NUMBER]
        elif saved.reflected(self):  # 2 * x: PyTorch's node is x.mul(2)'s
            ends = ends[::-1]
        shown = tuple(
            e if type(e) is tuple
            else ((AccumulateGrad.of(e) if isinstance(e, T) else None if e is NUMBER else e), 0)
            for e in ends
        )  # fmt: skip
        if type(self).__name__ in ("AddmmBackward0", "MmBackward0") and self.op == "Linear":
            return self._as_addmm(shown)
        if type(self).__name__ == "UnsafeViewBackward0" and saved.called("cloned")(self):
            return self._below(CloneBackward0, shown)
        if type(self).__name__ in INDEXES and self.op == "GetItem":
            return self._steps_below(shown)
        if type(self).__name__ == "CopyBackwards":  # PyTorch's copy_(dst, src): two edges
            return self._as_copy(shown)
        if self.op == "CopySlices" and shown[1][0] is not None:  # a write through a view:
            # PyTorch's node holds the write's node, and shows the base's edge, then the
            # write's other edges (its first is the view's old value, inside the node)
            return shown[:1] + shown[1][0].next_functions[1:]
        return shown

    def _as_copy(self, shown: tuple[tuple[Any, int], ...]) -> tuple[tuple[Any, int], ...]:
        """The edges of PyTorch's copy_ of src into dst: diff(n=0)'s clone copies the input into
        an empty tensor (no edge, then the input's); matrix_power(A, 0)'s where (its mask no
        tensor of PyTorch's) the identity into A's clone (the clone's edge, then none)."""
        return shown[1:] if len(shown) == 3 else ((None, 0), *shown)

    def _as_addmm(self, shown: tuple[tuple[Any, int], ...]) -> tuple[tuple[Any, int], ...]:
        """Linear's edges as PyTorch's addmm(b, x, W.t()) has them: the bias first, and the
        weight's gradient through a TBackward0 node (chainrule's one node does its work)."""
        t = self._below(TBackward0, shown[1:])
        return ((shown[2],) if len(shown) > 2 else ()) + (shown[0],) + t

    def _below(self, kind: Any, shown: tuple[tuple[Any, int], ...]) -> tuple[tuple[Any, int]]:
        """The edge to the node PyTorch's graph has between this node and its first input:
        ``kind(edge)``, of the edge to that input (made once, kept after backward)."""
        t = self.__dict__.get("_t")
        if t is None:
            t = self.__dict__["_t"] = kind(shown[0])
        return ((t, 0),)

    def _steps_below(self, shown: tuple[tuple[Any, int], ...]) -> tuple[tuple[Any, int], ...]:
        """An index's edge as PyTorch's graph has it: a node per step (x[1:, 0]'s select
        over a slice; x[1:, idx]'s index over a slice), this node the last step's, the steps
        before it shown below it (IndexStep), each from the one before."""
        steps = saved.index_steps(self)
        if len(steps) < 2:
            return shown

        def chain(edge: tuple[Any, int]) -> Node:
            for step in steps[:-1]:
                values = saved_made.step_values(step)
                edge = (_STEP_NODES[step[0]](edge, values), 0)
            return edge[0]

        return self._below(chain, shown)

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
        if type(self).__name__ == "CopyBackwards" and self.inputs is not None:
            hook = _copy_hook(hook, len(self.inputs))
        return self._hook("post", hook)

    def _hook(self, kind: str, hook: Any) -> Any:
        if self.node_hooks is None:
            self.node_hooks = {"pre": {}, "post": {}}
        return add_hook(self.node_hooks[kind], hook)

    def __getattr__(self, attr: str) -> Any:
        """PyTorch's ``_saved_*`` of this node (saved.py): ``_saved_self``, ``_saved_result``,
        ``_saved_dim``..."""
        if attr.startswith(saved.PREFIX):
            return saved_read.saved(self, attr)
        raise AttributeError(f"{type(self).__name__!r} node has no attribute {attr!r}")

    def __dir__(self) -> list[str]:
        return [*super().__dir__(), *saved.shown(self)]

    def share_outputs(self, whole: bool = False) -> Arrivals:
        """This node's output is packed: parts of it are the outputs of one node they share
        (outputs.py: QR's Q and R by part_node, var_mean's two by packed_outputs). Which of
        them take a gradient in a pass is kept here (Arrivals), for this node's rule
        (``arrived``) and the shared node's hooks; ``whole``: a part's hooks see its whole
        gradient."""
        self.arrivals = Arrivals(whole)
        return self.arrivals

    def arrived(self) -> frozenset[int]:
        """The rule runs: which of the outputs that share a node (share_outputs) took a
        gradient through it in this pass (none where the node shares none), the pass then
        closed."""
        arrivals = self.__dict__.get("arrivals")
        if arrivals is None:
            return frozenset()
        got = frozenset(arrivals.got)
        arrivals.close()
        return got

    def release(self) -> None:
        """Free what the node saved (its inputs, their versions, forward's arrays) once a
        backward pass without retain_graph has used it; a later pass finds ``inputs`` None and
        says the graph was freed. What PyTorch's node keeps stays, so that printing it
        after backward still works: its edges (the inputs' nodes, never their arrays),
        its name, the user's metadata and the saved values that are not tensors."""
        inputs = self.inputs
        if inputs is None:  # freed by an earlier pass: its edges stay as they were
            return
        kept = self.__dict__
        values = saved.snapshot(self) if type(self).snapshots else kept.get("_kept")
        ends = edges(inputs)
        self.inputs = None
        meta, t = kept.get("_metadata"), kept.get("_t")
        kept.clear()
        kept["_edges"] = ends
        if meta is not None:
            kept["_metadata"] = meta
        if values is not None:
            kept["_kept"] = values
        if t is not None:
            kept["_t"] = t


def _copy_hook(hook: Any, n: int) -> Any:
    """A hook of a CopyBackwards node of ``n`` inputs, given and giving the gradients of
    PyTorch's two edges (Node._as_copy), as PyTorch's hook of copy_: a where's three inputs
    less its mask, a clone's one after an edge of none."""

    def on_edges(grad_inputs: tuple[Any, ...], grad_outputs: tuple[Any, ...]) -> Any:
        new = hook(grad_inputs[1:] if n == 3 else (None, *grad_inputs), grad_outputs)
        if new is None:
            return None
        if len(new) != 2:
            raise RuntimeError(f"CopyBackwards: a hook returned {len(new)} gradients for 2 inputs")
        return (None, *new) if n == 3 else tuple(new[1:])

    return on_edges


class Arrivals:
    """Which outputs' gradients reached the op's node in this pass (``got``), and in the
    last pass that ran its rule (``last``): the outputs without one are None to its hooks.
    Where an output's place is a triangle, its hooks see its whole gradient as it came
    (``whole``, then ``last_whole``), not the triangle of it the op's rule reads."""

    __slots__ = ("got", "last", "whole", "last_whole")

    def __init__(self, whole: bool = False) -> None:
        self.got: set[int] = set()
        self.last: frozenset[int] = frozenset()
        self.whole: dict[int, Any] | None = {} if whole else None
        self.last_whole: dict[int, Any] = {}

    def close(self) -> None:
        """The op's rule runs: this pass's arrivals are the last ones."""
        self.last, self.got = frozenset(self.got), set()
        if self.whole is not None:
            self.last_whole, self.whole = self.whole, {}


class TBackward0(Node):
    """The TBackward0 node PyTorch's graph has between a linear layer's weight and its addmm
    (which takes W.t()), where chainrule's Linear node takes W itself: shown in
    ``next_functions``, never run."""

    def __init__(self, edge: tuple[Any, int]) -> None:
        self.inputs, self._edge = None, edge

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        return (self._edge,)

    def __getattr__(self, attr: str) -> Any:  # PyTorch's TBackward0 saves nothing
        raise AttributeError(f"{type(self).__name__!r} node has no attribute {attr!r}")


class CloneBackward0(TBackward0):
    """The CloneBackward0 node PyTorch's graph has below a reshape that copies (an unsafe
    view of a contiguous clone), where chainrule's one reshape node copies: shown in
    ``next_functions``, never run."""


class IndexStep(TBackward0):
    """A step of a basic index that PyTorch's graph has as a node of its own (x[1:, 0]'s
    SliceBackward0, below its SelectBackward0), where chainrule's one node takes the whole
    index: shown in ``next_functions`` with the step's saved values, never run."""

    def __init__(self, edge: tuple[Any, int], values: dict[str, Any]) -> None:
        super().__init__(edge)
        self._values = values

    def __getattr__(self, attr: str) -> Any:
        values = self.__dict__.get("_values", {})
        if attr.startswith(saved.PREFIX) and attr[len(saved.PREFIX) :] in values:
            return values[attr[len(saved.PREFIX) :]]
        raise AttributeError(f"{type(self).__name__!r} node has no attribute {attr!r}")

    def __dir__(self) -> list[str]:
        return [*object.__dir__(self), *(saved.PREFIX + k for k in sorted(self._values))]


class SliceBackward0(IndexStep):
    """An index's slice, below the node of its later steps."""


class SelectBackward0(IndexStep):
    """An index's integer, below the node of its later steps."""


class UnsqueezeBackward0(IndexStep):
    """An index's None, below the node of its later steps."""


_STEP_NODES = {t.__name__: t for t in (SliceBackward0, SelectBackward0, UnsqueezeBackward0)}
STEPS = frozenset(_STEP_NODES)  # the names of a basic index's nodes
INDEXES = STEPS | {"IndexBackward0"}  # and of an index whose basic parts come first


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

    @property
    def metadata(self) -> dict:
        """A dict of the user's, kept with the node, as every node's."""
        return self.__dict__.setdefault("_metadata", {})

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {id(self):#x}>"


# PyTorch's names for the nodes of chainrule's primitives, where they are not <Op>Backward0
_TORCH_NAMES = {
    "Reshape": "ViewBackward0",
    "LayerNorm": "NativeLayerNormBackward0",
    "LogSumExp": "LogsumexpBackward0",
    "ConvTranspose": "ConvolutionBackward0", "MaxPool2d": "MaxPool2DWithIndicesBackward0",
    "Pad": "ConstantPadNdBackward0",
    "ScaledDotProductAttention": "ScaledDotProductFlashAttentionForCpuBackward0",
    "Einsum": "ViewBackward0", "Amax": "AmaxBackward0", "Amin": "AminBackward0",
    "EuclideanDist": "ViewBackward0",
    "CopySlices": "CopySlices", "AsStrided": "AsStridedBackward0",
    "SpecialI0e": "SpecialI0EBackward0", "SpecialI1e": "SpecialI1EBackward0",
    "SpecialXlog1py": "SpecialXlog1PyBackward0", "LinalgSvdEx": "LinalgSvdBackward0",
    "LinalgLu": "LinalgLuBackward0", "CholeskySolve": "CholeskySolveBackward0",
    "LogCumSumExp": "LogcumsumexpBackward0",
    "AsStridedView": "AsStridedBackward0",
}  # fmt: skip


def edges(inputs: tuple[Any, ...]) -> list[Any]:
    """Where each input's gradient goes, as next_functions gives it: the node that made it
    (with the input's number where several outputs share it: ``(node, k)``), the input itself
    for a leaf that requires grad (its AccumulateGrad's variable), or None (a number, or a
    tensor that wants no gradient)."""
    T = tensor_type()
    out: list[Any] = []  # a loop, not a comprehension: see Function.apply
    for x in inputs:
        if isinstance(x, T):
            fn = x.grad_fn
            if fn is not None and fn.several:
                out.append((fn, fn.number(x)))
            else:
                out.append((fn or x) if x.requires_grad else None)
        else:
            out.append(NUMBER)
    return out


NUMBER = saved.NUMBER  # an edge from an input that is no tensor: (None, 0), or none (SCALAR_ARGS)

# PyTorch's nodes whose numbers are arguments of a Scalar overload, not inputs: no edge (nor
# for the all-False mask of the where that stands for zero_ and fill_)
SCALAR_ARGS = frozenset(
    {"PowBackward0", "PowBackward2", "ClampBackward1", "RsubBackward1", "FmodBackward0",
     "RemainderBackward0", "CopysignBackward1", "XlogyBackward1", "XlogyBackward2",
     "LeakyReluBackward0", "ThresholdBackward0", "HardtanhBackward0", "RsqrtBackward0",
     "IndexFillBackward0", "LerpBackward0", "MulBackward1", "ZeroBackward0", "FillBackward2",
     "FillBackward3", "DivBackward1", "AddBackward1"}
)  # fmt: skip


def node_type(op: Any, name: str) -> Any:
    """The type of op's recorded nodes named ``name``: a subclass of the op with PyTorch's
    name and nothing else of its own (``type(y.grad_fn).__name__`` is ``MulBackward0``, as
    torchviz and printing read it), made once per op and name; the op itself for "". Its
    ``apply`` is the op's, recording nodes of its own type (Function.named)."""
    made = op.node_types.get(name)
    if made is None and not name:
        return op
    if made is None:
        space = {"__slots__": (), "__doc__": op.__doc__, "__qualname__": name, "primitive": op}
        space["__module__"] = __name__  # not the op's module: the op stays the one primitive
        space["snapshots"] = saved.snapshots(saved.table_key(op.__name__, name))
        made = op.node_types[name] = type(op)(name, (op,), space)
        made.node_type = made
    return made


# PyTorch's nodes outside its generated code that chainrule's nodes take the name of
HANDWRITTEN = frozenset({"CopyBackwards"})


def named(out: Any, name: str, **call: Any) -> Any:
    """``out``, the output of a primitive that serves several PyTorch ops, its node (where one
    was recorded) typed with the name PyTorch gives the calling method's: the one place a Tensor
    method says which op it is (``t()``'s permute is ``TBackward0``, ``squeeze``'s reshape
    ``SqueezeBackward0``). Call it only on a primitive's fresh output, never on a tensor that
    may be the method's input. ``call``: the method's arguments that PyTorch's node of the name
    saves and the primitive does not keep (squeeze's dim), kept for its ``_saved_*``."""
    fn = out.grad_fn
    if fn is not None:
        if type(fn).__name__ != name:  # a type change costs more than the whole call else
            fn.__class__ = node_type(fn.primitive, name)
        if call:
            fn.call = call
    return out


class _Ungiven:
    """The default of an argument whose giving PyTorch tells from its value: ``sum()`` makes
    its SumBackward0, ``sum(None)`` and ``sum(())`` its SumBackward1; ``sort()`` its
    SortBackward0, ``sort(stable=False)`` (the stable overload) its SortBackward1; ``round()``
    its RoundBackward0, ``round(decimals=0)`` its RoundBackward1. Printed
    as the default the signature PyTorch shows has, and as false as it."""

    __slots__ = ("shown",)

    def __init__(self, shown: Any) -> None:
        self.shown = shown

    def __repr__(self) -> str:
        return repr(self.shown)

    def __bool__(self) -> bool:
        return bool(self.shown)


UNGIVEN: Any = _Ungiven(None)
UNGIVEN_FALSE: Any = _Ungiven(False)  # sort's stable
UNGIVEN_ZERO: Any = _Ungiven(0)  # round's decimals: given 0, it is RoundBackward1


def _remade(op: Any, name: str) -> Any:
    """A node of op's type named ``name``, its state yet to be set (unpickling a node)."""
    return object.__new__(node_type(op, name))


def fixed_name(op: str) -> str:
    """PyTorch's name for the nodes of the op named ``op``, where the call does not change it:
    its own, or <Op>Backward0 with a letter after a digit capitalised, as PyTorch's names
    of avg_pool2d and log1p are (AvgPool2DBackward0, Log1PBackward0)."""
    named = _TORCH_NAMES.get(op)
    return named or re.sub(r"(?<=\d)[a-z]", lambda m: m[0].upper(), op) + "Backward0"


# How PyTorch names the node of an op by the call, from forward's arrays (the inputs' arrays,
# numbers as they are) and options, before forward runs.


def _pow(arrays: list, options: dict) -> str:  # the base a number, or the exponent a tensor
    if not isinstance(arrays[0], ndarray):
        return "PowBackward2"
    return "PowBackward1" if isinstance(arrays[1], ndarray) else "PowBackward0"


def _matmul(arrays: list, options: dict) -> str:  # by the ranks: mm, dot, mv; else bmm's view
    ranks = (arrays[0].ndim, arrays[1].ndim)
    named = {(2, 2): "MmBackward0", (1, 1): "DotBackward0", (2, 1): "MvBackward0"}
    return named.get(ranks, "SqueezeBackward4" if ranks == (1, 2) else "UnsafeViewBackward0")


def _linear(arrays: list, options: dict) -> str:  # addmm with a bias, mm without, or a view
    rank, bias = arrays[0].ndim, len(arrays) > 2 and arrays[2] is not None
    if rank == 2:
        return "AddmmBackward0" if bias else "MmBackward0"
    if bias:
        return "ViewBackward0"
    return "SqueezeBackward4" if rank == 1 else "UnsafeViewBackward0"


def _getitem(arrays: list, options: dict) -> str:
    """PyTorch indexes part by part, and its node is the last step's: an integer (or a 0-d
    integer tensor) selects, a slice slices (``:`` does nothing), None unsqueezes; an array,
    a list, a bool: advanced indexing. No step at all (x[...], x[:, :]): its alias."""
    index = saved_made.whole_dims(options["index"], arrays[0].shape)
    last = "AliasBackward0"
    for part in index if type(index) is tuple else (index,):  # one pass: on every x[i]
        kind = type(part)
        if kind is int:
            last = "SelectBackward0"
        elif kind is slice:
            if part != _ALL:
                last = "SliceBackward0"
        elif part is None:
            last = "UnsqueezeBackward0"
        elif isinstance(part, ndarray) and part.ndim == 0 and part.dtype.kind in "iu":
            last = "SelectBackward0"  # a 0-d integer tensor: PyTorch selects by its value
        elif part is not Ellipsis:
            return "IndexBackward0"
    return last


_ALL = slice(None)


def _permute(arrays: list, options: dict) -> str:  # two dims swapped is torch's transpose
    moved = [i for i, d in enumerate(options["dims"]) if i != d]
    return "TransposeBackward0" if len(moved) == 2 else "PermuteBackward0"


def _sum(arrays: list, options: dict) -> str:  # over given dims: the overload with dim
    return "SumBackward0" if options.get("dims") is None else "SumBackward1"


def _mean(arrays: list, options: dict) -> str:
    return "MeanBackward0" if options.get("dims") is None else "MeanBackward1"


def _prod(arrays: list, options: dict) -> str:  # over one dim: the overload with dim
    return "ProdBackward0" if options.get("dims") is None else "ProdBackward1"


def _nll(arrays: list, options: dict) -> str:  # by the rank: over spatial dims, nll_loss2d
    rank = arrays[0].ndim  # (N, C, d1, ...) other than (N, C, H, W) is viewed as it, and back
    if rank <= 2:
        return "NllLossBackward0"
    return "ViewBackward0" if rank != 4 and options["reduction"] == "none" else "NllLoss2DBackward0"


def _piecewise(arrays: list, options: dict) -> str:
    return "LeakyReluBackward0" if options.get("leaky") else "ThresholdBackward0"


def _by_forward(arrays: list, options: dict) -> str:  # forward sets node_name (clamp's by
    return ""  # its bounds, clone's copy...): its node's type is chosen once it has run


# The ops whose PyTorch name depends on how they were called, each with the function that
# gives it (Function.apply calls it).
BY_CALL = {
    "Pow": _pow, "MatMul": _matmul, "Linear": _linear, "GetItem": _getitem,
    "Permute": _permute, "Sum": _sum, "Mean": _mean, "Prod": _prod, "Piecewise": _piecewise,
    "CrossEntropy": _nll, "NLLLoss": _nll,
    **dict.fromkeys(("Clamp", "FloorDivide", "Cast", "Copysign", "Fmod", "Xlogy", "Select",
                     "EvenlyDistribute"), _by_forward),
}  # fmt: skip
