"""Per-op overhead: a chain of small ops, ((x * 1.0001 + 0.001).tanh() repeated), on an 8x8
tensor, forward and backward, in microseconds per op, chainrule against PyTorch.

    python benchmarks/per_op.py [--ops 3000] [--steps 15] [--quick] [--steady-allocator]

Each op of the catalog alone, against PyTorch at three sizes, pinned and unpinned, is
benchmarks/op_catalog.py (the section "Per-op cost" of docs/performance.md).
"""

from __future__ import annotations

import argparse

import numpy as np
from common import interleaved, parse_args, table, with_pytorch

import chainrule as cr


def chain_fn(lib, n_ops: int):
    x0 = np.random.default_rng(0).random((8, 8)).astype(np.float32)

    def run() -> None:
        x = lib.tensor(x0, requires_grad=True)
        y = x
        for _ in range(n_ops // 3):  # three ops a round: mul, add, tanh
            y = (y * 1.0001 + 0.001).tanh()
        y.sum().backward()

    return run


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--ops", type=int, default=3000)
    ap.add_argument("--steps", type=int, default=15)
    ap.add_argument("--quick", action="store_true")
    args = parse_args(ap, argv, __file__)
    n_ops, steps, warmup = (30, 2, 1) if args.quick else (args.ops, args.steps, 2)
    makers = {"chainrule": lambda: chain_fn(cr, n_ops)}
    with_pytorch(makers, lambda torch: chain_fn(torch, n_ops))
    per_op = {k: v / n_ops for k, v in interleaved(makers, steps, warmup).items()}
    print(
        table(
            f"Per-op overhead: chain of {n_ops} ops on 8x8, forward + backward",
            per_op,
            unit="us/op",
            scale=1e6,
        )
    )
    return per_op


if __name__ == "__main__":
    main()
