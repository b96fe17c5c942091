"""Datasets: the indexable protocol and the iterable one, tensors as a dataset, datasets
joined end to end, subsets and random splits.

Batching and shuffling belong to dataloader.py.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from .. import array
from ..tensor import Tensor, as_tensor

xp = array.host  # indices and seeds are drawn and kept on the host


class Dataset:
    """Anything with ``__getitem__(i)`` for ``0 <= i < len(self)`` and ``__len__``."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must define __len__")

    def __add__(self, other: Any) -> Dataset:
        """``a + b``: the samples of a, then those of b."""
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A stream of samples: anything with ``__iter__``, read afresh each pass, in its own
    order. A DataLoader groups consecutive samples into batches; it cannot shuffle or
    sample a stream, and has a length only if the dataset defines ``__len__``."""

    def __iter__(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(
            f"{type(self).__name__} is an IterableDataset: iterate over it, not index it"
        )

    def __len__(self) -> int:
        raise TypeError(f"{type(self).__name__} is an IterableDataset without __len__")

    def __add__(self, other: Any) -> ChainDataset:
        """``a + b``: the stream of a, then that of b."""
        return ChainDataset([self, other])


class ChainDataset(IterableDataset):
    """The streams of ``datasets`` (IterableDatasets) one after another, each read afresh
    each pass; its length is theirs summed, where each has one."""

    def __init__(self, datasets: Iterable[Any]) -> None:
        self.datasets = datasets

    def _streams(self) -> Iterator[IterableDataset]:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise TypeError(
                    f"ChainDataset: chains IterableDatasets only; got {type(d).__name__}"
                )
            yield d

    def __iter__(self) -> Iterator[Any]:
        for d in self._streams():
            yield from d

    def __len__(self) -> int:
        return sum(len(d) for d in self._streams())


class TensorDataset(Dataset):
    """Sample i is ``tuple(t[i] for t in tensors)``; all tensors share their first dim.

    NumPy arrays and nested lists are accepted and turned into Tensors.
    """

    def __init__(self, *tensors: Any) -> None:
        if not tensors:
            raise ValueError("TensorDataset: needs at least one tensor")
        self.tensors = tuple(as_tensor(t) for t in tensors)
        shapes = [tuple(t.shape) for t in self.tensors]
        if any(len(s) == 0 for s in shapes) or len({s[0] for s in shapes}) != 1:
            raise ValueError(
                f"TensorDataset: all tensors must have the same size in dim 0; got shapes {shapes}"
            )

    def __getitem__(self, index: Any) -> tuple[Tensor, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class ConcatDataset(Dataset):
    """The samples of each of ``datasets`` in turn (map-style datasets: anything with
    ``__getitem__`` and ``__len__``); ``cumulative_sizes[k]`` is where dataset k ends."""

    def __init__(self, datasets: Iterable[Any]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: needs at least one dataset; got none")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError(
                    f"ConcatDataset: takes map-style datasets only; got {type(d).__name__}, "
                    f"an IterableDataset"
                )
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int) -> Any:
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"ConcatDataset: index {index} is out of range for {n} samples")
        if index < 0:
            index += n
        k = bisect.bisect_right(self.cumulative_sizes, index)
        return self.datasets[k][index - (self.cumulative_sizes[k - 1] if k else 0)]


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset: Any, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index: int) -> Any:
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Any, lengths: Sequence[float], generator: Any = None) -> list[Subset]:
    """Split ``dataset`` into non-overlapping random Subsets of the given lengths.

    ``lengths`` are either counts summing to ``len(dataset)`` or fractions summing to 1;
    fractions are floored and the samples left over go one each to the first subsets, in
    order (PyTorch's rule). The permutation is drawn from ``generator`` (a NumPy Generator;
    None means chainrule's global one, which ``cr.manual_seed`` seeds).
    """
    n = len(dataset)
    lengths = list(lengths)
    if not lengths:
        raise ValueError("random_split: lengths is empty")
    if (
        math.isclose(sum(lengths), 1)
        and sum(lengths) <= 1
        and not all(isinstance(k, int) for k in lengths)
    ):
        if any(not 0 <= f <= 1 for f in lengths):
            raise ValueError(f"random_split: fractions must lie in [0, 1]; got {lengths}")
        counts = [math.floor(n * f) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
    else:
        if any(not isinstance(k, (int, xp.integer)) or k < 0 for k in lengths):
            raise ValueError(
                f"random_split: lengths must be non-negative ints or fractions summing to 1; "
                f"got {lengths}"
            )
        counts = [int(k) for k in lengths]
    if sum(counts) != n:
        raise ValueError(
            f"random_split: lengths must sum to the dataset's length; got {lengths} (sum "
            f"{sum(counts)}) for a dataset of {n}"
        )
    order = generator_of(generator, "random_split").permutation(n).tolist()
    out, start = [], 0
    for k in counts:
        out.append(Subset(dataset, order[start : start + k]))
        start += k
    return out


def generator_of(generator: Any, op: str) -> Any:
    """The NumPy Generator to draw from: behind the one given, or chainrule's global one."""
    return array.generator(generator, op)
