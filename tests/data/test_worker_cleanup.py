"""DataLoader workers never outlive the loop that uses them: after an exception in a
worker (persistent workers too), a break, Ctrl-C (one, or a second one during the
shutdown) or the iterator's garbage collection, no worker process is left, as listed by
multiprocessing and by /proc."""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chainrule.data import DataLoader, Dataset


def alive(pids) -> list[int]:
    """The pids of ``pids`` still running: with a thread that has not ended (a process
    whose main thread has ended shows as a zombie while its other threads run on)."""
    running = []
    for pid in pids:
        try:
            threads = list(Path(f"/proc/{pid}/task").iterdir())
            states = [(t / "stat").read_text().rsplit(")", 1)[1].split()[0] for t in threads]
        except (FileNotFoundError, ProcessLookupError):
            continue
        if any(state not in "ZX" for state in states):
            running.append(pid)
    return running


def workers() -> list[int]:
    return [p.pid for p in multiprocessing.active_children()]


class Pids(Dataset):
    """Sample i is the pid of the process that made it; sample ``bad`` raises."""

    def __init__(self, n: int = 16, bad: int = -1, sleep: float = 0.0) -> None:
        self.n, self.bad, self.sleep = n, bad, sleep

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> int:
        time.sleep(self.sleep)
        if i == self.bad:
            raise ValueError(f"bad sample {i}")
        return os.getpid()


def pids_of(batches) -> set[int]:
    return {int(v) for b in batches for v in b}


@pytest.mark.parametrize("persistent", [False, True])
def test_an_error_in_a_worker_leaves_no_worker(persistent) -> None:
    loader = DataLoader(Pids(bad=9), 2, num_workers=4, persistent_workers=persistent)
    seen = []
    with pytest.raises(ValueError, match="bad sample 9"):
        for _batch in loader:
            seen.append(workers())
    started = set().union(*seen)
    assert len(started) == 4
    assert workers() == [] and alive(started) == []
    # a new pass starts new workers, and they go too once it ends (unless persistent)
    loader.dataset.bad = -1
    batches = list(loader)
    assert len(batches) == 8 and not pids_of(batches) & started
    assert (len(workers()) == 4) is persistent
    del loader
    gc.collect()
    assert workers() == []


def test_a_break_or_the_iterator_collected_leaves_no_worker() -> None:
    loader = DataLoader(Pids(), 2, num_workers=2)
    for batch in loader:
        started = pids_of([batch]) | set(workers())
        break
    assert workers() == [] and alive(started) == []
    batches = iter(loader)
    next(batches)
    started = set(workers())
    assert len(started) == 2
    del batches
    assert workers() == [] and alive(started) == []
    persistent = DataLoader(Pids(), 2, num_workers=2, persistent_workers=True)
    for _batch in persistent:
        break
    started = set(workers())
    assert len(started) == 2  # kept for the next pass, as PyTorch's
    del persistent, _batch
    gc.collect()
    assert workers() == [] and alive(started) == []


def test_a_second_ctrl_c_during_the_shutdown_still_ends_the_workers() -> None:
    """Ctrl-C while waiting for a batch, and again while the workers are being stopped
    (they are busy with a 2 s sample, so the shutdown waits for them)."""
    interrupts = []

    def interrupt(signum, frame):
        if len(interrupts) < 2:
            interrupts.append(time.monotonic())
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        batches = iter(DataLoader(Pids(sleep=2.0), 2, num_workers=2))
        started = set(workers())
        with pytest.raises(KeyboardInterrupt):
            signal.setitimer(signal.ITIMER_REAL, 0.3, 0.1)
            next(batches)
        signal.setitimer(signal.ITIMER_REAL, 0)
        assert len(interrupts) == 2
        assert workers() == [] and alive(started) == []
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_persistent_workers_stopped_by_ctrl_c_are_replaced() -> None:
    """Ctrl-C reaches the workers too (the terminal signals the whole process group):
    persistent workers that it ended are replaced by the next pass."""
    loader = DataLoader(Pids(), 2, num_workers=2, persistent_workers=True)
    first = pids_of(loader)
    for pid in first:
        os.kill(pid, signal.SIGINT)
    deadline = time.monotonic() + 10
    while alive(first) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert alive(first) == []
    second = pids_of(loader)
    assert len(second) == 2 and not second & first
    del loader
    gc.collect()
    assert workers() == []


SCRIPT = """
import os, signal, sys, time
from chainrule.data import DataLoader
from tests.data.test_worker_cleanup import Pids

loader = DataLoader(Pids(n=10**6, sleep=0.001), 2, num_workers=2)
for i, batch in enumerate(loader):
    if i == 0:
        import multiprocessing
        print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)
    if i == 20:
        os.killpg(os.getpgid(0), signal.SIGINT)  # as a terminal's Ctrl-C: every process
    time.sleep(0.01)
"""


def test_ctrl_c_in_a_loop_leaves_no_worker_behind() -> None:
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=root,
        start_new_session=True,  # its own process group, which the script signals
    )
    assert "KeyboardInterrupt" in done.stderr, done.stderr
    started = [int(p) for p in done.stdout.split()]
    assert len(started) == 2, done.stdout
    deadline = time.monotonic() + 5
    while alive(started) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert alive(started) == []
