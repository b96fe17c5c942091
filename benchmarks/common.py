"""Shared timing for the benchmarks: interleaved runs, medians, and a ratio table.

Each workload runs on every framework in turn, step by step, so machine noise hits all of
them alike; medians after warm-up are reported, with ratios to a chosen baseline. Each
framework runs in a plain process of its own, as a user's script does: malloc as the C
library sets it up, threads as the environment says. ``--steady-allocator`` fixes malloc's
thresholds first, as `chainrule train` does (chainrule/fastpath/allocator.py).
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from typing import Any

from chainrule.fastpath import allocator


class _Process:
    """This benchmark process: its script and arguments (what a framework's own process is
    started with), whether it fixed malloc's thresholds, and in such a process, which
    framework it runs for which call of interleaved, over which file descriptor."""

    script = ""
    argv: list[str] = []
    steady = False
    worker: tuple[str, int, int] | None = None
    calls = 0


def parse_args(ap: argparse.ArgumentParser, argv: Sequence[str] | None, script: str) -> Any:
    """Parse a benchmark's command line (``script`` is its ``__file__``), with the flag every
    benchmark takes: ``--steady-allocator`` fixes malloc's thresholds first."""
    ap.add_argument(
        "--steady-allocator",
        action="store_true",
        help="fix glibc malloc's thresholds before measuring, as `chainrule train` does "
        "(default: a plain process, as a user's script runs)",
    )
    ap.add_argument("--worker", help=argparse.SUPPRESS)  # FRAMEWORK:CALL:FD, see interleaved
    args = ap.parse_args(argv)
    _Process.script, _Process.argv = script, list(sys.argv[1:] if argv is None else argv)
    _Process.calls = 0
    if args.worker:
        name, call, fd = args.worker.rsplit(":", 2)
        _Process.worker = (name, int(call), int(fd))
    if args.steady_allocator:
        _Process.steady = allocator.steady_allocator()
    return args


def process_note() -> str:
    """How the frameworks' processes run (threads, allocator), for every benchmark's header."""
    pinned = os.environ.get("OMP_NUM_THREADS") == "1"
    threads = "threads pinned to 1" if pinned else f"threads unpinned ({os.cpu_count()} cores)"
    malloc = "malloc thresholds fixed" if _Process.steady else "malloc untouched"
    return f"{threads}, {malloc}"


def pin_torch_threads() -> None:
    """Make PyTorch follow OMP_NUM_THREADS when it is set (it reads it, but be explicit)."""
    try:
        import torch
    except ImportError:
        return
    n = os.environ.get("OMP_NUM_THREADS")
    if n:
        torch.set_num_threads(int(n))


def with_pytorch(makers: dict[str, Any], make: Callable[[Any], Any]) -> dict[str, Any]:
    """Add PyTorch's step maker, ``make(torch)``, to ``makers`` when torch is installed, its
    threads pinned as NumPy's are. torch is imported in PyTorch's own process only."""
    if importlib.util.find_spec("torch") is None:
        return makers

    def make_pinned() -> Any:
        import torch

        pin_torch_threads()
        return make(torch)

    makers["pytorch"] = make_pinned
    return makers


def interleaved(
    makers: dict[str, Callable[[], Callable[[], object]]],
    steps: int,
    warmup: int,
    before: Callable[[], object] | None = None,
) -> dict[str, float]:
    """Median seconds per call of each framework's step, called in turn ``steps`` times
    after ``warmup`` rounds, in a new (seeded) order each round. ``before``, if given, runs
    untimed before each timed call.

    Each framework runs in a new Python process of its own, as a user's script does: the
    benchmark's script again, with the same arguments, which makes that one step
    (``makers[name]()``) and times each call it is asked for. In one shared process, the
    blocks one framework frees move glibc malloc's thresholds for the next, and the page
    faults each framework takes alone (thousands a step for the CNN, either framework)
    vanish. Taking turns step by step, the frameworks meet the machine's noise alike.
    Between its turns a process is stopped (SIGSTOP): a BLAS or OpenMP library's threads
    spin for a while after a call, and with threads unpinned, on two cores, another
    process's spinning threads slowed a CNN step 30-fold. The order is shuffled each round,
    so that each framework follows each other one as often, and finds the caches as the
    others leave them alike."""
    call = _Process.calls
    _Process.calls += 1
    if _Process.worker is not None:  # a framework's own process
        name, wanted, fd = _Process.worker
        if call == wanted:
            _serve(makers[name], before, Connection(fd))
        return {name: math.nan for name in makers}  # another call's: not run here
    procs = {name: _start(name, call) for name in makers}
    times: dict[str, list[float]] = {name: [] for name in makers}
    order = list(makers)
    shuffle = random.Random(0).shuffle
    try:
        for _ in range(warmup + steps):
            shuffle(order)
            for name in order:
                proc, conn = procs[name]
                os.kill(proc.pid, signal.SIGCONT)
                try:
                    conn.send(True)
                    t = conn.recv()
                except (EOFError, OSError):
                    raise RuntimeError(
                        f"{name}'s process ended early (its error is above)"
                    ) from None
                if isinstance(t, str):
                    raise RuntimeError(f"{name}'s step failed in its process:\n{t}")
                times[name].append(t)
                os.kill(proc.pid, signal.SIGSTOP)  # its threads idle, not spinning on ours
                os.waitpid(proc.pid, os.WUNTRACED)
    finally:
        for proc, conn in procs.values():
            os.kill(proc.pid, signal.SIGCONT)
            try:
                conn.send(False)
            except OSError:
                pass  # it has ended already
            conn.close()
            proc.wait()
    return {name: statistics.median(ts[warmup:]) for name, ts in times.items()}


def _start(name: str, call: int) -> tuple[subprocess.Popen, Connection]:
    """Start the benchmark's script again as ``name``'s process for interleaved's ``call``."""
    ours, theirs = socket.socketpair()
    fd = theirs.fileno()
    cmd = [sys.executable, _Process.script, *_Process.argv, "--worker", f"{name}:{call}:{fd}"]
    proc = subprocess.Popen(cmd, pass_fds=[fd], stdout=subprocess.DEVNULL)
    theirs.close()
    return proc, Connection(ours.detach())


def _serve(make: Callable[[], Callable[[], object]], before: Any, conn: Connection) -> None:
    """A framework's process: make its step, time one call per request, then exit."""
    try:
        fn = make()
        while conn.recv():
            if before is not None:
                before()
            t0 = time.perf_counter()
            fn()
            conn.send(time.perf_counter() - t0)
    except Exception:
        conn.send(traceback.format_exc())
        sys.exit(1)
    sys.exit(0)


def table(title: str, medians: dict[str, float], unit: str = "ms", scale: float = 1e3) -> str:
    """A small text table: time per call and the ratio of chainrule to each other entry."""
    ours = medians.get("chainrule")
    where = f"each framework in a process of its own, {process_note()}"
    lines = [f"{title}  ({where})", f"  {'framework':<22}{unit:>10}   chainrule / this"]
    for name, t in medians.items():
        ratio = f"{ours / t:8.2f}x" if ours is not None and name != "chainrule" else ""
        lines.append(f"  {name:<22}{t * scale:10.3f}   {ratio}")
    return "\n".join(lines)


def parts_pinned_and_unpinned(
    title: str,
    parts: Sequence[str],
    make: Callable[[Any, str], Any],
    steps: int,
    warmup: int,
    together: str,
) -> dict[str, dict[str, float]]:
    """Each part of a program timed on chainrule and PyTorch (``make(lib, part)`` gives its
    step; each framework in a process of its own), threads pinned to one, then unpinned: a
    row per part and one for their sum (``together``), under ``title``. Returns
    {"part, pinned": medians, "part, unpinned": medians, ...}."""
    import chainrule as cr

    results: dict[str, dict[str, float]] = {}
    was = os.environ.get("OMP_NUM_THREADS")
    for pinned in (True, False):
        if pinned:  # read by each framework's own process, started below
            os.environ["OMP_NUM_THREADS"] = "1"
        else:
            os.environ.pop("OMP_NUM_THREADS", None)
        print(f"{title}, seconds  ({process_note()})")
        print(f"  {'part':<22}{'chainrule':>11}{'pytorch':>11}   chainrule / pytorch")
        total = {"chainrule": 0.0, "pytorch": 0.0}
        for part in parts:
            makers: dict[str, Any] = {"chainrule": lambda p=part: make(cr, p)}
            with_pytorch(makers, lambda torch, p=part: make(torch, p))
            medians = interleaved(makers, steps, warmup)
            results[f"{part}, {'pinned' if pinned else 'unpinned'}"] = medians
            for k in total:
                total[k] += medians.get(k, 0.0)
            print(_part_row(part, medians), flush=True)
        print(_part_row(together, total), flush=True)
    if was is None:
        os.environ.pop("OMP_NUM_THREADS", None)
    else:
        os.environ["OMP_NUM_THREADS"] = was
    return results


def _part_row(label: str, medians: dict[str, float]) -> str:
    ours, theirs = medians["chainrule"], medians.get("pytorch")
    cells = f"{ours:11.3f}" + (f"{theirs:11.3f}   {ours / theirs:9.2f}x" if theirs else "")
    return f"  {label:<22}{cells}"


def sgd_step(lib: Any, model: Any, x: Any, y: Any, lr: float) -> Callable[[], float]:
    """One cross-entropy SGD step of ``model`` on the batch (x, y), written once for both
    frameworks, whose APIs agree: ``lib`` is the chainrule or the torch module."""
    opt = lib.optim.SGD(model.parameters(), lr=lr)
    xt, yt = lib.tensor(x), lib.tensor(y)
    cross_entropy = lib.nn.functional.cross_entropy

    def step() -> float:
        loss = cross_entropy(model(xt), yt)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()

    return step


def onnx_session(model: bytes) -> Any:
    """An ONNX Runtime session on the CPU, with as many threads as OMP_NUM_THREADS allows
    (one when the run is pinned), as the inference benchmarks run theirs."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    threads = os.environ.get("OMP_NUM_THREADS")
    if threads:
        options.intra_op_num_threads = options.inter_op_num_threads = int(threads)
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
