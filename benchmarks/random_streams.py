"""chainrule's samplers beside PyTorch's (the same numbers, bit for bit): the time of each
draw at a size, interleaved so that machine noise hits both alike (each going first every
other time), medians reported with the ratio chainrule / torch. torch runs on one thread
(its samplers draw serially anyway), so the time is each draw's CPU time, which another job
on the machine barely moves.

    python benchmarks/random_streams.py [--size 1000000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import torch

import chainrule as cr


def cases(lib: Any, n: int) -> dict[str, Callable[[], Any]]:
    g = lib.Generator().manual_seed(0)
    weights = lib.rand(n, generator=lib.Generator().manual_seed(1))
    out32, out64 = lib.empty(n), lib.empty(n, dtype=lib.float64)
    ones = lib.ones(n)
    return {
        "rand f32": lambda: lib.rand(n, generator=g),
        "uniform_(-a, a) f32": lambda: out32.uniform_(-0.3, 0.3, generator=g),
        "randint(0, 100)": lambda: lib.randint(0, 100, (n,), generator=g),
        "bernoulli_(0.5) f32": lambda: out32.bernoulli_(0.5, generator=g),
        "dropout(0.1) f32": lambda: lib.nn.functional.dropout(ones, 0.1),
        "exponential_ f32": lambda: out32.exponential_(generator=g),
        "multinomial(p, 1)": lambda: lib.multinomial(weights, 1, generator=g),
        "multinomial(p, 100, True)": lambda: lib.multinomial(weights, 100, True, generator=g),
        "randn f32": lambda: lib.randn(n, generator=g),
        "randn f64": lambda: out64.normal_(generator=g),
        "randperm": lambda: lib.randperm(n, generator=g),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=10**6)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    torch.set_num_threads(1)
    ours, theirs = cases(cr, args.size), cases(torch, args.size)
    print(f"size {args.size}, median of {args.repeat} (ms of CPU time)")
    print(f"{'sampler':28s} {'torch':>9s} {'chainrule':>10s} {'ratio':>7s}")
    for name in ours:
        times: dict[str, list[float]] = {"torch": [], "chainrule": []}
        pair = [("torch", theirs[name]), ("chainrule", ours[name])]
        for r in range(args.repeat):
            # each goes first half the time: the draw after another 4 MB one runs slower
            for lib, draw in pair if r % 2 else pair[::-1]:
                start = time.process_time()
                draw()
                times[lib].append(time.process_time() - start)
        t, c = (statistics.median(times[k]) * 1e3 for k in ("torch", "chainrule"))
        print(f"{name:28s} {t:9.2f} {c:10.2f} {c / t:7.1f}")


if __name__ == "__main__":
    main()
