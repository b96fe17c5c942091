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

The node is one of the engine's own primitives (function.py's contract), so the engine needs
nothing new: several outputs are one array the node makes, of which each output is a part.
"""

from __future__ import annotations

import math
from typing import Any

from .. import array
from .function import Function as Primitive
from .function import counter, make_view, tensor_type, version, versions, writes
from .mode import no_grad, state


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
        self._arrived: set[int] = set()  # which outputs' gradients reached the node (_Part)

    def save_for_backward(self, *tensors: Any) -> None:
        T = tensor_type()
        for t in tensors:
            if t is not None and not isinstance(t, T):
                raise TypeError(
                    f"{self._name}: save_for_backward takes Tensors or None; got "
                    f"{type(t).__name__}"
                )
        self._saved = tensors
        self._saved_versions = tuple(None if t is None else version(t) for t in tensors)

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        if self._saved is None:
            raise RuntimeError(
                f"{self._name}: trying to backward through the graph a second time (or to "
                "read saved tensors after they were freed); specify retain_graph=True the "
                "first time"
            )
        for i, (t, v) in enumerate(zip(self._saved, self._saved_versions, strict=True)):
            if t is not None and version(t) != v:
                raise RuntimeError(
                    f"{self._name}: saved tensor {i} (shape {tuple(t.shape)}, dtype {t.dtype}) "
                    f"was modified by an in-place operation after it was saved: it is at "
                    f"version {version(t)}, expected version {v}"
                )
        return self._saved

    def mark_dirty(self, *tensors: Any) -> None:
        """Say which inputs forward wrote in place (and returns as outputs)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors: Any) -> None:
        """Say which outputs take no gradient (their gradient in backward is None or zeros)."""
        self._non_differentiable = {id(t) for t in tensors}

    def set_materialize_grads(self, value: bool) -> None:
        """With False, backward gets None (not zeros) for an output that got no gradient."""
        self._materialize = bool(value)


class _Node(Primitive):
    """The graph node of one ``apply`` of a user's Function: its rule is the user's backward.
    Its output is the Function's one differentiable output, or the parts of several laid end
    to end (each output a _Part of it)."""

    __slots__ = ("cls",)  # kept when the node is released, so that it still names itself
    saves_inputs = False  # the user's saved tensors are checked by ctx.saved_tensors
    users_rule = True  # what backward returns may be the user's own (the engine copies it)
    cls: Any  # the user's Function
    ctx: FunctionCtx
    diff: list[int]  # which outputs of forward are differentiable
    templates: list[Any]  # each output's (shape, dtype), None for a non-Tensor
    shapes: list[Any] | None  # the differentiable outputs', where there are several

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

    def backward(self, grad: Any, out: Any) -> tuple[Any, ...]:
        ctx, shapes = self.ctx, self.shapes
        if shapes is None:  # one output
            grads: list[Any] = [grad]
        else:
            grads, start = [], 0
            for i, (shape, dtype) in enumerate(shapes):
                stop = start + math.prod(shape)
                got = i in ctx._arrived
                part = grad[start:stop].reshape(shape).to(dtype)
                grads.append(part if got or ctx._materialize else None)
                start = stop
            ctx._arrived = set()
        grads = _expand(self.templates, self.diff, ctx, grads)
        once = getattr(self.cls.backward, "_once_differentiable", False)
        recording = state.grad_enabled
        if once:
            state.grad_enabled = False
        try:
            result = self.cls.backward(ctx, *grads)
        finally:
            state.grad_enabled = recording
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
    """out = one output of a Function with several: a part of its node's packed output."""

    rule = "grad_packed = grad in this output's place, 0 elsewhere"
    saves_inputs = False
    ctx: FunctionCtx
    index: int  # which differentiable output this is
    packed_dtype: Any

    def forward(self, packed: Any, *, start: int, shape: tuple, dtype: Any) -> Any:
        self.start, self.shape = start, shape
        self.size = packed.shape[0]
        return packed[start : start + math.prod(shape)].reshape(shape).astype(dtype)

    def backward(self, grad: Any, out: Any) -> tuple[Any, ...]:
        self.ctx._arrived.add(self.index)
        T = tensor_type()
        flat = grad.reshape(-1).to(self.packed_dtype)
        where = T._make(array.xp.arange(self.start, self.start + flat.shape[0]))
        zeros = T._make(array.xp.zeros(self.size, dtype=self.packed_dtype, like=grad._array))
        return (zeros.scatter(0, where, flat),)


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
        with no_grad():
            if cls.setup_context is Function.setup_context:
                output = cls.forward(ctx, *args, **kwargs)
            else:
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
        if not (state.grad_enabled and True in needs):
            return output
        return _record(cls, ctx, args, output)


def _record(cls: type, ctx: FunctionCtx, args: tuple, output: Any) -> Any:
    """Join a Function's outputs to the graph through one node."""
    T = tensor_type()
    single = not isinstance(output, tuple)
    outs = [output] if single else list(output)
    inputs = list(args)
    dirty = {id(t) for t in ctx._dirty}
    for i, a in enumerate(args):  # an input written in place: its history goes on before it
        if isinstance(a, T) and id(a) in dirty:
            if a.grad_fn is None and a.requires_grad:
                raise RuntimeError(
                    f"{cls.__name__}: a leaf Variable that requires grad is being used in an "
                    "in-place operation (mark_dirty of an input that is a leaf)"
                )
            before = T._make(a._array, a.requires_grad)
            before.grad_fn, before._vc = a.grad_fn, a._vc
            inputs[i] = before
    diff = []
    for k, o in enumerate(outs):
        if not isinstance(o, T) or id(o) in ctx._non_differentiable:
            continue
        if not array.is_floating(o.dtype):
            continue
        given = [a for a in args if a is o]
        if given and id(o) not in dirty:  # an input returned as it is: a view of it
            o = outs[k] = T._make(o._array)
            make_view(o, given[0])
        diff.append(k)
    if not diff:
        return output
    node = _Node()
    node.cls, node.ctx, node.diff = cls, ctx, diff
    node.templates = [(o.shape, o.dtype) if isinstance(o, T) else None for o in outs]
    node.inputs = tuple(inputs)
    node.needs_input_grad = ctx.needs_input_grad
    node.versions = versions(node.inputs)
    node.stamp = writes[0]
    if len(diff) == 1:
        node.shapes = None
        o = outs[diff[0]]
        o.requires_grad, o.grad_fn = True, node
        return outs[0] if single else tuple(outs)
    parts = [outs[k] for k in diff]
    dtype = array.result_dtype(p.dtype for p in parts)
    flat = array.xp.concatenate([p._array.reshape(-1).astype(dtype) for p in parts])
    packed = T._make(flat, True)
    packed.grad_fn = node
    node.shapes = [(p.shape, p.dtype) for p in parts]
    start = 0
    for index, k in enumerate(diff):
        part = outs[k]
        made = _Part.apply(packed, start=start, shape=part.shape, dtype=part.dtype)
        fn: Any = made.grad_fn
        fn.ctx, fn.index, fn.packed_dtype = ctx, index, dtype
        if id(part) in dirty:  # the input object itself carries the result
            part.requires_grad, part.grad_fn = True, made.grad_fn
            made = part
        outs[k] = made
        start += math.prod(part.shape)
    return tuple(outs)


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


def once_differentiable(backward: Any) -> Any:
    """Mark a Function's backward that is not written in differentiable ops (it works on
    arrays, say): it runs with grad mode off, and a second derivative through it is
    PyTorch's error. Goes under ``@staticmethod``."""
    backward._once_differentiable = True
    return backward


def Variable(data: Any, requires_grad: bool = False, volatile: bool = False) -> Any:  # noqa: N802
    """PyTorch's legacy ``torch.autograd.Variable``: a Tensor, now that the two are one. A
    tensor given is aliased (a new Tensor sharing its array), as PyTorch does."""
    T = tensor_type()
    if isinstance(data, T):
        out = T._make(data._array)
        out._vc = counter(data)
    else:
        out = T(data)
    return out.requires_grad_(requires_grad) if requires_grad else out
