"""The node as PyTorch shows it: ``grad_fn.name()``, ``next_functions``, ``metadata``, node
hooks and ``_saved_*``, PyTorch's names for chainrule's primitives, ``AccumulateGrad`` for a
leaf, and what a node keeps once backward has freed it. Function (primitive.py) is a Node."""

from __future__ import annotations

from typing import Any

from ..array.tensor_type import tensor_type
from .hooks import add_hook


class Node:
    """What every recorded Function shows as PyTorch's ``grad_fn`` does, beside its rule."""

    __slots__ = ("inputs", "__dict__")

    inputs: tuple[Any, ...] | None
    node_hooks: dict[str, dict[int, Any]] | None = None  # register_hook's and register_prehook's

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
    "SpecialI0e": "SpecialI0EBackward0", "SpecialI1e": "SpecialI1EBackward0",
    "SpecialXlog1py": "SpecialXlog1PyBackward0", "LinalgSvdEx": "LinalgSvdBackward0",
    "LinalgLu": "LinalgLuBackward0", "CholeskySolve": "CholeskySolveBackward0",
    "LogCumSumExp": "LogcumsumexpBackward0",
    "AsStridedView": "AsStridedBackward0",
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
     "FloorDivide", "Cast", "Copysign", "Fmod", "Xlogy", "Select", "EvenlyDistribute"}
)  # fmt: skip


def torch_name(fn: Node) -> str:
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
    if op in ("Clamp", "FloorDivide", "Cast", "Copysign", "Fmod", "Xlogy"):  # forward names it
        return fn.__dict__["node_name"]
    if op in ("Select", "EvenlyDistribute"):  # the op of the call: median, kthvalue, cummax..
        return fn.__dict__["node_name"]
    if op == "Piecewise":
        return "LeakyReluBackward0" if fn.__dict__.get("slope") else "ThresholdBackward0"
    if op in ("Sum", "Mean") and fn.__dict__.get("dim", fn.__dict__.get("axis")) is not None:
        return f"{op}Backward1"
    return _TORCH_NAMES.get(op, f"{op}Backward0")
