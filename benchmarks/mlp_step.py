"""One SGD training step of an MLP 784-512-512-10 with cross-entropy, float32, on chainrule,
on PyTorch and written by hand in NumPy (forward and backward derived by hand: the limit for
any NumPy-based framework).

    python benchmarks/mlp_step.py [--batch 128] [--steps 50] [--quick] [--steady-allocator]
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
from common import interleaved, parse_args, sgd_step, table, with_pytorch

import chainrule as cr

SIZES = (784, 512, 512, 10)
LR = 0.01


def init_weights(
    seed: int = 0, sizes: tuple[int, ...] = SIZES
) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [
        ((rng.uniform(-1, 1, (o, i)) / np.sqrt(i)).astype(np.float32), np.zeros(o, np.float32))
        for i, o in zip(sizes, sizes[1:], strict=False)
    ]


def numpy_step_fn(weights, x: np.ndarray, y: np.ndarray):
    """The step by hand. Its products are oriented as chainrule's Linear orients them, which
    OpenBLAS runs fastest: h = (W @ x^T)^T where a layer has more outputs than the batch
    has rows (h = x @ W^T throughout makes this step about 10% slower at batch 32), and
    g_x = (W^T @ g^T)^T for a column-major activation."""
    Ws = [w.copy() for w, _ in weights]
    bs = [b.copy() for _, b in weights]
    rows = np.arange(len(y))

    def step() -> float:
        acts = [x]
        h = x
        for k, (w, b) in enumerate(zip(Ws, bs, strict=True)):
            h = (w @ h.T).T if len(w) > len(h) else h @ w.T  # (B, out)
            h += b
            if k < len(Ws) - 1:
                np.maximum(h, 0, out=h)
            acts.append(h)
        z = h - h.max(axis=1, keepdims=True)
        e = np.exp(z)
        p = e / e.sum(axis=1, keepdims=True)  # softmax (B, 10)
        loss = -np.log(p[rows, y]).mean()
        g = p
        g[rows, y] -= 1
        g /= len(y)  # d loss / d logits
        for k in reversed(range(len(Ws))):
            gw = g.T @ acts[k]  # (out, in)
            gb = g.sum(axis=0)
            if k > 0:
                column_major = not acts[k].flags.c_contiguous
                g = (Ws[k].T @ g.T).T if column_major else g @ Ws[k]  # (B, in)
                g *= acts[k] > 0
            Ws[k] -= LR * gw
            bs[k] -= LR * gb
        return float(loss)

    return step


def model_step_fn(lib: Any, weights, x: np.ndarray, y: np.ndarray):
    """The MLP with the given weights and one SGD step of it, in ``lib`` (chainrule or torch)."""
    layers = []
    for k, (w, b) in enumerate(weights):
        lin = lib.nn.Linear(w.shape[1], w.shape[0])
        lin.load_state_dict({"weight": lib.tensor(w), "bias": lib.tensor(b)})
        layers += [lin, lib.nn.ReLU()] if k < len(weights) - 1 else [lin]
    return sgd_step(lib, lib.nn.Sequential(*layers), x, y, LR)


def chainrule_step_fn(weights, x: np.ndarray, y: np.ndarray):
    return model_step_fn(cr, weights, x, y)


def torch_step_fn(weights, x: np.ndarray, y: np.ndarray):
    import torch

    return model_step_fn(torch, weights, x, y)


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--quick", action="store_true", help="a tiny run that only checks it works")
    args = parse_args(ap, argv, __file__)
    steps, warmup = (2, 1) if args.quick else (args.steps, 5)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((args.batch, SIZES[0])).astype(np.float32)
    y = rng.integers(0, SIZES[-1], args.batch).astype(np.int64)
    weights = init_weights()
    makers = {
        "chainrule": lambda: model_step_fn(cr, weights, x, y),
        "numpy (by hand)": lambda: numpy_step_fn(weights, x, y),
    }
    with_pytorch(makers, lambda torch: model_step_fn(torch, weights, x, y))
    medians = interleaved(makers, steps, warmup)
    print(table(f"MLP 784-512-512-10 SGD step, batch {args.batch}, float32", medians))
    return medians


if __name__ == "__main__":
    main()
