"""Per-op cost: every row of the op catalog (tests/ops/test_ops.py and tests/ops/rows/)
timed against PyTorch, forward and forward+backward, float32, as ratios to PyTorch's time
in the same process, at three sizes: the row's own small inputs (PyTorch's OpInfo sample
sizes: (2, 3, 4), (3, 5), 0-d), the same grown to about 10^3 elements (a makemore batch,
(32, 27)), and grown to about 10^6. A row grows by scaling the first dim of the inputs
whose first dim is the first input's (the batch of an elementwise op, a loss and its
target), or where that call does not run on both, of the first input alone (a conv's or
linear's input, not its weight; the left operand of a product), or failing both, of every
input; the other rows keep the figures they have.

Both libraries run in one process, each block of calls in turn (chainrule, PyTorch, and
again), so the machine's noise falls on both alike; each ratio is the median of
``--repeats`` blocks' times over PyTorch's, with the spread (the least and the greatest
ratio of one chainrule block to the PyTorch block beside it). A block is as many calls as
fill ``--block`` seconds.

    python benchmarks/op_catalog.py [--only NAME ...] [--quick] [--write docs/performance.md]

With ``--write`` it runs twice, each in a fresh process (the thread count is fixed when
NumPy and PyTorch load): threads pinned to one, then unpinned, and writes both tables as
the section "Per-op cost" of that file, keeping the rest of it. ``--quick`` (about a
minute): the small size only, five blocks of half a millisecond a figure.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

import chainrule as cr

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.ops import test_ops as catalog  # noqa: E402  (the catalog, from its test file)

SIZES = {"small": None, "10^3": 10**3, "10^6": 10**6}  # what each size grows a row to
PINNED = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
SECTION = "## Per-op cost"
# Rows that split the dim a row grows along into one tensor each: grown, they time the making
# of 10^3 or 10^6 tensors (many minutes a block at 10^6), not an op's cost on a large input.
SMALL_ONLY = {"unbind_0", "unbind_to_0d"}


def _grown(row: catalog.Row, target: int | None) -> list[tuple]:
    """The row's shapes grown so its largest input holds about ``target`` elements, in the
    ways to try in turn (the batch, the first input alone, then every input: masked_scatter's
    source grows with its mask); the row's own with None; none where the row is that large
    already or does not grow."""
    if target is None:
        return [row.shapes]
    if row.name in SMALL_ONLY:
        return []
    shapes = [s for s in row.shapes if s is not catalog.NUM]
    if not all(isinstance(s, tuple) and all(isinstance(n, int) for n in s) for s in shapes):
        return []  # a row of literal values
    sizes = [int(np.prod(s)) for s in shapes]
    if not sizes or max(sizes) * 2 > target:
        return []
    k = max(1, round(target / max(sizes)))
    first = next((i for i, s in enumerate(row.shapes) if s is not catalog.NUM and s), None)
    if first is None:
        return []  # only 0-d inputs
    batch = row.shapes[first][0]
    ways = []
    for grows in (lambda i, s: s[0] == batch, lambda i, s: i == first, lambda i, s: True):
        grown = tuple(
            (s[0] * k, *s[1:]) if s is not catalog.NUM and s and grows(i, s) else s
            for i, s in enumerate(row.shapes)
        )
        if grown not in ways:
            ways.append(grown)
    return ways


def _inputs(row: catalog.Row, shapes: tuple, lib: Any, grad: bool) -> list[Any]:
    arrays = catalog._arrays(catalog.Row(row.name, row.fn, shapes, row.domain))
    out = []
    for a in arrays:
        if a is catalog.NUM:
            out.append(a)
        else:
            out.append(lib.tensor(np.asarray(a, np.float32), requires_grad=grad))
    return out


def _caller(row: catalog.Row, shapes: tuple, lib: Any, backward: bool) -> Callable[[], Any]:
    fn = row.fn if lib is cr or row.torch_fn is None else row.torch_fn
    xs = _inputs(row, shapes, lib, backward and row.grad)
    if not backward:
        with cr.no_grad() if lib is cr else torch.no_grad():
            fn(lib, *xs)  # fails here, not in the timing, if the shapes do not suit the op
        return lambda: fn(lib, *xs)
    out = fn(lib, *xs)
    outs = [o for o in (out if isinstance(out, (tuple, list)) else [out]) if o.requires_grad]
    seeds = [lib.ones_like(o) for o in outs]

    def step() -> None:
        out = fn(lib, *xs)
        outs = [o for o in (out if isinstance(out, (tuple, list)) else [out]) if o.requires_grad]
        total = sum((o * s).sum() for o, s in zip(outs, seeds, strict=True))
        total.backward()

    return step


# The clock a block is timed by: the process's CPU time where threads are pinned to one (on
# a shared machine the time a process waits for a core is no part of its op's cost, and a
# block of a few milliseconds that waits out another process's time slice makes a ratio of
# 100x or 0.01x), the wall clock where they are not (the CPU time of several threads adds
# up, where the wall clock's does not).
CLOCK = time.process_time if os.environ.get("OMP_NUM_THREADS") == "1" else time.perf_counter


def _block(call: Callable[[], Any], seconds: float) -> float:
    """Seconds per call, over as many calls as fill ``seconds`` by CLOCK."""
    n, start = 0, CLOCK()
    while True:
        call()
        n += 1
        spent = CLOCK() - start
        if spent >= seconds:
            return spent / n


def _cap_memory() -> None:
    """Half the machine's memory for this process: a row whose grown inputs make either
    library allocate more (PyTorch's einsum of "ij,k->i" at 10^6 makes the i-by-k product)
    then fails to allocate, and measure() leaves that size out, where the kernel would
    otherwise end the whole run."""
    half = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY or soft > half:
        resource.setrlimit(resource.RLIMIT_AS, (half, hard))


def measure(
    row: catalog.Row, shapes: tuple, backward: bool, repeats: int, block: float
) -> tuple[float, float, float] | None:
    """chainrule's time over PyTorch's for one row (the median block of each), with the least
    and greatest ratio of one block to its neighbour; None if either cannot run it."""
    try:
        ours, theirs = _caller(row, shapes, cr, backward), _caller(row, shapes, torch, backward)
        ours(), theirs()  # first calls: lazy imports and caches, on both sides
    except Exception:
        return None
    times: dict[str, list[float]] = {"cr": [], "torch": []}
    for _ in range(repeats):
        times["cr"].append(_block(ours, block))
        times["torch"].append(_block(theirs, block))
    each = [a / b for a, b in zip(times["cr"], times["torch"], strict=True)]
    ratio = statistics.median(times["cr"]) / statistics.median(times["torch"])
    return ratio, min(each), max(each)


def summary(ratios: list[float], limit: float) -> str:
    q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
    over = sum(r > limit for r in ratios)
    return (
        f"{len(ratios)} rows: median {statistics.median(ratios):.2f}x, quartiles "
        f"{q[0]:.2f}x and {q[2]:.2f}x, worst {max(ratios):.2f}x, {over} above {limit:g}x"
    )


def run(args: argparse.Namespace) -> dict[str, dict[str, list[float]]]:
    """Every chosen row's figures in this process: {row: {column: [ratio, least, greatest]}}."""
    _cap_memory()
    if os.environ.get("OMP_NUM_THREADS"):
        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    rows = [r for r in catalog.ROWS if not args.only or r.name.startswith(tuple(args.only))]
    rows = rows[args.skip :]
    sizes = ["small"] if args.quick else args.sizes
    repeats, block = (5, 0.0005) if args.quick else (args.repeats, args.block)
    results: dict[str, dict[str, list[float]]] = {}
    for row in rows:
        got: dict[str, list[float]] = {}
        for size in sizes:
            big = size == "10^6"
            for shapes in _grown(row, SIZES[size]):
                for backward in (False, True) if row.grad else (False,):
                    column = f"{'forward+backward' if backward else 'forward'} {size}"
                    r = measure(
                        row, shapes, backward, 3 if big else repeats, block * (5 if big else 1)
                    )
                    if r is not None:
                        got[column] = list(r)
                    elif not backward:
                        break  # the call does not run so grown: the next way
                else:
                    break  # measured
        results[row.name] = got
        cells = "  ".join(f"{k} {v[0]:.2f}x" for k, v in got.items())
        print(f"{row.name:40s} {cells}", flush=True)
    return results


def markdown(results: dict[str, dict[str, list[float]]], pinned: bool) -> list[str]:
    """One run's summary lines and table, as Markdown."""
    columns = [
        f"{kind} {size}" for size in SIZES for kind in ("forward", "forward+backward")
        if any(f"{kind} {size}" in got for got in results.values())
    ]  # fmt: skip
    lines = [f"Threads {'pinned to 1' if pinned else 'unpinned'}:", ""]
    for column in columns:
        ratios = [got[column][0] for got in results.values() if column in got]
        limit = 1.0 if "backward" in column else (1.2 if column.endswith("10^6") else 3.0)
        lines.append(f"- {column}: {summary(ratios, limit)}")
    lines += ["", "| row | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for name, got in results.items():
        cells = [_cell(got[c]) if c in got else "" for c in columns]
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    return lines


def _cell(figures: list[float]) -> str:
    """A ratio, with its spread where the run kept one."""
    if len(figures) < 3:
        return f"{figures[0]:.2f}"
    return f"{figures[0]:.2f} ({figures[1]:.2f}-{figures[2]:.2f})"


def write_section(path: Path, runs: dict[str, dict[str, dict[str, list[float]]]]) -> None:
    """Replace (or add, at the end) the section "Per-op cost" of ``path`` with these runs."""
    text = path.read_text()
    lines = [
        SECTION,
        "",
        "Every row of the op catalog, float32, timed by `benchmarks/op_catalog.py --write "
        "docs/performance.md`: chainrule's time over PyTorch's in one process, the median of "
        "interleaved blocks, with the spread of single blocks' ratios in brackets (lower is "
        "better); pinned runs are timed by the process's CPU time, unpinned ones by the wall "
        "clock. Sizes: the row's own small inputs (PyTorch's OpInfo sample sizes), grown to "
        "about 10^3 elements (a makemore batch) and to about 10^6. Targets: forward at most "
        "3x on small inputs (median at most 2x) and 1.2x at 10^6; forward and backward 1.0x.",
        "",
    ]
    load, cores = os.getloadavg()[1], os.cpu_count()
    lines += [
        f"Measured with the machine's load average at {load:.1f} on {cores} cores: where other "
        "work keeps the cores busy, the unpinned (wall-clock) ratios measure waiting as much "
        "as work, and the pinned (CPU-time) ones are the figures to read.",
        "",
    ]
    for label, results in runs.items():
        lines += markdown(results, label == "pinned") + [""]
    new = "\n".join(lines)
    if SECTION in text:
        before, _, rest = text.partition(SECTION)
        after = rest[rest.find("\n## ") :] if "\n## " in rest else "\n"
        text = before + new.rstrip("\n") + "\n" + after
    else:
        text = text.rstrip("\n") + "\n\n" + new
    path.write_text(text)


def main(argv: list[str] | None = None) -> dict[str, dict[str, list[float]]]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--only", nargs="*", help="rows whose name starts with one of these")
    ap.add_argument("--quick", action="store_true", help="small inputs, one block each")
    ap.add_argument("--skip", type=int, default=0, help="leave out the first SKIP rows")
    ap.add_argument("--sizes", nargs="*", default=list(SIZES), choices=list(SIZES))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--block", type=float, default=0.003, help="seconds a timed block lasts")
    ap.add_argument("--write", help="run pinned and unpinned; write the section to this file")
    ap.add_argument("--json", help=argparse.SUPPRESS)  # a child run's results go here
    args = ap.parse_args(argv)
    if not args.write:
        results = run(args)
        if args.json:
            Path(args.json).write_text(json.dumps(results))
        else:
            print("\n".join(markdown(results, os.environ.get("OMP_NUM_THREADS") == "1")))
        return results
    runs = {}
    forwarded = [a for a in (argv if argv is not None else sys.argv[1:])]
    at = forwarded.index("--write")
    forwarded = forwarded[:at] + forwarded[at + 2 :]
    for label, extra in (("pinned", PINNED), ("unpinned", {})):
        env = {k: v for k, v in os.environ.items() if k not in PINNED} | extra
        with tempfile.NamedTemporaryFile(suffix=".json") as out:
            subprocess.run(
                [sys.executable, __file__, *forwarded, "--json", out.name], env=env, check=True
            )
            runs[label] = json.loads(Path(out.name).read_text())
    write_section(Path(args.write), runs)
    for label, results in runs.items():
        print("\n".join(markdown(results, label == "pinned")[:8]))
    return runs["pinned"]


if __name__ == "__main__":
    main()
