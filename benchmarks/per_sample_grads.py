"""Per-sample gradients of a small MLP and a small CNN at a batch of 64, float32: chainrule's
``vmap(grad(loss), in_dims=(None, 0, 0))`` over functional_call, beside a loop of one
backward pass per example (chainrule's), and torch.func's vmap and loop.

    python benchmarks/per_sample_grads.py [--batch 64] [--repeats 7]

Each setting runs in a process of its own, threads pinned to 1 (OMP_NUM_THREADS=1) and
unpinned; medians of ``--repeats`` runs after a warm-up, in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any


def _models(lib: Any) -> dict[str, Any]:
    nn = lib.nn
    lib.manual_seed(0)
    mlp = nn.Sequential(
        nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 10)
    )
    cnn = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(16 * 7 * 7, 10),
    )
    return {"mlp": (mlp, (32,)), "cnn": (cnn, (1, 28, 28))}


def _median_ms(fn: Any, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def measure(batch: int, repeats: int) -> dict[str, float]:
    """Every (framework, model, way) time, in this process."""
    import numpy as np
    import torch
    import torch.func as tf

    import chainrule as cr
    import chainrule.func as cf

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", os.cpu_count() or 1)))
    out = {}
    for name, lib, func in (("chainrule", cr, cf), ("torch", torch, tf)):
        for model_name, (model, shape) in _models(lib).items():
            rng = np.random.default_rng(0)
            x = lib.tensor(rng.standard_normal((batch, *shape)).astype(np.float32))
            y = lib.tensor(rng.integers(0, 10, batch))
            params = {k: v.detach() for k, v in model.named_parameters()}

            def loss(
                p: Any, xi: Any, yi: Any, model: Any = model, func: Any = func, lib: Any = lib
            ) -> Any:
                logits = func.functional_call(model, p, (xi.unsqueeze(0),))
                return lib.nn.functional.cross_entropy(logits, yi.unsqueeze(0))

            per_sample = func.vmap(func.grad(loss), in_dims=(None, 0, 0))
            one = func.grad(loss)
            out[f"{name} {model_name} vmap"] = _median_ms(
                lambda ps=per_sample, p=params, x=x, y=y: ps(p, x, y), repeats
            )
            out[f"{name} {model_name} loop"] = _median_ms(
                lambda one=one, p=params, x=x, y=y: [one(p, x[i], y[i]) for i in range(batch)],
                repeats,
            )
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.batch, args.repeats)))
        return
    me = [sys.executable, __file__, "--child", f"--batch={args.batch}", f"--repeats={args.repeats}"]
    for label, threads in (
        ("pinned (1 thread)", "1"),
        (f"unpinned ({os.cpu_count()} cores)", None),
    ):
        env = dict(os.environ)
        env.pop("OMP_NUM_THREADS", None)
        if threads:
            env["OMP_NUM_THREADS"] = threads
        got = json.loads(
            subprocess.run(me, env=env, capture_output=True, text=True, check=True).stdout
        )
        print(f"\nper-sample gradients, batch {args.batch}, threads {label}; median ms")
        print(f"{'model':6} {'framework':10} {'vmap':>9} {'loop':>9} {'loop/vmap':>10}")
        for model in ("mlp", "cnn"):
            for fw in ("chainrule", "torch"):
                v, lp = got[f"{fw} {model} vmap"], got[f"{fw} {model} loop"]
                print(f"{model:6} {fw:10} {v:9.2f} {lp:9.2f} {lp / v:9.1f}x")


if __name__ == "__main__":
    main()
