"""vmap's randomness, as functorch's random batching rules: a draw inside vmap is refused
at a level of randomness 'error'; at a level of 'same' every example shares one draw (of the
example's shape); at a level of 'different' the draw is made once for the whole batch, of
the batch's shape, so that it takes from the generator the numbers torch.func.vmap takes.
The draws themselves (factories, Tensor's fills, dropout) call these rules inside vmap;
batching.py holds the batched tensors and the levels."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import batching
from .batching import BatchedTensor, Refused, real, wrap
from .tensor import Tensor


def _refuse_random(op: str) -> None:
    raise Refused(
        "vmap: called random operation while in randomness error mode; use randomness='same' "
        f"or 'different', or draw outside of vmap; got {op}"
    )


def draw_sizes(op: str) -> tuple[int, ...]:
    """The batch dims a draw with no batched input makes (rand, randn, randint, normal of
    numbers), put before its shape: the size of each level of randomness 'different',
    outermost first; none outside vmap."""
    if not batching.active():
        return ()
    if any(batching._randomness[level] == "error" for level, _ in batching._levels):
        _refuse_random(op)
    return tuple(n for level, n in batching._levels if batching._randomness[level] == "different")


def drawn(t: Tensor) -> Any:
    """A draw of ``draw_sizes() + shape`` as the batch sees it: batched at each level of
    randomness 'different' (outside vmap, t)."""
    if not batching.active():
        return t
    for level, _ in batching._levels:
        if batching._randomness[level] == "different":
            t = wrap(t, level)
    return t


def _at(t: Any, level: int) -> bool:
    return isinstance(t, BatchedTensor) and t._level == level


def _by_level(op: str, t: Any, draw: Callable[[Any], Any], same_batched: Callable, k: int) -> Any:
    """``draw(t)`` batched level by level, innermost (k) first, as functorch's rules for a
    draw from a tensor: at 'different' the draw of the batch's shape (t repeated along the
    batch where it is not batched), at 'same' one draw for all (``same_batched`` says what
    that is where t is batched)."""
    if k < 0:
        batching._drawing[0] += 1
        try:
            return draw(t)
        finally:
            batching._drawing[0] -= 1
    level, size = batching._levels[k]
    mode = batching._randomness[level]
    if mode == "error":
        _refuse_random(op)
    if mode == "same":
        if _at(t, level):
            return same_batched(t, k)
        return _by_level(op, t, draw, same_batched, k - 1)
    # not batched: repeated along the batch, contiguous as torch's repeat is drawn into
    value = t._value if _at(t, level) else batching._broadcast(t, size).contiguous()
    return wrap(_by_level(op, value, draw, same_batched, k - 1), level)


def _same_refused(op: str) -> Callable:
    def refuse(t: Any, k: int) -> Any:
        raise Refused(
            f"vmap: {op} with randomness='same' on a batched tensor is not supported (as in "
            f"PyTorch); got a tensor of shape {tuple(t.shape)} per example; use "
            "randomness='different'"
        )

    return refuse


def pointwise_draw(op: str, t: Any, draw: Callable[[Any], Any]) -> Any:
    """A draw of t's shape from t's values (bernoulli's probabilities, normal's means)."""
    return _by_level(op, t, draw, _same_refused(op), len(batching._levels) - 1)


def like_draw(op: str, t: Any, make: Callable[[Any], Any]) -> Any:
    """The tensor a ``*_like`` draw fills (``make(t)``, an empty one like t), batched where
    the draw differs per example; at 'same', like one example."""

    def first(x: Any, k: int) -> Any:
        return _by_level(op, x._value[0], make, first, k - 1)

    return _by_level(op, t, make, first, len(batching._levels) - 1)


def dropout(x: Any, p: float) -> Any:
    """Dropout inside vmap, as functorch's native_dropout rule: the mask a contiguous
    ``bernoulli_(1 - p)`` of the batch's shape at 'different', of one example's at 'same'."""

    def mask(t: Any) -> Any:
        keep = real(t).new_empty(tuple(t.shape)).bernoulli_(1.0 - p)
        return keep * (1.0 / (1.0 - p))

    def same(t: Any, k: int) -> Any:
        return mask(t)  # of one example's shape

    return x * _by_level("dropout", x, mask, same, len(batching._levels) - 1)


def _fill_in_place(t: BatchedTensor, name: str, args: tuple, kwargs: dict) -> BatchedTensor:
    """A random fill of a batched tensor in place (normal_, uniform_, bernoulli_, ...): at
    'different' the batch's values filled by one draw, in their order in memory; at 'same'
    one example's draw (contiguous) copied into every example."""
    for inner, _ in batching._levels:
        if batching._randomness[inner] == "error":
            _refuse_random(name)
        if inner > t._level and batching._randomness[inner] == "different":
            raise Refused(
                f"vmap: {name} with randomness='different' on a tensor not batched at this "
                f"level would draw the same values for every example (PyTorch refuses it "
                f"too); got a tensor of shape {tuple(t.shape)} per example"
            )
    if batching._randomness[t._level] == "different":
        getattr(t._value, name)(*args, **kwargs)
        return t
    one = real(t).new_empty(tuple(t.shape))  # one example's shape, contiguous
    getattr(one, name)(*args, **kwargs)
    t._value.copy_(one.expand(tuple(t._value.shape)))
    return t


def _in_place_draw(name: str) -> Any:
    def fill(self: BatchedTensor, *args: Any, **kwargs: Any) -> BatchedTensor:
        return _fill_in_place(self, name, args, kwargs)

    fill.__name__ = name
    fill.__doc__ = f"Tensor.{name} on a batched tensor, by vmap's randomness."
    return fill


FILLS = "normal_ uniform_ bernoulli_ random_ exponential_ log_normal_ cauchy_ geometric_"
for _name in FILLS.split():
    setattr(BatchedTensor, _name, _in_place_draw(_name))


def _bernoulli(self: BatchedTensor, *, generator: Any = None) -> Any:
    """Tensor.bernoulli of batched probabilities, by vmap's randomness."""
    return pointwise_draw("bernoulli", self, lambda p: p.bernoulli(generator=generator))


BatchedTensor.bernoulli = _bernoulli  # type: ignore[method-assign, assignment]
