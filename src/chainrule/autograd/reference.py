"""The backward pass as a learner should first meet it: order the graph, seed the root, sweep
the nodes in reverse calling each one's rule, unbroadcast, accumulate into ``.grad``.

engine.py runs this same walk (with this module's toposort and sum_to_shape) and adds, each
behind a named call, what users rely on: hooks, observers, version checks, the fast path and
freeing saved state. A test keeps the two equal on every op of the catalog.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .mode import no_grad

if TYPE_CHECKING:
    from ..tensor import Tensor


def backward(root: Tensor, gradient: Tensor | None = None) -> None:
    """Add d(root)/d(leaf) into the ``.grad`` of every leaf that requires grad."""
    order = toposort([root], inputs_needing_grad)  # each node after every node it reads
    grads = {root: root.new_ones(root.shape) if gradient is None else gradient}
    with no_grad():  # the rules are Tensor ops: run them without recording a graph
        for t in reversed(order):  # each node after every node that consumed it
            g = grads.pop(t, None)
            if g is None:  # every rule on the way gave None (no gradient flows here)
                continue
            fn = t.grad_fn
            if fn is None:  # a leaf: accumulate, never assign
                t.grad = g if t.grad is None else t.grad + g
                continue
            in_grads = fn.backward(g, t)  # one per input, in the output's shape
            for x, gx in zip(inputs_needing_grad(t, all_inputs=True), in_grads, strict=True):
                if x is not None and gx is not None:  # the chain rule: grad * d(out)/d(x)
                    gx = sum_to_shape(gx, x.shape).to(x.dtype)  # unbroadcast
                    grads[x] = gx if x not in grads else grads[x] + gx


def inputs_needing_grad(t: Tensor, all_inputs: bool = False) -> list[Any]:
    """The inputs of the node that made ``t`` that want a gradient, in recorded order, each
    as the node saw it (as_seen); with ``all_inputs``, None in place of the others."""
    fn = t.grad_fn
    if fn is None:
        return []
    if fn.inputs is None:
        raise RuntimeError(f"{fn.op}: its saved values were freed by an earlier backward")
    seen = zip(fn.inputs, fn.needs_input_grad, fn.versions, strict=True)
    if all_inputs:
        return [as_seen(x, v) if need else None for x, need, v in seen]
    return [as_seen(x, v) for x, need, v in seen if need]


def as_seen(x: Tensor, v: int | None) -> Tensor:
    """The graph node input ``x`` was when a node recorded it at version ``v``: ``x``
    itself, unless an in-place op recorded since gave ``x`` a new node (then the tensor that
    stands for ``x``'s value before the first such op, which it kept under the version just
    before its write: a write may bump more than once, as a custom Function's)."""
    previous = x.__dict__.get("_previous") if v is not None else None
    if not previous:
        return x
    if v in previous:
        return previous[v]
    later = [k for k in previous if k > v]
    return previous[min(later)] if later else x


def toposort(roots: Iterable[Any], parents: Callable[[Any], Iterable[Any]]) -> list[Any]:
    """Every node reachable from ``roots``, each after all of its parents.

    Depth first with an explicit stack (no recursion limit), parents visited in the order
    ``parents`` gives them (the same order on every run), nodes compared by identity (Tensor
    and Value hash like ``object``).
    """
    order: list[Any] = []
    visited: set[Any] = set()
    for root in roots:
        if root in visited:
            continue
        visited.add(root)
        stack = [(root, iter(parents(root)))]  # (node, its parents not yet looked at)
        while stack:
            node, rest = stack[-1]
            for p in rest:
                if p not in visited:  # go down to p first; come back to node later
                    visited.add(p)
                    above = parents(p)
                    if not above:  # none (a leaf): p goes in order now, node goes on
                        order.append(p)
                        continue
                    stack.append((p, iter(above)))
                    break
            else:  # every parent of node is in order: node goes after them
                stack.pop()
                order.append(node)
    return order


def sum_to_shape(grad: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Undo broadcasting: sum ``grad`` over the dims along which ``shape`` was expanded."""
    dims = broadcast_dims(tuple(grad.shape), shape)
    if dims:
        grad = grad.sum(dim=dims, keepdim=True)
    return grad.reshape(shape) if grad.shape != shape else grad


def broadcast_dims(big: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
    """The dims of ``big`` along which ``shape`` was broadcast to it (the leading ones it
    lacks, and those where it has 1). Only broadcasting is undone: a gradient of another
    shape (even with as many elements) is an error, never silently reshaped."""
    lead = len(big) - len(shape)
    if lead < 0 or any(n != 1 and n != m for n, m in zip(shape, big[lead:], strict=True)):
        raise ValueError(f"sum_to_shape: shape {big} is not a broadcast of {shape}")
    return tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and big[lead + i] != 1
    )
