"""vmap's randomness, as functorch's random batching rules: a draw inside vmap is refused
at a level of randomness 'error'; at a level of 'same' every example shares one draw (of the
example's shape); at a level of 'different' the draw is made once for the whole batch, of
the batch's shape, so that it takes from the generator the numbers torch.func.vmap takes.
The draws themselves (factories, Tensor's fills, bernoulli, multinomial, dropout) call these
rules inside vmap: Tensor's own draws (tensor/sampling.py) ask ``draw`` while a level is
open. batching.py holds the batched tensors and the levels."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import batching
from .batching import BatchedTensor, Refused, real, wrap
from .tensor import Tensor, sampling


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
    if any(batching.randomness_of[level] == "error" for level, _ in batching.levels):
        _refuse_random(op)
    return tuple(n for level, n in batching.levels if batching.randomness_of[level] == "different")


def drawn(t: Tensor) -> Any:
    """A draw of ``draw_sizes() + shape`` as the batch sees it: batched at each level of
    randomness 'different' (outside vmap, t)."""
    if not batching.active():
        return t
    for level, _ in batching.levels:
        if batching.randomness_of[level] == "different":
            t = wrap(t, level)
    return t


def noise(x: Tensor, shape: tuple[int, ...], keep: float, op: str) -> Any:
    """A dropout's noise: ``bernoulli_(keep)`` of an empty tensor like x of ``shape``;
    inside vmap, one per example at each level of randomness 'different' (x batched or
    not), as PyTorch's feature and alpha dropouts draw theirs."""
    if not batching.active():
        return x.new_empty(shape).bernoulli_(keep)
    t = drawn(real(x).new_empty(draw_sizes(op) + tuple(shape)))
    return _fill_level(t, "bernoulli_", (keep,), {}, len(batching.levels) - 1)


def _at(t: Any, level: int) -> bool:
    return isinstance(t, BatchedTensor) and t._level == level


def _drawing(draw: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``draw(*args, **kwargs)`` on real tensors, not batched again."""
    batching.drawing[0] += 1
    try:
        return draw(*args, **kwargs)
    finally:
        batching.drawing[0] -= 1


def _by_level(op: str, ts: tuple, draw: Callable[..., Any], same_batched: Callable, k: int) -> Any:
    """``draw(*ts)`` batched level by level, innermost (k) first, as functorch's rules for a
    draw from tensors (numbers among ts pass as they are): at 'different' the draw of the
    batch's shape (the first tensor repeated along the batch where none is batched, batched
    values given ones after the batch dim to the largest example rank), at 'same' one draw
    for all (``same_batched(ts, k)`` says what that is where one is batched)."""
    if k < 0:
        return _drawing(draw, *ts)
    level, size = batching.levels[k]
    mode = batching.randomness_of[level]
    if mode == "error":
        _refuse_random(op)
    batched = [_at(t, level) for t in ts]
    if mode == "same":
        if any(batched):
            return same_batched(ts, k)
        return _by_level(op, ts, draw, same_batched, k - 1)
    if any(batched):
        rank = max(t.ndim for t in ts if isinstance(t, Tensor))
        values = tuple(
            batching.padded(t._value, rank) if b else t for t, b in zip(ts, batched, strict=True)
        )
    else:  # the first tensor repeated along the batch, contiguous as torch's draw into it
        i = next(i for i, t in enumerate(ts) if isinstance(t, Tensor))
        values = ts[:i] + (batching._broadcast(ts[i], size).contiguous(),) + ts[i + 1 :]
    return wrap(_by_level(op, values, draw, same_batched, k - 1), level)


def _same_refused(op: str) -> Callable:
    def refuse(ts: tuple, k: int) -> Any:
        shapes = [tuple(t.shape) for t in ts if isinstance(t, Tensor)]
        raise Refused(
            f"vmap: {op} with randomness='same' on a batched tensor is not supported (as in "
            f"PyTorch); got tensors of shapes {shapes} per example; use randomness='different'"
        )

    return refuse


def pointwise_draw(op: str, inputs: tuple, draw: Callable[..., Any]) -> Any:
    """A draw of the inputs' broadcast shape from their values (bernoulli's probabilities,
    normal's means and stds): ``draw(*inputs)`` on the batch's values."""
    return _by_level(op, inputs, draw, _same_refused(op), len(batching.levels) - 1)


def like_draw(op: str, t: Any, make: Callable[[Any], Any]) -> Any:
    """The tensor a ``*_like`` draw fills (``make(t)``, an empty one like t), batched where
    the draw differs per example; at 'same', like one example."""

    def first(ts: tuple, k: int) -> Any:
        return _by_level(op, (ts[0]._value[0],), make, first, k - 1)

    return _by_level(op, (t,), make, first, len(batching.levels) - 1)


def dropout(x: Any, p: float) -> Any:
    """Dropout inside vmap, as functorch's native_dropout rule: the mask a contiguous
    ``bernoulli_(1 - p)`` of the batch's shape at 'different', of one example's at 'same'."""

    def mask(t: Any) -> Any:
        keep = real(t).new_empty(tuple(t.shape)).bernoulli_(1.0 - p)
        return keep * (1.0 / (1.0 - p))

    def same(ts: tuple, k: int) -> Any:  # one example's mask, through the levels below
        one = real(ts[0]).new_empty(tuple(ts[0].shape))
        return _by_level("dropout", (one,), mask, same, k - 1)

    return x * _by_level("dropout", (x,), mask, same, len(batching.levels) - 1)


# -- Tensor's own draws ------------------------------------------------------------------------


def _fill_level(t: Any, name: str, args: tuple, kwargs: dict, k: int) -> Any:
    """A random fill in place (normal_, uniform_, bernoulli_, ...) level by level, innermost
    (k) first, as functorch's in-place rule: refused at 'error', and at 'different' where t
    is not batched (every example would hold the same draw); at 'different' the batch's
    values filled by one draw, in their order in memory; at 'same' one example's draw
    (contiguous) copied into every example."""
    if k < 0:
        return _drawing(getattr(Tensor, name), t, *args, **kwargs)
    level, _ = batching.levels[k]
    mode = batching.randomness_of[level]
    if mode == "error":
        _refuse_random(name)
    probs = [a for a in (*args, *kwargs.values()) if _at(a, level)]  # bernoulli_'s p
    if mode == "same" and probs:
        _same_refused(name)((t, *probs), k)
    if not _at(t, level):
        if mode == "different" or probs:
            raise Refused(
                f"vmap: {name} with randomness='{mode}' on a tensor not batched at this level "
                "would draw the same values for every example (PyTorch refuses it too); got a "
                f"tensor of shape {tuple(t.shape)} per example; draw into a batched tensor, or "
                "use an out-of-place draw (rand_like, bernoulli)"
            )
        _fill_level(t, name, args, kwargs, k - 1)
        return t
    if mode == "different":
        args = tuple(a._value if _at(a, level) else a for a in args)
        kwargs = {key: v._value if _at(v, level) else v for key, v in kwargs.items()}
        _fill_level(t._value, name, args, kwargs, k - 1)
        return t
    one = real(t).new_empty(tuple(t.shape))  # one example's shape, contiguous
    _fill_level(one, name, args, kwargs, k - 1)
    t._value.copy_(one.expand(tuple(t._value.shape)))
    return t


def _multinomial(
    self: Any, num_samples: int, replacement: bool = False, *, generator: Any = None
) -> Any:
    """multinomial of the batch's weights, its rows drawn from as one batch of rows."""
    if self.ndim not in (1, 2):
        return None  # refused as outside vmap

    def draw(w: Any) -> Any:
        if w.ndim <= 2:
            return w.multinomial(num_samples, replacement, generator=generator)
        rows = w.reshape(-1, w.shape[-1])  # (batch * rows, categories), as functorch's
        out = rows.multinomial(num_samples, replacement, generator=generator)
        return out.reshape(*w.shape[:-1], out.shape[-1])

    return pointwise_draw("multinomial", (self,), draw)


def _bernoulli(self: Any, p: Any = None, *, generator: Any = None) -> Any:
    """bernoulli of the batch's probabilities, or p's draws of the batch's shape."""
    if p is not None:  # a number's draws of the input's shape, as a factory's
        return pointwise_draw("bernoulli", (self,), lambda t: t.bernoulli(p, generator=generator))
    # drawn in the order of the result's elements, as PyTorch's (contiguous) result
    return pointwise_draw(
        "bernoulli", (self,), lambda p: p.contiguous().bernoulli(generator=generator)
    )


def _fill(name: str, t: Any, args: tuple, kwargs: dict) -> Any:
    k = len(batching.levels) - 1
    if name == "bernoulli_" and k > 0 and _nested_refused(t, args, kwargs):
        raise Refused(
            "vmap: bernoulli_ of a number p on a tensor batched at an inner vmap of "
            "randomness='different' is refused, as PyTorch refuses it; got a tensor of "
            f"shape {tuple(t.shape)} per example; use bernoulli(full_like(t, p))"
        )
    return _fill_level(t, name, args, kwargs, k)


def _nested_refused(t: Any, args: tuple, kwargs: dict) -> bool:
    """Whether PyTorch refuses this bernoulli_ in nested vmaps: p a number, t batched at the
    innermost level, of randomness 'different' (its batched rule for bernoulli_ of a number
    finds t's values not batched there)."""
    level = batching.levels[-1][0]
    p = args[0] if args else kwargs.get("p", 0.5)
    different = batching.randomness_of[level] == "different"
    return different and _at(t, level) and not isinstance(p, Tensor)


def draw(name: str, t: Any, *args: Any, **kwargs: Any) -> Any:
    """Tensor.<name>, a draw of tensor/sampling.py, by its rule inside vmap: where t is
    batched or ops are being batched. None where it runs as outside vmap (a rule drawing on
    the batch's values, func gone on as its first example's call, a multinomial refused)."""
    if not (isinstance(t, BatchedTensor) or batching.active()):
        return None
    if name == "bernoulli":
        return _bernoulli(t, *args, **kwargs)
    if name == "multinomial":
        return _multinomial(t, *args, **kwargs)
    return _fill(name, t, args, kwargs)  # an in-place fill: normal_, bernoulli_, ...


def enter(size: int, randomness: str = "error") -> int:
    """Open a vmap level (batching.enter), Tensor's draws asking ``draw`` while one is open,
    as Function.apply asks batching.dispatch."""
    level = batching.enter(size, randomness)
    sampling.vmap[0] = draw
    return level


def leave(level: int) -> None:
    batching.leave(level)
    if not batching.levels:
        sampling.vmap[0] = None
