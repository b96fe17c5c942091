"""The fixed cost of a training step: one SGD step of an MLP 8-8-8-3 at batch 4, whose
arithmetic is negligible, so what remains is each framework's own work per step (its Python,
or PyTorch's C++), on chainrule, PyTorch and NumPy by hand.

Measured twice: as it is (interleaved, so each step finds the caches as the other frameworks
left them), and after some MiB of array traffic before each step (untimed), as a large
model's step leaves the caches. The second is the part of a small-batch step that is not
arithmetic: at batch 32, chainrule's step of the 784-512-512-10 MLP takes about as much
longer than the step by hand as it does here.

    python benchmarks/fixed_cost.py [--stream-mib 4] [--steps 2000] [--quick] [--steady-allocator]
"""

from __future__ import annotations

import argparse

import numpy as np
from common import interleaved, parse_args, table, with_pytorch
from mlp_step import init_weights, model_step_fn, numpy_step_fn

import chainrule as cr

SIZES = (8, 8, 8, 3)
BATCH = 4


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--stream-mib", type=float, default=4.0, help="array traffic before a step")
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--quick", action="store_true", help="a tiny run that only checks it works")
    args = parse_args(ap, argv, __file__)
    steps, warmup = (2, 1) if args.quick else (args.steps, 50)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    y = rng.integers(0, SIZES[-1], BATCH).astype(np.int64)
    weights = init_weights(sizes=SIZES)
    makers = {
        "chainrule": lambda: model_step_fn(cr, weights, x, y),
        "numpy (by hand)": lambda: numpy_step_fn(weights, x, y),
    }
    with_pytorch(makers, lambda torch: model_step_fn(torch, weights, x, y))
    traffic = np.zeros(int(args.stream_mib * 2**20) // 4, dtype=np.float32)

    def stream() -> None:
        np.add(traffic, 1, out=traffic)  # reads and writes every byte once

    results = {}
    for label, before in (("no other traffic", None), (f"after {args.stream_mib:g} MiB", stream)):
        results[label] = medians = interleaved(makers, steps, warmup, before)
        title = f"Fixed cost of an SGD step, MLP 8-8-8-3, batch {BATCH}, {label}"
        print(table(title, medians, unit="us", scale=1e6))
    return results


if __name__ == "__main__":
    main()
