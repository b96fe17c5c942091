"""DataLoader: batches of a dataset, optionally shuffled, and the default collate.

What a sample is belongs to the dataset (dataset.py); this module only groups samples.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from .. import backend as B
from ..tensor import Tensor, stack
from .dataset import Subset, TensorDataset, _generator

xp = B.xp


def default_collate(batch: Sequence[Any]) -> Any:
    """Stack a list of samples into one batch, following the structure of the first.

    Tensors and NumPy arrays are stacked into a Tensor with a new leading dim; Python ints
    become an int64 Tensor, floats a float32 Tensor (chainrule's default float; PyTorch
    makes float64 here), bools a bool Tensor, NumPy scalars keep their dtype. Dicts collate
    per key, named tuples per field, other tuples and lists per position into a list (as
    PyTorch); strings and anything else are returned as a list.
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        if any(t.requires_grad for t in batch):
            return stack(batch)  # recorded, so gradients reach the samples
        return Tensor._make(xp.stack([t.data for t in batch]))
    if isinstance(elem, (xp.ndarray, xp.generic)):
        return Tensor._make(xp.stack(batch))
    if isinstance(elem, bool):
        return Tensor._make(xp.array(batch, dtype=B.bool_))
    if isinstance(elem, int):
        return Tensor._make(xp.array(batch, dtype=B.int64))
    if isinstance(elem, float):
        return Tensor._make(xp.array(batch, dtype=B.default_float))
    if isinstance(elem, Mapping):
        return {key: default_collate([sample[key] for sample in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(field)) for field in zip(*batch, strict=True)))
    if isinstance(elem, (tuple, list)):
        if any(len(sample) != len(elem) for sample in batch):
            raise ValueError(
                f"default_collate: the samples of a batch differ in length; got lengths "
                f"{sorted({len(sample) for sample in batch})}"
            )
        return [default_collate(list(field)) for field in zip(*batch, strict=True)]
    return list(batch)


class DataLoader:
    """Iterate over ``dataset`` in batches of ``batch_size`` samples.

    With ``shuffle`` each pass draws a fresh permutation from ``generator`` (a NumPy
    Generator; None means chainrule's global one, so ``cr.manual_seed`` makes the order
    reproducible). ``drop_last`` drops a final short batch. ``collate_fn`` turns a list of
    samples into a batch (``default_collate`` when None). As PyTorch's: ``sampler`` (any
    iterable of indices, read afresh each pass) replaces the order, ``batch_sampler`` (any
    iterable of lists of indices) the whole batching. Batches are loaded in this process,
    what PyTorch does with ``num_workers=0``; a larger ``num_workers`` gives the same
    batches in the same order, and ``pin_memory`` has nothing to pin on the CPU.

    A TensorDataset (or a Subset of one) with the default collate is batched by one fancy
    index per tensor per batch instead of sample by sample; the batches are the same.
    """

    def __init__(
        self,
        dataset: Any,
        batch_size: int = 1,
        shuffle: bool = False,
        sampler: Iterable[int] | None = None,
        batch_sampler: Iterable[Sequence[int]] | None = None,
        num_workers: int = 0,
        collate_fn: Callable[[list[Any]], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        generator: Any = None,
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"DataLoader: batch_size must be a positive int; got {batch_size!r}")
        if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError(
                f"DataLoader: num_workers must be a non-negative int; got {num_workers!r}"
            )
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler is mutually exclusive with shuffle")
        if batch_sampler is not None and (
            batch_size != 1 or shuffle or sampler is not None or drop_last
        ):
            raise ValueError(
                "DataLoader: batch_sampler is mutually exclusive with batch_size, shuffle, "
                "sampler and drop_last"
            )
        _generator(generator, "DataLoader")  # fail now on a wrong kind, not at the first pass
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self.num_workers, self.pin_memory = num_workers, pin_memory
        self.drop_last = drop_last
        self.generator = generator
        self.collate_fn = collate_fn

    def __len__(self) -> int:
        if self.batch_sampler is not None:
            return len(self.batch_sampler)  # type: ignore[arg-type]
        n = len(self.dataset if self.sampler is None else self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def _batches(self) -> Iterator[Any]:
        """The indices of each batch, as an array."""
        if self.batch_sampler is not None:
            for batch in self.batch_sampler:
                yield xp.asarray(list(batch), dtype=B.int64)
            return
        if self.sampler is not None:
            order = xp.asarray(list(self.sampler), dtype=B.int64)
        elif self.shuffle:
            order = _generator(self.generator, "DataLoader").permutation(len(self.dataset))
        else:
            order = xp.arange(len(self.dataset))
        n = len(order)
        stop = n - n % self.batch_size if self.drop_last else n
        for start in range(0, stop, self.batch_size):
            yield order[start : start + self.batch_size]

    def __iter__(self) -> Iterator[Any]:
        source = _tensors_of(self.dataset) if self.collate_fn is None else None
        for idx in self._batches():
            if source is not None:
                tensors, positions = source
                rows = idx if positions is None else positions[idx]
                yield [_take(t, rows) for t in tensors]
            else:
                collate = self.collate_fn or default_collate
                yield collate([self.dataset[int(i)] for i in idx])


def _tensors_of(dataset: Any) -> tuple[tuple[Tensor, ...], Any] | None:
    """For a TensorDataset, possibly under Subsets: its tensors and the row of each sample
    (None for all rows in order); None for any other dataset."""
    positions = None
    while isinstance(dataset, Subset):
        rows = xp.asarray(dataset.indices, dtype=B.int64)
        positions = rows if positions is None else rows[positions]
        dataset = dataset.dataset
    if type(dataset) is not TensorDataset:  # a subclass may override __getitem__
        return None
    return dataset.tensors, positions


def _take(t: Tensor, rows: Any) -> Tensor:
    return t[rows] if t.requires_grad else Tensor._make(t.data[rows])
