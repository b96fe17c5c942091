"""Every speed trick of the backward pass, in one place, behind one switch.

The plain rules (each op's ``backward``, in Tensor ops) are the reference; what is here
changes how fast gradients come, never what they are. ``CHAINRULE_FASTPATH=0`` in the
environment, ``set_enabled(False)`` or ``with disabled():`` turns all of it off; the test
suite runs the op catalog and the fuzz tests both ways and compares the gradients.

The tricks, with what each saves as measured (2-core Xeon, threads pinned, one sitting):

- Arrays instead of Tensors: for first-order gradients, an op with a ``backward_arrays``
  method runs it instead of ``backward``, skipping each Tensor op's bookkeeping (a Tensor
  made and an apply per operator): about 1 us a formula, 8-15% of an 8-8-8-3 MLP step.
- Gradient buffers reused: the engine writes into a gradient only where it alone holds it,
  which it knows without counting references: a sum it made itself, or an array that a
  ``fresh_grads`` op returned. Such a gradient is summed into in place when a second branch
  arrives (a residual stream, a weight used twice) and handed to a ``backward_arrays`` as
  ``reuse=True`` (relu's mask written into it): no new array per ReLU layer, 3-6% of an MLP
  step at batch 1024.
- The relu mask on a gradient's bits (``masked``): one pass, NaN and inf kept out of the
  zeros without a test for them.

Fused layers (Linear or Conv then ReLU as one node) were measured too and dropped: with the
gradient reused as above, they saved 1-3% of an MLP or CNN training step, less than the
5% a trick must save to keep its code.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from .. import backend
from .function import Function, tensor_type


class _Switch:
    on = os.environ.get("CHAINRULE_FASTPATH", "1").strip() != "0"


def enabled() -> bool:
    """Whether the speed tricks are on (the default; CHAINRULE_FASTPATH=0 turns them off)."""
    return _Switch.on


def set_enabled(on: bool) -> None:
    """Turn every speed trick on or off, for the whole process."""
    _Switch.on = bool(on)


@contextmanager
def disabled() -> Iterator[None]:
    """Run the block with every speed trick off (the plain rules only), then restore."""
    before = _Switch.on
    _Switch.on = False
    try:
        yield
    finally:
        _Switch.on = before


class ArraySweep:
    """How the engine computes and adds up gradients with the fast path on (first-order
    gradients, no observer): the same two steps as engine.PlainSweep, on arrays where an op
    offers ``backward_arrays``, and in place where the engine alone holds a gradient.

    ``owned`` holds the nodes whose gradient so far is an array only the engine holds."""

    def __init__(self) -> None:
        self.owned: set[Any] = set()
        self.make = tensor_type()._make
        # Of the node being swept: its incoming gradient's array, whether its rule promises
        # fresh arrays, and whether that incoming array, returned once, stays ours.
        self.g: Any = None
        self.fresh = False
        self.g_ours = False

    def gradients(self, fn: Function, grad: Any, out: Any) -> Sequence[Any]:
        owned = self.owned
        reuse = out in owned
        if reuse:
            owned.discard(out)
        g = self.g = grad.data
        self.fresh = fn.fresh_grads
        rule = fn.backward_arrays
        if rule is None:  # the rule in Tensor ops: it writes into nothing it was given
            self.g_ours = False
            return fn.backward(grad, out)
        make = self.make
        grads = []  # a loop, not a comprehension: see Function.apply
        passed = 0  # how many inputs g itself goes to: ours only if it was, and to one
        for r in rule(g, out.data, reuse):
            grads.append(None if r is None else make(r, False))
            passed += r is g
        self.g_ours = reuse and passed == 1
        return grads

    def add(self, grads: dict[Any, Any], x: Any, g: Any) -> None:
        prev = grads.get(x)
        if prev is None:
            grads[x] = g
            d = g.data
            if (d is self.g and self.g_ours) or (d is not self.g and self.fresh):
                self.owned.add(x)
        elif x in self.owned:
            prev.data += g.data  # of x's shape and dtype both, after the engine's fit
        else:
            grads[x] = self.make(prev.data + g.data, False)
            self.owned.add(x)

    def hand_out(self, t: Any) -> None:
        """t's gradient was given away (a retained .grad): no longer the engine's alone."""
        self.owned.discard(t)


# A float's bits read as a signed integer of its width: see masked.
_BITS = {2: backend.xp.int16, 4: backend.xp.int32, 8: backend.xp.int64}


def masked(grad: Any, mask: Any, in_place: bool = False) -> Any:
    """The array ``grad`` where ``mask``, else 0, with NaN and inf kept out of the zeros
    (NaN * 0 is NaN); into grad's own memory if ``in_place``.

    On a float array the mask multiplies grad's bits read as integers: x * 1 keeps every
    bit, x * 0 is all bits 0, which is +0.0, whatever x was. One pass, as fast as the float
    product, with no pass to look for NaN and inf first and no floating-point flag to
    silence (inf * 0 raises one). A float with no integer of its width (float128), and any
    other dtype, takes a selection."""
    xp = backend.xp
    bits = _BITS.get(grad.itemsize) if backend.is_floating(grad.dtype) else None
    if bits is None:
        if in_place:
            grad[~mask] = 0
            return grad
        return xp.where(mask, grad, 0).astype(grad.dtype, copy=False)
    as_int = grad.view(bits)
    if in_place:
        as_int *= mask
        return grad
    return (as_int * mask).view(grad.dtype)
