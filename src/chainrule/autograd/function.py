"""PyTorch's custom autograd Function, for users: a ``forward`` and a ``backward`` of their own,
joined by a ``ctx``, applied with ``F.apply(...)``.

    class Exp(cr.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

``forward`` runs with grad mode off; if grad mode is on and an input requires grad, its
outputs join the graph through one node, whose rule is the user's ``backward`` (written with
Tensor ops, so it is differentiable again, unless marked ``@once_differentiable``). The newer
form, ``forward(*args)`` without ctx plus ``setup_context(ctx, inputs, output)``, works too.

The node is one of the engine's own primitives (primitive.py's contract), so the engine needs
nothing new: several outputs are parts of one flat output the node makes, and share one node
(outputs.py), as PyTorch's. Each output is the tensor forward returned (a view of an input
stays a view); saved outputs are kept weakly and joined to the graph again when unpacked, as
PyTorch's saved variables are.
"""

from __future__ import annotations

import math
import warnings
import weakref
from typing import Any, NoReturn

from .. import array
from .forward_ad import active as forward_ad_active
from .forward_ad import carries, paused
from .forward_ad import custom as forward_ad_custom
from .mode import no_grad, state
from .node import node_type
from .outputs import Arrivals, join, share
from .primitive import Function as Primitive
from .primitive import tensor_type
from .versions import bump, counter, make_view, version, versions, writes


def once_differentiable(backward: Any) -> Any:
    """Mark a custom Function's backward that is not written in differentiable ops (it works
    on arrays, say): it runs with grad mode off, and a second derivative through it is
    PyTorch's error. Goes under ``@staticmethod``. The node below reads the mark."""
    backward._once_differentiable = True
    return backward


class FunctionCtx:
    """What ``forward`` hands ``backward``: tensors saved with ``save_for_backward`` (read
    back as ``saved_tensors``, checked against in-place writes since), ``needs_input_grad``,
    the marks (``mark_dirty``, ``mark_non_differentiable``, ``set_materialize_grads``), and any
    attribute the user sets."""

    def __init__(self, needs_input_grad: tuple[bool, ...], name: str) -> None:
        self.needs_input_grad = needs_input_grad
        self._name = name
        self._saved: tuple[Any, ...] | None = ()
        self._saved_versions: tuple[int | None, ...] = ()
        self._dirty: tuple[Any, ...] = ()
        self._non_differentiable: set[int] = set()
        self._materialize = True
        # saved outputs, by place in _saved: how each is joined to the graph again when
        # unpacked (see _keep_outputs); _saved holds a detached alias of each meanwhile
        self._links: dict[int, tuple[Any, int | None]] = {}
        self._node: Any = None  # a weak reference to the node, where one was recorded
        self._shared: Any = None  # a weak reference to the outputs' node (several outputs)

    def save_for_backward(self, *tensors: Any) -> None:
        T = tensor_type()
        for t in tensors:
            if t is not None and not isinstance(t, T):
                raise TypeError(
                    f"{self._name}: save_for_backward takes Tensors or None; got {type(t).__name__}"
                )
        self._saved = tensors
        self._saved_versions = tuple(None if t is None else version(t) for t in tensors)

    def save_for_forward(self, *tensors: Any) -> None:
        self._saved_forward = tensors  # ctx.saved_tensors inside jvp (forward_ad.custom)

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        if self._saved is None:
            self._freed()
        for i, (t, v) in enumerate(zip(self._saved, self._saved_versions, strict=True)):
            if t is not None and version(t) != v:
                raise RuntimeError(
                    f"{self._name}: saved tensor {i} (shape {tuple(t.shape)}, dtype {t.dtype}) "
                    f"was modified by an in-place operation after it was saved: it is at "
                    f"version {version(t)}, expected version {v}"
                )
        if not self._links:
            return self._saved
        return tuple(self._unpack(i, t) for i, t in enumerate(self._saved))

    def _freed(self) -> NoReturn:
        raise RuntimeError(
            f"{self._name}: trying to backward through the graph a second time (or to "
            "read saved tensors after they were freed); specify retain_graph=True the "
            "first time"
        )

    def _unpack(self, i: int, t: Any) -> Any:
        """Saved tensor i as backward reads it: an output of forward is the output itself,
        in the graph (so a backward recorded with create_graph differentiates through it, as
        PyTorch's), or, once the output is gone, a tensor of its values joined to the node
        again. The node is alive while its backward runs; outside, its output comes detached."""
        link = self._links.get(i)
        if link is None:
            return t
        ref, index = link
        out = ref()
        if out is not None and out._array is t._array:
            return out
        node = self._node()
        if node is None:
            return t
        T = tensor_type()
        out = T._make(t._array, True)
        out._vc = t._vc
        if index is None:  # the node's one output
            out.grad_fn = node
        else:
            shared = self._shared()
            if shared is None:
                shared = _outputs_node(node, t._array)
                self._shared = weakref.ref(shared)
            join(shared, out, index)
        self._links[i] = (weakref.ref(out), index)
        return out

    def mark_dirty(self, *tensors: Any) -> None:
        """Say which inputs forward wrote in place (and returns as outputs)."""
        self._dirty = self._tensors("mark_dirty", tensors)

    def mark_non_differentiable(self, *tensors: Any) -> None:
        """Say which outputs take no gradient (their gradient in backward is None or zeros)."""
        marked = self._tensors("mark_non_differentiable", tensors)
        self._non_differentiable = {id(t) for t in marked}

    def _tensors(self, mark: str, tensors: tuple[Any, ...]) -> tuple[Any, ...]:
        """The tensors a mark names, each checked to be a Tensor, as PyTorch checks them."""
        T = tensor_type()
        for i, t in enumerate(tensors):
            if not isinstance(t, T):
                raise RuntimeError(
                    f"{self._name}: {mark} accepts Tensors only; got {type(t).__name__} for "
                    f"argument {i}"
                )
        return tensors

    def set_materialize_grads(self, value: bool) -> None:
        """With False, backward gets None (not zeros) for an output that got no gradient."""
        self._materialize = bool(value)


class _Node(Primitive):
    """The graph node of one ``apply`` of a user's Function: its rule is the user's backward.
    Its output is the Function's one differentiable output, or the parts of several laid end
    to end (each output a _Part of it, the outputs' one node an Outputs over it)."""

    # cls is kept when the node is released, so that it still names itself; ctx refers to
    # the node weakly (saved outputs are joined to it again when unpacked)
    __slots__ = ("cls", "__weakref__")
    saves_inputs = False  # the user's saved tensors are checked by ctx.saved_tensors
    users_rule = True  # what backward returns may be the user's own (the engine copies it)
    cls: Any  # the user's Function
    ctx: FunctionCtx
    diff: list[int]  # which outputs of forward are differentiable
    templates: list[Any]  # each output's (shape, dtype), None for a non-Tensor
    shapes: list[Any] | None  # the differentiable outputs', where there are several
    arrivals: Arrivals  # which of those outputs' gradients reached it (outputs.py)

    @property
    def op(self) -> str:
        return f"{self.cls.__name__}Backward"

    def name(self) -> str:
        return self.op

    @property
    def rule(self) -> str:  # type: ignore[override]
        return f"{self.cls.__name__}.backward(ctx, *grads), the user's rule"

    def forward(self, packed: Any) -> Any:
        return packed

    # PyTorch's node of a custom Function is its ctx: what forward saved and set on ctx is
    # read from the node too (y.grad_fn.saved_tensors), until backward frees it.
    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        ctx = self.__dict__.get("ctx")
        if ctx is None:
            FunctionCtx((), self.op)._freed()
        return ctx.saved_tensors

    def __getattr__(self, attr: str) -> Any:
        ctx = self.__dict__.get("ctx")
        if ctx is not None and not attr.startswith("_") and attr in ctx.__dict__:
            return ctx.__dict__[attr]
        return super().__getattr__(attr)

    def release(self) -> None:
        ctx = self.__dict__.get("ctx")
        if ctx is not None:  # a ctx the user kept reads as freed too, as PyTorch's
            ctx._saved = None
        super().release()

    def backward(self, grad: Any, out: Any) -> tuple[Any, ...]:
        ctx, shapes = self.ctx, self.shapes
        if shapes is None:  # one output
            grads: list[Any] = [grad]
        else:
            grads, start = [], 0
            for i, (shape, dtype) in enumerate(shapes):
                stop = start + math.prod(shape)
                got = self.diff[i] in self.arrivals.got
                part = grad[start:stop].reshape(shape).to(dtype)
                grads.append(part if got or ctx._materialize else None)
                start = stop
            self.arrivals.close()
        grads = _expand(self.templates, self.diff, ctx, grads)
        once = getattr(self.cls.backward, "_once_differentiable", False)
        recording = state.grad_enabled
        if once:  # nothing is recorded, and is_grad_enabled() says so, as PyTorch's
            with no_grad():
                result = self.cls.backward(ctx, *grads)
        else:
            result = self.cls.backward(ctx, *grads)
        result = result if isinstance(result, tuple) else (result,)
        n = len(self.inputs)  # type: ignore[arg-type]
        if len(result) < n or any(r is not None for r in result[n:]):
            raise RuntimeError(
                f"{self.cls.__name__}.backward: returned {len(result)} gradients for the {n} "
                "arguments of forward (one per argument, None for those that take none)"
            )
        T = tensor_type()
        # where the incoming gradients are part of a graph (create_graph), a backward that
        # is not differentiable hands on gradients that refuse to be differentiated
        upstream = [g for g in grads if isinstance(g, T) and g.requires_grad] if recording else []
        out_grads = []
        for i, (x, r) in enumerate(zip(self.inputs, result[:n], strict=True)):  # type: ignore[arg-type]
            if r is not None and not isinstance(r, T):
                raise TypeError(
                    f"{self.cls.__name__}.backward: gradient {i} must be a Tensor or None; got "
                    f"{type(r).__name__}"
                )
            if r is not None and isinstance(x, T) and r.shape != x.shape:
                try:
                    array.xp.broadcast_shapes(r.shape, x.shape)
                except ValueError:
                    raise RuntimeError(
                        f"{self.cls.__name__}.backward: gradient {i} has shape {r.shape}, but "
                        f"input {i} has shape {x.shape}"
                    ) from None
            if once and r is not None and upstream:  # a second derivative is refused
                r = _Refused.apply(r, *upstream, name=self.cls.__name__)
            out_grads.append(r)
        return tuple(out_grads)


class _Part(Primitive):
    """out = one output of a Function with several: a part of its node's packed output (the
    outputs' one node, an Outputs, runs this rule for each);  grad_packed = grad in out's
    place, 0 elsewhere."""

    rule = "grad_packed = grad in this output's place, 0 elsewhere"
    saves_inputs = False
    index: tuple[slice]  # where its elements lie in the packed output

    def backward(self, grad: Any, out: Any) -> tuple[Any, ...]:
        T = tensor_type()
        packed = self.inputs[0]  # type: ignore[index]
        flat = grad.reshape(-1).to(packed.dtype)
        start = self.index[0].start
        where = T._make(array.xp.arange(start, start + flat.shape[0]))
        zeros = T._make(array.xp.zeros(packed.shape, dtype=packed.dtype, like=grad._array))
        return (zeros.scatter(0, where, flat),)


def _outputs_node(node: _Node, like: Any) -> Any:
    """The one node of the outputs where a Function has several, named as PyTorch's
    (``SinCosBackward``): each output a part of the node's packed output, one flat tensor.
    Its values are never read (each output keeps its own array, a view where forward made
    one), so it holds none: zeros broadcast to its size, on the device of ``like`` (an
    output's array). join makes each output its."""
    shapes = node.shapes or []
    dtype = array.promote_all(dtype for _, dtype in shapes)
    size = sum(math.prod(shape) for shape, _ in shapes)
    xp = array.module_of(like)
    packed = tensor_type()._make(xp.broadcast_to(xp.zeros((), dtype, like=like), (size,)), True)
    packed.grad_fn = node
    # one part and place per output of forward, None for one that takes no gradient
    parts: list[Any] = [None] * len(node.templates)
    places: list[Any] = [None] * len(node.templates)
    start = 0
    for k, (shape, dtype) in zip(node.diff, shapes, strict=True):
        part = _Part()
        part.inputs, part.needs_input_grad = (packed,), (True,)
        part.versions, part.stamp = versions(part.inputs), writes[0]
        part.index = (slice(start, start + math.prod(shape)),)
        parts[k], places[k] = part, (part.index, shape, dtype)
        start += math.prod(shape)
    name = f"{node.cls.__name__}Backward"
    return share(packed, parts, places, name, name, node)


class _Refused(Primitive):
    """out = g: a gradient made by a backward marked @once_differentiable, which refuses to
    be differentiated again, as PyTorch's."""

    rule = "none: the backward that made this gradient is marked @once_differentiable"
    saves_inputs = False

    def forward(self, g: Any, *inputs: Any, name: str) -> Any:
        self.function = name
        return g

    def backward(self, grad: Any, out: Any) -> tuple[Any, ...]:
        raise RuntimeError(
            f"{self.function}: trying to differentiate twice a function that was marked with "
            "@once_differentiable"
        )


class Function:
    """PyTorch's ``torch.autograd.Function``: subclass it with ``@staticmethod``s
    ``forward(ctx, *args, **kwargs)`` and ``backward(ctx, *grads)`` (one gradient per output
    in, one per argument of forward out, None for a non-Tensor or one that needs none), or
    ``forward(*args)`` with ``setup_context(ctx, inputs, output)``; call ``F.apply(*args)``."""

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("a Function subclass defines forward as a staticmethod")

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        raise NotImplementedError("a Function subclass defines backward as a staticmethod")

    @staticmethod
    def jvp(ctx: Any, *tangents: Any) -> Any:
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD."
        )

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
        raise NotImplementedError  # the newer form only; forward(ctx, ...) otherwise

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(
            f"{type(self).__name__}: a Function is not instantiated; call "
            f"{type(self).__name__}.apply(...)"
        )

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        T = tensor_type()
        needs = tuple(isinstance(a, T) and a.requires_grad for a in args)
        ctx = FunctionCtx(needs, cls.__name__)
        dual = forward_ad_active[0] and carries(args)
        with no_grad(), paused(dual):
            if cls.setup_context is Function.setup_context:
                output = cls.forward(ctx, *args, **kwargs)
            else:
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
        if ctx._dirty:
            _check_dirty(cls, ctx, args, output)
        if state.grad_enabled and True in needs:
            output = _record(cls, ctx, args, output)
        return forward_ad_custom(cls, ctx, args, output) if dual else output


def _check_dirty(cls: type, ctx: FunctionCtx, args: tuple, output: Any) -> None:
    """PyTorch's refusal of a tensor marked dirty that forward does not return (the write
    reaches the graph only through the Function's outputs), and its warning for one that is
    not an input (a tensor forward made is not written in place: nothing to mark). As
    PyTorch's, each tensor marked dirty is then counted as written once more, and what ctx
    saved is checked against the versions forward left."""
    if any(all(t is not a for a in args) for t in ctx._dirty):
        warnings.warn(
            f"{cls.__name__}: mark_dirty received a tensor that is not an input; only input "
            "tensors that forward wrote in place are to be marked dirty",
            stacklevel=3,
        )
    returned = {id(o) for o in (output if isinstance(output, tuple) else (output,))}
    lost = [t for t in ctx._dirty if id(t) not in returned]
    if lost:
        shapes = ", ".join(str(tuple(getattr(t, "shape", ()))) for t in lost)
        raise RuntimeError(
            f"{cls.__name__}: some elements marked as dirty during the forward method were not "
            f"returned as output; got {len(lost)} such tensor(s), of shape {shapes}; the "
            "inputs that are modified in place must all be outputs of the Function"
        )
    for t in ctx._dirty:
        bump(t)
    ctx._saved_versions = tuple(None if t is None else version(t) for t in ctx._saved or ())


# Why an output of a Function that is a view of an input may not be written in place (the
# view's own node is the Function's, which a write through it would bypass); with several
# differentiable outputs the reason is the one split's outputs give (tensor/views.py).
_CUSTOM_VIEW = (
    "This view was created inside a custom Function (or because an input was returned as-is) "
    "and the autograd logic to handle view+inplace would override the custom backward "
    "associated with the custom Function, leading to incorrect gradients. This behavior is "
    "forbidden. You can fix this by cloning the output of the custom Function"
)


def _record(cls: type, ctx: FunctionCtx, args: tuple, output: Any) -> Any:
    """Join a Function's outputs to the graph through one node: each differentiable output
    is the object forward returned (a view of an input stays one), made by the node, or,
    where there are several, a part of its output, all sharing one node (an Outputs)."""
    T = tensor_type()
    single = not isinstance(output, tuple)
    outs = [output] if single else list(output)
    inputs = list(args)
    dirty = {id(t) for t in ctx._dirty}
    for i, a in enumerate(args):  # an input written in place: its history goes on before it
        if isinstance(a, T) and id(a) in dirty:
            base = _base_of(a)
            leaf = base if base is not None else a  # a view of a leaf writes the leaf
            if leaf.grad_fn is None and leaf.requires_grad:
                raise RuntimeError(
                    f"{cls.__name__}: a leaf Variable that requires grad (or a view of one) is "
                    f"being used in an in-place operation (mark_dirty of input {i}, of shape "
                    f"{a.shape}); write into a clone"
                )
            before = T._make(a._array, a.requires_grad)
            before.grad_fn, before._vc = a.grad_fn, a._vc
            inputs[i] = before
    diff = []
    for k, o in enumerate(outs):
        if not isinstance(o, T) or not array.is_floating(o.dtype):
            continue
        marked = id(o) in ctx._non_differentiable
        given = [a for a in args if a is o]
        if given and id(o) not in dirty:  # an input returned as it is: a view of it
            o = outs[k] = T._make(o._array)
            make_view(o, given[0])
        if marked:
            if _base_of(o) is not None:  # a view the Function made: not to be written
                o._multi_output = (cls.__name__, k, _CUSTOM_VIEW)
            continue
        diff.append(k)
    if not diff:
        return output
    node = _Node()
    node.__class__ = node_type(_Node, f"{cls.__name__}Backward")  # PyTorch's type name
    node.cls, node.ctx, node.diff = cls, ctx, diff
    node.templates = [(o.shape, o.dtype) if isinstance(o, T) else None for o in outs]
    node.inputs = tuple(inputs)
    node.needs_input_grad = ctx.needs_input_grad
    node.versions = versions(node.inputs)
    node.stamp = writes[0]
    node.arrivals = Arrivals()
    ctx._node = weakref.ref(node)
    if len(diff) == 1:
        node.shapes = None
        o = outs[diff[0]]
        o.requires_grad, o.grad_fn = True, node
    else:
        node.shapes = [(outs[k].shape, outs[k].dtype) for k in diff]
        shared = _outputs_node(node, outs[diff[0]]._array)
        ctx._shared = weakref.ref(shared)
        for k in diff:
            join(shared, outs[k], k)
    for i, a in enumerate(args):  # a write through a view: the base takes CopySlices
        if isinstance(a, T) and id(a) in dirty:
            a._rebased(inputs[i], a.grad_fn, _base_of(a))
    for k in diff:  # a view forward made, or an input returned: not to be written in place
        o = outs[k]
        if id(o) not in dirty and _base_of(o) is not None:
            o._multi_output = (cls.__name__, k, _CUSTOM_VIEW) if len(diff) == 1 else (
                cls.__name__, k)  # fmt: skip
    _keep_outputs(ctx, outs, diff)
    return outs[0] if single else tuple(outs)


def _base_of(t: Any) -> Any:
    """The tensor ``t`` is a view of, where it still shares its memory; else None."""
    base = t._base
    if base is None or not array.module_of(t._array).may_share_memory(t._array, base._array):
        return None
    return base


def _keep_outputs(ctx: FunctionCtx, outs: list, diff: list[int]) -> None:
    """Where forward saved some of its differentiable outputs, ctx keeps a detached alias of
    each (sharing its memory and version counter) and a weak reference to the output, which
    saved_tensors gives back joined to the graph (FunctionCtx._unpack): holding the output
    itself, whose node holds ctx, would make the graph refer to itself."""
    saved = ctx._saved
    if not saved:
        return
    T = tensor_type()
    kept = list(saved)
    for k in diff:
        o = outs[k]
        for i, t in enumerate(saved):
            if t is o:
                alias = T._make(o._array)
                alias._vc = counter(o)
                kept[i] = alias
                ctx._links[i] = (weakref.ref(o), None if len(diff) == 1 else k)
    ctx._saved = tuple(kept)


def _expand(templates: list, diff: list[int], ctx: FunctionCtx, grads: list[Any]) -> list[Any]:
    """The gradients of the differentiable outputs as one per output of forward, as PyTorch
    hands them to backward: for the others, zeros (None with set_materialize_grads(False),
    and for outputs that are not tensors)."""
    T = tensor_type()
    full: list[Any] = []
    for template in templates:
        if template is None or not ctx._materialize:
            full.append(None)
        else:
            shape, dtype = template
            like = grads[0]._array if grads else None
            full.append(T._make(array.xp.zeros(shape, dtype=dtype, like=like)))
    for k, g in zip(diff, grads, strict=True):
        full[k] = g
    return full


class _VariableMeta(type):
    """``isinstance(t, Variable)`` is ``isinstance(t, Tensor)``, as PyTorch's."""

    def __instancecheck__(cls, other: Any) -> bool:
        return isinstance(other, tensor_type())


class Variable(metaclass=_VariableMeta):
    """PyTorch's legacy ``torch.autograd.Variable``: a Tensor, now that the two are one. A
    tensor given is aliased (a new Tensor sharing its array), as PyTorch does; every Tensor
    is an instance of it."""

    def __new__(cls, data: Any, requires_grad: bool = False, volatile: bool = False) -> Any:
        T = tensor_type()
        if isinstance(data, T):
            out = T._make(data._array)
            out._vc = counter(data)
        else:
            out = T(data)
        return out.requires_grad_(requires_grad) if requires_grad else out
