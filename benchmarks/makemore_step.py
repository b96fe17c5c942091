"""Training steps of two makemore-style character models, float32, same weights and batch
on every framework: an MLP over an embedding of the previous characters (the lookup whose
backward scatter-adds rows), and a small Transformer whose GELU is written out with a cube,
``0.5 * x * (1 + tanh(c * (x + 0.044715 * x ** 3)))``, as makemore writes it.

Rows: chainrule; PyTorch; and chainrule with its former paths for those two spots (the
embedding's gradient through ``np.add.at``, the cube through NumPy's generic power), so
the gain of each shows in the same run.

    python benchmarks/makemore_step.py [--model mlp transformer] [--batch 32] [--steps 30]
                                       [--quick] [--steady-allocator]
"""

from __future__ import annotations

import argparse
import math
from typing import Any

import numpy as np
from common import interleaved, parse_args, sgd_step, table, with_pytorch

import chainrule as cr

VOCAB = 27
LR = 0.1


def mlp(lib: Any, block: int, embed: int, hidden: int) -> Any:
    """makemore's MLP: the last ``block`` characters embedded, concatenated, a tanh layer."""

    class MLP(lib.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.wte = lib.nn.Embedding(VOCAB, embed)
            self.hidden = lib.nn.Linear(block * embed, hidden)
            self.head = lib.nn.Linear(hidden, VOCAB)

        def forward(self, idx: Any) -> Any:
            emb = self.wte(idx)  # (B, block, embed)
            return self.head(lib.tanh(self.hidden(emb.view(emb.shape[0], -1))))

    return MLP()


def transformer(lib: Any, block: int, embed: int, layers: int, heads: int) -> Any:
    """A makemore-style Transformer: pre-norm blocks of causal self-attention and an MLP
    with the cube-written GELU; predicts every position's next character."""
    nn = lib.nn
    c = math.sqrt(2.0 / math.pi)

    class NewGELU(nn.Module):
        def forward(self, x: Any) -> Any:
            return 0.5 * x * (1.0 + lib.tanh(c * (x + 0.044715 * lib.pow(x, 3.0))))

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(embed), nn.LayerNorm(embed)
            self.qkv, self.proj = nn.Linear(embed, 3 * embed), nn.Linear(embed, embed)
            self.fc, self.out = nn.Linear(embed, 4 * embed), nn.Linear(4 * embed, embed)
            self.gelu = NewGELU()
            mask = lib.tril(lib.ones(block, block)).view(1, 1, block, block)
            self.register_buffer("mask", mask)

        def attend(self, x: Any) -> Any:
            B, T, C = x.shape
            q, k, v = self.qkv(x).split(embed, dim=2)
            q, k, v = (t.view(B, T, heads, C // heads).transpose(1, 2) for t in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.shape[-1]))
            att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
            y = lib.softmax(att, dim=-1) @ v
            return self.proj(y.transpose(1, 2).contiguous().view(B, T, C))

        def forward(self, x: Any) -> Any:
            x = x + self.attend(self.ln1(x))
            return x + self.out(self.gelu(self.fc(self.ln2(x))))

    class Transformer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.wte, self.wpe = nn.Embedding(VOCAB, embed), nn.Embedding(block, embed)
            self.blocks = nn.Sequential(*[Block() for _ in range(layers)])
            self.ln, self.head = nn.LayerNorm(embed), nn.Linear(embed, VOCAB)

        def forward(self, idx: Any) -> Any:
            pos = lib.arange(idx.shape[1])
            x = self.blocks(self.wte(idx) + self.wpe(pos))
            return self.head(self.ln(x)).view(-1, VOCAB)

    return Transformer()


def weights_of(model: Any) -> dict[str, np.ndarray]:
    """Weights drawn once, so every framework starts from the same ones."""
    rng = np.random.default_rng(0)
    out = {}
    for name, p in model.state_dict().items():
        shape = tuple(p.shape)
        if name.endswith("mask"):
            out[name] = np.tril(np.ones(shape, np.float32))
        elif len(shape) == 1:
            out[name] = (1.0 if ".ln" in f".{name}" else 0.0) + np.zeros(shape, np.float32)
        else:
            out[name] = (rng.standard_normal(shape) * 0.2).astype(np.float32)
    return out


def workload(kind: str, batch: int, quick: bool) -> tuple[Any, np.ndarray, np.ndarray]:
    """The model maker and one batch: (B, block) character indices and their targets."""
    rng = np.random.default_rng(1)
    if kind == "mlp":
        block = 3 if quick else 16  # makemore's MLP: a name's longest length, 64 wide
        shape = (block, 4, 8) if quick else (block, 64, 64)
        make = lambda lib: mlp(lib, *shape)  # noqa: E731
        y = rng.integers(0, VOCAB, batch)
    else:
        block = 4 if quick else 16
        shape = (block, 8, 1, 2) if quick else (block, 64, 4, 4)
        make = lambda lib: transformer(lib, *shape)  # noqa: E731
        y = rng.integers(0, VOCAB, batch * block)
    x = rng.integers(0, VOCAB, (batch, block))
    return make, x.astype(np.int64), y.astype(np.int64)


def step_fn(lib: Any, make: Any, x: np.ndarray, y: np.ndarray) -> Any:
    lib.manual_seed(0)
    model = make(lib)
    model.load_state_dict({k: lib.tensor(v) for k, v in weights_of(model).items()})
    return sgd_step(lib, model, x, y, LR)


def former_paths_step_fn(make: Any, x: np.ndarray, y: np.ndarray) -> Any:
    """chainrule with the embedding's gradient through np.add.at and cubes through NumPy's
    generic power, as before they had paths of their own."""
    from chainrule.autograd import fastpath
    from chainrule.ops import elementwise

    fastpath.ADD_AT_MAX = math.inf
    elementwise.Pow.forward = lambda self, a, b: a**b
    return step_fn(cr, make, x, y)


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", nargs="+", default=["mlp", "transformer"])
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--quick", action="store_true", help="a tiny run that only checks it works")
    args = parse_args(ap, argv, __file__)
    steps, warmup = (2, 1) if args.quick else (args.steps, 5)
    results = {}
    for kind in args.model:
        make, x, y = workload(kind, 4 if args.quick else args.batch, args.quick)
        makers = {
            "chainrule": lambda make=make, x=x, y=y: step_fn(cr, make, x, y),
            "chainrule, former paths": lambda make=make, x=x, y=y: former_paths_step_fn(make, x, y),
        }
        with_pytorch(makers, lambda torch, make=make, x=x, y=y: step_fn(torch, make, x, y))
        medians = interleaved(makers, steps, warmup)
        print(table(f"makemore {kind} SGD step, batch {len(x)}, float32", medians))
        results[kind] = medians
    return results


if __name__ == "__main__":
    main()
