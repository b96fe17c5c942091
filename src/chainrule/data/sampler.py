"""Samplers: the order in which a DataLoader visits a dataset's indices, and its batches.

Any iterable of indices serves as a DataLoader's ``sampler`` (and any iterable of lists of
indices as its ``batch_sampler``); these are PyTorch's named ones, so code that builds them
ports unchanged. Random draws come from a Generator (None: chainrule's global one,
which ``cr.manual_seed`` seeds) as PyTorch's draw, so the same seed gives PyTorch's orders.
Samplers draw as they are iterated, never all ``num_samples`` indices at once.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any

from .. import array
from ..arguments import is_int, positive_int
from ..array.torch_streams import cumulative_bins, leftmost_bin
from ..tensor import Tensor
from .dataset import generator_of

xp = array.host  # indices and seeds are drawn and kept on the host

# Indices drawn at a time with replacement (PyTorch draws 32): 8 KiB held, and 60000 draws
# take 1.7 ms where 32 at a time take 11 ms (NumPy's fixed cost per call, 5 us).
CHUNK = 1024


class Sampler:
    """The base of samplers: ``__iter__`` yields indices; ``__len__`` is optional."""

    def __init__(self, data_source: Any = None) -> None:
        pass  # PyTorch's signature; its base stores nothing either

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


def pass_generator(generator: Any, op: str) -> Any:
    """The Generator one pass of a sampler draws from: ``generator``, or (None) a fresh one
    seeded by one int64 ``random_()`` from chainrule's global generator, as PyTorch's
    RandomSampler does, so that whatever else draws from the global generator while a
    DataLoader pulls indices lazily does not change them."""
    if generator is not None:
        return generator_of(generator, op)
    return array.Generator().manual_seed(generator_of(None, op).integers(2**63))


def batch_count(n: int, batch_size: int, drop_last: bool) -> int:
    """How many batches of ``batch_size`` n samples make, a short last one dropped or not."""
    return n // batch_size if drop_last else -(-n // batch_size)


def _bool(value: Any, name: str, op: str, error: type[Exception] = ValueError) -> None:
    if not isinstance(value, bool):
        raise error(f"{op}: {name} must be True or False; got {name}={value!r}")


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """The indices of ``data_source`` in a random order, a fresh one each pass.

    Without ``replacement``, each index once per permutation: ``num_samples`` (default
    ``len(data_source)``) beyond the length chains further permutations, the last one cut
    short, each drawn when the one before is used up. With ``replacement``,
    ``num_samples`` independent uniform draws, made ``CHUNK`` at a time as the pass goes
    (so a pass of 10**10 samples holds 1024 at a time). Each pass draws from ``generator``,
    or (None) from a generator of its own seeded by one draw from the global one when the
    pass begins (``iter``), as in PyTorch.
    """

    def __init__(
        self,
        data_source: Sized,
        replacement: bool = False,
        num_samples: int | None = None,
        generator: Any = None,
    ) -> None:
        op = "RandomSampler"
        _bool(replacement, "replacement", op, TypeError)  # PyTorch's type here
        generator_of(generator, op)  # fail now on a wrong kind, not at the first pass
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        positive_int(self.num_samples, "num_samples", op)

    @property
    def num_samples(self) -> int:
        """How many indices a pass yields (read afresh: the dataset may grow)."""
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n, total = len(self.data_source), self.num_samples
        if n == 0:
            raise ValueError(f"RandomSampler: cannot draw {total} indices from an empty dataset")
        return self._pass(n, total)

    def _pass(self, n: int, total: int) -> Iterator[int]:
        # a generator function: the seed is drawn at the first index pulled, as PyTorch's
        rng = pass_generator(self.generator, "RandomSampler")
        if self.replacement:
            yield from _draws(lambda k: rng.integers(0, n, k), total)
        else:
            yield from _permutations(rng, n, total)

    def __len__(self) -> int:
        return self.num_samples


def _draws(draw: Any, total: int) -> Iterator[int]:
    """``total`` indices, ``draw(k)`` giving the next k of them, CHUNK at a time."""
    chunks = (draw(min(CHUNK, total - start)).tolist() for start in range(0, total, CHUNK))
    return itertools.chain.from_iterable(chunks)


def _permutations(rng: Any, n: int, total: int) -> Iterator[int]:
    """``total`` indices from permutations of n drawn one after another, the last cut short."""
    perms = (rng.permutation(n)[: total - start].tolist() for start in range(0, total, n))
    return itertools.chain.from_iterable(perms)


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a random order, a fresh one each pass."""

    def __init__(self, indices: Sequence[int], generator: Any = None) -> None:
        generator_of(generator, "SubsetRandomSampler")
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[Any]:
        # drawn at the first index pulled, as PyTorch's
        order = generator_of(self.generator, "SubsetRandomSampler").permutation(len(self.indices))
        yield from (self.indices[i] for i in order.tolist())

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices of ``weights`` drawn with probabilities proportional to the
    weights (which need not sum to 1), with ``replacement`` or without. With, they are
    drawn ``CHUNK`` at a time as the pass goes; without, each index comes at most once, so
    at most ``len(weights)`` are drawn; as in PyTorch, once the positive weights are used
    up, the indices of zero weight follow in a random order. Each pass draws from
    ``generator``, or (None) as RandomSampler's: from its own, seeded from the global one."""

    def __init__(
        self,
        weights: Sequence[float],
        num_samples: int,
        replacement: bool = True,
        generator: Any = None,
    ) -> None:
        op = "WeightedRandomSampler"
        positive_int(num_samples, "num_samples", op)
        _bool(replacement, "replacement", op)
        generator_of(generator, op)
        w = xp.asarray(
            array.to_host(weights._array) if isinstance(weights, Tensor) else weights,
            dtype=array.float64,
        )
        if w.ndim != 1:
            raise ValueError(f"{op}: weights must be 1-D; got shape {w.shape}")
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        op = "WeightedRandomSampler"
        w = self.weights
        if not xp.isfinite(w).all() or (w < 0).any():
            raise RuntimeError(f"{op}: weights must be finite and non-negative; got {w.tolist()}")
        if not (w > 0).any():
            raise RuntimeError(f"{op}: weights must not all be 0; got {w.tolist()}")
        n, total = len(w), self.num_samples
        if not self.replacement and total > n:
            raise RuntimeError(
                f"{op}: without replacement, num_samples={total} draws need as many weights; "
                f"got {n}"
            )
        return self._pass(w, total)

    def _pass(self, w: Any, total: int) -> Iterator[int]:
        # PyTorch's torch.multinomial(weights, num_samples, replacement), drawn at the first
        # index pulled; more than one replaced draw goes CHUNK at a time (the same draws)
        gen = generator_of(self.generator, "WeightedRandomSampler")
        if self.replacement and total > 1:
            bins = cumulative_bins(w)
            yield from _draws(lambda k: leftmost_bin(bins, gen.uniform(k, array.float64)), total)
        else:
            yield from gen.multinomial(w[None], total, self.replacement)[0].tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """The indices of ``sampler`` (or the items of any iterable) in lists of
    ``batch_size``; ``drop_last`` drops a final short one. A DataLoader takes it as
    ``batch_sampler``, and batches a stream's samples with it."""

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        positive_int(batch_size, "batch_size", "BatchSampler")
        _bool(drop_last, "drop_last", "BatchSampler")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[Any]]:
        items = iter(self.sampler)
        while batch := list(itertools.islice(items, self.batch_size)):
            if self.drop_last and len(batch) < self.batch_size:
                return
            yield batch

    def __len__(self) -> int:
        return batch_count(len(self.sampler), self.batch_size, self.drop_last)  # type: ignore[arg-type]


class DistributedSampler(Sampler):
    """Rank ``rank``'s share of ``dataset``'s indices when ``num_replicas`` processes each
    train on their own (as PyTorch's): the indices (a permutation drawn from ``seed +
    epoch`` when ``shuffle``) are padded by repeating the first ones up to a multiple of
    ``num_replicas`` (or cut down to one, with ``drop_last``), and rank r takes every
    ``num_replicas``-th from position r. Every rank draws the same permutation, so the
    shares are disjoint; call ``set_epoch(epoch)`` before each epoch for a new one. The
    permutation is NumPy's, not PyTorch's (the partition rule is the same); without
    shuffle the shares equal PyTorch's. ``num_replicas`` and ``rank`` default to
    chainrule.distributed's world size and rank."""

    def __init__(
        self,
        dataset: Sized,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        op = "DistributedSampler"
        if num_replicas is None or rank is None:
            from .. import distributed

            if not distributed.is_initialized():
                raise RuntimeError(
                    f"{op}: num_replicas and rank default to the process group's, which is "
                    f"not initialized; call chainrule.distributed.init_process_group() or pass "
                    f"them; got num_replicas={num_replicas}, rank={rank}"
                )
            num_replicas = distributed.get_world_size() if num_replicas is None else num_replicas
            rank = distributed.get_rank() if rank is None else rank
        positive_int(num_replicas, "num_replicas", op)
        if not is_int(rank) or not 0 <= rank < num_replicas:
            raise ValueError(
                f"{op}: rank must be in the interval [0, {num_replicas - 1}]; got rank={rank}"
            )
        _bool(shuffle, "shuffle", op)
        _bool(drop_last, "drop_last", op)
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.shuffle = shuffle
        self.seed = seed
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)  # the rest dropped
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            gen = array.Generator().manual_seed(self.seed + self.epoch)
            indices = gen.permutation(n).tolist()
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[: self.total_size]
        else:  # pad with the first indices, repeated as often as needed
            padding = self.total_size - len(indices)
            indices += (indices * math.ceil(padding / max(len(indices), 1)))[:padding]
        return iter(indices[self.rank : self.total_size : self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The epoch the next pass draws its permutation for (with ``seed``), the same on
        every rank."""
        self.epoch = epoch
