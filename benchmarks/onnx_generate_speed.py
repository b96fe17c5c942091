"""Inference of the gpt recipe's model (4 layers of 128, a block of 64, the default corpus's
vocabulary) in chainrule and in ONNX Runtime on the model `chainrule export` writes,
float32: the logits of one token and of a full block, batch 1 and 32. Both settings of
threads in one run: pinned (OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1, ONNX Runtime's
session to one thread) and unpinned, each in processes of their own taking turns.

    python benchmarks/onnx_generate_speed.py [--steps 50] [--quick] [--steady-allocator]
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import os
import subprocess
import sys
from typing import Any

import numpy as np
from common import interleaved, onnx_session, parse_args, table

import chainrule as cr
from chainrule.tools.recipes import gpt

SHAPES = [(1, 1), (1, gpt.BLOCK_SIZE), (32, 1), (32, gpt.BLOCK_SIZE)]  # (batch, tokens)
PINNED = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def model() -> Any:
    """The gpt recipe's model as `chainrule train gpt` starts it (seed 0), in eval mode."""
    m, _, _, _ = gpt.setup({"data_file": None, "seed": 0})
    m.eval()
    return m


def exported(m: Any) -> bytes:
    """The model as `chainrule export` writes it: tokens (batch, time) -> logits."""
    from chainrule.onnx import export

    buf = io.BytesIO()
    free = {0: "batch", 1: "time"}
    export(m, cr.zeros(2, 5, dtype=cr.int64), buf, input_names=["tokens"],
           output_names=["logits"], dynamic_axes={"tokens": free, "logits": free})  # fmt: skip
    return buf.getvalue()


def chainrule_fn(tokens: np.ndarray) -> Any:
    m, x = model(), cr.tensor(tokens)

    def run() -> Any:
        with cr.no_grad():
            return m(x)

    return run


def onnxruntime_fn(tokens: np.ndarray) -> Any:
    session = onnx_session(exported(model()))
    return lambda: session.run(None, {"tokens": tokens})


def measure(steps: int, warmup: int) -> dict[str, dict[str, float]]:
    """Median seconds of each framework on each shape, threads as this process's environment
    says."""
    results = {}
    vocab = model().config.vocab_size
    for batch, length in SHAPES:
        tokens = np.random.default_rng(batch + length).integers(0, vocab, (batch, length))
        makers = {"chainrule": lambda t=tokens: chainrule_fn(t)}
        if importlib.util.find_spec("onnxruntime") is not None:
            makers["onnx runtime"] = lambda t=tokens: onnxruntime_fn(t)
        medians = interleaved(makers, steps, warmup)
        title = f"gpt recipe's model, batch {batch}, {length} token{'s' * (length > 1)}, float32"
        print(table(title, medians, unit="ms"), flush=True)
        results[f"batch {batch}, {length} tokens"] = medians
    return results


def main(argv: list[str] | None = None) -> dict[str, dict[str, dict[str, float]]]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--quick", action="store_true", help="a tiny run that only checks it works")
    ap.add_argument("--threads", choices=["pinned", "unpinned"], help=argparse.SUPPRESS)
    args = parse_args(ap, argv, __file__)
    steps, warmup = (2, 1) if args.quick else (args.steps, 5)
    if args.threads or args.worker:  # one setting's process, or a framework's in it
        results = measure(steps, warmup)
        if args.threads:
            print(json.dumps(results))
        return {}
    every = {}
    given = list(sys.argv[1:] if argv is None else argv)
    for threads in ("pinned", "unpinned"):
        env = {k: v for k, v in os.environ.items() if k not in PINNED}
        env.update(PINNED if threads == "pinned" else {})
        job = [sys.executable, __file__, *given, "--threads", threads]
        done = subprocess.run(job, env=env, capture_output=True, text=True, check=True)
        *tables, last = done.stdout.strip().splitlines()
        print("\n".join(tables), flush=True)
        every[threads] = json.loads(last)
    print("\nchainrule's time / ONNX Runtime's (one run)")
    for shape in every["pinned"]:
        ratios = [every[t][shape]["chainrule"] / every[t][shape].get("onnx runtime", np.nan)
                  for t in ("pinned", "unpinned")]  # fmt: skip
        print(f"  {shape:<22} pinned {ratios[0]:6.2f}x   unpinned {ratios[1]:6.2f}x")
    return every


if __name__ == "__main__":
    main()
