"""One SGD training step of a small CNN on a batch of 1x28x28 images, float32, on chainrule
and on PyTorch with the same weights: conv3x3(1->16, pad 1) - relu - maxpool2 -
conv3x3(16->32, pad 1) - relu - maxpool2 - flatten - linear(1568->10) - cross-entropy.

    python benchmarks/cnn_step.py [--batch 64] [--steps 40] [--quick] [--steady-allocator]
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
from common import interleaved, parse_args, sgd_step, table, with_pytorch

import chainrule as cr

LR = 0.01
SHAPES = {  # PyTorch's parameter names and shapes, shared by both models
    "0.weight": (16, 1, 3, 3),
    "0.bias": (16,),
    "3.weight": (32, 16, 3, 3),
    "3.bias": (32,),
    "7.weight": (10, 32 * 7 * 7),
    "7.bias": (10,),
}


def init_weights(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    weights = {}
    for name, shape in SHAPES.items():
        fan_in = int(np.prod(SHAPES[name.replace("bias", "weight")][1:]))
        weights[name] = rng.uniform(-1, 1, shape).astype(np.float32) / np.sqrt(fan_in)
    return weights


def model_step_fn(lib: Any, weights: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray):
    """The CNN with the given weights and one SGD step of it, in ``lib`` (chainrule or torch)."""
    nn = lib.nn
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 7 * 7, 10),
    )  # fmt: skip
    model.load_state_dict({k: lib.tensor(v) for k, v in weights.items()})
    return sgd_step(lib, model, x, y, LR)


def chainrule_step_fn(weights: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray):
    return model_step_fn(cr, weights, x, y)


def torch_step_fn(weights: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray):
    import torch

    return model_step_fn(torch, weights, x, y)


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--quick", action="store_true", help="a tiny run that only checks it works")
    args = parse_args(ap, argv, __file__)
    batch = 4 if args.quick else args.batch
    steps, warmup = (2, 1) if args.quick else (args.steps, 5)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((batch, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, batch).astype(np.int64)
    weights = init_weights()
    makers = {"chainrule": lambda: model_step_fn(cr, weights, x, y)}
    with_pytorch(makers, lambda torch: model_step_fn(torch, weights, x, y))
    medians = interleaved(makers, steps, warmup)
    print(table(f"CNN conv-relu-pool x2 + linear, SGD step, batch {batch}, float32", medians))
    return medians


if __name__ == "__main__":
    main()
