"""``torch.multiprocessing``'s names: Python's multiprocessing, whole, and PyTorch's ``spawn``
(one process per rank running ``fn(rank, *args)``, whose failures come back to the parent as
an exception carrying the child's traceback). Tensors sent between processes are pickled
copies: chainrule has no shared-memory tensors."""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import signal
import sys
import traceback
import warnings
from collections.abc import Callable
from multiprocessing import *  # noqa: F403  (PyTorch's module is Python's, and more)
from typing import Any

__all__ = [
    *multiprocessing.__all__,
    "ProcessContext",
    "ProcessException",
    "ProcessExitedException",
    "ProcessRaisedException",
    "get_all_sharing_strategies",
    "get_sharing_strategy",
    "set_sharing_strategy",
    "spawn",
    "start_processes",
]

_STRATEGIES = ("file_descriptor", "file_system")
_strategy = "file_descriptor"


def get_all_sharing_strategies() -> set[str]:
    """The sharing strategies PyTorch offers on Linux (chainrule's tensors are copied)."""
    return set(_STRATEGIES)


def get_sharing_strategy() -> str:
    return _strategy


def set_sharing_strategy(new_strategy: str) -> None:
    """Kept for PyTorch programs that set it; chainrule's tensors cross as copies either way."""
    global _strategy
    if new_strategy not in _STRATEGIES:
        raise ValueError(
            f"set_sharing_strategy: unknown strategy {new_strategy!r}; expected one of "
            f"{list(_STRATEGIES)}"
        )
    _strategy = new_strategy


class ProcessException(Exception):
    """A spawned process failed: which one (``error_index``) and its ``pid``."""

    def __init__(self, msg: str, error_index: int, error_pid: int) -> None:
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, error_pid

    def __reduce__(self) -> Any:
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A spawned process raised: the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A spawned process exited with a nonzero code, or was killed by a signal."""

    def __init__(
        self, msg: str, error_index: int, error_pid: int, exit_code: int, signal_name: Any = None
    ) -> None:
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self) -> Any:
        args = (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name)
        return type(self), args


def _wrap(fn: Callable[..., Any], i: int, args: tuple, errors: Any) -> None:
    """A child's body: ``fn(i, *args)``, its traceback sent to the parent if it raises."""
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # stopped by the parent
    except Exception:
        errors.put(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    """The processes ``start_processes`` started; ``join`` waits for them."""

    def __init__(self, processes: list[Any], error_queues: list[Any]) -> None:
        self.processes, self.error_queues = processes, error_queues
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self) -> list[int]:
        return [int(p.pid) for p in self.processes]

    def join(self, timeout: float | None = None, grace_period: float | None = None) -> bool:
        """Wait for the processes: True once all ended well, False if some still run after
        ``timeout``. The first that fails stops the others (SIGTERM, then SIGKILL after the
        grace period) and raises: ProcessRaisedException with its traceback, or
        ProcessExitedException with its exit code or signal."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(list(self.sentinels), timeout=timeout)
        failed = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)  # type: ignore[call-overload]
            self.processes[index].join()
            if self.processes[index].exitcode != 0:
                failed = index
                break
        if failed is None:
            return not self.sentinels
        for process in self.processes:
            if process.is_alive():
                process.terminate()
        for process in self.processes:
            process.join(30 if grace_period is None else grace_period)
            if process.is_alive():
                process.kill()
                process.join()
        pid, code = self.processes[failed].pid, self.processes[failed].exitcode
        if not self.error_queues[failed].empty():
            trace = self.error_queues[failed].get()
            msg = f"\n\n-- Process {failed} terminated with the following error:\n{trace}"
            raise ProcessRaisedException(msg, failed, pid)
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"<Unknown signal {-code}>"
            raise ProcessExitedException(
                f"process {failed} terminated with signal {name}", failed, pid, code, name
            )
        raise ProcessExitedException(
            f"process {failed} terminated with exit code {code}", failed, pid, code
        )


def start_processes(
    fn: Callable[..., Any],
    args: tuple = (),
    nprocs: int = 1,
    join: bool = True,
    daemon: bool = False,
    start_method: str = "spawn",
) -> ProcessContext | None:
    """Start ``nprocs`` processes by ``start_method``, process i running ``fn(i, *args)``;
    with ``join``, wait for all of them (see ProcessContext.join) and return None, else return
    the ProcessContext."""
    context: Any = multiprocessing.get_context(start_method)
    processes, queues = [], []
    for i in range(nprocs):
        errors = context.SimpleQueue()
        process = context.Process(target=_wrap, args=(fn, i, args, errors), daemon=daemon)
        process.start()
        processes.append(process)
        queues.append(errors)
    started = ProcessContext(processes, queues)
    if not join:
        return started
    while not started.join():
        pass
    return None


def spawn(
    fn: Callable[..., Any],
    args: tuple = (),
    nprocs: int = 1,
    join: bool = True,
    daemon: bool = False,
    start_method: str = "spawn",
) -> ProcessContext | None:
    """PyTorch's ``torch.multiprocessing.spawn``: start_processes, by ``spawn`` unless asked
    otherwise (which warns, as PyTorch's: start_processes is the way to choose)."""
    if start_method != "spawn":
        warnings.warn(
            f"spawn: this method only supports start_method=spawn (got: {start_method}); to use "
            "a different start_method use start_processes",
            FutureWarning,
            stacklevel=2,
        )
    return start_processes(fn, args, nprocs, join, daemon, start_method)
