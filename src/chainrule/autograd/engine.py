"""The real backward pass: reference.py's walk plus, each behind a named call, hooks, observers,
accumulation into ``.grad`` (which owns its memory), version checks, the fast path and freeing;
and the two ways in, ``Tensor.backward`` and ``cr.grad`` (only the graph its inputs need).

What a rule is belongs to primitive.py; the speed tricks to fastpath. Anything that watches a
pass (anomaly checks, ``cr.grad``'s capture, explanations) is an Observer, told of each step.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .. import array, fastpath
from ..array import writeable
from .mode import state
from .primitive import Function, all_finite, tensor_type
from .reference import as_seen, broadcast_dims, sum_to_shape, toposort
from .versions import bump, version

if TYPE_CHECKING:
    from ..tensor import Tensor


FREED = (
    "backward: trying to backward through the graph a second time (or to use a result "
    "whose graph was freed); its saved values were freed after the first backward. Pass "
    "retain_graph=True to the first backward if you need to go through it again"
)


def grad_parents(t: Tensor) -> Sequence[Tensor]:
    """The inputs of the node that made ``t`` that want a gradient, in recorded order; none
    for a node an earlier pass freed (a pass that reaches it says so as its rule is due,
    after what comes before it has run, as PyTorch's)."""
    fn = t.grad_fn
    if fn is None:
        return ()
    xs = fn.inputs
    if xs is None:
        return ()
    needs = fn.needs_input_grad
    parents = []  # a loop, not a comprehension: see Function.apply
    if fastpath.unchanged(fn):  # nothing written in place since: each input as it is
        if False not in needs:  # every input wants one (the common case): the inputs
            return xs
        for x, need in zip(xs, needs, strict=True):
            if need:
                parents.append(x)
        return parents
    for x, need, v in zip(xs, needs, fn.versions, strict=True):
        if need:
            parents.append(x if x._vc is None or x._vc[0] == v else as_seen(x, v))
    return parents


INPLACE = (
    "one of the variables needed for gradient computation has been modified by an inplace operation"
)


def check_versions(fn: Function, out: Tensor) -> None:
    """Raise PyTorch's error if a value ``fn``'s rule reads was written in place after the
    node saved it, instead of computing a gradient from the changed values."""
    saves = fn.saves_inputs
    if saves:
        for i, (x, v) in enumerate(zip(fn.inputs or (), fn.versions, strict=True)):
            if v is not None and x._vc is not None and x._vc[0] != v:
                if type(saves) is tuple and i not in saves:
                    continue  # a value the rule never reads (addmm's added term)
                if (
                    saves is not True  # "others", or the inputs read for the others
                    and True not in fn.needs_input_grad[:i] + (fn.needs_input_grad[i + 1 :])
                ):
                    continue  # its value only serves the other inputs' gradients: none wanted
                _modified(fn, f"input {i}", x, v)
    if fn.saves_out and version(out) != fn.out_version:
        _modified(fn, "its output", out, fn.out_version)


def _modified(fn: Function, which: str, t: Tensor, saved: int) -> None:
    raise RuntimeError(
        f"{fn.op}: {INPLACE}: {which}, a tensor of shape {t.shape} and dtype {t.dtype}, is "
        f"at version {version(t)}; expected version {saved} instead. Hint: find the in-place "
        "write (add_, +=, t[i] = ..., an optimizer step) between forward and backward and "
        "make it out of place, or clone the tensor before writing"
    )


def fit(fn: Function, i: int, x: Tensor, g: Any, plain: bool = True) -> Tensor:
    """Input i's gradient as the rule returned it, made to x's shape (unbroadcast) and
    dtype; the error names the op. Not ``plain`` (the rules on arrays), the sum is NumPy's
    on the gradient's array, with no node recorded."""
    if not isinstance(g, tensor_type()):
        raise TypeError(
            f"{fn.op}: backward returned {type(g).__name__} for input {i} ({_rule_of(fn)})"
        )
    if g.shape != x.shape:
        try:
            g = sum_to_shape(g, x.shape) if plain else _sum_to_shape_array(g, x.shape)
        except Exception:
            raise RuntimeError(
                f"{fn.op}: backward returned a gradient of shape {g.shape} for input {i} "
                f"of shape {x.shape} ({_rule_of(fn)})"
            ) from None
    return g if g._array.dtype == x._array.dtype else g.to(x.dtype)


def add_gradients(a: Tensor, b: Tensor, plain: bool) -> Tensor:
    """Two gradients of one tensor added up: a Tensor op, or, not ``plain`` (the rules on
    arrays), NumPy's add on their arrays, with no node recorded."""
    return a + b if plain else tensor_type()._make(a._array + b._array, False)


def _sum_to_shape_array(g: Tensor, shape: tuple[int, ...]) -> Tensor:
    """reference.sum_to_shape on ``g``'s array: the dims ``shape`` was broadcast along
    summed, with the same refusal of any other shape."""
    a = g._array
    dims = broadcast_dims(a.shape, shape)
    if dims:
        a = a.sum(axis=dims, keepdims=True)
    return tensor_type()._make(a.reshape(shape) if a.shape != shape else a, False)


class Observer:
    """Watches a backward pass: the engine calls ``reached`` as it reaches each tensor with
    its gradient, ``node`` with the gradient its tensor hooks made of it, ``input`` for each
    gradient a rule gives (as returned, and fitted to the input), and ``swept`` once the
    node's inputs have theirs. Subclasses override what they need; ``accumulates`` False
    keeps leaves' ``.grad`` untouched (``cr.grad``), and ``plain`` (the default) has the
    rules run as written, in Tensor ops, with no speed trick: what anomaly checks and
    explanations need to name and show each step."""

    accumulates = True
    plain = True
    into: set[int] | None = None  # only these tensors' .grad (backward's inputs=), if given

    def reached(self, t: Tensor, grad: Tensor) -> None:
        pass

    def node(self, t: Tensor, grad: Tensor) -> None:
        pass

    def input(self, fn: Function, i: int, x: Tensor, raw: Tensor, grad: Tensor) -> None:
        pass

    def swept(self, t: Tensor, grad: Tensor) -> None:
        pass


def plain_gradients(fn: Function, grad: Tensor, out: Tensor) -> Sequence[Any]:
    """A node's input gradients by its rule as written, in Tensor ops (what create_graph,
    the observers that need it and the switched-off fast path use)."""
    return fn.backward(grad, out)


class Walk:
    """The part of a graph a pass towards some tensors (``cr.grad``'s inputs,
    ``backward(inputs=...)``'s) walks, as PyTorch's: the tensors on a path from the outputs to
    one of them, in toposort's order, and ``stops``, the wanted tensors whose own node does
    not run (no other wanted tensor lies behind it, and ``cr.grad`` does not run it), so that
    the graph behind them is neither walked nor freed."""

    def __init__(self, roots: Sequence[Tensor], wanted: Sequence[Tensor], run_wanted: bool):
        parents: dict[int, Sequence[Tensor]] = {}
        self.freed = ""  # the op of a node met that was freed: what lies behind is unknown

        def reach(t: Tensor) -> Sequence[Tensor]:
            fn = t.grad_fn
            if fn is not None and fn.inputs is None and not self.freed:
                self.freed = fn.op
            found = parents[id(t)] = grad_parents(t)
            return found

        ids = {id(t) for t in wanted}
        leads: set[int] = set()  # an input is reached from these (the inputs among them)
        self.leads = leads
        self.order: list[Tensor] = []
        self.stops: set[int] = set()
        for t in toposort(roots, reach):  # parents first
            behind = any(id(p) in leads for p in parents[id(t)])
            if behind or id(t) in ids:
                leads.add(id(t))
                self.order.append(t)
                if not behind and not run_wanted:
                    self.stops.add(id(t))


def run_backward(
    roots: Sequence[Tensor],
    root_grads: Sequence[Tensor],
    retain_graph: bool,
    create_graph: bool,
    observer: Observer | None = None,
    walk: Walk | None = None,
) -> None:
    """The backward pass from ``roots`` seeded with ``root_grads``: reference.backward's walk,
    plus hooks, the observer, version checks, the fast path and freeing, each a named call;
    with ``walk``, only its part of the graph."""
    order: list[Any] = toposort(roots, grad_parents) if walk is None else walk.order
    stops = None if walk is None else walk.stops
    grads: dict[Any, Any] = {}  # tensor -> its gradient so far (tensors hash by identity)
    for r, g in zip(roots, root_grads, strict=True):
        grads[r] = grads[r] + g if r in grads else g
    plain = create_graph or not fastpath.enabled() or observer is not None and observer.plain
    rule = plain_gradients if plain else fastpath.gradients
    owners = Owners(root_grads, grads)
    T = tensor_type()
    # Grad mode is on inside only for create_graph (so the rules record a graph of their
    # own); set and restored here rather than by a context manager, which costs 3 us.
    outer = state.grad_enabled, state.grad_mode, state.backward_ops
    state.grad_enabled = state.grad_mode = create_graph
    try:
        for t in reversed(order):
            g = grads.pop(t, None)
            if g is None:
                continue
            fn = t.grad_fn
            if fn is None or t._hooks is not None or t._retains_grad or observer is not None:
                g = arrive(t, g, observer, create_graph, owners)
            if fn is None:
                continue
            if stops is not None and id(t) in stops:  # the graph behind it is not walked
                continue
            fresh = fastpath.unchanged(fn)  # nothing written in place since it was recorded
            if fn.node_hooks is None and not fn.users_rule:
                in_grads = call_rule(fn, g, t, rule, fresh)
            else:
                in_grads = hooked_rule(fn, g, t, rule, fresh, owners, walk)
            # One gradient per input (call_rule and hooked_rule checked the count), so the
            # node's tuples are indexed by position, with no tuple made per input.
            xs, needs = fn.inputs, fn.needs_input_grad
            for i, raw in enumerate(in_grads):
                if raw is None or not needs[i]:
                    continue
                x = xs[i]
                if not fresh and x._vc is not None and x._vc[0] != fn.versions[i]:
                    x = as_seen(x, fn.versions[i])
                d = raw._array if type(raw) is T else None  # the common case, inline:
                a = x._array
                xg = (
                    raw
                    if d is not None and d.shape == a.shape and d.dtype == a.dtype
                    else fit(fn, i, x, raw, plain)  # unbroadcast, to x's dtype
                )
                if observer is not None:
                    observer.input(fn, i, x, raw, xg)
                prev = grads.get(x)
                grads[x] = xg if prev is None else add_gradients(prev, xg, plain)
            if observer is not None:
                observer.swept(t, g)
            if not retain_graph:
                fn.release()
    finally:
        state.grad_enabled, state.grad_mode, state.backward_ops = outer


def arrive(
    t: Tensor, g: Tensor, observer: Observer | None, create_graph: bool, owners: Owners
) -> Tensor:
    """What happens as ``t`` is reached with its whole gradient ``g``, where anything does:
    its tensor hooks (which may replace ``g``), the observer, accumulation into ``.grad``
    (leaves, and tensors that retain_grad) and a leaf's post-accumulate hooks."""
    if observer is not None:
        observer.reached(t, g)
    if t._hooks is not None:
        g = run_hooks(t, g, owners)
    if observer is not None:
        observer.node(t, g)
    leaf = t.grad_fn is None
    into = None if observer is None else observer.into  # backward(inputs=...)'s tensors
    if into is None:  # a retained gradient is kept under cr.grad too, as in PyTorch
        keep = t._retains_grad or leaf and (observer is None or observer.accumulates)
    else:
        keep = id(t) in into or t._retains_grad
    if keep:
        accumulate(t, g, create_graph, owners)
        if leaf and t._post_hooks is not None:
            for hook in list(t._post_hooks.values()):
                got = hook(t)
                if got is not None:  # PyTorch refuses it too: nothing could use it
                    raise RuntimeError(
                        "post accumulate grad hook: the hook must return None; got "
                        f"{type(got).__name__}"
                    )
    return g


def call_rule(fn: Function, g: Tensor, out: Tensor, rule: Any, fresh: bool) -> Sequence[Any]:
    """``fn``'s input gradients by ``rule``, after checking that its saved state is there and
    unchanged; one gradient (or None) per input."""
    if fn.inputs is None:
        raise RuntimeError(f"{fn.op}: {FREED}")
    if not fresh:
        check_versions(fn, out)
    in_grads = rule(fn, g, out)
    if len(in_grads) != len(fn.inputs):
        raise RuntimeError(
            f"{fn.op}: backward returned {len(in_grads)} gradients for {len(fn.inputs)} inputs "
            f"({_rule_of(fn)})"
        )
    return in_grads


def _rule_of(fn: Function) -> str:
    """Where the rule that broke the contract is written, so the message names the file."""
    cls = next((c for c in type(fn).__mro__ if "backward" in vars(c)), type(fn))
    where = getattr(sys.modules.get(cls.__module__), "__file__", None) or cls.__module__
    return f"the backward of {cls.__qualname__} in {where}"


def hooked_rule(
    fn: Function,
    g: Tensor,
    out: Tensor,
    rule: Any,
    fresh: bool,
    owners: Owners,
    walk: Walk | None = None,
) -> Sequence[Any]:
    """call_rule where user code runs: the node's own hooks around it, as PyTorch runs them
    (each prehook, ``grad_fn.register_prehook``, on ``(grad,)`` before the rule, each hook,
    ``grad_fn.register_hook``, on ``(input gradients, (grad,))`` after, seeing None for an
    input off the ``walk``, whose gradient PyTorch does not compute; a hook that returns a
    tuple replaces what the next one sees), and a rule that is the user's (a custom
    Function's backward). What user code sees or returns, ``owners`` is told of."""
    hooks = fn.node_hooks or {"pre": {}, "post": {}}
    for hook in list(hooks["pre"].values()):
        g = owners.shown(g)
        new = hook((g,))
        if new is not None:
            g = owners.given(new[0])
    if fn.users_rule:
        g = owners.shown(g)
    in_grads = call_rule(fn, g, out, rule, fresh)
    if fn.users_rule:
        in_grads = [owners.given(r) for r in in_grads]
    if walk is not None and hooks["post"]:
        pairs = zip(fn.inputs or (), fn.versions, in_grads, strict=True)
        in_grads = [r if r is None or id(_seen(x, v)) in walk.leads else None for x, v, r in pairs]
    for hook in list(hooks["post"].values()):
        in_grads = [owners.shown(r) for r in in_grads]
        new = hook(tuple(in_grads), (g,))
        if new is not None:
            if len(new) != len(in_grads):
                raise RuntimeError(
                    f"{fn.op}: a hook returned {len(new)} gradients for {len(in_grads)} inputs"
                )
            in_grads = [owners.given(r) for r in new]
    return in_grads


def _seen(x: Any, v: int | None) -> Any:
    """Input ``x`` as the graph knows it, at the version ``v`` its node recorded."""
    return x if v is None or x._vc is None or x._vc[0] == v else as_seen(x, v)


def run_hooks(t: Tensor, g: Tensor, owners: Owners) -> Tensor:
    """``t``'s gradient after the hooks registered on it (``Tensor.register_hook``), in
    order: a hook that returns a Tensor replaces the gradient the next one sees."""
    for hook in list(t._hooks.values()):  # type: ignore[union-attr]
        g = owners.shown(g)
        new = hook(g)
        if new is not None:
            if not isinstance(new, tensor_type()) or new.shape != g.shape:
                raise RuntimeError(
                    f"hook: a tensor hook must return None or a Tensor of the gradient's shape "
                    f"{g.shape}; got {getattr(new, 'shape', type(new).__name__)}"
                )
            if new.dtype != g.dtype or new.device != g.device:
                name = getattr(hook, "__name__", type(hook).__name__)
                raise RuntimeError(
                    f"hook: hook {name!r} has changed the type of the gradient (was {g.dtype} "
                    f"on {g.device}, got {new.dtype} on {new.device}); return it as it came"
                )
            g = owners.given(new)
    return g


def clear_grad(t: Tensor, set_to_none: bool) -> None:
    """What ``zero_grad`` does to one parameter, as PyTorch: ``grad = None``, or its
    gradient set to zeros in place (a Tensor kept from ``p.grad`` sees the zeros), taken out
    of any graph; a gradient that cannot be written (a read-only view assigned by hand)
    gets fresh zeros instead."""
    g = t.grad
    if g is None:
        return
    if set_to_none:
        t.grad = None
    elif g.grad_fn is None and not g.requires_grad and writeable(g._array):
        g._array.fill(0)
        bump(g)
    else:
        t.grad = tensor_type()._make(array.xp.zeros_like(t._array))


class Owners:
    """Which gradient arrays of one pass a ``.grad`` may take as its own, without a copy.

    A ``.grad`` is added into and zeroed in place, so it must be an array no one else can
    hold. One an op's rule made in this pass is (a copy per parameter per step saved);
    one user code saw or gave is not: the caller's seed, what a tensor hook, a node hook
    or a custom Function's backward was shown or returned (a saved input, a ctx attribute,
    a constant). Arrays are known by identity, and a view by its base's too."""

    __slots__ = ("held", "taken", "pending")

    def __init__(self, seeds: Sequence[Tensor], pending: dict[Any, Any]) -> None:
        self.held = {id(g._array) for g in seeds}  # user code has (or had) these
        self.taken: set[int] = set()  # a .grad took these
        self.pending = pending  # the pass's gradients not yet handed on, by tensor

    def given(self, g: Any) -> Any:
        """``g``, which user code returned, marked as held."""
        arr = getattr(g, "_array", None)
        if arr is not None:
            self.held.add(id(arr))
            if arr.base is not None:
                self.held.add(id(arr.base))
        return g

    def shown(self, g: Any) -> Any:
        """``g`` as user code may see and keep it, marked as held: a copy, which goes on in
        its place, where a ``.grad`` took its array or another tensor's gradient still to
        come shares it (Add hands one gradient to both inputs), so that what user code
        does to it in place goes on with this gradient alone, as in PyTorch."""
        arr = getattr(g, "_array", None)
        if arr is not None and self._shared(arr):
            g = tensor_type()._make(arr.copy(), False) if g.grad_fn is None else g.clone()
        return self.given(g)

    def _shared(self, arr: Any) -> bool:
        mine = {id(arr)} if arr.base is None else {id(arr), id(arr.base)}
        if not mine.isdisjoint(self.taken):
            return True
        for other in self.pending.values():
            a = other._array
            if id(a) in mine or a.base is not None and id(a.base) in mine:
                return True
        return False

    def free(self, g: Tensor) -> bool:
        """Whether ``g``'s array may become a ``.grad`` as it is: made in this pass by an
        op, owning writable memory, held by no user code and by no other ``.grad``."""
        arr = g._array
        return (
            arr.base is None
            and writeable(arr)
            and id(arr) not in self.held
            and id(arr) not in self.taken
            and not g.requires_grad  # a rule that returned an input as it is
        )


_ACCUMULATING = threading.Lock()  # backward passes in several threads share leaves


def accumulate(t: Tensor, g: Tensor, create_graph: bool, owners: Owners) -> None:
    """Add gradient ``g`` into ``t.grad``, one thread at a time (NumPy's in-place add lets
    go of the interpreter lock, so two passes adding into one leaf would lose updates)."""
    with _ACCUMULATING:
        _accumulate(t, g, create_graph, owners)


def _accumulate(t: Tensor, g: Tensor, create_graph: bool, owners: Owners) -> None:
    # g is of t's shape and dtype (fit made it so), so .grad is written without its checks
    T = tensor_type()
    if t._grad is None:
        if create_graph:  # a copy on the graph, as PyTorch's: d(.grad)/d(g) flows back
            t._grad = g.clone()
            return
        # A leaf's .grad must own its memory, since users and optimizers change it in
        # place; a fresh array an op made is taken as it is (see Owners), and so is the
        # plain Tensor around it. A retained non-leaf's is a copy, as PyTorch's, since the
        # same gradient goes on to its node and may be what cr.grad returns.
        if t.grad_fn is not None or not owners.free(g):
            g = T._make(g._array.copy(), False)
        owners.taken.add(id(g._array))
        t._grad = g
    elif create_graph:
        t._grad = t._grad + g
    else:
        # A leaf's gradient adds up in place, as in PyTorch: .grad stays the same Tensor,
        # and gradient accumulation over batches allocates nothing. Out of place if .grad
        # is part of a graph (an earlier create_graph), read-only, or not of g's shape and
        # dtype (assigned by hand); a retained non-leaf's too, as in PyTorch.
        prev = t._grad
        arr = prev._array
        if (
            t.grad_fn is None
            and type(prev) is T
            and not prev.requires_grad
            and writeable(arr)
            and arr.shape == g._array.shape
            and arr.dtype == g._array.dtype
        ):
            arr += g._array
        else:
            t._grad = T._make(arr + g._array, False)


class AnomalyCheck(Observer):
    """detect_anomaly in backward: a rule that makes NaN or inf from a finite gradient is
    reported once, by the node whose gradient it spoils, naming the op inside the rule that
    made it (the ops note their names in ``state.backward_ops``; see primitive.py)."""

    def __init__(self) -> None:
        self.made: list[str] = []
        self.incoming: tuple[int, ...] = ()

    def node(self, t: Tensor, grad: Tensor) -> None:
        self.made.clear()  # keep only what this node's rule makes
        self.incoming = grad.shape
        state.backward_ops = self.made

    def input(self, fn: Function, i: int, x: Tensor, raw: Tensor, grad: Tensor) -> None:
        if not all_finite(grad):
            made = self.made
            by = f", made by {made[0]} in its backward formula" if made else ""
            raise RuntimeError(
                f"{fn.op}: backward produced NaN or inf in the gradient of input {i} "
                f"(shape {x.shape}) of forward op {fn.op}{by} (detect_anomaly); got "
                f"a finite incoming gradient of shape {self.incoming}"
            )

    def swept(self, t: Tensor, grad: Tensor) -> None:
        state.backward_ops = None


class Capture(Observer):
    """``cr.grad``: the gradients of ``inputs`` are kept, nothing is accumulated into a leaf.
    As PyTorch's: an input whose node runs (another input lies behind it) gives the gradient
    as it arrives, its tensor hooks shaping only what flows past it; one whose node does not
    run (``stops``) gives it after its hooks."""

    accumulates = False
    plain = False

    def __init__(self, inputs: Sequence[Tensor], stops: set[int]) -> None:
        wanted = {id(t) for t in inputs}
        self.early = wanted - stops
        self.late = wanted & stops
        self.captured: dict[int, Tensor] = {}

    def reached(self, t: Tensor, grad: Tensor) -> None:
        if id(t) in self.early:
            self.captured[id(t)] = grad

    def node(self, t: Tensor, grad: Tensor) -> None:
        if id(t) in self.late:
            self.captured[id(t)] = grad


class Into(Observer):
    """``backward(inputs=...)``: the gradient goes into these tensors' ``.grad`` alone
    (leaves or not), as PyTorch's; tensors that retain_grad keep theirs too."""

    plain = False

    def __init__(self, inputs: Sequence[Tensor]) -> None:
        self.into = {id(t) for t in inputs}


class Observers(Observer):
    """Several observers, each told of every step in turn."""

    def __init__(self, *observers: Observer) -> None:
        self.all = observers
        self.accumulates = all(o.accumulates for o in observers)
        self.plain = any(o.plain for o in observers)
        self.into = next((o.into for o in observers if o.into is not None), None)

    def reached(self, t: Tensor, grad: Tensor) -> None:
        for o in self.all:
            o.reached(t, grad)

    def node(self, t: Tensor, grad: Tensor) -> None:
        for o in self.all:
            o.node(t, grad)

    def input(self, fn: Function, i: int, x: Tensor, raw: Tensor, grad: Tensor) -> None:
        for o in self.all:
            o.input(fn, i, x, raw, grad)

    def swept(self, t: Tensor, grad: Tensor) -> None:
        for o in self.all:
            o.swept(t, grad)


def watching(observer: Observer | None) -> Observer | None:
    """The observer a pass gets: ``observer``, joined by the anomaly check when this thread
    has detect_anomaly on."""
    if not state.anomaly:
        return observer
    check = AnomalyCheck()
    return check if observer is None else Observers(check, observer)


def seed(root: Tensor, gradient: Any, op: str) -> Tensor:
    """The gradient a backward pass starts from at ``root``: ``gradient`` checked against
    the root's shape, or ones where the root has one element."""
    T = tensor_type()
    if gradient is None:
        d = root._array
        if d.size != 1:
            raise RuntimeError(
                f"{op}: grad can be implicitly created only for outputs with one element; got "
                f"shape {root.shape}; pass gradient= (grad_outputs=) of that shape"
            )
        # Of one element, the shape is ndim ones: one C call, where ones() is Python that
        # calls two (measured 9 against 18 us with the caches cold, as a step finds them).
        return T._make(array.xp.array(1, dtype=d.dtype, ndmin=d.ndim, like=d), False)
    g = gradient if isinstance(gradient, T) else T(gradient, dtype=root.dtype)
    if g.shape != root.shape:
        raise RuntimeError(
            f"{op}: gradient has shape {g.shape} but the output has shape {root.shape}"
        )
    if state.anomaly and not all_finite(g):
        raise RuntimeError(
            f"{op}: the gradient given holds NaN or inf (detect_anomaly); got shape {g.shape}"
        )
    return g if g.dtype == root.dtype else g.to(root.dtype)


def backward(
    tensors: Tensor | Sequence[Tensor],
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Any = None,
    *,
    observer: Observer | None = None,
    op: str = "backward",
) -> None:
    """``torch.autograd.backward``: accumulate d(sum of the roots)/d(leaf) into every leaf's
    ``.grad``, or with ``inputs`` (a tensor or several) into theirs alone, leaves or not, as
    PyTorch's. ``tensors`` is one root or several, ``grad_tensors`` one gradient per root (None
    for a root of one element); ``root.backward(g)`` is the one-root form. An observer, if
    given, is told of each step (see Observer)."""
    T = tensor_type()
    roots = [tensors] if isinstance(tensors, T) else list(tensors)
    if grad_tensors is None:
        given: list[Any] = [None] * len(roots)
    elif isinstance(grad_tensors, T) or isinstance(tensors, T):
        given = [grad_tensors]
    else:
        given = list(grad_tensors)
    if len(given) != len(roots):
        raise RuntimeError(
            f"{op}: got {len(roots)} tensors and {len(given)} gradients; give one gradient "
            "(or None) per tensor"
        )
    for i, root in enumerate(roots):
        if not root.requires_grad:
            which = "the tensor" if isinstance(tensors, T) else f"element {i} of tensors"
            raise RuntimeError(
                f"{op}: {which} does not require grad and has no grad_fn; set "
                "requires_grad=True on an input (or check for a no_grad block)"
            )
    if not roots:
        return
    walk = None
    if inputs is not None:
        wanted = [inputs] if isinstance(inputs, T) else list(inputs)
        if not wanted:
            raise RuntimeError(f"{op}: inputs is empty; give the tensors to accumulate into")
        observer = Observers(*(o for o in (observer, Into(wanted)) if o is not None))
        walk = Walk(roots, wanted, run_wanted=True)  # their nodes run, as PyTorch's
        for t in wanted:  # and, as PyTorch's, a non-leaf among them retains its grad since
            if t.grad_fn is not None:
                t.retain_grad()
    seeds = [seed(r, g, op) for r, g in zip(roots, given, strict=True)]
    retain = bool(retain_graph) or create_graph
    run_backward(roots, seeds, retain, create_graph, watching(observer), walk)


def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool | None = None,
    materialize_grads: bool = False,
) -> tuple[Tensor | None, ...]:
    """Gradients of ``outputs`` with respect to ``inputs``, returned (not accumulated); an
    input the outputs do not depend on is an error, or None with ``allow_unused``, or zeros
    with ``materialize_grads``."""
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "grad: materialize_grads=True gives zeros for unused inputs, so allow_unused must be "
            "True or left out; got allow_unused=False"
        )
    allow_unused = bool(allow_unused) or materialize_grads
    T = tensor_type()
    outs = [outputs] if isinstance(outputs, T) else list(outputs)
    ins = [inputs] if isinstance(inputs, T) else list(inputs)
    if grad_outputs is None or isinstance(grad_outputs, T):
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
    seeds = [seed(o, g, "grad") for o, g in zip(outs, gos, strict=True)]
    retain = create_graph if retain_graph is None else retain_graph
    walk = Walk(outs, ins, run_wanted=False)
    capture = Capture(ins, walk.stops)
    run_backward(outs, seeds, retain, create_graph, watching(capture), walk)
    result = []
    for i, x in enumerate(ins):
        g = capture.captured.get(id(x))
        if g is None and walk.freed:  # it may lie behind a node an earlier pass freed
            raise RuntimeError(f"{walk.freed}: {FREED}")
        if g is None and materialize_grads:
            g = T._make(array.xp.zeros_like(x._array))
        if g is None and not allow_unused:
            raise RuntimeError(
                f"grad: input {i} (shape {x.shape}) was not used to compute the outputs; "
                "pass allow_unused=True to get None for it"
            )
        result.append(g)
    return tuple(result)
