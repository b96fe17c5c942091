"""One SGD training step of a small CNN on a batch of 1x28x28 images, float32, on chainrule
and on PyTorch with the same weights: conv3x3(1->16, pad 1) - relu - maxpool2 -
conv3x3(16->32, pad 1) - relu - maxpool2 - flatten - linear(1568->10) - cross-entropy.

    python benchmarks/cnn_step.py [--batch 64] [--steps 40] [--quick]
"""

from __future__ import annotations

import argparse

import numpy as np
from common import interleaved, pin_torch_threads, table

import chainrule as cr
import chainrule.nn.functional as F

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


def chainrule_step_fn(weights: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray):
    nn = cr.nn
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 7 * 7, 10),
    )  # fmt: skip
    model.load_state_dict(weights)
    opt = cr.optim.SGD(model.parameters(), lr=LR)
    xt, yt = cr.tensor(x), cr.tensor(y)

    def step() -> float:
        loss = F.cross_entropy(model(xt), yt)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()

    return step


def torch_step_fn(weights: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray):
    import torch

    nn = torch.nn
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 7 * 7, 10),
    )  # fmt: skip
    model.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in weights.items()})
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)

    def step() -> float:
        loss = nn.functional.cross_entropy(model(xt), yt)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()

    return step


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--quick", action="store_true", help="a tiny run that only checks it works")
    args = ap.parse_args(argv)
    batch = 4 if args.quick else args.batch
    steps, warmup = (2, 1) if args.quick else (args.steps, 5)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((batch, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, batch).astype(np.int64)
    weights = init_weights()
    fns = {"chainrule": chainrule_step_fn(weights, x, y)}
    try:
        pin_torch_threads()
        fns["pytorch"] = torch_step_fn(weights, x, y)
    except ImportError:
        pass
    medians = interleaved(fns, steps, warmup)
    print(table(f"CNN conv-relu-pool x2 + linear, SGD step, batch {batch}, float32", medians))
    return medians


if __name__ == "__main__":
    main()
