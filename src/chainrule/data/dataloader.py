"""DataLoader: batches of a dataset, optionally shuffled, and the default collate.

What a sample is belongs to the dataset (dataset.py); this module only groups samples.
Worker processes (``num_workers > 0``) belong to worker.py.
"""

from __future__ import annotations

import copy
import itertools
import multiprocessing
import warnings
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

from .. import array
from ..arguments import positive_int
from ..functions import stack
from ..tensor import Tensor
from .dataset import IterableDataset, Subset, TensorDataset, generator_of
from .sampler import BatchSampler, batch_count, pass_generator
from .worker import END, WorkerIterator

xp = array.xp
hp = array.host  # indices are drawn and kept on the host; samples there are moved once


def default_collate(batch: Sequence[Any]) -> Any:
    """Stack a list of samples into one batch, following the structure of the first.

    Tensors and NumPy arrays are stacked into a Tensor with a new leading dim (samples of
    different shapes are refused, naming the shapes; a Tensor among NumPy arrays counts as
    its array, a NumPy array among Tensors is refused, as by PyTorch); NumPy arrays of
    strings, objects or dates are refused (TypeError), as by PyTorch, and NumPy string
    scalars come back as a list. Python numbers become one Tensor whose dtype all of them
    decide: float32 if any is a float (chainrule's default float; PyTorch makes float64 of
    all-float batches), else int64 if any is an int, else bool; NumPy scalars keep their
    dtype; None is an error. Dicts collate per key, named tuples per field, other tuples and
    lists per position into a list (as PyTorch); strings and anything else are returned as
    a list.
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        for i, t in enumerate(batch):
            if not isinstance(t, Tensor):  # PyTorch's torch.stack refuses these too
                raise TypeError(
                    f"default_collate: expected a Tensor as element {i} of the batch, as "
                    f"element 0 is; got {type(t).__module__}.{type(t).__name__}"
                )
        _same_shapes([t.shape for t in batch])
        if any(t.requires_grad for t in batch):
            return stack(batch)  # recorded, so gradients reach the samples
        return Tensor._make(xp.stack([t._array for t in batch]))
    if isinstance(elem, (hp.str_, hp.bytes_)):  # NumPy's strings are strings, as in PyTorch
        return list(batch)
    if isinstance(elem, (hp.ndarray, hp.generic, array.ndarray)):
        if elem.dtype.kind not in "biufc":  # strings, objects, dates: PyTorch refuses them
            raise TypeError(
                f"default_collate: a batch must hold tensors, NumPy arrays of numbers, numbers, "
                f"dicts or lists; found an array of dtype {elem.dtype}"
            )
        host = isinstance(elem, (hp.ndarray, hp.generic))  # samples on the host
        # a Tensor among the arrays is taken as its array, as PyTorch's as_tensor takes it
        arrays = [
            (array.to_host(x._array) if host else x._array) if isinstance(x, Tensor) else x
            for x in batch
        ]
        _same_shapes([hp.shape(a) for a in arrays])
        # on the host, a CPU tensor, as PyTorch's collate makes
        return Tensor._make(hp.stack(arrays) if host else xp.stack(arrays))
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


def _same_shapes(shapes: Sequence[tuple[int, ...]]) -> None:
    for i, shape in enumerate(shapes):
        if tuple(shape) != tuple(shapes[0]):
            raise ValueError(
                f"default_collate: the samples of a batch differ in shape; got shape "
                f"{tuple(shapes[0])} at entry 0 and {tuple(shape)} at entry {i}"
            )


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
        return array.get_default_dtype()
    return array.int64 if int in kinds else array.bool_


def default_convert(data: Any) -> Any:
    """One sample as a DataLoader without batching (``batch_size=None``) yields it: NumPy
    arrays and scalars of numbers or bools become Tensors (an array's memory shared, as by
    PyTorch's as_tensor), also inside dicts, named tuples, tuples (which become lists, as
    in PyTorch) and other sequences; Tensors, Python numbers, strings, arrays of anything
    else (strings, objects, dates) and other objects are left as they are."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, (hp.ndarray, hp.generic)):
        return Tensor._make(hp.asarray(data)) if data.dtype.kind in "biufc" else data
    if isinstance(data, array.ndarray):
        return Tensor._make(data) if data.dtype.kind in "biufc" else data
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


class DataLoader:
    """Iterate over ``dataset`` in batches of ``batch_size`` samples.

    With ``shuffle`` each pass draws a fresh permutation from ``generator`` (a NumPy
    Generator; None means chainrule's global one, so ``cr.manual_seed`` makes the order
    reproducible). ``drop_last`` drops a final short batch. ``collate_fn`` turns a list of
    samples into a batch (``default_collate`` when None). As PyTorch's: ``sampler`` (any
    iterable of indices, read afresh each pass, and pulled from as the batches are made)
    replaces the order, ``batch_sampler`` (any iterable of lists of indices) the whole
    batching (``batch_size`` then reads None and ``drop_last`` False). ``batch_size=None``
    turns batching off: each sample comes alone, through ``collate_fn`` if given, else
    ``default_convert``. An IterableDataset is read in its own order, ``batch_size``
    samples at a time; it takes no shuffle, sampler or batch_sampler, and has a length only
    if it defines one. ``pin_memory=True`` pins nothing: it warns (as PyTorch does on a
    machine without an accelerator), and batches stay in ordinary memory, copied to a GPU
    from there where there is one.

    ``num_workers=0`` loads every batch in this process. ``num_workers > 0`` loads them in
    that many worker processes (worker.py), as PyTorch does: started from
    ``multiprocessing_context`` (None: the platform's default start method) when a pass
    begins, each is sent batches of indices in turn, ``prefetch_factor`` (default 2) per
    worker in flight, and the batches come back in the sampler's order (with ``in_order``
    False, as they are ready). Worker i seeds chainrule's global generator and Python's
    ``random`` with ``base_seed + i`` (NumPy's legacy global one from both numbers), where
    ``base_seed`` is drawn from ``generator`` (or the global one) once per iterator, after
    the pass's first indices: a pass shuffled from a seed has the order it has with
    ``num_workers=0``, and the passes after it differ by that one draw. Then it calls
    ``worker_init_fn(i)``;
    ``get_worker_info()`` there gives its id, num_workers, seed and its copy of the
    dataset. An IterableDataset is read whole by every worker, each from its own copy,
    unless it shares itself out by ``get_worker_info()``; the batches come from the workers
    in turn. An exception in a worker is raised again in this process, naming the worker
    and quoting its traceback; ``timeout`` (seconds, 0 for none) bounds the wait for a
    batch (RuntimeError). Workers stop when the pass ends, when its iterator is deleted, or
    on an error or KeyboardInterrupt; with ``persistent_workers`` they stay for the next
    pass (keeping their seeds) until the loader is deleted, or until an exception in a
    worker, or workers that died (a Ctrl-C reaches them too), when the next pass starts new
    ones. Batches cross processes
    pickled, tensors as their arrays (copied through a pipe, not shared: workers pay off
    when a sample costs more to make than to send, as one read from disk or augmented); a
    tensor with a graph cannot cross (RuntimeError).
    As in PyTorch, iterating fails (AssertionError) if ``timeout`` is nonzero with
    ``num_workers=0``, or ``prefetch_factor`` is not positive with ``num_workers > 0``.

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
        if pin_memory:
            why = (
                "chainrule does not pin host memory, so batches stay in ordinary memory and "
                "are copied to the GPU from there"
                if array.ACCELERATED
                else "chainrule computes on the CPU, so batches stay in ordinary memory"
            )
            warnings.warn(
                f"DataLoader: pin_memory=True has nothing to pin: {why}", UserWarning, stacklevel=2
            )
        self.num_workers, self.pin_memory = num_workers, pin_memory
        self.timeout, self.worker_init_fn = timeout, worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.prefetch_factor, self.persistent_workers = prefetch_factor, persistent_workers
        self.pin_memory_device, self.in_order = pin_memory_device, in_order
        self.drop_last = drop_last
        self.generator = generator
        self.collate_fn = collate_fn
        self._iterator: WorkerIterator | None = None  # the persistent workers' iterator

    def __len__(self) -> int:
        if self.batch_sampler is not None:
            return len(self.batch_sampler)  # type: ignore[arg-type]
        n = len(self.dataset if self.sampler is None else self.sampler)  # type: ignore[arg-type]
        if self.batch_size is None:
            return n
        return batch_count(n, self.batch_size, self.drop_last)

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
        if self.num_workers == 0:
            return self._load()
        if self.persistent_workers and self._iterator is not None and self._iterator.alive:
            self._iterator.reset(self._tasks())
            return self._iterator
        loader = WorkerIterator(
            self._fetcher(),
            self._tasks(),
            num_workers=self.num_workers,
            prefetch_factor=int(prefetch or 2),
            timeout=self.timeout,
            worker_init_fn=self.worker_init_fn,
            context=self.multiprocessing_context,
            persistent=self.persistent_workers,
            in_order=self.in_order,
            generator=self.generator,
        )
        if self.persistent_workers:
            self._iterator = loader
        return loader

    def _load(self) -> Iterator[Any]:
        """One pass in this process: each task fetched as it is pulled."""
        fetch = self._fetcher()
        fetch.start()
        generator_of(self.generator, "DataLoader").integers(2**63)  # PyTorch's base seed
        for task in self._tasks():
            batch = fetch(task)
            if batch is END:
                return
            yield batch

    def _fetcher(self) -> Fetcher:
        return Fetcher(
            self.dataset,
            self.batch_size is not None or self.batch_sampler is not None,
            self.batch_size,
            bool(self.drop_last),
            self.collate_fn,
        )

    def _tasks(self) -> Iterator[Any]:
        """What each item of a pass is made from, pulled as the pass goes: a batch's indices
        (an array), or one index with batching off, or for a stream None ("the next one")."""
        if isinstance(self.dataset, IterableDataset):
            return itertools.repeat(None)
        return _indices(
            len(self.dataset),
            self.sampler,
            self.batch_sampler,
            self.shuffle,
            self.generator,
            self.batch_size,
            bool(self.drop_last),
        )


def _indices(
    n: int,
    sampler: Iterable[int] | None,
    batch_sampler: Iterable[Sequence[int]] | None,
    shuffle: bool,
    generator: Any,
    size: int | None,
    drop_last: bool,
) -> Iterator[Any]:
    """The indices of each item of a pass over a map-style dataset of n samples, drawn (a
    shuffle's permutation, a sampler's indices) when the first is pulled. A module-level
    function, so that persistent workers' iterator does not hold its loader."""
    if batch_sampler is not None:
        for batch in batch_sampler:
            yield hp.asarray(list(batch), dtype=array.int64)
        return
    if sampler is not None:
        if size is None:
            yield from sampler
        else:
            for batch in BatchSampler(sampler, size, drop_last):
                yield hp.asarray(batch, dtype=array.int64)
        return
    order = pass_generator(generator, "DataLoader").permutation(n) if shuffle else hp.arange(n)
    if size is None:
        yield from order
        return
    stop = n - n % size if drop_last else n
    for start in range(0, stop, size):
        yield order[start : start + size]


class Fetcher:
    """Makes one item of a DataLoader's output from its task, in this process or a worker:
    a batch's indices into a batch (``collate_fn``, else ``default_collate``), one index
    into a sample (``collate_fn``, else ``default_convert``), and for a stream the next
    batch or sample of the pass ``start`` began (END once it is used up)."""

    def __init__(
        self,
        dataset: Any,
        batched: bool,
        batch_size: int | None,
        drop_last: bool,
        collate_fn: Callable[[Any], Any] | None,
    ) -> None:
        self.dataset, self.batched = dataset, batched
        self.batch_size, self.drop_last = batch_size, drop_last
        self.collate: Callable[[Any], Any] = collate_fn or (
            default_collate if batched else default_convert
        )
        stream = isinstance(dataset, IterableDataset)
        fast = collate_fn is None and batched and not stream
        self.source = _tensors_of(dataset) if fast else None
        self.stream: Iterator[Any] | None = None

    def start(self) -> None:
        """Begin a pass: a stream is read afresh."""
        if isinstance(self.dataset, IterableDataset):
            self.stream = iter(self.dataset)

    def __call__(self, task: Any) -> Any:
        if self.stream is not None:
            if not self.batched:
                sample = next(self.stream, END)
                return sample if sample is END else self.collate(sample)
            size = self.batch_size or 0
            batch = list(itertools.islice(self.stream, size))
            if not batch or (self.drop_last and len(batch) < size):
                return END
            return self.collate(batch)
        if not self.batched:
            return self.collate(self.dataset[int(task)])
        if self.source is not None:
            tensors, positions = self.source
            rows = task if positions is None else positions[task]
            return [_take(t, rows) for t in tensors]
        return self.collate([self.dataset[int(i)] for i in task])


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
        rows = hp.asarray(dataset.indices, dtype=array.int64)
        positions = rows if positions is None else rows[positions]
        dataset = dataset.dataset
    if type(dataset) is not TensorDataset:  # a subclass may override __getitem__
        return None
    return dataset.tensors, positions


def _take(t: Tensor, rows: Any) -> Tensor:
    rows = array.from_host(rows, t._array)  # the batch's indices, on the tensors' device
    return t[rows] if t.requires_grad else Tensor._make(t._array[rows])
