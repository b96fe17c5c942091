"""The scalar autograd engine: `Value`, one number and its gradient, call-compatible with micrograd.

Each node stores its parents and the local derivatives computed in forward (never a closure over
itself), so a dropped graph is freed by reference counting alone; the graph walk is autograd's.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from operator import attrgetter

from chainrule.autograd import toposort

_parents = attrgetter("_prev")  # a C-level getter: the topological sort calls it once per node
_new = object.__new__


def _node(data: float, prev: tuple[Value, ...], local: tuple[float, ...], op: str) -> Value:
    # The ops' constructor: skips __init__'s checks, since `data` is already a float.
    out = _new(Value)
    out.data = data
    out.grad = 0.0
    out._prev = prev
    out._dl = local
    out._op = op
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

    __slots__ = ("data", "grad", "_prev", "_dl", "_op", "__weakref__")
    _dl: tuple[float, ...] | None  # local derivatives; None for a product (see _local)

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
        self.data = data
        self.grad = 0.0
        self._prev = _children
        self._dl = tuple(map(float, _local))
        self._op = _op

    # ---------------------------------------------------------------------------------
    # Primitives: each computes its value and its local derivatives together.

    def __add__(self, other: Value | float) -> Value:
        """a + b: d/da = d/db = 1."""
        if not isinstance(other, Value):
            if not _is_number(other):
                return NotImplemented
            other = Value(other)
        # _node inlined here and in __mul__, the two ops a neuron is made of (5% of a demo step).
        out = _new(Value)
        out.data = self.data + other.data
        out.grad = 0.0
        out._prev = (self, other)
        out._dl = (1.0, 1.0)
        out._op = "+"
        return out

    def __mul__(self, other: Value | float) -> Value:
        """a * b: d/da = b, d/db = a."""
        if not isinstance(other, Value):
            if not _is_number(other):
                return NotImplemented
            other = Value(other)
        out = _new(Value)
        out.data = self.data * other.data
        out.grad = 0.0
        out._prev = (self, other)
        # No tuple of local derivatives: a product's are the other factor's data, read in
        # backward (as micrograd does). One allocation fewer per product, and allocations
        # are what set off Python's cyclic collector: a third off a demo step with it on.
        out._dl = None
        out._op = "*"
        return out

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

    def relu(self) -> Value:
        """max(x, 0): derivative 1 for x > 0, else 0 (relu'(0) = 0)."""
        x = self.data
        return _node(0.0 if x < 0 else x, (self,), (1.0 if x > 0 else 0.0,), "ReLU")

    def tanh(self) -> Value:
        """tanh x: derivative 1 - tanh(x)**2; math.tanh saturates instead of overflowing."""
        t = math.tanh(self.data)
        return _node(t, (self,), (1.0 - t * t,), "tanh")

    def exp(self) -> Value:
        """e ** x: derivative e ** x; inf past about x = 709.78, where math.exp raises."""
        try:
            e = math.exp(self.data)
        except OverflowError:
            e = math.inf
        return _node(e, (self,), (e,), "exp")

    def log(self) -> Value:
        """Natural log: derivative 1/x; -inf at 0 and nan below, as PyTorch."""
        x = self.data
        return _node(_log(x), (self,), (1.0 / x if x != 0 else math.inf,), "log")

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

    def backward(self) -> None:
        """Fill ``grad`` of every node this one depends on with d self / d node.

        Gradients accumulate: a second call adds the same gradients again (set ``grad`` to 0,
        e.g. with ``Module.zero_grad()``, between calls). Iterative, so a graph of any depth
        works; deterministic, since parents are visited in operand order.
        """
        topo = toposort((self,), _parents)  # inputs first, self last
        old = [v.grad for v in topo]
        earlier = any(old)
        if earlier:
            # Inner nodes pass their grad on, so this pass must start from zero everywhere;
            # the earlier gradients are added back at the end.
            for v in topo:
                v.grad = 0.0
        self.grad = 1.0
        # The chain rule, inlined rather than a call per node: the hot loop of the engine.
        for v in reversed(topo):
            g = v.grad
            if not g:
                continue  # nothing to pass on (a dead ReLU); also keeps 0 * inf from making NaN
            prev = v._prev
            n = len(prev)
            if n == 2:  # the loop below, unrolled for the common cases
                a, b = prev
                dl = v._dl
                if dl is None:  # a product
                    a.grad += g * b.data
                    b.grad += g * a.data
                else:
                    a.grad += g * dl[0]
                    b.grad += g * dl[1]
            elif n == 1:
                prev[0].grad += g * v._dl[0]
            elif v._dl is None:  # a neuron's weighted sum: parents (b, w0, x0, w1, x1, ...)
                prev[0].grad += g
                ws, xs = prev[1::2], prev[2::2]
                for w, x in zip(ws, xs, strict=True):
                    w.grad += g * x.data
                    x.grad += g * w.data
            else:  # leaves, and nodes made by hand with Value(data, children, op, local)
                for p, d in zip(prev, v._dl, strict=True):
                    p.grad += g * d
        if earlier:
            for v, g in zip(topo, old, strict=True):
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


WEIGHTED_SUM = "wx+b"  # the op of a weighted-sum node (see weighted_sum)


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
    prev = [b]
    s = b.data
    for w, x in zip(ws, xs, strict=True):
        if not isinstance(x, Value):
            x = Value(x)
        s = s + w.data * x.data
        prev += (w, x)
    out = _new(Value)
    out.data = s
    out.grad = 0.0
    out._prev = tuple(prev)
    out._dl = None
    out._op = WEIGHTED_SUM
    return out
