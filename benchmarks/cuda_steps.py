"""Training steps on a CUDA device, chainrule (through CuPy) beside PyTorch on the same GPU:
the MLP 784-512-512-10 with SGD (batch 128), the digits CNN (conv 16, conv 32, max pool,
linear; Adam, batch 64) and nanoGPT's GPT of gpt_step.py (AdamW, batch 32), float32, the
same weights and batches in both. Each step ends in ``loss.item()``, which waits for the
GPU, so a step's time is its whole time. Reported as chainrule / PyTorch.

    CHAINRULE_ARRAY_BACKEND=cupy python benchmarks/cuda_steps.py [--steps 30] [--quick]

Without a GPU it runs where ``--device`` says (the strict stand-in's CUDA device under
CHAINRULE_ARRAY_BACKEND=strict, as the suite runs it with --quick; or the CPU), and PyTorch
on the CPU: a check that the script works, not a measurement of a GPU.
"""

from __future__ import annotations

import argparse
from typing import Any

import gpt_step
import numpy as np
from common import interleaved, parse_args, table, with_pytorch

import chainrule as cr


def _weights(model: Any, lib: Any, seed: int) -> None:
    """The same weights in both frameworks: each drawn by NumPy from its name's order."""
    rng = np.random.default_rng(seed)
    state = {}
    for name, t in model.state_dict().items():
        shape = tuple(t.shape)
        bound = 1.0 / np.sqrt(max(1, int(np.prod(shape[1:])))) if len(shape) > 1 else 0.1
        state[name] = lib.tensor(rng.uniform(-bound, bound, shape).astype(np.float32))
    model.load_state_dict(state)


def mlp_step(lib: Any, device: str, batch: int = 128) -> Any:
    nn = lib.nn
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))  # fmt: skip
    _weights(model, lib, 0)
    model.to(device)
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    rng = np.random.default_rng(1)
    x = lib.tensor(rng.standard_normal((batch, 784)).astype(np.float32)).to(device)
    y = lib.tensor(rng.integers(0, 10, batch)).to(device)
    return _step(lib, model, opt, x, y)


def cnn_step(lib: Any, device: str, batch: int = 64) -> Any:
    nn = lib.nn
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
        nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 4 * 4, 10),
    )  # fmt: skip
    _weights(model, lib, 2)
    model.to(device)
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(3)
    x = lib.tensor(rng.standard_normal((batch, 1, 8, 8)).astype(np.float32)).to(device)
    y = lib.tensor(rng.integers(0, 10, batch)).to(device)
    return _step(lib, model, opt, x, y)


def _step(lib: Any, model: Any, opt: Any, x: Any, y: Any) -> Any:
    def step() -> float:
        loss = lib.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.item()  # waits for the device

    return step


def gpt_step_fn(lib: Any, device: str, batch: int = 32) -> Any:
    x, y = gpt_step.batch(batch)
    return gpt_step.model_step_fn(lib, x, y, device)


WORKLOADS = {"mlp": mlp_step, "cnn": cnn_step, "gpt": gpt_step_fn}


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--device", default="cuda", help="chainrule's device (default cuda)")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--quick", action="store_true", help="a tiny run that only checks it works")
    args = parse_args(ap, argv, __file__)
    steps, warmup = (2, 1) if args.quick else (args.steps, 3)
    results = {}
    for name, make in WORKLOADS.items():
        makers = {"chainrule": lambda make=make: make(cr, args.device)}

        def theirs(torch: Any, make: Any = make) -> Any:
            return make(torch, "cuda" if torch.cuda.is_available() else "cpu")

        with_pytorch(makers, theirs)
        results[name] = interleaved(makers, steps, warmup)
        print(table(f"{name} training step, chainrule on {args.device}", results[name]))
    return results


if __name__ == "__main__":
    main()
