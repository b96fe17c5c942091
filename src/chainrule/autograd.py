"""The graph machinery: Function, grad mode, the topological order, the backward engine.

Ops live in ops/; this module only records them and walks the graph backwards. The engine
alone sums gradients back to their inputs' shapes (unbroadcast).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from contextlib import ContextDecorator
from typing import TYPE_CHECKING, Any, TypeVar

from . import backend as B

if TYPE_CHECKING:
    from .tensor import Tensor

_Tensor: Any = None  # set by tensor.py, which imports this module (imports flow downward)


# ---------------------------------------------------------------------------------------
# Grad mode and anomaly mode: per thread, so two threads training two models don't meet.


class _State(threading.local):
    def __init__(self) -> None:
        self.grad_enabled = True
        self.anomaly = False
        # What each open block restores on exit: kept per thread, not on the context
        # object, so one no_grad() instance (or decorator) can be open in two threads.
        self.saved_grad: list[bool] = []
        self.saved_anomaly: list[bool] = []
        # Inside a backward pass in anomaly mode: the ops of the backward formulas that made
        # NaN or inf from finite inputs (see run_backward); None elsewhere.
        self.backward_ops: list[str] | None = None
        # The incoming gradient the running backward formula may overwrite (see donated).
        self.donated: Any = None


_state = _State()


def is_grad_enabled() -> bool:
    return _state.grad_enabled


def on_arrays() -> bool:
    """Whether a backward formula may compute on arrays: for first-order gradients (the
    engine turns grad mode on in backward only for create_graph), and not in anomaly mode,
    whose report names the Tensor op inside a formula that made NaN or inf."""
    s = _state
    return not (s.grad_enabled or s.anomaly)


def operands(*xs: Any) -> tuple[Any, ...]:
    """What a backward formula written with operators only (``g * (1 - out * out)``)
    computes with: the arrays inside the Tensors for first-order gradients, where no graph
    is built and each Tensor op's bookkeeping would cost more than its arithmetic, and the
    Tensors themselves under create_graph. Pair with :func:`results`."""
    if not on_arrays():
        return xs
    T = _Tensor
    arrays = []  # a loop, not a comprehension: see Function.apply
    for x in xs:
        arrays.append(x.data if isinstance(x, T) else x)
    return tuple(arrays)


def donated(grad: Any) -> bool:
    """Whether the running backward formula may overwrite ``grad``'s array and return it as
    an input's gradient, saving a new array: the engine hands over an incoming gradient,
    for first-order gradients only, when nothing else holds its memory, to the formulas of
    Functions that set ``takes_donation``."""
    return _state.donated is grad


def results(*gs: Any) -> tuple[Any, ...]:
    """A backward formula's gradients as Tensors: arrays (from :func:`operands`) wrapped,
    Tensors and None as they are."""
    T = _Tensor
    tensors = []  # a loop, not a comprehension: see Function.apply
    for g in gs:
        tensors.append(g if g is None or isinstance(g, T) else T._make(g, False))
    return tuple(tensors)


class _ThreadFlag(ContextDecorator):
    """Context manager and decorator that sets one of this thread's flags (``flag``, an
    attribute of _state) inside, and restores it on exit from the stack ``saved``."""

    flag = ""
    saved = ""

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)

    def __enter__(self) -> None:
        getattr(_state, self.saved).append(getattr(_state, self.flag))
        setattr(_state, self.flag, self.mode)

    def __exit__(self, *exc: object) -> None:
        setattr(_state, self.flag, getattr(_state, self.saved).pop())


_F = TypeVar("_F", bound=Callable[..., Any])


class _SetNow(_ThreadFlag):
    """PyTorch's ``set_grad_enabled`` / ``set_detect_anomaly`` behaviour: the call itself
    sets this thread's flag, so ``cr.set_grad_enabled(False)`` on its own line switches the
    mode until it is set again; a ``with`` block restores on exit what the flag was before
    the call, and as a decorator each call of the function sets and restores it anew."""

    def __init__(self, mode: bool) -> None:
        super().__init__(mode)
        self.prev = getattr(_state, self.flag)
        setattr(_state, self.flag, self.mode)

    def __enter__(self) -> None:
        pass  # already set by the call

    def __exit__(self, *exc: object) -> None:
        setattr(_state, self.flag, self.prev)

    def __call__(self, func: _F) -> _F:
        setattr(_state, self.flag, self.prev)  # decorating a function changes no mode
        return super().__call__(func)

    def _recreate_cm(self) -> _SetNow:  # a fresh instance per call of a decorated function
        return type(self)(self.mode)


class set_grad_enabled(_SetNow):
    """Turn recording on or off in this thread: as a call, a context manager or a decorator."""

    flag, saved = "grad_enabled", "saved_grad"


class _GradMode(_ThreadFlag):
    flag, saved = "grad_enabled", "saved_grad"


class no_grad(_GradMode):
    """Record nothing inside: results do not require grad and keep no graph."""

    def __init__(self) -> None:
        super().__init__(False)


class enable_grad(_GradMode):
    """Record again inside a `no_grad` block."""

    def __init__(self) -> None:
        super().__init__(True)


class set_detect_anomaly(_SetNow):
    """Turn anomaly detection on or off in this thread: as a call, a context manager or a
    decorator."""

    flag, saved = "anomaly", "saved_anomaly"


class detect_anomaly(_ThreadFlag):
    """Raise a RuntimeError naming the op when a forward or backward step makes NaN or inf.

    Off by default; when off it costs one attribute test per op.
    """

    flag, saved = "anomaly", "saved_anomaly"

    def __init__(self) -> None:
        super().__init__(True)


def _finite(x: Any) -> bool:
    arr = x.data if isinstance(x, _Tensor) else x
    if isinstance(arr, B.ndarray) and arr.dtype.kind != "f":
        return True
    return bool(B.xp.all(B.xp.isfinite(arr)))


def _holders(g: Any) -> tuple[int, int, int] | None:
    """How many references reach gradient ``g``, its array and that array's base (0 if it
    has none), as sys.getrefcount counts them; None if the array is read-only (a broadcast
    view) or a view of memory that no array of its own owns."""
    a = g.data
    b = a.base
    if not a.flags.writeable:
        return None
    if b is not None and (type(b) is not B.ndarray or b.base is not None):
        return None
    refs = sys.getrefcount
    return refs(g), refs(a), 0 if b is None else refs(b)


# What _holders says of a gradient that only run_backward's local variable holds, viewed
# or not: measured once, with the very calls run_backward makes, so the comparison holds
# whatever the interpreter counts for its own frames. Any other holder (a second Tensor,
# a view, a retained .grad, a dict) adds a reference. Empty without reference counts.
_SOLE: tuple[tuple[int, int, int], ...] = ()


def _measure_sole() -> None:
    global _SOLE
    _SOLE = ()
    if not hasattr(sys, "getrefcount") or not getattr(sys, "_is_gil_enabled", lambda: True)():
        return  # no counts, or counts that other threads change under us: never hand over
    g = _Tensor._make(B.xp.empty((2, 2)).T, False)  # held as run_backward holds g
    h = _holders(g)
    if h is None:
        return
    sole = (h, (h[0], h[1], 0))
    # The counts must tell each kind of second holder apart (of the Tensor, of its array,
    # of the array's base), or nothing is handed over.
    for second in (lambda: [g], lambda: _Tensor._make(g.data, False), lambda: g.data.base[:1]):
        held = second()
        if _holders(g) in sole:
            return
        del held
    _SOLE = sole


# ---------------------------------------------------------------------------------------
# Function: one differentiable primitive, forward and backward side by side.


class Function:
    """A differentiable primitive and, once applied, the graph node that recorded it.

    Subclasses define ``forward(self, *arrays, **options) -> array`` on arrays, saving on
    ``self`` whatever backward needs, and ``backward(self, grad, out) -> tuple`` on Tensors:
    one gradient (or None) per input, in the *output's* shape where the op broadcasts.
    ``self.inputs`` holds the inputs (Tensors, or plain numbers), ``out`` is the output
    Tensor, and ``self.needs_input_grad`` says which inputs want a gradient. The node keeps
    its inputs, never its output, so a graph holds no reference cycle.

    Written with Tensor ops, backward is differentiable (create_graph). For first-order
    gradients a formula may compute on arrays instead (:func:`on_arrays`; with operators
    only, one formula serves both through :func:`operands` and :func:`results`).
    """

    __slots__ = ("inputs", "needs_input_grad", "__dict__")

    inputs: tuple[Any, ...] | None
    needs_input_grad: tuple[bool, ...]
    # Set by a subclass whose backward may overwrite its incoming gradient when the engine
    # donates it (see donated); the engine checks only for these.
    takes_donation = False

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def backward(self, grad: Tensor, out: Tensor) -> tuple[Tensor | None, ...]:
        raise NotImplementedError

    @property
    def name(self) -> str:
        return type(self).__name__

    @classmethod
    def apply(cls, *inputs: Any, **options: Any) -> Tensor:
        """Run forward on the inputs' arrays; record a node if grad mode is on and an input
        requires grad. Inputs are Tensors or plain Python numbers."""
        T = _Tensor
        fn = cls()
        # One loop for the arrays and what needs a gradient: cheaper than two comprehensions,
        # each a call of its own (until Python 3.12), on the hot path of every op.
        arrays, needs = [], []
        for x in inputs:
            if isinstance(x, T):
                arrays.append(x.data)
                needs.append(x.requires_grad)
            else:
                arrays.append(x)
                needs.append(False)
        try:
            out_data = fn.forward(*arrays, **options)
        except Exception as err:
            # NumPy's own message names neither the op nor the shapes; add them.
            raise _forward_error(cls.__name__.lower(), err, inputs) from None
        state = _state
        record = state.grad_enabled and True in needs
        out = T._make(out_data, record)
        if record:
            fn.inputs = inputs
            fn.needs_input_grad = tuple(needs)
            out.grad_fn = fn
        if state.anomaly and not _finite(out_data) and all(_finite(x) for x in inputs):
            _forward_anomaly(cls.__name__, inputs, out_data)
        return out


def _forward_anomaly(op: str, inputs: tuple[Any, ...], out: Any) -> None:
    """An op made NaN or inf from finite inputs: raise, naming it, its input shapes and what
    it made; inside a backward formula, only note it for the node's check in run_backward."""
    ops = _state.backward_ops
    if ops is not None:
        ops.append(op)
        return
    shapes = _listed([str(tuple(getattr(x, "shape", ()))) for x in inputs])
    nan = int(B.xp.isnan(out).sum())
    inf = int(B.xp.size(out)) - int(B.xp.isfinite(out).sum()) - nan
    raise RuntimeError(
        f"{op}: forward produced NaN or inf from finite inputs (detect_anomaly); got input "
        f"shape{'s' if len(inputs) > 1 else ''} {shapes}; the output of shape "
        f"{B.xp.shape(out)} holds {nan} NaN and {inf} inf"
    )


def _forward_error(op: str, err: Exception, inputs: tuple[Any, ...]) -> Exception:
    """The exception a failed forward re-raises: the same type, naming the op and the shapes
    (and, for a TypeError, the dtypes) of its inputs."""
    msg = str(err).rstrip(". ")
    if msg.startswith(op + ":"):  # already says which op and what is wrong
        return err
    shapes = _listed([str(tuple(getattr(x, "shape", ()))) for x in inputs])
    if "broadcast" in msg:
        text = f"{op}: shapes {shapes} cannot be broadcast together"
    else:
        text = f"{op}: {msg}; got shape{'s' if len(inputs) > 1 else ''} {shapes}"
        if isinstance(err, TypeError):
            text += ", dtypes " + _listed(
                [str(getattr(x, "dtype", type(x).__name__)) for x in inputs]
            )
    try:
        return type(err)(text)
    except Exception:  # an exception type that needs other arguments keeps its own message
        return err


def _listed(items: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return " and ".join([", ".join(items[:-1]), items[-1]]) if len(items) > 1 else "".join(items)


# ---------------------------------------------------------------------------------------
# Topological order: iterative depth-first search, shared with the scalar engine.


def toposort(roots: Iterable[Any], parents: Callable[[Any], Iterable[Any]]) -> list[Any]:
    """Every node reachable from ``roots``, each after all of its parents.

    Iterative (an explicit stack, so no recursion limit), deterministic (parents visited in
    the order ``parents`` gives them), nodes compared by identity: they must hash like
    ``object`` (Tensor and Value do), which lets the set hold the nodes themselves, almost
    twice as fast as holding their ids.
    """
    order: list[Any] = []
    visited: set[Any] = set()
    seen, mark, emit = visited.__contains__, visited.add, order.append
    for root in roots:
        if seen(root):
            continue
        mark(root)
        stack = [(root, iter(parents(root)))]
        push, pop = stack.append, stack.pop
        while stack:
            node, it = stack[-1]
            for p in it:
                if not seen(p):
                    mark(p)
                    push((p, iter(parents(p))))
                    break
            else:
                pop()
                emit(node)
    return order


_FREED = (
    "backward: trying to backward through the graph a second time (or to use a result "
    "whose graph was freed); its saved values were freed after the first backward. Pass "
    "retain_graph=True to the first backward if you need to go through it again"
)


def _grad_parents(t: Tensor) -> Sequence[Tensor]:
    fn = t.grad_fn
    if fn is None:
        return ()
    if fn.inputs is None:
        raise RuntimeError(f"{fn.name}: {_FREED}")
    T = _Tensor
    parents = []  # a loop, not a comprehension: see Function.apply
    for x in fn.inputs:
        if isinstance(x, T) and x.requires_grad:
            parents.append(x)
    return parents


def sum_to_shape(grad: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Undo broadcasting: sum ``grad`` over the dims along which ``shape`` was expanded."""
    lead = grad.ndim - len(shape)
    # Only broadcasting is undone: a gradient of another shape (even with as many elements)
    # is an error, never silently reshaped.
    if lead < 0 or any(n != 1 and n != m for n, m in zip(shape, grad.shape[lead:], strict=True)):
        raise ValueError(f"sum_to_shape: shape {grad.shape} is not a broadcast of {shape}")
    dims = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and grad.shape[lead + i] != 1
    )
    if dims:
        grad = grad.sum(dim=dims, keepdim=True)
    return grad.reshape(shape) if grad.shape != shape else grad


def _check_grad(fn: Function, i: int, x: Tensor, g: Any) -> Tensor:
    if not isinstance(g, _Tensor):
        raise TypeError(f"{fn.name}: backward returned {type(g).__name__} for input {i}")
    if g.shape != x.shape:
        try:
            g = sum_to_shape(g, x.shape)
        except Exception:
            raise RuntimeError(
                f"{fn.name}: backward returned a gradient of shape {g.shape} for input {i} "
                f"of shape {x.shape}"
            ) from None
    if g.dtype != x.dtype:
        g = g.to(x.dtype)
    return g


def run_backward(
    roots: Sequence[Tensor],
    root_grads: Sequence[Tensor],
    retain_graph: bool,
    create_graph: bool,
    inputs: Sequence[Tensor] | None = None,
    on_step: Callable[..., None] | None = None,
) -> dict[int, Tensor]:
    """The backward pass from ``roots`` seeded with ``root_grads``.

    With ``inputs`` None, gradients of leaves are accumulated into their ``.grad``;
    otherwise nothing is accumulated and the gradients of ``inputs`` are returned by id.
    ``on_step(t, g, steps)``, if given, is told of every node as it is swept: its output
    ``t``, the incoming gradient ``g``, and for each input that got a gradient a tuple
    ``(index, input, gradient as the op returned it, gradient after unbroadcasting)``;
    for a leaf, ``steps`` is empty. It serves explanations, not the hot path.
    """
    order = toposort(roots, _grad_parents)
    grads: dict[Any, Any] = {}  # tensor -> its gradient so far (tensors hash by identity)
    for r, g in zip(roots, root_grads, strict=True):
        grads[r] = grads[r] + g if r in grads else g
    wanted = None if inputs is None else {id(t) for t in inputs}
    handed = {id(g.data) for g in root_grads}  # arrays a leaf's .grad must not share
    captured: dict[int, Tensor] = {}
    state = _state
    anomaly = state.anomaly
    # A formula may overwrite an incoming gradient that nothing else holds (see donated,
    # _SOLE): not under create_graph, where gradients are graph nodes, nor in anomaly mode,
    # nor for on_step, which is shown each gradient after the formula ran.
    donate = not (create_graph or anomaly) and on_step is None
    T = _Tensor
    # Grad mode is on inside only for create_graph. An anomaly inside a backward step is
    # reported once, by the node whose gradient it spoils, naming the op of the node's
    # backward formula that made it: the ops note their names in ``made`` (see
    # _forward_anomaly). Set and restored here rather than by two context managers, which
    # cost about 3 us a pass.
    outer = state.grad_enabled, state.backward_ops
    made: list[str] | None = [] if anomaly else None
    state.grad_enabled, state.backward_ops = create_graph, made
    try:
        for t in reversed(order):
            g = grads.pop(t, None)
            if g is None:
                continue
            if wanted is not None:
                if id(t) in wanted:
                    captured[id(t)] = g
            elif t.grad_fn is None or t._retains_grad:
                _accumulate(t, g, create_graph, handed)
            fn = t.grad_fn
            if fn is None:
                if on_step is not None:
                    on_step(t, g, [])
                continue
            xs = fn.inputs
            if xs is None:
                raise RuntimeError(f"{fn.name}: {_FREED}")
            if made:
                made.clear()  # keep only what this node's formula makes
            if donate and fn.takes_donation and _holders(g) in _SOLE:
                state.donated = g
                try:
                    in_grads = fn.backward(g, t)
                finally:  # also if it raised: the next formula must not see g as donated
                    state.donated = None
            else:
                in_grads = fn.backward(g, t)
            if len(in_grads) != len(xs):
                raise RuntimeError(
                    f"{fn.name}: backward returned {len(in_grads)} gradients for {len(xs)} inputs"
                )
            steps: list[Any] | None = [] if on_step is not None else None
            for i, (x, need, xg) in enumerate(zip(xs, fn.needs_input_grad, in_grads, strict=True)):
                if not need or xg is None:
                    continue
                raw = xg
                # The common case, checked inline: a Tensor of the input's shape and dtype.
                d = xg.data if type(xg) is T else None
                if d is None or d.shape != x.data.shape or d.dtype != x.data.dtype:
                    xg = _check_grad(fn, i, x, xg)
                if steps is not None:
                    steps.append((i, x, raw, xg))
                if anomaly and not _finite(xg):
                    by = f", made by {made[0]} in its backward formula" if made else ""
                    raise RuntimeError(
                        f"{fn.name}: backward produced NaN or inf in the gradient of input {i} "
                        f"(shape {x.shape}) of forward op {fn.name}{by} (detect_anomaly); got "
                        f"a finite incoming gradient of shape {g.shape}"
                    )
                prev = grads.pop(x, None)
                if prev is None:
                    grads[x] = xg
                elif donate and _holders(prev) in _SOLE:
                    # Nothing else holds the sum so far (not even xg: an op that returned
                    # it twice): add in place, as PyTorch's engine does, instead of
                    # allocating a new array (a residual branch, a weight used twice).
                    # Popped, prev is held as g is (see _SOLE).
                    prev.data += xg.data
                    grads[x] = prev
                else:
                    grads[x] = prev + xg
            in_grads = raw = xg = d = None  # grads alone holds the gradients (see _SOLE)
            if on_step is not None:
                on_step(t, g, steps)
            if not retain_graph:
                fn.inputs = None
                fn.__dict__.clear()  # saved arrays and tensors
    finally:
        state.grad_enabled, state.backward_ops = outer
    return captured


def _accumulate(t: Tensor, g: Tensor, create_graph: bool, handed: set[int]) -> None:
    if t.grad is None:
        if create_graph:
            t.grad = g
            return
        # A leaf's .grad must own its memory, since users and optimizers may change it in
        # place: copy a view (reshape, expand), an array already handed to another leaf
        # (Add gives the same gradient to both inputs), the caller's seed or a Tensor that
        # requires grad (a formula that returned an input); a fresh array an op made is
        # taken as it is, which saves a copy per parameter per step, and so is the plain
        # Tensor around it.
        arr = g.data
        if arr.base is not None or not arr.flags.writeable or id(arr) in handed or g.requires_grad:
            arr = arr.copy()
        handed.add(id(arr))
        t.grad = g if arr is g.data else _Tensor._make(arr, False)
    elif create_graph:
        t.grad = t.grad + g
    else:
        # A leaf's gradient adds up in place, as in PyTorch: .grad stays the same Tensor,
        # and gradient accumulation over batches allocates nothing. Out of place if .grad
        # is part of a graph (an earlier create_graph), read-only, or not of g's shape and
        # dtype (assigned by hand); a retained non-leaf's too, as in PyTorch.
        prev = t.grad
        arr = prev.data
        if (
            t.grad_fn is None
            and type(prev) is _Tensor
            and not prev.requires_grad
            and arr.flags.writeable
            and arr.shape == g.data.shape
            and arr.dtype == g.data.dtype
        ):
            arr += g.data
        else:
            t.grad = _Tensor._make(arr + g.data, False)


def _seed(root: Tensor, gradient: Any, op: str) -> Tensor:
    if gradient is None:
        d = root.data
        if d.size != 1:
            raise RuntimeError(
                f"{op}: grad can be implicitly created only for outputs with one element; got "
                f"shape {root.shape}; pass gradient= (grad_outputs=) of that shape"
            )
        # Of one element, the shape is ndim ones: one C call, where ones() is Python that
        # calls two (measured 9 against 18 us with the caches cold, as a step finds them).
        return _Tensor._make(B.xp.array(1, dtype=d.dtype, ndmin=d.ndim), False)
    g = gradient if isinstance(gradient, _Tensor) else _Tensor(gradient, dtype=root.dtype)
    if g.shape != root.shape:
        raise RuntimeError(
            f"{op}: gradient has shape {g.shape} but the output has shape {root.shape}"
        )
    if _state.anomaly and not _finite(g):
        raise RuntimeError(
            f"{op}: the gradient given holds NaN or inf (detect_anomaly); got shape {g.shape}"
        )
    return g if g.dtype == root.dtype else g.to(root.dtype)


def backward(
    root: Tensor, gradient: Any = None, retain_graph: bool = False, create_graph: bool = False
) -> None:
    if not root.requires_grad:
        raise RuntimeError(
            "backward: the tensor does not require grad and has no grad_fn; set requires_grad=True "
            "on an input (or check for a no_grad block)"
        )
    seed = _seed(root, gradient, "backward")
    run_backward([root], [seed], retain_graph or create_graph, create_graph)


def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool = False,
) -> tuple[Tensor | None, ...]:
    """Gradients of ``outputs`` with respect to ``inputs``, returned (not accumulated)."""
    outs = [outputs] if isinstance(outputs, _Tensor) else list(outputs)
    ins = [inputs] if isinstance(inputs, _Tensor) else list(inputs)
    if grad_outputs is None or isinstance(grad_outputs, _Tensor):
        gos: list[Any] = [grad_outputs] * len(outs)
    else:
        gos = list(grad_outputs)
    for i, o in enumerate(outs):
        if not o.requires_grad:
            raise RuntimeError(f"grad: output {i} does not require grad and has no grad_fn")
    for i, x in enumerate(ins):
        if not x.requires_grad:
            raise RuntimeError(f"grad: input {i} does not require grad")
    if len(gos) != len(outs):
        raise ValueError(
            f"grad: got {len(gos)} grad_outputs for {len(outs)} outputs; give one per output"
        )
    seeds = [_seed(o, g, "grad") for o, g in zip(outs, gos, strict=True)]
    retain = create_graph if retain_graph is None else retain_graph
    captured = run_backward(outs, seeds, retain, create_graph, inputs=ins)
    result = []
    for i, x in enumerate(ins):
        g = captured.get(id(x))
        if g is None and not allow_unused:
            raise RuntimeError(
                f"grad: input {i} (shape {x.shape}) was not used to compute the outputs; "
                "pass allow_unused=True to get None for it"
            )
        result.append(g)
    return tuple(result)


__all__ = [
    "Function",
    "toposort",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "is_grad_enabled",
    "detect_anomaly",
    "set_detect_anomaly",
    "backward",
    "grad",
    "sum_to_shape",
]
