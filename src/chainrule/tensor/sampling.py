"""Tensor sampling and counting, no gradient: random in-place fills, multinomial and
bernoulli draws, nonzero, unique, bincount and histograms."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from .. import array
from ..arguments import (
    need_float,
    normalize_dim,
    positive_int,
)
from ..array.generator import laid_out
from .core import Core, make

if TYPE_CHECKING:  # Tensor in annotations alone (core.py says why)
    from . import Tensor
    from .core import TensorSelf

xp = array.xp

# random_batching.draw while a vmap level is open (random_batching.enter sets it), else None:
# Tensor's draws ask it first, as Function.apply asks batching.dispatch
vmap: list[Callable[..., Tensor | None] | None] = [None]


def check_std(std: Any, op: str) -> None:
    """A normal distribution's std (a number or a tensor of them), refused below 0 or NaN as
    PyTorch refuses it."""
    values = std._array if isinstance(std, Core) else std
    if not (bool((values >= 0).all()) if isinstance(values, array.ndarray) else values >= 0):
        got = f"std {std}" if isinstance(std, (int, float)) else "a tensor std"
        raise RuntimeError(f"{op}: normal expects all elements of std >= 0.0; got {got}")


class Sampling(Core):
    """The sampling and counting methods of Tensor."""

    __slots__ = ()

    # -- random fills, in place (through _write, as every in-place op) ---------------------

    def normal_(
        self: TensorSelf, mean: float = 0.0, std: float = 1.0, *, generator: Any = None
    ) -> Tensor:
        """Fills with draws from the normal distribution of that mean and std (>= 0)."""
        if vmap[0] is not None:  # inside vmap: the draw may be batched (random_batching.py)
            drawn = vmap[0]("normal_", self, mean, std, generator=generator)
            if drawn is not None:
                return drawn
        need_float(self, "normal_")
        check_std(std, "normal_")
        arr = self._array
        gen = array.generator(generator, "normal_")
        flat = gen.normal(arr.size, _drawn(arr), mean, std, contiguous=_contiguous(arr))
        return self._drawn_fill("normal_", flat)

    def uniform_(
        self: TensorSelf,
        from_: float = 0.0,
        /,
        to: float = 1.0,
        *,
        generator: Any = None,
        **kwargs: float,
    ) -> Tensor:
        """Fills with draws uniform in [from, to): PyTorch's ``uniform_(from=0, to=1)``, whose
        first keyword is Python's keyword ``from``, given positionally or as
        ``**{'from': a}``."""
        if vmap[0] is not None:  # inside vmap: the draw may be batched (random_batching.py)
            drawn = vmap[0]("uniform_", self, from_, to, generator=generator, **kwargs)
            if drawn is not None:
                return drawn
        low = _from_keyword(from_, kwargs, "uniform_")
        gen = array.generator(generator, "uniform_")
        flat = gen.uniform(self._array.size, _drawn(self._array), low, to)
        return self._drawn_fill("uniform_", flat)

    def exponential_(self: TensorSelf, lambd: float = 1.0, *, generator: Any = None) -> Tensor:
        """Fills with draws from the exponential distribution of rate lambd (mean 1 / lambd)."""
        if vmap[0] is not None:  # inside vmap: the draw may be batched (random_batching.py)
            drawn = vmap[0]("exponential_", self, lambd, generator=generator)
            if drawn is not None:
                return drawn
        gen = array.generator(generator, "exponential_")
        flat = gen.exponential(self._array.size, lambd, self._array.dtype)
        return self._drawn_fill("exponential_", flat)

    def log_normal_(
        self: TensorSelf, mean: float = 1.0, std: float = 2.0, *, generator: Any = None
    ) -> Tensor:
        """Fills with exp of draws from the normal distribution of that mean and std."""
        if vmap[0] is not None:  # inside vmap: the draw may be batched (random_batching.py)
            drawn = vmap[0]("log_normal_", self, mean, std, generator=generator)
            if drawn is not None:
                return drawn
        need_float(self, "log_normal_")
        gen = array.generator(generator, "log_normal_")
        return self._drawn_fill("log_normal_", gen.log_normal(self._array.size, mean, std))

    def cauchy_(
        self: TensorSelf, median: float = 0.0, sigma: float = 1.0, *, generator: Any = None
    ) -> Tensor:
        """Fills with draws from the Cauchy distribution of that median and half width."""
        if vmap[0] is not None:  # inside vmap: the draw may be batched (random_batching.py)
            drawn = vmap[0]("cauchy_", self, median, sigma, generator=generator)
            if drawn is not None:
                return drawn
        need_float(self, "cauchy_")
        gen = array.generator(generator, "cauchy_")
        return self._drawn_fill("cauchy_", gen.cauchy(self._array.size, median, sigma))

    def geometric_(self: TensorSelf, p: float, *, generator: Any = None) -> Tensor:
        """Fills with the number of Bernoulli(p) trials up to the first success (1, 2, ...)."""
        if vmap[0] is not None:  # inside vmap: the draw may be batched (random_batching.py)
            drawn = vmap[0]("geometric_", self, p, generator=generator)
            if drawn is not None:
                return drawn
        if not 0 < p < 1:
            raise ValueError(f"geometric_: p must be in (0, 1); got p={p}")
        gen = array.generator(generator, "geometric_")
        return self._drawn_fill("geometric_", gen.geometric(self._array.size, p))

    def bernoulli_(self: TensorSelf, p: Any = 0.5, *, generator: Any = None) -> Tensor:
        """Fills with 1 where a draw falls under p (a number, or a tensor of probabilities
        that broadcasts to this shape), else 0."""
        if vmap[0] is not None:  # inside vmap: the draw may be batched (random_batching.py)
            drawn = vmap[0]("bernoulli_", self, p, generator=generator)
            if drawn is not None:
                return drawn
        probs = array.to_host(p._array) if isinstance(p, Core) else array.host.asarray(p)
        if not ((probs >= 0) & (probs <= 1)).all():  # NaN fails both
            got = f"shape {probs.shape} with values outside" if probs.ndim else f"p={p}"
            raise ValueError(f"bernoulli_: p must be in [0, 1]; got {got}")
        gen = array.generator(generator, "bernoulli_")
        arr = self._array
        if isinstance(p, Core):
            probs = array.host.broadcast_to(probs, arr.shape)
            flat = gen.bernoulli_probs(in_memory_order(probs, arr))
        else:
            flat = gen.bernoulli(arr.size, float(p))
        return self._drawn_fill("bernoulli_", flat)

    def random_(
        self: TensorSelf,
        from_: int = 0,
        /,
        to: int | None = None,
        *,
        generator: Any = None,
        **kwargs: int,
    ) -> Tensor:
        """Fills with integers drawn uniformly from [from, to); ``random_(n)`` is [0, n), as
        PyTorch's. Without ``to``, from [0, the largest whole number the dtype holds with all
        those below it]: 2**24 for float32 (its significand's digits), the max of an integer
        dtype, 1 for bool."""
        if vmap[0] is not None:  # inside vmap: the draw may be batched (random_batching.py)
            drawn = vmap[0]("random_", self, from_, to, generator=generator, **kwargs)
            if drawn is not None:
                return drawn
        low = _from_keyword(from_, kwargs, "random_")
        if to is None and "from" not in kwargs and from_ != 0:
            low, to = 0, from_  # random_(to)
        arr = self._array
        dtype = arr.dtype
        gen = array.generator(generator, "random_")
        if to is None and low == 0:
            return self._drawn_fill("random_", gen.full_range(arr.size, dtype))
        if to is None:  # the last value is included
            if array.is_floating(dtype):
                to = 2 ** (1 - round(math.log2(array.finfo(dtype).eps))) + 1
            else:
                to = int(array.iinfo(dtype).max) + 1
        elif low >= to:
            raise ValueError(f"random_: from must be less than to; got from={low} and to={to}")
        return self._drawn_fill("random_", gen.integers(low, to, arr.size))

    def _drawn_fill(self: TensorSelf, op: str, flat: Any) -> Tensor:
        """Fill with values drawn in memory order (as PyTorch fills), cast to the dtype."""
        arr = self._array
        values = laid_out(flat.astype(arr.dtype, copy=False), arr)
        return self._fill(op, array.from_host(values, arr))

    # -- sampling (no gradient) ------------------------------------------------------------

    def nonzero(self: TensorSelf, *, as_tuple: bool = False) -> Any:
        """The indices of the nonzero elements: (n, ndim) int64, or as_tuple one (n,) tensor per
        dim (a 0-d tensor counts as 1-d)."""
        if as_tuple:
            return tuple(make(i) for i in xp.nonzero(xp.atleast_1d(self._array)))
        return make(xp.argwhere(self._array))

    def unique(
        self: TensorSelf,
        sorted: bool = True,
        return_inverse: bool = False,
        return_counts: bool = False,
        dim: int | None = None,
    ) -> Any:
        """The distinct values (sorted; slices along dim when given), and as asked each
        element's index among them (input's shape) and each value's count, as PyTorch: each
        NaN is a value of its own (NaN != NaN), where NumPy's default merges them."""
        axis = None if dim is None else normalize_dim(dim, self.ndim, "unique", self.shape)
        values, inverse, counts = xp.unique(
            self._array, return_inverse=True, return_counts=True, axis=axis, equal_nan=False
        )
        if axis is None:
            inverse = inverse.reshape(self.shape)
        out = [make(values)]
        if return_inverse:
            out.append(make(inverse.astype(array.int64)))
        if return_counts:
            out.append(make(counts.astype(array.int64)))
        return out[0] if len(out) == 1 else tuple(out)

    def bincount(self: TensorSelf, weights: Any = None, minlength: int = 0) -> Tensor:
        """How often each value 0..max occurs in this 1-D non-negative integer tensor (at least
        minlength bins): int64, or the weights' sums (float32 weights stay float32, others
        float64, as PyTorch)."""
        x = self._array
        if x.ndim != 1 or x.dtype.kind not in "biu" or (x.size and x.min() < 0):
            raise ValueError(
                f"bincount: needs a 1-D tensor of non-negative integers; got shape {self.shape} "
                f"and dtype {self.dtype}"
            )
        if weights is None:
            return make(xp.bincount(x, minlength=minlength).astype(array.int64))
        w = array.on_device_of(weights._array if isinstance(weights, Core) else weights, x)
        out = xp.bincount(x, weights=w, minlength=minlength)
        return make(out.astype(w.dtype if w.dtype == array.float32 else array.float64))

    def histogram(
        self: TensorSelf,
        bins: Any = 100,
        *,
        range: Any = None,
        weight: Any = None,
        density: bool = False,
    ) -> Histogram:
        """Counts (or densities) in ``bins`` equal bins over ``range`` (the data's min and max
        by default), or between the edges of a 1-D tensor ``bins``; the last bin holds its
        right edge. Both in this tensor's floating dtype."""
        need_float(self, "histogram")
        edges = bins._array if isinstance(bins, Core) else bins
        w = weight._array if isinstance(weight, Core) else weight
        hist, edges = xp.histogram(self._array, edges, range=range, weights=w, density=density)
        as_dtype = self._array.dtype
        return Histogram(make(hist.astype(as_dtype)), make(edges.astype(as_dtype)))

    def histc(self: TensorSelf, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
        """Counts in ``bins`` equal bins over [min, max] (the data's own when min == max); values
        outside are left out."""
        need_float(self, "histc")
        lo, hi = (min, max) if min != max else (self._array.min(), self._array.max())
        if lo == hi:  # every value equal: PyTorch widens the range by one either side
            lo, hi = lo - 1, hi + 1
        hist, _ = xp.histogram(self._array, bins, range=(lo, hi))
        return make(hist.astype(self._array.dtype))

    def multinomial(
        self: TensorSelf, num_samples: int, replacement: bool = False, *, generator: Any = None
    ) -> Tensor:
        """Category indices drawn with probabilities proportional to this tensor's weights
        (the last dim; 1-D: one distribution, 2-D: one per row): (num_samples,) or (rows,
        num_samples), int64. Without replacement, each index at most once per row, those of
        weight 0 only after every other one, as PyTorch's."""
        if vmap[0] is not None:  # inside vmap: the draw may be batched (random_batching.py)
            drawn = vmap[0]("multinomial", self, num_samples, replacement, generator=generator)
            if drawn is not None:
                return drawn
        w = self._array
        if w.ndim not in (1, 2) or w.dtype.kind != "f":
            raise ValueError(
                f"multinomial: input must be a 1-D or 2-D floating-point tensor of weights; got "
                f"shape {self.shape} and dtype {self.dtype}"
            )
        n = positive_int(num_samples, "num_samples", "multinomial")
        rows = w.reshape(-1, w.shape[-1])  # (rows, categories)
        if not _weights_valid(rows):
            raise ValueError(
                f"multinomial: weights must be finite, non-negative and not all 0 in a row; "
                f"got shape {self.shape}"
            )
        if not replacement and n > rows.shape[1]:
            raise ValueError(
                f"multinomial: cannot draw {n} samples without replacement from "
                f"{rows.shape[1]} categories; got shape {self.shape}"
            )
        weights = array.to_host(rows)
        if weights.dtype != array.float64:
            weights = weights.astype(array.float32, copy=False)
        gen = array.generator(generator, "multinomial")
        # PyTorch draws its keys into a tensor laid out as the weights (dims ordered by
        # stride): a transposed 2-D tensor's column by column
        columns = w.ndim == 2 and abs(w.strides[0]) < abs(w.strides[1])
        out = array.from_host(gen.multinomial(weights, n, replacement, columns), w)
        out = out.astype(array.int64, copy=False)
        return make(out if w.ndim == 2 else out[0])

    def bernoulli(self: TensorSelf, p: Any = None, *, generator: Any = None) -> Tensor:
        """1 with the probability each element gives, else 0, in this tensor's dtype; with a
        number ``p``, draws of p in this tensor's shape and dtype, contiguous (PyTorch's
        second overload)."""
        if vmap[0] is not None:  # inside vmap: the draw may be batched (random_batching.py)
            drawn = vmap[0]("bernoulli", self, p, generator=generator)
            if drawn is not None:
                return drawn
        if p is not None:
            if isinstance(p, Core) and p.ndim or not isinstance(p, (Core, int, float)):
                raise TypeError(
                    f"bernoulli: p must be a number (or None: this tensor's probabilities); "
                    f"got {type(p).__name__}{f' of shape {p.shape}' if isinstance(p, Core) else ''}"
                )
            return self.new_empty(self.shape).bernoulli_(float(p), generator=generator)
        p = self._array
        if p.dtype.kind != "f":
            raise TypeError(f"bernoulli: needs a floating-point tensor; got dtype {self.dtype}")
        if not ((p >= 0) & (p <= 1)).all():  # NaN fails both
            raise ValueError(
                f"bernoulli: probabilities must be in [0, 1]; got shape {self.shape} with "
                f"values outside"
            )
        # PyTorch's result is contiguous, whatever p's layout, and filled in its order
        draws = array.generator(generator, "bernoulli").bernoulli_probs(
            array.host.ascontiguousarray(array.to_host(p)).reshape(-1)
        )
        return make(array.from_host(draws.astype(p.dtype).reshape(p.shape), p))


def _weights_valid(rows: Any) -> bool:
    """Whether multinomial's (rows, categories) weights are finite, non-negative and not all 0
    in a row: the smallest weight at least 0 (a NaN makes it NaN, which fails), then each
    row's sum in float64 above 0 and finite (an infinity's is not). Two reductions and Python
    comparisons, the weights read twice whatever their number of rows."""
    if not rows.size:
        return True  # no row: nothing drawn
    if not float(rows.min()) >= 0:
        return False
    if rows.dtype == array.float64:  # only a float64 sum of finite weights may overflow
        with array.errstate(over="ignore"):
            totals = rows.sum(axis=1)
    else:
        totals = rows.sum(axis=1, dtype=array.float64)
    low, high = (totals[0], totals[0]) if len(totals) == 1 else (totals.min(), totals.max())
    return bool(0 < low and high < math.inf)


def _drawn(arr: Any) -> Any:
    """The dtype PyTorch's kernels draw a float fill in: float64 for float64, else float32."""
    return array.float64 if arr.dtype == array.float64 else array.float32


def _contiguous(arr: Any) -> bool:
    return bool(arr.flags.c_contiguous)


def in_memory_order(values: Any, like: Any) -> Any:
    """``values`` (of ``like``'s shape, on the host) flattened in ``like``'s memory order."""
    values = array.to_host(values)
    if like.flags.c_contiguous or like.ndim < 2:
        return values.reshape(-1)
    strides = like.strides
    order = sorted(range(like.ndim), key=lambda d: (-abs(strides[d]), d))
    return values.transpose(order).reshape(-1)


def _from_keyword(positional: float, kwargs: dict[str, Any], op: str) -> Any:
    """The value of PyTorch's ``from`` argument: given positionally, or as the one keyword
    ``from``."""
    if set(kwargs) - {"from"}:
        raise TypeError(f"{op}: unexpected keyword arguments {sorted(set(kwargs) - {'from'})}")
    return kwargs.get("from", positional)


class Histogram(NamedTuple):
    """What histogram returns, as PyTorch: the counts and the bins' edges."""

    hist: Tensor
    bin_edges: Tensor
