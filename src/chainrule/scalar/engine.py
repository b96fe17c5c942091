"""The scalar autograd engine: `Value`, one number and its gradient, call-compatible with micrograd.

Each node stores its parents and the local derivatives computed in forward (never a closure over
itself), so a dropped graph is freed by reference counting alone; each primitive's rule is
stated beside it (RULES, which the drawings and explanations read). backward is toposort and
sweep (_toposort, then the chain rule in reverse); with the speed switch on, a walk that marks
each node where toposort keeps a set, and a sweep unrolled by kind of node (_walk, _sweep).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from .. import fastpath

_new = object.__new__

# d out / d input of each primitive, keyed by Value._op ("a", "b" its inputs): filled by @rule
# beside each primitive's forward; a number exponent's "**k" is made by rule_of.
RULES: dict[str, str] = {}


def rule(op: str, text: str) -> Callable[[Any], Any]:
    """Record ``text`` as the local rule of the op named ``op``; the method is unchanged."""

    def record(method: Any) -> Any:
        RULES[op] = text
        return method

    return record


def rule_of(op: str) -> str:
    """The local rule of a node's op, as a short formula."""
    if op in RULES:
        return RULES[op]
    if op.startswith("**"):  # a number exponent, as in "**2": only the base is an input
        k = op[2:]
        return f"d/da = {k} * a**({k}-1)"
    return "the local derivatives it recorded"


# What backward tells an observer of each parent of a node: (parent, local derivative,
# the gradient added to the parent's).
Step = tuple["Value", float, float]


def _node(
    data: float,
    prev: tuple[Value, ...],
    local: tuple[float, ...] | None,
    op: str,
    out: Value | None = None,
) -> Value:
    """The one place a node is set up: its value (a float), its parents in operand order,
    the derivative of the value with respect to each (None where backward reads them from
    the parents' data, see Value._local) and the name of its op. Fills ``out`` (a Value
    being initialised) or a new Value, without __init__'s checks."""
    if out is None:
        out = _new(Value)
    out.data = data
    out.grad = 0.0
    out._prev = prev
    out._dl = local
    out._op = op
    out._mark = None
    return out


def _is_number(x: object) -> bool:
    # int and float first: the ABC check for NumPy scalars is slower.
    return isinstance(x, (int, float)) or isinstance(x, numbers.Real)


def _pow(a: float, b: float) -> float:
    """a ** b with IEEE results, where Python raises or returns a complex number instead."""
    try:
        out = a**b
    except ZeroDivisionError:  # 0.0 ** negative
        return math.inf
    except OverflowError:
        return -math.inf if a < 0 and b % 2 == 1 else math.inf
    return math.nan if type(out) is complex else out


def _log(x: float) -> float:
    """log x with IEEE results: -inf at 0, nan below (math.log raises on both)."""
    return math.log(x) if x > 0 else -math.inf if x == 0 else math.nan


class Value:
    """A scalar and its gradient: a node of the graph that computed it.

    ``data`` and ``grad`` are Python floats. Arithmetic with numbers on either side and the
    methods ``relu tanh exp log sigmoid`` record a new node; ``backward()`` fills ``grad``
    of every node the result depends on. Results follow IEEE arithmetic like NumPy and
    PyTorch (overflow gives inf, 1/0 gives inf, log of a negative number gives nan) rather
    than raising. ``_prev`` holds the parents in operand order (a repeated operand appears
    twice, as in ``x*x``), ``_local`` the derivative of this node with respect to each.
    """

    __slots__ = ("data", "grad", "_prev", "_dl", "_op", "_mark", "__weakref__")
    data: float
    grad: float
    _prev: tuple[Value, ...]
    _dl: tuple[float, ...] | None  # local derivatives; None for a product or a weighted sum
    _op: str
    _mark: object  # the last graph walk that reached this node (see _walk)

    def __init__(
        self,
        data: float,
        _children: tuple[Value, ...] = (),
        _op: str = "",
        _local: tuple[float, ...] = (),
    ) -> None:
        if type(data) is not float:
            if not _is_number(data):
                raise TypeError(f"Value: data must be a real number; got {type(data).__name__}")
            data = float(data)
        _children = tuple(_children)
        if len(_local) != len(_children):
            raise ValueError(
                f"Value: give one local derivative (_local) per child; got {len(_children)} "
                f"children and {len(_local)} derivatives"
            )
        _node(data, _children, tuple(map(float, _local)), _op, self)

    # ---------------------------------------------------------------------------------
    # Primitives: each computes its value and its local derivatives together.

    @rule("+", "d/da = 1, d/db = 1")
    def __add__(self, other: Value | float) -> Value:
        """a + b: d/da = d/db = 1."""
        if not isinstance(other, Value):
            if not _is_number(other):
                return NotImplemented
            other = Value(other)
        return _node(self.data + other.data, (self, other), (1.0, 1.0), "+")

    @rule("*", "d/da = b, d/db = a")
    def __mul__(self, other: Value | float) -> Value:
        """a * b: d/da = b, d/db = a."""
        if not isinstance(other, Value):
            if not _is_number(other):
                return NotImplemented
            other = Value(other)
        # No tuple of local derivatives: a product's are the other factor's data, read in
        # backward (as micrograd does). One allocation fewer per product, and allocations
        # are what set off Python's cyclic collector: a third off a demo step with it on.
        return _node(self.data * other.data, (self, other), None, "*")

    @rule("**", "d/da = b * a**(b-1), d/db = out * log(a)")
    def __pow__(self, other: Value | float) -> Value:
        """a ** b: d/da = b * a**(b-1) (0 when b = 0); for a Value b, d/db = a**b * log a
        (0 when a = 0 and b >= 0, nan when a < 0), as PyTorch."""
        a = self.data
        if isinstance(other, Value):
            b = other.data
            out = _pow(a, b)
            da = b * _pow(a, b - 1) if b != 0 else 0.0
            db = out * _log(a) if a != 0 or b < 0 else 0.0
            return _node(out, (self, other), (da, db), "**")
        if not _is_number(other):
            return NotImplemented
        b = float(other)
        da = b * _pow(a, b - 1) if b != 0 else 0.0
        return _node(_pow(a, b), (self,), (da,), f"**{other}")

    @rule("ReLU", "d/da = 1 if a > 0 else 0")
    def relu(self) -> Value:
        """max(x, 0): derivative 1 for x > 0, else 0 (relu'(0) = 0)."""
        x = self.data
        # Written as two constant tuples, which Python makes once: no allocation per node.
        return _node(0.0 if x < 0 else x, (self,), (1.0,) if x > 0 else (0.0,), "ReLU")

    @rule("tanh", "d/da = 1 - out**2")
    def tanh(self) -> Value:
        """tanh x: derivative 1 - tanh(x)**2; math.tanh saturates instead of overflowing."""
        t = math.tanh(self.data)
        return _node(t, (self,), (1.0 - t * t,), "tanh")

    @rule("exp", "d/da = out")
    def exp(self) -> Value:
        """e ** x: derivative e ** x; inf past about x = 709.78, where math.exp raises."""
        try:
            e = math.exp(self.data)
        except OverflowError:
            e = math.inf
        return _node(e, (self,), (e,), "exp")

    @rule("log", "d/da = 1 / a")
    def log(self) -> Value:
        """Natural log: derivative 1/x; -inf at 0 and nan below, as PyTorch."""
        x = self.data
        return _node(_log(x), (self,), (1.0 / x if x != 0 else math.inf,), "log")

    @rule("sigmoid", "d/da = out * (1 - out)")
    def sigmoid(self) -> Value:
        """1 / (1 + e**-x): derivative s * (1 - s). exp is only taken of -|x|, so it never
        overflows."""
        x = self.data
        if x >= 0:
            s = 1.0 / (1.0 + math.exp(-x))
        else:
            e = math.exp(x)
            s = e / (1.0 + e)
        return _node(s, (self,), (s * (1.0 - s),), "sigmoid")

    # ---------------------------------------------------------------------------------
    # Derived ops: compositions of the primitives, exactly as micrograd writes them, so the
    # graph and the rounding are the same.

    def __neg__(self) -> Value:
        return self * -1

    def __radd__(self, other: float) -> Value:
        return self + other

    def __sub__(self, other: Value | float) -> Value:
        return self + (-other)

    def __rsub__(self, other: float) -> Value:
        return other + (-self)

    def __rmul__(self, other: float) -> Value:
        return self * other

    def __truediv__(self, other: Value | float) -> Value:
        # A number's reciprocal is taken here, as micrograd does; _pow makes 1/0 inf.
        return self * (other**-1 if isinstance(other, Value) else _pow(other, -1))

    def __rtruediv__(self, other: float) -> Value:
        return other * self**-1

    def __rpow__(self, other: float) -> Value:
        if not _is_number(other):
            return NotImplemented
        return Value(other) ** self

    # ---------------------------------------------------------------------------------

    def backward(self, on_step: Callable[[Value, float, list[Step]], None] | None = None) -> None:
        """Fill ``grad`` of every node this one depends on with d self / d node.

        Gradients accumulate: a second call adds the same gradients again (set ``grad`` to 0,
        e.g. with ``Module.zero_grad()``, between calls). Iterative, so a graph of any depth
        works; deterministic, since parents are visited in operand order.

        ``on_step(node, grad, steps)``, if given, is called for every node as the pass
        sweeps it (this one first, each node after all of its consumers), once the node
        has passed its gradient on: ``grad`` is what the node received in this pass, and
        ``steps`` holds ``(parent, local derivative, contribution)`` for each parent in
        operand order, the contribution (``grad * local derivative``) being what was added
        to the parent's ``grad``. A node whose gradient is 0 passes nothing on, so that
        0 * inf never makes NaN: its contributions are 0.0. A leaf's ``steps`` is empty.
        Without ``on_step`` the pass runs its own loop, which pays nothing for the option.
        """
        fast = fastpath.enabled()
        order, held = _walk(self) if fast else _toposort(self)
        self.grad = 1.0
        if fast and on_step is None:
            _sweep(order)
        else:  # the chain rule, node by node from the root back
            for v in reversed(order):
                g = v.grad
                if g:  # a node with gradient 0 passes nothing on: 0 * inf would make NaN
                    for p, d in zip(v._prev, v._local, strict=True):
                        p.grad += g * d
                if on_step is not None:
                    local = zip(v._prev, v._local, strict=True)
                    on_step(v, g, [(p, d, g * d if g else 0.0) for p, d in local])
        for v, g in held:  # the gradients of earlier passes, back in place
            v.grad += g

    @property
    def _local(self) -> tuple[float, ...]:
        """The derivative of this node with respect to each parent, in ``_prev``'s order."""
        if self._dl is None:
            prev = self._prev
            if len(prev) == 2:  # a product: each factor's derivative is the other's value
                a, b = prev
                return (b.data, a.data)
            # a weighted sum b + w0*x0 + ...: 1 for b, then x_i for w_i and w_i for x_i
            local = [1.0]
            for w, x in zip(prev[1::2], prev[2::2], strict=True):
                local += (x.data, w.data)
            return tuple(local)
        return self._dl

    def __repr__(self) -> str:
        return f"Value(data={self.data}, grad={self.grad})"


def _toposort(root: Value) -> tuple[list[Value], list[tuple[Value, float]]]:
    """Every node behind ``root``, each after all of its parents (depth first, parents in
    operand order, an explicit stack instead of recursion); each node's grad set to 0 for the
    pass, those that were not coming back as (node, grad)."""
    order: list[Value] = []
    seen: set[int] = set()
    stack = [(root, False)]
    while stack:
        v, parents_done = stack.pop()
        if parents_done:
            order.append(v)
        elif id(v) not in seen:
            seen.add(id(v))
            stack.append((v, True))
            stack += [(p, False) for p in reversed(v._prev)]
    held = [(v, v.grad) for v in order if v.grad]
    for v in order:
        v.grad = 0.0
    return order, held


def _walk(root: Value) -> tuple[list[Value], list[tuple[Value, float]]]:
    """Every node behind ``root``, each after all of its parents: autograd.toposort's order
    (depth first, parents in operand order, an explicit stack, so no recursion limit).

    A node reached is marked with this walk's token, where toposort adds it to a set, and the
    node being looked at and its parents' iterator stay in local variables, off the stack:
    the walk of micrograd's demo graph (65,000 nodes) takes about 9 ms instead of 19. Each
    node's grad is set to 0 for the pass; those that were not come back as (node, grad).
    """
    mark = object()
    order: list[Value] = []
    held: list[tuple[Value, float]] = []
    path: list[Value] = []  # the nodes from root down to v's consumer, each left mid-way
    waiting: list[Iterator[Value]] = []  # through its parents: the ones it has yet to look at
    v, parents = root, iter(root._prev)
    root._mark = mark
    while True:
        for p in parents:
            if p._mark is not mark:  # reached for the first time: go into it, back to v later
                p._mark = mark
                path.append(v)
                waiting.append(parents)
                v, parents = p, iter(p._prev)
                break
        else:  # all of v's parents are in order: v goes next
            if v.grad:
                held.append((v, v.grad))
                v.grad = 0.0
            order.append(v)
            if not path:
                return order, held
            v, parents = path.pop(), waiting.pop()


def _sweep(order: list[Value]) -> None:
    """The chain rule from the last node of ``order`` back: each node's grad, times its local
    derivatives, added to its parents'. Written out by kind of node rather than read through
    _local, as the engine's hot loop."""
    for v in reversed(order):
        g = v.grad
        if not g:
            continue  # nothing to pass on (a dead ReLU); also keeps 0 * inf from making NaN
        prev = v._prev
        dl = v._dl
        if dl is None:  # derivatives read from the parents' data
            if len(prev) == 2:  # a product a*b: d/da = b, d/db = a
                a, b = prev
                a.grad += g * b.data
                b.grad += g * a.data
            else:  # a neuron's weighted sum, parents (b, w0, x0, w1, x1, ...)
                prev[0].grad += g
                for w, x in zip(prev[1::2], prev[2::2], strict=True):
                    w.grad += g * x.data
                    x.grad += g * w.data
        elif len(dl) == 2:  # the last loop, unrolled for sums and the other binary ops
            a, b = prev
            a.grad += g * dl[0]
            b.grad += g * dl[1]
        elif len(dl) == 1:  # and for the unary ops
            prev[0].grad += g * dl[0]
        else:  # leaves, and nodes made by hand with Value(data, children, op, local)
            for p, d in zip(prev, dl, strict=True):
                p.grad += g * d


WEIGHTED_SUM = "wx+b"  # the op of a weighted-sum node (see weighted_sum)
RULES[WEIGHTED_SUM] = "out = b + w1*x1 + w2*x2 + ...;  d/db = 1, d/dwi = xi, d/dxi = wi"


def weighted_sum(b: Value, ws: Sequence[Value], xs: Sequence[Value | float]) -> Value:
    """``b + w0*x0 + w1*x1 + ...`` as one node, a neuron's pre-activation.

    The value is micrograd's, bit for bit: the same products added left to right starting
    from ``b`` (what ``sum((wi*xi for ...), b)`` computes), and so are the gradients
    (b gets g, w_i gets g*x_i, x_i gets g*w_i). One node instead of 2n, with the parents
    ``(b, w0, x0, w1, x1, ...)`` in micrograd's operand order: the graph walk, the
    allocations and the garbage collector's work shrink with it. Numbers in ``xs`` become
    Values, as micrograd's ``wi*xi`` makes them. With no terms, ``b`` itself is returned.
    """
    if len(ws) != len(xs):
        raise ValueError(f"weighted_sum: got {len(ws)} weights and {len(xs)} inputs")
    if not ws:
        return b
    n = len(ws)
    # The parents b, w0, x0, w1, x1, ...: two slice copies, then numbers made Values below.
    prev: list[Any] = [b] * (2 * n + 1)
    prev[1::2] = ws
    prev[2::2] = xs
    s = b.data
    for i in range(2, 2 * n + 1, 2):  # each input, after its weight
        x = prev[i]
        if not isinstance(x, Value):
            x = prev[i] = Value(x)
        s = s + prev[i - 1].data * x.data
    return _node(s, tuple(prev), None, WEIGHTED_SUM)
