"""One training step of nanoGPT's GPT (benchmarks/nanogpt.py: 4 layers, 4 heads, n_embd
128, block 64, vocabulary 65, no bias, no dropout), float32, on chainrule and on PyTorch
with the same weights and batch: forward, cross-entropy, backward and nanoGPT's AdamW
step. Then the peak memory of those steps, each framework in a fresh process: the growth of
peak RSS over the RSS just before the first step (the model and batch made, imports left
out), as memory.py measures it.

    python benchmarks/gpt_step.py [--batch 32] [--steps 30] [--quick] [--steady-allocator]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import zlib
from typing import Any

import nanogpt
import numpy as np
from common import interleaved, parse_args, table, with_pytorch

import chainrule as cr

CONFIG = nanogpt.GPTConfig(
    block_size=64, vocab_size=65, n_layer=4, n_head=4, n_embd=128, dropout=0.0, bias=False
)
TIED = {"lm_head.weight": "transformer.wte.weight"}  # one tensor under two names


def init_weights(shapes: dict[str, tuple[int, ...]], seed: int = 0) -> dict[str, np.ndarray]:
    """nanoGPT's initialisation, drawn by NumPy from each name (so both frameworks get the
    same weights): N(0, 0.02) matrices, LayerNorm weights 1."""
    out = {}
    for name, shape in shapes.items():
        rng = np.random.default_rng([seed, zlib.crc32(TIED.get(name, name).encode())])
        w = np.ones(shape) if len(shape) == 1 else rng.normal(0.0, 0.02, shape)
        out[name] = w.astype(np.float32)
    return out


def batch(size: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Token ids (size, block) and the next-token targets."""
    rng = np.random.default_rng(seed)
    data = rng.integers(0, CONFIG.vocab_size, (size, CONFIG.block_size + 1))
    return data[:, :-1].copy(), data[:, 1:].copy()


def model_step_fn(lib: Any, x: np.ndarray, y: np.ndarray, device: str = "cpu"):
    """nanoGPT's model in ``lib`` (chainrule or torch) with init_weights' weights, on
    ``device``, and one AdamW training step of it on (x, y), as nanoGPT's train.py takes
    it."""
    GPT = nanogpt.build(lib, lib.nn, lib.nn.functional).GPT
    model = GPT(CONFIG)
    shapes = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    model.load_state_dict({k: lib.tensor(w) for k, w in init_weights(shapes).items()})
    model.to(device)
    kind = "cuda" if "cuda" in str(device) else "cpu"
    opt = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95), kind)
    xt, yt = lib.tensor(x).to(device), lib.tensor(y).to(device)

    def step() -> float:
        _, loss = model(xt, yt)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.item()

    return step


def chainrule_step_fn(x: np.ndarray, y: np.ndarray):
    return model_step_fn(cr, x, y)


def torch_step_fn(x: np.ndarray, y: np.ndarray):
    import torch

    return model_step_fn(torch, x, y)


def _rss_mib(field: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def peak_growth(name: str, steps: int, size: int) -> float:
    """In this process: make ``name``'s step, then the growth of peak RSS (MiB) over
    ``steps`` steps (Linux: writing 5 to clear_refs resets the high-water mark)."""
    x, y = batch(size)
    step = (chainrule_step_fn if name == "chainrule" else torch_step_fn)(x, y)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    before = _rss_mib("VmRSS")
    for _ in range(steps):
        step()
    return _rss_mib("VmHWM") - before


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--quick", action="store_true", help="a tiny run that only checks it works")
    ap.add_argument("--peak-of", help=argparse.SUPPRESS)  # FRAMEWORK: measure its memory
    args = parse_args(ap, argv, __file__)
    steps, warmup = (2, 1) if args.quick else (args.steps, 3)
    if args.peak_of:
        if args.peak_of == "pytorch":
            from common import pin_torch_threads

            pin_torch_threads()
        print(json.dumps({"growth": peak_growth(args.peak_of, steps, args.batch)}))
        return {}
    x, y = batch(args.batch)
    makers = {"chainrule": lambda: model_step_fn(cr, x, y)}
    with_pytorch(makers, lambda torch: model_step_fn(torch, x, y))
    medians = interleaved(makers, steps, warmup)
    c = CONFIG
    title = (
        f"GPT {c.n_layer} layers, {c.n_head} heads, n_embd {c.n_embd}, block {c.block_size}, "
        f"vocab {c.vocab_size}: AdamW step, batch {args.batch}, float32"
    )
    print(table(title, medians))
    growth = {}
    for name in medians:
        cmd = [sys.executable, os.path.abspath(__file__), "--batch", str(args.batch)]
        cmd += ["--steps", str(steps), "--peak-of", name]
        if args.steady_allocator:
            cmd.append("--steady-allocator")
        out = subprocess.run(cmd, capture_output=True, text=True, check=True)
        growth[name] = json.loads(out.stdout.strip().splitlines()[-1])["growth"]
    print(f"  peak RSS growth over {steps} steps (MiB, each framework alone in a fresh process)")
    for name, g in growth.items():
        ratio = f"{growth['chainrule'] / g:8.2f}x" if name != "chainrule" and g > 0 else ""
        print(f"  {name:<22}{g:10.1f}   {ratio}")
    return medians


if __name__ == "__main__":
    main()
