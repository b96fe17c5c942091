"""Every speed trick of the backward pass, in one place, behind one switch.

The plain rules (each op's ``backward``, in Tensor ops) are the reference; what is here
changes how fast gradients come, never what they are. ``CHAINRULE_FASTPATH=0`` in the
environment, ``set_enabled(False)`` or ``with disabled():`` turns all of it off (and the
command line's malloc setting with it, see allocator.py); the test suite runs the op catalog
and the fuzz tests both ways and compares the gradients with PyTorch's.

What it saves, measured with the switch (fast against plain, one process, interleaved
steps, threads pinned, medians; 2-core Xeon):

- Rules on arrays: for first-order gradients, an op with a ``backward_arrays`` method runs
  it instead of ``backward``, skipping each Tensor op's bookkeeping (a Tensor made and an
  apply per operator in the rule). An SGD step of an 8-8-8-3 MLP at batch 4 takes 0.58x
  the plain rules' time; of a 784-512-512-10 MLP, 0.87x at batch 32 and 0.86x at 1024; of
  a residual MLP (4 blocks of 256, batch 256), 0.85x.
- The relu mask on a gradient's bits (``masked``, for relu, clamp and where): one pass, NaN
  and inf kept out of the zeros without a pass to look for them. On float32 gradients of
  (32, 512) and (1024, 512) with a random mask: 5.0 and 207 us, where a selection
  (``where(mask, grad, 0)``, the plain rule's way) takes 57 and 2,145 us and a plain
  product, which would let NaN through, 5.8 and 258 us.

Measured and dropped: writing into gradient buffers the engine alone holds (summing a
second branch in place, relu's mask into its incoming gradient) saved 0.4-1.4% of those
steps and 4% of peak memory at batch 1024; fusing Linear or Conv with the ReLU after it
saved 1-3%. Both stayed under the 5% a trick must save to keep its code.
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


def gradients(fn: Function, grad: Any, out: Any) -> Sequence[Any]:
    """A node's input gradients with the fast path on (first-order gradients, no observer
    that needs the plain rules): by its ``backward_arrays`` where it has one, else by its
    ``backward``."""
    rule = fn.backward_arrays
    if rule is None:
        return fn.backward(grad, out)
    make = tensor_type()._make
    grads = []  # a loop, not a comprehension: see Function.apply
    for r in rule(grad._array, out._array):
        grads.append(None if r is None else make(r, False))
    return grads


# A float's bits read as a signed integer of its width: see masked.
_BITS = {2: backend.xp.int16, 4: backend.xp.int32, 8: backend.xp.int64}


def masked(grad: Any, mask: Any) -> Any:
    """The array ``grad`` where ``mask``, else 0, with NaN and inf kept out of the zeros
    (NaN * 0 is NaN), in a new array.

    On a float array the mask multiplies grad's bits read as integers: x * 1 keeps every
    bit, x * 0 is all bits 0, which is +0.0, whatever x was. One pass, as fast as the float
    product, with no pass to look for NaN and inf first and no floating-point flag to
    silence (inf * 0 raises one). A float with no integer of its width (float128), and any
    other dtype, takes a selection."""
    bits = _BITS.get(grad.itemsize) if backend.is_floating(grad.dtype) else None
    if bits is None:
        return backend.xp.where(mask, grad, 0).astype(grad.dtype, copy=False)
    return (grad.view(bits) * mask).view(grad.dtype)
