"""Worker processes for a DataLoader with ``num_workers > 0``: each seeds itself, runs
``worker_init_fn`` and answers tasks with batches; the main process keeps tasks in flight,
hands batches back in order and shuts the workers down. What a task becomes is dataloader.py's.
"""

from __future__ import annotations

import atexit
import io
import itertools
import multiprocessing
import os
import pickle
import queue
import random
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .. import array
from ..tensor import Tensor

xp = array.host  # indices and seeds are drawn and kept on the host

POLL = 0.25  # seconds between checks that the other side of a queue is still alive
END = object()  # what a fetcher returns once its stream is used up


@dataclass(frozen=True)
class WorkerInfo:
    """What ``get_worker_info()`` tells code running in a worker process: its ``id`` (0 to
    ``num_workers - 1``), the ``seed`` its random generators were seeded with, and its own
    copy of the ``dataset``."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """The WorkerInfo of this DataLoader worker process; None in the main process (and with
    ``num_workers=0``). An IterableDataset uses it to read only its worker's share."""
    return _info


class _Resume:
    """Sent to each persistent worker when a new pass begins, and sent back once it has."""


@dataclass(frozen=True)
class _StreamEnd:
    """A worker's answer once its copy of an IterableDataset is used up."""

    worker_id: int


class _KeyErrorMessage(str):
    """A KeyError shows its argument's repr; this shows a traceback's lines as lines."""

    def __repr__(self) -> str:
        return str(self)


class _Failure:
    """An exception raised in a worker, carried to the main process to be raised again
    there, of the same type where it can be, with the worker's traceback in its message."""

    def __init__(self, worker_id: int) -> None:
        kind, error, tb = sys.exc_info()
        self.where = f"in DataLoader worker process {worker_id}"
        self.text = "".join(traceback.format_exception(kind, error, tb))
        self.kind = kind if _picklable(kind) else None
        self.name = getattr(kind, "__name__", "Exception")

    def exception(self) -> BaseException:
        """The exception to raise (made here, so no frame of its traceback holds it)."""
        message = f"Caught {self.name} {self.where}.\nOriginal {self.text}"
        if self.kind is KeyError:
            return KeyError(_KeyErrorMessage(message))
        try:
            error = self.kind(message) if self.kind is not None else None
        except Exception:  # noqa: BLE001 - a type that takes other arguments
            error = None
        return error if isinstance(error, BaseException) else RuntimeError(message)


def _picklable(obj: Any) -> bool:
    try:
        pickle.dumps(obj)
    except Exception:  # noqa: BLE001 - pickle raises whatever the object raises
        return False
    return True


class _BatchPickler(pickle.Pickler):
    """Tensors cross as their arrays (and requires_grad); a graph cannot cross, as in
    PyTorch, since gradients would reach copies in another process."""

    def reducer_override(self, obj: Any) -> Any:
        if not isinstance(obj, Tensor):
            return NotImplemented
        if obj.grad_fn is not None:
            raise RuntimeError(
                f"DataLoader: a batch made in a worker process holds a tensor with "
                f"grad_fn={obj.grad_fn!r}, and gradients cannot cross processes; detach it in "
                f"the dataset or collate_fn, or load with num_workers=0"
            )
        return _rebuild, (obj._array, obj.requires_grad)


def _rebuild(arr: Any, requires_grad: bool) -> Tensor:
    return Tensor._make(arr, requires_grad)


def _pack(batch: Any) -> bytes:
    buffer = io.BytesIO()
    _BatchPickler(buffer, pickle.HIGHEST_PROTOCOL).dump(batch)
    return buffer.getvalue()


def worker_loop(
    fetch: Any,
    tasks: Any,
    results: Any,
    done: Any,
    base_seed: int,
    init_fn: Callable[[int], None] | None,
    worker_id: int,
    num_workers: int,
) -> None:
    """One worker: seed the random generators from ``base_seed + worker_id``, call
    ``init_fn(worker_id)``, then answer each task ``(i, task)`` from ``tasks`` with
    ``(i, batch)`` on ``results`` until told to stop (None) or the main process is gone."""
    global _info
    try:
        seed = base_seed + worker_id
        random.seed(seed)
        array.manual_seed(seed)
        xp.random.seed(xp.random.SeedSequence([worker_id, base_seed]).generate_state(4))
        _info = WorkerInfo(worker_id, num_workers, seed, fetch.dataset)
        # As in PyTorch, a worker whose init_fn (or stream) failed lives on to report it.
        init = _attempt(lambda: init_fn(worker_id), worker_id) if init_fn else None
        failure = init or _attempt(fetch.start, worker_id)
        parent, ended = os.getppid(), False
        while os.getppid() == parent:
            try:
                task = tasks.get(timeout=POLL)
            except queue.Empty:
                continue
            if task is None:
                break
            if isinstance(task, _Resume):
                failure, ended = init or _attempt(fetch.start, worker_id), False
                results.put((task, None))
                continue
            if done.is_set() or ended:
                continue
            data = failure or _answer(fetch, task[1], worker_id)
            ended = isinstance(data, _StreamEnd)
            results.put((task[0], data))
            del data, task  # hold no batch while waiting for the next task
    except KeyboardInterrupt:
        pass  # Ctrl-C reaches every process; the main one shuts the workers down
    # What the main process no longer reads must not keep this process from exiting.
    results.cancel_join_thread()
    results.close()


def _answer(fetch: Any, task: Any, worker_id: int) -> Any:
    """The batch a task makes, pickled; or why it could not be made."""
    try:
        batch = fetch(task)
        return _StreamEnd(worker_id) if batch is END else _pack(batch)
    except Exception:  # noqa: BLE001 - every error goes to the main process
        return _Failure(worker_id)


def _attempt(step: Callable[[], Any], worker_id: int) -> _Failure | None:
    """Run ``step``; the failure to answer this worker's tasks with, if it raised."""
    try:
        step()
    except Exception:  # noqa: BLE001 - every error goes to the main process
        return _Failure(worker_id)
    return None


class WorkerIterator:
    """The batches of one DataLoader pass, loaded by ``num_workers`` worker processes.

    The main process pulls tasks (a batch's indices, or for a stream, "your next batch")
    from ``tasks`` as it goes, keeping ``prefetch_factor`` per worker in flight, sent to
    the workers in turn; batches come back in the order of their tasks (``in_order``) or
    as they arrive. Workers are started here and shut down when the pass ends (unless
    ``persistent``, when ``reset`` starts the next pass with the same workers), when this
    iterator is deleted, or on an error of the main process's own (a timeout, a worker that
    died, KeyboardInterrupt). An exception raised in a worker is raised again by ``next``,
    which can then go on with the next batch, as in PyTorch; persistent workers are shut
    down first (the loader, which holds them, would otherwise keep them past the loop the
    error left), and the next pass starts new ones.
    """

    def __init__(
        self,
        fetch: Any,
        tasks: Iterator[Any],
        *,
        num_workers: int,
        prefetch_factor: int,
        timeout: float,
        worker_init_fn: Callable[[int], None] | None,
        context: Any,
        persistent: bool,
        in_order: bool,
        generator: Any,
    ) -> None:
        self._shut = True  # until the workers exist, there is nothing to shut down
        self._workers: list[Any] = []
        self._max = prefetch_factor * num_workers
        self._timeout, self._persistent, self._in_order = timeout, persistent, in_order
        # The workers' seed is drawn before the pass's first tasks are pulled (a shuffle's
        # order drawn after it), as PyTorch's and as with num_workers=0: the same first pass.
        base_seed = int(array.generator(generator, "DataLoader").integers(2**63))
        first = list(itertools.islice(tasks, self._max))
        context = context or multiprocessing.get_context()
        self._results = context.Queue()
        self._done = context.Event()
        self._queues = []
        self._shut = False
        try:
            for i in range(num_workers):
                index_queue = context.Queue()
                index_queue.cancel_join_thread()  # a dead worker must not block our exit
                worker = context.Process(
                    target=worker_loop,
                    args=(
                        fetch,
                        index_queue,
                        self._results,
                        self._done,
                        base_seed,
                        worker_init_fn,
                        i,
                        num_workers,
                    ),
                    daemon=True,  # ended by multiprocessing when the program exits
                )
                worker.start()
                self._queues.append(index_queue)
                self._workers.append(worker)
        except BaseException:
            self._shutdown()
            raise
        self._begin(itertools.chain(first, tasks))

    @property
    def alive(self) -> bool:
        """Whether every worker is up, so a new pass can begin with them."""
        return not self._shut and all(w.is_alive() for w in self._workers)

    def _begin(self, tasks: Iterator[Any]) -> None:
        self._tasks = tasks
        self._sent = self._received = self._outstanding = 0
        self._pending: dict[int, tuple[Any, ...]] = {}  # task -> (worker,) or (worker, data)
        self._active = [True] * len(self._workers)
        self._turn = itertools.cycle(range(len(self._workers)))
        for _ in range(self._max):
            self._send()

    def reset(self, tasks: Iterator[Any]) -> None:
        """Begin a new pass with the same (persistent) workers: each restarts its stream and
        acknowledges; whatever the last pass left in flight is dropped on the way."""
        try:
            for index_queue in self._queues:
                index_queue.put(_Resume())
            acknowledged = 0
            while acknowledged < len(self._workers):
                acknowledged += isinstance(self._get()[0], _Resume)
        except BaseException:
            self._shutdown()
            raise
        self._begin(tasks)

    def _send(self) -> None:
        """Pull the next task and send it to the next worker still reading, if room."""
        if self._outstanding >= self._max or not any(self._active):
            return
        task = next(self._tasks, _NONE)
        if task is _NONE:
            return
        worker = next(w for w in self._turn if self._active[w])
        self._queues[worker].put((self._sent, task))
        self._pending[self._sent] = (worker,)
        self._sent += 1
        self._outstanding += 1

    def __iter__(self) -> WorkerIterator:
        return self

    def __next__(self) -> Any:
        try:
            data = self._next_data()
        except StopIteration:
            if not self._persistent:
                self._shutdown()
            raise
        except BaseException:  # a timeout, a dead worker, Ctrl-C: the workers go
            self._shutdown()
            raise
        self._send()
        if isinstance(data, _Failure):
            if self._persistent:  # nothing else would end them while the loader lives
                self._shutdown()
            raise data.exception()
        return pickle.loads(data)

    def _next_data(self) -> Any:
        while True:
            while self._received < self._sent:  # skip tasks of workers whose stream ended
                if self._received in self._pending:
                    break
                self._received += 1
            else:
                raise StopIteration
            entry = self._pending[self._received]
            if len(entry) == 2:
                del self._pending[self._received]
                self._received += 1
                return entry[1]
            if self._shut:
                raise RuntimeError(
                    "DataLoader: the worker processes were shut down by an earlier error; "
                    "begin a new pass with iter(loader)"
                )
            i, data = self._get()
            self._outstanding -= 1
            if isinstance(data, _StreamEnd):  # task i and those sent after it get no batch
                self._active[data.worker_id] = False
                unanswered = [j for j, e in self._pending.items() if e == (data.worker_id,)]
                for j in unanswered:
                    del self._pending[j]
                self._outstanding -= len(unanswered) - 1  # task i was counted above
                self._send()
                continue
            worker = self._pending[i][0]
            if i == self._received or not self._in_order:
                del self._pending[i]
                self._received += i == self._received
                return data
            self._pending[i] = (worker, data)

    def _get(self) -> Any:
        """The next answer of any worker; RuntimeError if one died or ``timeout`` passed."""
        wait = self._timeout if self._timeout > 0 else POLL
        while True:
            try:
                return self._results.get(timeout=wait)
            except queue.Empty:
                dead = [w for w in self._workers if not w.is_alive()]
                if dead:
                    pids = ", ".join(str(w.pid) for w in dead)
                    codes = ", ".join(str(w.exitcode) for w in dead)
                    raise RuntimeError(
                        f"DataLoader: worker process (pid(s) {pids}) exited unexpectedly; got "
                        f"exit code(s) {codes}"
                    ) from None
                if self._timeout > 0:
                    raise RuntimeError(
                        f"DataLoader: timed out after {self._timeout} seconds waiting for a "
                        f"batch from the worker processes; got timeout={self._timeout!r}"
                    ) from None

    def _shutdown(self) -> None:
        """Tell every worker to stop, wait a moment for each, then end those still busy:
        ended even when the wait is interrupted (a second Ctrl-C)."""
        if self._shut:
            self._end_workers()  # an earlier shutdown may have been interrupted
            return
        self._shut = True
        try:
            self._done.set()
            for index_queue in self._queues:
                index_queue.put(None)
            deadline = time.monotonic() + POLL
            for worker in self._workers:
                worker.join(timeout=max(0.0, deadline - time.monotonic()))
        finally:
            self._end_workers()

    def _end_workers(self) -> None:
        """Terminate the workers still alive, wait for them, and close the queues."""
        for worker in self._workers:
            if worker.is_alive():
                worker.terminate()
        for worker in self._workers:
            worker.join()
        for index_queue in self._queues:
            index_queue.close()
        self._results.cancel_join_thread()
        self._results.close()

    def __del__(self) -> None:
        if not _exiting:  # at exit, multiprocessing ends the (daemonic) workers itself
            self._shutdown()


_NONE = object()
_exiting = False


@atexit.register
def _at_exit() -> None:
    global _exiting
    _exiting = True
