"""Every row of the op catalog (tests/ops/test_ops.py) timed against PyTorch: forward, and
forward and backward, on the row's own small inputs and on inputs grown to about 10^6
elements, float32, as ratios to PyTorch's time in the same process.

Both libraries run in this one process, each call timed in turn (chainrule, PyTorch, and
again), so the machine's noise falls on both alike; each figure is the median of
``--repeats`` blocks, a block being as many calls as fill ``--block`` seconds. A row grows
to the large size by scaling the first dim of every input of two or more dims (and 1-D
inputs as a whole) where the call still runs on both; the other rows keep only the small
figure.

    python benchmarks/op_catalog.py [--only NAME ...] [--large] [--write docs/op-cost.md]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

import chainrule as cr

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.ops import test_ops as catalog  # noqa: E402  (the catalog, from its test file)

LARGE = 10**6


def _grown(row: catalog.Row) -> tuple | None:
    """The row's shapes grown so its largest input holds about 10^6 elements, or None."""
    sizes = [int(np.prod(s)) for s in row.shapes if s is not catalog.NUM]
    if not sizes or max(sizes) >= LARGE:
        return None
    k = max(1, round(LARGE / max(sizes)))
    grown = []
    for s in row.shapes:
        if s is catalog.NUM or len(s) == 0:
            grown.append(s)
        else:
            grown.append((s[0] * k, *s[1:]))
    return tuple(grown)


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


def _block(call: Callable[[], Any], seconds: float) -> float:
    """Seconds per call, over as many calls as fill ``seconds``."""
    n, start = 0, time.perf_counter()
    while True:
        call()
        n += 1
        spent = time.perf_counter() - start
        if spent >= seconds:
            return spent / n


def measure(
    row: catalog.Row, shapes: tuple, backward: bool, repeats: int, block: float
) -> float | None:
    """chainrule's time over PyTorch's for one row, or None if either cannot run it."""
    try:
        ours, theirs = _caller(row, shapes, cr, backward), _caller(row, shapes, torch, backward)
    except Exception:
        return None
    times: dict[str, list[float]] = {"cr": [], "torch": []}
    for _ in range(repeats):
        times["cr"].append(_block(ours, block))
        times["torch"].append(_block(theirs, block))
    return statistics.median(times["cr"]) / statistics.median(times["torch"])


def summary(ratios: list[float]) -> str:
    q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
    over = sum(r > 3 for r in ratios)
    return (
        f"{len(ratios)} rows: median {statistics.median(ratios):.2f}x, quartiles "
        f"{q[0]:.2f}x and {q[2]:.2f}x, worst {max(ratios):.2f}x, {over} above 3x"
    )


def main(argv: list[str] | None = None) -> dict[str, dict[str, float | None]]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--only", nargs="*", help="rows whose name starts with one of these")
    ap.add_argument("--large", action="store_true", help="also the ~10^6-element inputs")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--block", type=float, default=0.01, help="seconds a timed block lasts")
    ap.add_argument("--write", help="write the table as Markdown to this file")
    args = ap.parse_args(argv)
    if os.environ.get("OMP_NUM_THREADS"):
        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    rows = [r for r in catalog.ROWS if not args.only or r.name.startswith(tuple(args.only))]
    results: dict[str, dict[str, float | None]] = {}
    for row in rows:
        got: dict[str, float | None] = {
            "forward": measure(row, row.shapes, False, args.repeats, args.block),
            "forward+backward": measure(row, row.shapes, True, args.repeats, args.block)
            if row.grad
            else None,
        }
        grown = _grown(row) if args.large else None
        if grown is not None:
            got["forward 10^6"] = measure(row, grown, False, 3, args.block * 5)
            got["forward+backward 10^6"] = (
                measure(row, grown, True, 3, args.block * 5) if row.grad else None
            )
        results[row.name] = got
        cells = "  ".join(f"{k} {v:.2f}x" for k, v in got.items() if v is not None)
        print(f"{row.name:50s} {cells}", flush=True)
    columns = sorted({k for got in results.values() for k in got}, key=len)
    pinned = os.environ.get("OMP_NUM_THREADS") == "1"
    lines = [
        f"Threads {'pinned to 1' if pinned else 'unpinned'}; ratios are chainrule's time over "
        "PyTorch's (lower is better).",
        "",
    ]
    for column in columns:
        ratios = [got[column] for got in results.values() if got.get(column) is not None]
        if ratios:
            lines.append(f"- {column}: {summary(ratios)}")  # type: ignore[arg-type]
    lines += ["", "| row | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for name, got in results.items():
        cells = [f"{got[c]:.2f}" if got.get(c) is not None else "" for c in columns]
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    print("\n".join(lines[: len(columns) + 2]))
    if args.write:
        Path(args.write).write_text(text)
    return results


if __name__ == "__main__":
    main()
