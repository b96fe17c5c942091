"""Shared timing for the benchmarks: interleaved runs, medians, and a ratio table.

Each workload runs on every framework in turn, step by step, so machine noise hits all of
them alike; medians after warm-up are reported, with ratios to a chosen baseline.
"""

from __future__ import annotations

import ctypes
import os
import random
import statistics
import time
from collections.abc import Callable
from typing import Any


def threads_note() -> str:
    pinned = os.environ.get("OMP_NUM_THREADS") == "1"
    return "threads pinned to 1" if pinned else f"threads unpinned ({os.cpu_count()} cores)"


def pin_torch_threads() -> None:
    """Make PyTorch follow OMP_NUM_THREADS when it is set (it reads it, but be explicit)."""
    try:
        import torch
    except ImportError:
        return
    n = os.environ.get("OMP_NUM_THREADS")
    if n:
        torch.set_num_threads(int(n))


def with_pytorch(fns: dict[str, Any], make: Callable[[Any], Any]) -> dict[str, Any]:
    """Add PyTorch's run, ``make(torch)``, to ``fns`` when torch is installed, its threads
    pinned as NumPy's are."""
    try:
        import torch
    except ImportError:
        return fns
    pin_torch_threads()
    fns["pytorch"] = make(torch)
    return fns


def steady_allocator() -> None:
    """Fix glibc malloc's two thresholds, which it otherwise moves as memory is freed:
    above the mmap threshold a block is mapped afresh (and page-faulted in) at each
    allocation, and free memory above the trim threshold goes back to the system, to be
    faulted in again. Run alone, each step here allocates the same blocks every time and
    takes no page faults; interleaved, the frameworks' different blocks move the thresholds
    back and forth, and whichever runs after the move pays: measured at batch 32, 102 page
    faults a step for NumPy by hand beside chainrule and PyTorch, 770 beside chainrule alone,
    about 0.1-0.8 ms. Fixed, every framework keeps the memory it had, as it would alone.
    Nothing happens where the C library is not glibc."""
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return
    m_trim_threshold, m_mmap_threshold = -1, -3  # malloc.h
    mallopt(m_mmap_threshold, 32 << 20)  # glibc's largest: a 4096x2048 float32 array
    mallopt(m_trim_threshold, 1 << 30)


def interleaved(
    fns: dict[str, Callable[[], object]],
    steps: int,
    warmup: int,
    before: Callable[[], object] | None = None,
) -> dict[str, float]:
    """Median seconds per call of each function, called in turn ``steps`` times, in a new
    (seeded) order each round. A fixed order is unfair with threads unpinned: a library's
    worker threads spin for a while after its call (PyTorch's OpenMP threads measurably),
    and on two cores slow whatever runs next, up to 2x; shuffled, each function follows
    each other one as often, and the median sees few slowed calls. The allocator is held
    steady first (see steady_allocator). ``before``, if given, runs untimed before each
    timed call."""
    steady_allocator()
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    order = list(fns)
    shuffle = random.Random(0).shuffle
    for _ in range(steps):
        shuffle(order)
        for name in order:
            fn = fns[name]
            if before is not None:
                before()
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(ts) for name, ts in times.items()}


def table(title: str, medians: dict[str, float], unit: str = "ms", scale: float = 1e3) -> str:
    """A small text table: time per call and the ratio of chainrule to each other entry."""
    ours = medians.get("chainrule")
    lines = [f"{title}  ({threads_note()})", f"  {'framework':<22}{unit:>10}   chainrule / this"]
    for name, t in medians.items():
        ratio = f"{ours / t:8.2f}x" if ours is not None and name != "chainrule" else ""
        lines.append(f"  {name:<22}{t * scale:10.3f}   {ratio}")
    return "\n".join(lines)


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
