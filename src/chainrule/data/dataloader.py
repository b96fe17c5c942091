"""DataLoader: batches of a dataset, optionally shuffled, and the default collate.

What a sample is belongs to the dataset (dataset.py); this module only groups samples.
"""

from __future__ import annotations

import copy
import multiprocessing
from collections.abc import (
    Callable,
    Iterable,
    Iterator,
    Mapping,
    MutableMapping,
    MutableSequence,
    Sequence,
)
from typing import Any

from .. import backend
from ..arguments import positive_int
from ..functions import stack
from ..tensor import Tensor
from .dataset import IterableDataset, Subset, TensorDataset, generator_of
from .sampler import BatchSampler, batch_count

xp = backend.xp


def default_collate(batch: Sequence[Any]) -> Any:
    """Stack a list of samples into one batch, following the structure of the first.

    Tensors and NumPy arrays are stacked into a Tensor with a new leading dim; Python
    numbers become one Tensor whose dtype all of them decide: float32 if any is a float
    (chainrule's default float; PyTorch makes float64 of all-float batches), else int64 if
    any is an int, else bool; NumPy scalars keep their dtype; None is an error. Dicts collate
    per key, named tuples per field, other tuples and lists per position into a list (as
    PyTorch); strings and anything else are returned as a list.
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        if any(t.requires_grad for t in batch):
            return stack(batch)  # recorded, so gradients reach the samples
        return Tensor._make(xp.stack([t._array for t in batch]))
    if isinstance(elem, (xp.ndarray, xp.generic)):
        return Tensor._make(xp.stack(batch))
    if isinstance(elem, (bool, int, float)):
        return Tensor._make(xp.array(batch, dtype=_number_dtype(batch)))
    if elem is None:
        raise TypeError(
            "default_collate: a batch must hold tensors, NumPy arrays, numbers, dicts or lists; "
            "found NoneType"
        )
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


def _number_dtype(batch: Sequence[Any]) -> Any:
    """The dtype of a batch of Python numbers, from all of them as torch.tensor decides:
    any float makes the default float, else any int int64, else bool."""
    kinds = {type(x) for x in batch}
    if not kinds <= {bool, int, float}:
        odd = sorted(k.__name__ for k in kinds - {bool, int, float})
        raise TypeError(
            f"default_collate: a batch of numbers holds other kinds too; got {', '.join(odd)}"
        )
    if float in kinds:
        return backend.default_float
    return backend.int64 if int in kinds else backend.bool_


def default_convert(data: Any) -> Any:
    """One sample as a DataLoader without batching (``batch_size=None``) yields it: NumPy
    arrays and scalars of numbers or bools become Tensors (an array's memory shared, as by
    PyTorch's as_tensor), also inside dicts, named tuples, tuples (which become lists, as
    in PyTorch) and other sequences; Tensors, Python numbers, strings, arrays of anything
    else (strings, objects, dates) and other objects are left as they are."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, (xp.ndarray, xp.generic)):
        return Tensor._make(xp.asarray(data)) if data.dtype.kind in "biufc" else data
    if isinstance(data, Mapping):
        converted = {key: default_convert(data[key]) for key in data}
        try:  # the same kind of mapping, keeping whatever else it carries
            if isinstance(data, MutableMapping):
                clone = copy.copy(data)
                clone.update(converted)
                return clone
            return type(data)(converted)  # type: ignore[call-arg]
        except TypeError:
            return converted
    if isinstance(data, tuple):
        if hasattr(data, "_fields"):  # a named tuple
            return type(data)(*(default_convert(d) for d in data))
        return [default_convert(d) for d in data]
    if isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        items = [default_convert(d) for d in data]
        try:
            if isinstance(data, MutableSequence):
                same = copy.copy(data)
                for i, item in enumerate(items):
                    same[i] = item
                return same
            return type(data)(items)  # type: ignore[call-arg]
        except TypeError:  # e.g. a range
            return items
    return data


def get_worker_info() -> None:
    """None: what PyTorch's gives outside a worker process, and chainrule's DataLoader loads
    every batch in the calling process. So an IterableDataset that splits its stream by
    worker sees the whole stream, once."""
    return None


class DataLoader:
    """Iterate over ``dataset`` in batches of ``batch_size`` samples.

    With ``shuffle`` each pass draws a fresh permutation from ``generator`` (a NumPy
    Generator; None means chainrule's global one, so ``cr.manual_seed`` makes the order
    reproducible). ``drop_last`` drops a final short batch. ``collate_fn`` turns a list of
    samples into a batch (``default_collate`` when None). As PyTorch's: ``sampler`` (any
    iterable of indices, read afresh each pass) replaces the order, ``batch_sampler`` (any
    iterable of lists of indices) the whole batching (``batch_size`` then reads None and
    ``drop_last`` False). ``batch_size=None`` turns batching off: each sample comes alone,
    through ``collate_fn`` if given, else ``default_convert``. An IterableDataset is read
    in its own order, ``batch_size`` samples at a time; it takes no shuffle, sampler or
    batch_sampler, and has a length only if it defines one. Batches are loaded in this process,
    what PyTorch does with ``num_workers=0``; a larger ``num_workers`` gives the same
    batches in the same order, and ``pin_memory`` has nothing to pin on the CPU.

    PyTorch's worker options are checked as PyTorch checks them and kept under its names
    (``prefetch_factor`` becomes 2 when None and ``num_workers > 0``), but no worker process
    exists: ``timeout`` has no worker to wait for, ``worker_init_fn`` is never called (as in
    PyTorch with ``num_workers=0``), ``multiprocessing_context``, ``prefetch_factor``,
    ``persistent_workers`` and ``pin_memory_device`` change nothing, and batches always come
    in order, whatever ``in_order`` says. As in PyTorch, iterating fails (AssertionError) if
    ``timeout`` is nonzero with ``num_workers=0``, or ``prefetch_factor`` is not positive
    with ``num_workers > 0``.

    A TensorDataset (or a Subset of one) with the default collate is batched by one fancy
    index per tensor per batch instead of sample by sample; the batches are the same.
    """

    def __init__(
        self,
        dataset: Any,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Iterable[int] | None = None,
        batch_sampler: Iterable[Sequence[int]] | None = None,
        num_workers: int = 0,
        collate_fn: Callable[[list[Any]], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context: Any = None,
        generator: Any = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        positive_int(batch_size, "batch_size", "DataLoader", none_ok=True)
        positive_int(num_workers, "num_workers", "DataLoader", zero_ok=True)
        _check_non_negative(timeout, "timeout")
        if prefetch_factor is not None and num_workers == 0:
            raise ValueError(
                f"DataLoader: prefetch_factor needs num_workers > 0; got "
                f"prefetch_factor={prefetch_factor!r} and num_workers=0"
            )
        if prefetch_factor is None and num_workers > 0:
            prefetch_factor = 2  # PyTorch's default, stored as PyTorch stores it
        elif prefetch_factor is not None:
            _check_non_negative(prefetch_factor, "prefetch_factor")
        if persistent_workers and num_workers == 0:
            raise ValueError(
                f"DataLoader: persistent_workers needs num_workers > 0; got "
                f"persistent_workers={persistent_workers!r} and num_workers=0"
            )
        multiprocessing_context = _context(multiprocessing_context, num_workers)
        if isinstance(dataset, IterableDataset):  # a stream has its own order
            for name, value, unset in (
                ("shuffle", shuffle, shuffle in (None, False)),
                ("sampler", sampler, sampler is None),
                ("batch_sampler", batch_sampler, batch_sampler is None),
            ):
                if not unset:
                    raise ValueError(
                        f"DataLoader: an IterableDataset sets its own order, so {name} must "
                        f"be left unset; got {name}={value!r}"
                    )
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler is mutually exclusive with shuffle")
        if batch_sampler is not None and (
            batch_size != 1 or shuffle or sampler is not None or drop_last
        ):
            raise ValueError(
                "DataLoader: batch_sampler is mutually exclusive with batch_size, shuffle, "
                "sampler and drop_last"
            )
        if batch_sampler is not None:  # stored as PyTorch stores them
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError(
                "DataLoader: batch_size=None turns batching off, so drop_last must be False"
            )
        generator_of(generator, "DataLoader")  # fail now on a wrong kind, not at the first pass
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self.num_workers, self.pin_memory = num_workers, pin_memory
        self.timeout, self.worker_init_fn = timeout, worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.prefetch_factor, self.persistent_workers = prefetch_factor, persistent_workers
        self.pin_memory_device, self.in_order = pin_memory_device, in_order
        self.drop_last = drop_last
        self.generator = generator
        self.collate_fn = collate_fn

    def __len__(self) -> int:
        if self.batch_sampler is not None:
            return len(self.batch_sampler)  # type: ignore[arg-type]
        n = len(self.dataset if self.sampler is None else self.sampler)  # type: ignore[arg-type]
        if self.batch_size is None:
            return n
        return batch_count(n, self.batch_size, self.drop_last)

    def _order(self) -> Any:
        """The indices of one pass over a map-style dataset, as an array."""
        if self.sampler is not None:
            return xp.asarray(list(self.sampler), dtype=backend.int64)
        if self.shuffle:
            return generator_of(self.generator, "DataLoader").permutation(len(self.dataset))
        return xp.arange(len(self.dataset))

    def _batches(self, size: int) -> Iterator[Any]:
        """The indices of each batch of a map-style dataset, as an array."""
        if self.batch_sampler is not None:
            for batch in self.batch_sampler:
                yield xp.asarray(list(batch), dtype=backend.int64)
            return
        order = self._order()
        n = len(order)
        stop = n - n % size if self.drop_last else n
        for start in range(0, stop, size):
            yield order[start : start + size]

    def __iter__(self) -> Iterator[Any]:
        # PyTorch's iterators refuse these when created, so iter() fails, not the first next()
        if self.num_workers == 0 and self.timeout != 0:
            raise AssertionError(
                f"DataLoader: a nonzero timeout needs num_workers > 0; got "
                f"timeout={self.timeout!r} and num_workers=0"
            )
        prefetch = self.prefetch_factor
        if self.num_workers > 0 and prefetch is not None and prefetch <= 0:
            raise AssertionError(
                f"DataLoader: prefetch_factor must be positive with num_workers > 0; got "
                f"prefetch_factor={prefetch!r} and num_workers={self.num_workers}"
            )
        return self._load()

    def _load(self) -> Iterator[Any]:
        stream = isinstance(self.dataset, IterableDataset)
        size = self.batch_size  # None with a batch_sampler, which does the batching
        if size is None:
            if self.batch_sampler is None:  # no batching
                convert = self.collate_fn or default_convert
                dataset = self.dataset
                samples = iter(dataset) if stream else (dataset[int(i)] for i in self._order())
                for sample in samples:
                    yield convert(sample)
                return
        elif stream:
            collate = self.collate_fn or default_collate
            for batch in BatchSampler(self.dataset, size, bool(self.drop_last)):
                yield collate(batch)
            return
        source = _tensors_of(self.dataset) if self.collate_fn is None else None
        for idx in self._batches(size or 0):  # (size is unused with a batch_sampler)
            if source is not None:
                tensors, positions = source
                rows = idx if positions is None else positions[idx]
                yield [_take(t, rows) for t in tensors]
            else:
                collate = self.collate_fn or default_collate
                yield collate([self.dataset[int(i)] for i in idx])


def _check_non_negative(value: Any, name: str) -> None:
    try:
        negative = value < 0
    except TypeError:  # PyTorch's own comparison fails with TypeError too
        raise TypeError(f"DataLoader: {name} must be a number; got {value!r}") from None
    if negative:
        raise ValueError(f"DataLoader: {name} must be non-negative; got {value!r}")


def _context(context: Any, num_workers: int) -> Any:
    """The multiprocessing context PyTorch would store: a start method's name becomes its
    context (the same object torch.multiprocessing.get_context returns)."""
    if context is None:
        return None
    if num_workers == 0:
        raise ValueError(
            f"DataLoader: multiprocessing_context needs num_workers > 0; got "
            f"multiprocessing_context={context!r} and num_workers=0"
        )
    if isinstance(context, str):
        methods = multiprocessing.get_all_start_methods()
        if context not in methods:
            raise ValueError(
                f"DataLoader: multiprocessing_context must be a start method in {methods}; "
                f"got {context!r}"
            )
        context = multiprocessing.get_context(context)
    if not isinstance(context, multiprocessing.context.BaseContext):
        raise TypeError(
            f"DataLoader: multiprocessing_context must be a multiprocessing context or a "
            f"start method's name; got {context!r}"
        )
    return context


def _tensors_of(dataset: Any) -> tuple[tuple[Tensor, ...], Any] | None:
    """For a TensorDataset, possibly under Subsets: its tensors and the row of each sample
    (None for all rows in order); None for any other dataset."""
    positions = None
    while isinstance(dataset, Subset):
        rows = xp.asarray(dataset.indices, dtype=backend.int64)
        positions = rows if positions is None else rows[positions]
        dataset = dataset.dataset
    if type(dataset) is not TensorDataset:  # a subclass may override __getitem__
        return None
    return dataset.tensors, positions


def _take(t: Tensor, rows: Any) -> Tensor:
    return t[rows] if t.requires_grad else Tensor._make(t._array[rows])
