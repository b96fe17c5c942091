"""One SGD training step of a 2-layer LSTM (input 256, hidden 256) over a sequence of 64 steps
at batch 32, with a linear layer (256 -> 10) and cross-entropy at every step, float32, on
chainrule and on PyTorch with the same weights; and on chainrule with the fast path off,
where each layer runs as the cell's step in Tensor ops, time after time, instead of as one
primitive.

    python benchmarks/lstm_step.py [--seq 64] [--batch 32] [--hidden 256] [--steps 20]
                                   [--quick] [--steady-allocator]
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
from common import interleaved, parse_args, sgd_step, table, with_pytorch

import chainrule as cr

LR = 0.01
CLASSES = 10


def init_weights(hidden: int, inputs: int, seed: int = 0) -> dict[str, np.ndarray]:
    """PyTorch's parameter names and shapes, uniform in +-1/sqrt(hidden) as its LSTM starts."""
    rng = np.random.default_rng(seed)
    shapes = {}
    for k in range(2):
        shapes[f"lstm.weight_ih_l{k}"] = (4 * hidden, inputs if k == 0 else hidden)
        shapes[f"lstm.weight_hh_l{k}"] = (4 * hidden, hidden)
        shapes[f"lstm.bias_ih_l{k}"] = (4 * hidden,)
        shapes[f"lstm.bias_hh_l{k}"] = (4 * hidden,)
    shapes |= {"head.weight": (CLASSES, hidden), "head.bias": (CLASSES,)}
    bound = 1 / np.sqrt(hidden)
    return {k: rng.uniform(-bound, bound, s).astype(np.float32) for k, s in shapes.items()}


def model_step_fn(lib: Any, weights: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray):
    """The LSTM with the given weights and one SGD step of it, in ``lib`` (chainrule or
    torch): x (L, N, inputs), y (L * N,) class indices."""
    hidden, inputs = weights["lstm.weight_hh_l0"].shape[1], x.shape[-1]

    class Tagger(lib.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lstm = lib.nn.LSTM(inputs, hidden, num_layers=2)
            self.head = lib.nn.Linear(hidden, CLASSES)

        def forward(self, x: Any) -> Any:
            out, _ = self.lstm(x)  # (L, N, hidden)
            return self.head(out).reshape(-1, CLASSES)  # (L * N, classes)

    model = Tagger()
    model.load_state_dict({k: lib.tensor(v) for k, v in weights.items()})
    return sgd_step(lib, model, x, y, LR)


def chainrule_step_fn(weights: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray):
    return model_step_fn(cr, weights, x, y)


def chainrule_plain_step_fn(weights: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray):
    """chainrule with every speed trick off during the step: the per-step cells."""
    step = model_step_fn(cr, weights, x, y)

    def plain_step() -> float:
        with cr.autograd.fastpath.disabled():
            return step()

    return plain_step


def torch_step_fn(weights: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray):
    import torch

    return model_step_fn(torch, weights, x, y)


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="a tiny run that only checks it works")
    args = parse_args(ap, argv, __file__)
    seq, batch, hidden = (5, 4, 16) if args.quick else (args.seq, args.batch, args.hidden)
    steps, warmup = (2, 1) if args.quick else (args.steps, 3)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((seq, batch, hidden)).astype(np.float32)
    y = rng.integers(0, CLASSES, seq * batch).astype(np.int64)
    weights = init_weights(hidden, hidden)
    makers = {
        "chainrule": lambda: chainrule_step_fn(weights, x, y),
        "chainrule, fast path off": lambda: chainrule_plain_step_fn(weights, x, y),
    }
    with_pytorch(makers, lambda torch: model_step_fn(torch, weights, x, y))
    medians = interleaved(makers, steps, warmup)
    title = f"LSTM 2 x {hidden}, seq {seq}, batch {batch}, + linear, SGD step, float32"
    print(table(title, medians))
    return medians


if __name__ == "__main__":
    main()
