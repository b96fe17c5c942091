"""DataLoader: batches of a dataset, optionally shuffled, and the default collate.

What a sample is belongs to the dataset (dataset.py); this module only groups samples.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
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
    samples into a batch (``default_collate`` when None). A TensorDataset (or a Subset of
    one) with the default collate is batched by one fancy index per tensor per batch
    instead of sample by sample; the batches are the same.
    """

    def __init__(
        self,
        dataset: Any,
        batch_size: int = 1,
        shuffle: bool = False,
        drop_last: bool = False,
        generator: Any = None,
        collate_fn: Callable[[list[Any]], Any] | None = None,
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"DataLoader: batch_size must be a positive int; got {batch_size!r}")
        _generator(generator, "DataLoader")  # fail now on a wrong kind, not at the first pass
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.generator = generator
        self.collate_fn = collate_fn

    def __len__(self) -> int:
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __iter__(self) -> Iterator[Any]:
        n = len(self.dataset)
        if self.shuffle:
            order = _generator(self.generator, "DataLoader").permutation(n)
        else:
            order = xp.arange(n)
        stop = n - n % self.batch_size if self.drop_last else n
        source = _tensors_of(self.dataset) if self.collate_fn is None else None
        for start in range(0, stop, self.batch_size):
            idx = order[start : start + self.batch_size]
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
