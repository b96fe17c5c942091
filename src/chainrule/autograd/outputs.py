"""The node that the outputs of an op with several share (split's, unbind's, a custom
Function's), as PyTorch shows it: ``a.grad_fn is b.grad_fn``, one name, ``output_nr`` and
``next_functions`` pairs that say which output, one set of hooks.

The engine walks tensors, each with one node, and calls a node's rule once per tensor it
made: the shared node (``Outputs``) is called once for each output that has a gradient, and
puts that gradient in the output's place in the packed tensor, its input. The engine adds
them up there. Split's and unbind's packed tensor is their input itself, whose gradient is
that sum. A custom Function's is its outputs laid end to end, made by the Function's own
node, which then runs the user's backward once on the whole. So do the hooks on split's
node, which see the outputs' gradients together: the first one registered puts the same
kind of node between split's input and its outputs (``Packed``, whose rule passes the
gradient on), so that the hooks run once, when it does. Users see the shared node only:
its next_functions, hooks and saved values are the op's.
"""

from __future__ import annotations

from typing import Any

from .. import fastpath
from ..array import xp
from ..fastpath.passes import SIZE_MIN
from .node import Arrivals, node_type
from .primitive import Function as Primitive
from .primitive import tensor_type
from .versions import counter, make_view, versions, writes


class Outputs(Primitive):
    """out_k = part k of packed, where part k's own node (``parts[k]``, a slice of it) made
    it;  grad_packed = part k's rule on out_k's gradient: zeros like packed, with the
    gradient at out_k's place. Every output's grad_fn, as PyTorch's one node of the op."""

    rule = "grad_packed = zeros like packed, with grad at this output's place"
    saves_inputs = False
    several = True
    kind: str  # the op's name (Split, Unbind, or the custom Function's), as errors give it
    parts: list[Any]  # each output's node: its rule puts the output's gradient in its place
    numbers: dict[int, int]  # which output each output's array is (and a stand-in's for it)
    # each output's index in packed, shape and dtype (None: packed's); None for an output
    # that takes no gradient (a custom Function's integer output), as its part is
    places: list[tuple[Any, tuple[int, ...], Any] | None]
    op_node: Any  # the packed tensor's node (the op's rule, run once), or None: split's input
    arrivals: Arrivals

    @property
    def op(self) -> str:
        return self.kind

    def number(self, out: Any) -> int:
        """Which output of this node ``out`` is (its output_nr)."""
        return self.numbers[id(out._array)]

    def backward(self, grad: Any, out: Any) -> tuple[Any, ...]:
        k = self.numbers[id(out._array)]
        arrivals = self.arrivals
        arrivals.got.add(k)
        if arrivals.whole is not None:
            arrivals.whole[k] = grad
        return self.parts[k].backward(grad, out)

    def release(self) -> None:
        """Nothing: the engine calls it once for each output it reached, and the outputs it
        has yet to reach go through this node too. What the op saved is its own node's,
        which the engine frees as it runs it."""

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        if self.op_node is None:  # its input is split's
            return super().next_functions
        return self.op_node.next_functions  # type: ignore[no-any-return]

    def __getattr__(self, attr: str) -> Any:
        """What the op's node shows (a custom Function's ``saved_tensors`` and ctx's
        attributes), and PyTorch's ``_saved_*`` of this node's name (node.py)."""
        op_node = self.__dict__.get("op_node")
        if op_node is not None and not attr.startswith("_"):
            return getattr(op_node, attr)
        if "_saved_" in attr and op_node is not None and not isinstance(op_node, Packed):
            return getattr(op_node, attr)  # a decomposition's saved values are its node's
        return super().__getattr__(attr)

    def register_prehook(self, hook: Any) -> Any:
        """``hook(grad_outputs)``, one gradient per output (None for an output that got
        none), runs before the op's rule; it may return new grad_outputs."""
        return self._joined()._hook("pre", _Pre(hook, self.places, self.arrivals))

    def register_hook(self, hook: Any) -> Any:
        """``hook(grad_inputs, grad_outputs)`` runs once the op's rule has given its inputs'
        gradients; it may return new grad_inputs."""
        return self._joined()._hook("post", _Post(hook, self.places, self.arrivals))

    def _joined(self) -> Any:
        """The op's node, where the outputs' gradients meet: split's first hook makes it, a
        Packed between split's input and a packed tensor that is now this node's input."""
        if self.op_node is None:
            a = self.inputs[0]  # type: ignore[index]
            packed = tensor_type()._make(a._array, True)
            packed._vc = counter(a)  # a's writes are its writes: the version checks see them
            op_node = Packed()
            op_node.inputs, op_node.needs_input_grad = (a,), (True,)
            op_node.versions, op_node.stamp = self.versions, self.stamp  # as this node saw a
            op_node.kind, op_node.arrivals = self.kind, self.arrivals
            packed.grad_fn = op_node
            self.inputs = (packed,)
            for part in self.parts:  # each output's node now reads packed (a's values)
                part.inputs = (packed,)
            self.op_node = op_node
            self.arrivals.got.clear()
        return self.op_node


class Parts(Outputs):
    """The shared node of a decomposition's parts (part_node): each part's node has its rule
    on arrays, so this node has one too (fastpath/rules.py), the part's, as backward runs
    its Tensor rule."""

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        k = self.numbers[id(out)]
        part = self.parts[k]
        if part.backward_arrays is None:  # as backward, through the part's Tensor rule
            T = tensor_type()
            grads = self.backward(T._make(grad), T._make(out))
            return tuple(None if g is None else g._array for g in grads)
        arrivals = self.arrivals
        arrivals.got.add(k)
        if arrivals.whole is not None:  # as the op's hooks see it: a Tensor
            arrivals.whole[k] = tensor_type()._make(grad)
        return part.backward_arrays(grad, out)  # type: ignore[no-any-return]


class SplitOutputs(Outputs):
    """split's shared node. Where split_node puts a Packed node before it (a large input,
    the fast path on), the packed tensor's gradient is this node's alone: the first output's
    gradient to arrive in a pass is put into zeros like packed, which goes to the engine, and
    each later one is written into that same array (one zero fill; no array of zeros an
    output and no sum of them)."""

    buffer: Any = None  # this pass's gradient of packed, while outputs' gradients are to come

    def backward_arrays(self, grad: Any, out: Any) -> tuple[Any, ...]:
        if self.op_node is None:  # made with the switch off: the rule, on Tensors
            T = tensor_type()
            (g,) = self.backward(T._make(grad), T._make(out))
            return (g._array,)
        k = self.numbers[id(out)]
        got = self.arrivals.got
        first = not got
        got.add(k)
        if first:
            self.buffer = xp.zeros(self.inputs[0].shape, grad.dtype, like=grad)
        buffer = self.buffer
        buffer[self.parts[k].index] = grad  # the output's place in packed
        if len(got) == len(self.parts):  # the last output's: the node keeps nothing
            self.buffer = None
        return (buffer,) if first else (None,)


class Triangle:
    """A place that is a triangle of a block of packed: L's strict lower one (``upper``
    False, diagonal -1) and U's upper one (True, 0) in an LU's one matrix, whose blocks
    overlap where the triangles do not. Only an output's gradient's triangle reaches the op's
    rule (L's unit diagonal and zeros, U's zeros, are constants)."""

    def __init__(self, block: Any, upper: bool) -> None:
        self.block, self.upper = block, upper

    def put(self, packed: Any, g: Any) -> None:
        """Add g's triangle into packed (the other triangle's place is left as it is)."""
        part = g.triu() if self.upper else g.tril(-1)
        packed[self.block] = packed[self.block] + part.reshape(packed[self.block].shape)


def _taken(packed_grad: Any, places: list, arrived: Any, whole: Any) -> tuple[Any, ...]:
    """The outputs' gradients in the packed one: each at its place (a triangle's as it
    came, from ``whole``), None where none came."""
    grads: list[Any] = []
    for k, place in enumerate(places):
        if place is None or k not in arrived:
            grads.append(None)
            continue
        index, shape, dtype = place
        g = whole[k] if isinstance(index, Triangle) else packed_grad[index].reshape(shape)
        grads.append(g if dtype is None else g.to(dtype))
    return tuple(grads)


class _Pre:
    """A prehook on the shared node, run by the op's node on the packed gradient."""

    def __init__(self, hook: Any, places: list, arrivals: Arrivals) -> None:
        self.hook, self.places, self.arrivals = hook, places, arrivals

    def __call__(self, grads: tuple[Any]) -> Any:
        new = self.hook(_taken(grads[0], self.places, self.arrivals.got, self.arrivals.whole))
        if new is None:
            return None
        if len(new) != len(self.places):
            raise RuntimeError(
                f"hook: a prehook returned {len(new)} gradients for {len(self.places)} outputs"
            )
        packed = grads[0].new_zeros(grads[0].shape)  # each new gradient at its place
        for k, (g, place) in enumerate(zip(new, self.places, strict=True)):
            if g is None or place is None:
                continue
            index = place[0]  # recorded where they are (create_graph)
            if isinstance(index, Triangle):
                index.put(packed, g)
                self.arrivals.whole[k] = g  # type: ignore[index]  # as the op's hooks see it
            else:
                packed[index] = g.reshape(packed[index].shape)
        self.arrivals.got.update(k for k, g in enumerate(new) if g is not None)
        return (packed,)


class _Post:
    """A hook on the shared node, run by the op's node after its rule."""

    def __init__(self, hook: Any, places: list, arrivals: Arrivals) -> None:
        self.hook, self.places, self.arrivals = hook, places, arrivals

    def __call__(self, in_grads: tuple[Any, ...], grads: tuple[Any]) -> Any:
        arrived = self.arrivals
        return self.hook(in_grads, _taken(grads[0], self.places, arrived.last, arrived.last_whole))


class Packed(Primitive):
    """packed = a: split's or unbind's node, once a hook on their outputs' node needs their
    gradients together (Outputs._joined);  grad_a = grad, each output's gradient in its place."""

    rule = "grad_a = grad: the outputs' gradients, each in its place in a"
    saves_inputs = False
    kind: str
    arrivals: Arrivals

    @property
    def op(self) -> str:
        return self.kind

    def backward(self, grad: Any, out: Any) -> tuple[Any, ...]:
        self.arrivals.close()
        return (grad,)

    def release(self) -> None:
        """Free what it holds, as every node, keeping the op's name (``kind``)."""
        kind = self.kind
        super().release()
        self.kind = kind


def share(
    packed: Any,
    parts: list[Any],
    places: list,
    kind: str,
    name: str,
    op_node: Any,
    cls: Any = Outputs,
) -> Any:
    """The node named ``name`` (PyTorch's, ``SplitBackward0``) that the parts of ``packed``
    (whose node is ``op_node``, None for split's input) share: output k is made by node
    ``parts[k]`` and lies at ``places[k]`` (its index in packed, its shape and dtype). join
    makes each output its. ``cls``: Outputs, or Parts for a decomposition's parts."""
    node = node_type(cls, name)()
    node.inputs, node.needs_input_grad = (packed,), (True,)
    node.versions, node.stamp = versions(node.inputs), writes[0]
    node.kind, node.parts, node.places, node.op_node = kind, parts, places, op_node
    node.arrivals = Arrivals() if op_node is None else op_node.arrivals
    node.numbers = {}
    return node


def join(node: Outputs, out: Any, k: int) -> None:
    """Make ``out`` output k of ``node``."""
    node.numbers[id(out._array)] = k
    out.requires_grad, out.grad_fn = True, node


def split_node(a: Any, outs: Any, kind: str, name: str, **saved: Any) -> Any:
    """Join ``outs``, slices of ``a`` each made by its own indexing node, as the outputs of
    one node named ``name``, with ``saved`` (what PyTorch's node of that name shows); split's
    (kind Split) of a large input with the fast path on behind a Packed node (SplitOutputs)."""
    parts, places = [], []
    for o in outs:
        part = o.grad_fn
        parts.append(part)
        places.append((part.index, o._array.shape, None))  # of a's dtype
    split = kind == "Split"
    node = share(a, parts, places, kind, name, None, SplitOutputs if split else Outputs)
    node.__dict__.update(saved)
    numbers = node.numbers
    for k, o in enumerate(outs):  # join(node, o, k), inline: once per output of every split
        numbers[id(o._array)] = k
        o.grad_fn = node
    if split and a._array.size >= SIZE_MIN and fastpath.enabled():  # small: zeros cost little
        node._joined()
    return node


def part_node(packed: Any, outs: Any, places: list, kind: str, name: str) -> Any:
    """Join ``outs``, parts of ``packed`` (a decomposition's one matrix, made by its own
    node), each made by its own part node, as the outputs of one node named ``name``: Q
    and R of a QR, L and U of an LU, as PyTorch's one node of the decomposition."""
    op_node = packed.grad_fn
    op_node.share_outputs(whole=any(isinstance(p[0], Triangle) for p in places))
    node = share(packed, [o.grad_fn for o in outs], places, kind, name, op_node, Parts)
    for k, o in enumerate(outs):
        join(node, o, k)
    return node


def packed_outputs(
    packed: Any,
    parts: list[Any],
    kind: str,
    name: str,
    read: tuple[int, ...],
    indices: list[Any] | None = None,
) -> list[Any]:
    """packed[0], packed[1], ...: the outputs of an op that packs them in one array (var_mean's,
    std_mean's, aminmax's), made by the one node named ``name`` that they share, as PyTorch's
    one node of the op; ``parts[k]`` holds the rule that puts output k's gradient in its place
    in packed (an indexing rule, applied to no tensor: no node of the graph), at
    ``indices[k]`` where given (lstsq's solution and residuals), else (k,). An output the
    op's rule reads (its number in ``read``) is a view of packed, so that a write into it
    before backward fails the op's check of its output; the others are tensors of their own,
    which may be written, as PyTorch's."""
    op_node = packed.grad_fn
    op_node.share_outputs()
    arr, make = packed._array, tensor_type()._make
    indices = [(k,) for k in range(len(parts))] if indices is None else indices
    places = [(index, arr[index + (...,)].shape, None) for index in indices]
    node = share(packed, parts, places, kind, name, op_node)
    outs = []
    for k, index in enumerate(indices):
        out = make(arr[index + (...,)], True)  # in packed's memory (0-d: a view too)
        if k in read:
            make_view(out, packed)
        join(node, out, k)
        outs.append(out)
    return outs
