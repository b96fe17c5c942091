"""vmap's batched tensors, as functorch's: inside ``vmap`` an input is a ``BatchedTensor``, a
Tensor that shows one example (its shape, dtype, values of the first example for checks)
while it holds the whole batch, batch dim first, in ``_value``, an ordinary Tensor on the
ordinary graph; the open levels; what happens where func does what cannot be batched (it
goes on as the first example's call); the methods a batched tensor runs on the whole batch
(sort, max, the comparisons). Running ops on batches, each by its rule, is batching.py's.
"""

from __future__ import annotations

import inspect
from typing import Any

from . import array
from .autograd.mode import is_grad_enabled
from .tensor import Tensor

np = array.host  # batched tensors live on the host (vmap loops elsewhere)

# The open levels, outermost first: (level, batch size). While any is open, Function.apply
# calls batching.dispatch.
levels: list[tuple[int, int]] = []
randomness_of: dict[int, str] = {}  # each open level's: 'error', 'same' or 'different'


class Unbatchable(RuntimeError):
    """What an op that cannot be batched raises inside vmap; vmap then calls func once per
    example instead."""


class Refused(RuntimeError):
    """What vmap refuses, as torch.func.vmap does (a random draw it cannot batch as asked)."""


class ExampleView(np.ndarray):
    """What a batched tensor's ``_array`` is: its first example, for the checks code makes
    on shapes, dtypes and values before an op. ``batched`` links it to its tensor, so an op
    given the array itself as an input (a loss's targets) still sees the batch; an array
    computed from it has no link, and an op refuses it (its batch cannot be known)."""

    batched: Any = None

    def __array_finalize__(self, obj: Any) -> None:
        self.batched = None

    # Every array NumPy computes from it is marked as computed (an ExampleView without a
    # link), even where NumPy would give a plain array: an op refuses it, and vmap loops.
    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        plain = [x.view(np.ndarray) if isinstance(x, ExampleView) else x for x in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(
                x.view(np.ndarray) if isinstance(x, ExampleView) else x for x in kwargs["out"]
            )
        return _marked(getattr(ufunc, method)(*plain, **kwargs))

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return _marked(super().__array_function__(func, types, args, kwargs))


def _marked(result: Any) -> Any:
    if isinstance(result, np.ndarray) and not isinstance(result, ExampleView):
        return result.view(ExampleView)
    if isinstance(result, tuple):
        return tuple(_marked(r) for r in result)
    return result


class BatchedTensor(Tensor):
    """One example's view of a batch held in ``_value`` (batch dim first) at a vmap level."""

    __slots__ = ("_value", "_level", "_example")
    _value: Tensor
    _level: int
    _example: ExampleView

    @property  # type: ignore[override,misc]
    def _array(self) -> Any:
        return self._example

    @_array.setter
    def _array(self, value: Any) -> None:
        degrade()  # an in-place write: into the first example, the others run one by one
        first(self)._array[...] = value

    def _write(self, op: str, compute: Any, written: Any = None) -> Tensor:
        """An in-place op: the batch's new values written into its memory where no gradient
        is recorded and the result is batched as this tensor is; else into the first
        example, as that example's call goes on."""
        if written is None:
            new = compute(self)
            graph = is_grad_enabled() and (real(self).requires_grad or real(new).requires_grad)
            if not graph and isinstance(new, BatchedTensor) and new._level == self._level:
                value = new._value
                if tuple(value.shape) == tuple(self._value.shape):
                    self._value._write(op, lambda t: value)
                    return self
        degrade()
        return first(self)._write(op, compute, written)

    def _fill(self, op: str, values: Any) -> Tensor:
        """A fill (fill_, copy_, an in-place comparison): the values, the same for every
        example or the batch's own, written into the batch where no gradient is recorded."""
        theirs = isinstance(values, BatchedTensor) and values._level == self._level
        other = isinstance(values, BatchedTensor) and not theirs
        wants = real(self).requires_grad or getattr(real(values), "requires_grad", False)
        if other or (is_grad_enabled() and wants):
            degrade()
            return first(self)._fill(op, values)
        self._value._fill(op, padded(values._value, self.ndim) if theirs else values)
        return self

    def detach(self) -> Tensor:
        return wrap(self._value.detach(), self._level)

    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        """Tensor.to of the batch (an integer cast is an array's, outside an op)."""
        value = self._value.to(*args, **kwargs)
        return self if value is self._value else wrap(value, self._level)

    @property  # type: ignore[override,misc]
    def data(self) -> Tensor:
        return self.detach()

    # Values read in Python differ per example: from here func goes on as the first
    # example's call, and vmap calls it for each of the others.
    def item(self) -> Any:
        degrade()
        return first(self).item()

    def tolist(self) -> Any:
        degrade()
        return first(self).tolist()

    def numpy(self, *, force: bool = False) -> Any:
        degrade()
        return first(self).numpy(force=force)

    def __bool__(self) -> bool:
        degrade()
        return bool(first(self))

    def __repr__(self) -> str:
        return f"BatchedTensor(level {self._level}, value of shape {tuple(self._value.shape)})"


def wrap(value: Tensor, level: int) -> BatchedTensor:
    """A batched tensor at ``level`` over ``value``, whose dim 0 is the batch."""
    t = object.__new__(BatchedTensor)
    t._value, t._level = value, level
    example = value._array[0, ...].view(ExampleView)
    example.flags.writeable = False  # an in-place write fails (vmap then loops)
    example.batched = t
    t._example = example
    t._grad, t.grad_fn, t.requires_grad = None, None, False
    return t


def real(t: Any) -> Any:
    """The ordinary tensor under every level of ``t`` (batch dims first, outermost first)."""
    while isinstance(t, BatchedTensor):
        t = t._value
    return t


def wrap_all(t: Tensor) -> Any:
    """A real tensor batched at every open level (its leading dims, outermost first)."""
    for level, _ in levels:
        t = wrap(t, level)
    return t


def batched_everywhere(t: Tensor) -> Any:
    """``t`` batched at every open level, copied across the levels where it is not."""
    z = real(t).new_zeros(tuple(n for _, n in levels))
    return t + wrap_all(z)


def first(t: Any) -> Any:
    """The first example of ``t`` at every level it is batched at (``t`` where it is not)."""
    depth = 0
    while isinstance(t, BatchedTensor):
        t, depth = t._value, depth + 1
    return t[(0,) * depth] if depth else t


def first_result(t: Any) -> Any:
    """A result of func as its first example's: an array computed from that example's values
    (marked) is that example's, an ordinary array again."""
    t = first(t)
    if isinstance(t._array, ExampleView):
        t._array = t._array.view(np.ndarray)
    return t


# Set when func, running on batched tensors, does what only one example can (reads a value
# in Python, writes in place, computes arrays outside an op): from then on every batched
# tensor stands for its first example, so the call goes on as the first example's, and
# vmap calls func for the others; each example runs once. Cleared when the last level closes.
_degraded = [False]


def degrade() -> None:
    _degraded[0] = True


def degraded() -> bool:
    return _degraded[0]


# How many func.grad calls inside vmap are running: an array computed from an example's
# values outside an op may then have cut a gradient's path, and vmap starts again, calling
# func once per example (the one case where the batched call's effects happen twice).
differentiating = [0]
drawing = [0]  # how many random rules are drawing (on real tensors: not batched again)


def active() -> bool:
    """Whether ops are being batched: a level is open, func has not gone on as its first
    example's call, and no random rule is drawing."""
    return bool(levels) and not _degraded[0] and not drawing[0]


def opened(size: int, how: str) -> int:
    """Open a level of the given batch size and randomness; its number."""
    level = levels[-1][0] + 1 if levels else 1
    levels.append((level, size))
    randomness_of[level] = how
    return level


def closed(level: int) -> bool:
    """Close the innermost level; whether it was the last (func then runs batched again)."""
    levels.pop()
    randomness_of.pop(level, None)
    if levels:
        return False
    _degraded[0] = False
    return True


def examples(a: Any) -> Any:
    """Every example of an array a function was given, for checks and arrays that each
    example needs its own of: where ``a`` is a batched tensor's example and ops are batched,
    the batch's values (its batch dims first, outermost first); else ``a`` itself."""
    if isinstance(a, ExampleView) and a.batched is not None and active():
        return real(a.batched)._array
    return a


def batched_as(values: Any, a: Any) -> Tensor:
    """An array of every example's values (``examples(a)``'s batch dims first) as a tensor
    batched as ``a`` is: a batched tensor, whose batch ops see, where ``a`` is a batched
    tensor's example and ops are batched; else a plain tensor of the values."""
    t = Tensor._make(values)
    if not (isinstance(a, ExampleView) and a.batched is not None and active()):
        return t
    at, b = [], a.batched
    while isinstance(b, BatchedTensor):  # a's levels, outermost last
        at.append(b._level)
        b = b._value
    for level in reversed(at):
        t = wrap(t, level)
    return t


def padded(x: Any, rank: int) -> Any:
    """A batched value of fewer example dims than ``rank`` given ones after its batch dim,
    so that it broadcasts against the others example dim by example dim."""
    missing = rank - (x.ndim - 1)
    if missing <= 0:
        return x
    return x.reshape(x.shape[:1] + (1,) * missing + tuple(x.shape[1:]))


# -- methods that compute an index from an example's values (sort's order, max's place): on
# the batch they run along the example's dim moved past the batch's, in one call.


def _batch_of(out: Any, level: int) -> Any:
    if isinstance(out, tuple):  # values and indices
        parts = [_batch_of(o, level) for o in out]
        return type(out)(*parts) if hasattr(out, "_fields") else tuple(parts)
    return wrap(out, level)


def _along_dim(name: str) -> Any:
    method = getattr(Tensor, name)
    sig = inspect.signature(method)

    def along(self: BatchedTensor, *args: Any, **kwargs: Any) -> Any:
        bound = sig.bind(self, *args, **kwargs)
        given = {k: v for k, v in bound.arguments.items() if k != "self"}
        dim = given.get("dim", sig.parameters["dim"].default)
        rank = self.ndim
        if type(dim) is not int or not -rank <= dim < rank or given.get("np_names"):
            return method(self, *args, **kwargs)  # all dims, another tensor, 0-d examples
        return _batch_of(
            getattr(self._value, name)(**{**given, "dim": dim % rank + 1}), self._level
        )

    along.__name__ = name
    along.__doc__ = f"Tensor.{name} along a dim of each example, on the whole batch."
    return along


for _name in "sort argsort topk kthvalue mode median nanmedian cummax cummin max min".split():
    setattr(BatchedTensor, _name, _along_dim(_name))


def _triangle(name: str) -> Any:
    method = getattr(Tensor, name)

    def triangle(self: BatchedTensor, diagonal: int = 0) -> Any:
        if self.ndim < 2:
            return method(self, diagonal)
        return wrap(getattr(self._value, name)(diagonal), self._level)  # the last two dims

    triangle.__name__ = name
    return triangle


BatchedTensor.triu = _triangle("triu")  # type: ignore[method-assign]
BatchedTensor.tril = _triangle("tril")  # type: ignore[method-assign]


def _compared(name: str) -> Any:
    method = getattr(Tensor, name)

    def compare(self: BatchedTensor, other: Any) -> Any:
        """A comparison of the batch, broadcast per example as elementwise ops are."""
        theirs = isinstance(other, BatchedTensor) and other._level == self._level
        if isinstance(other, (BatchedTensor, np.ndarray)) and not theirs:
            return method(self, other)
        rank = max(self.ndim, other.ndim if isinstance(other, Tensor) else 0)
        b = padded(other._value, rank) if theirs else other
        return wrap(getattr(padded(self._value, rank), name)(b), self._level)

    return compare


for _name in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
    _batched_compare = _compared(_name)
    for _alias in [a for a in dir(Tensor) if getattr(Tensor, a, None) is getattr(Tensor, _name)]:
        setattr(BatchedTensor, _alias, _batched_compare)
