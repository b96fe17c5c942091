"""minGPT's adder: the GPT learns to add two 2-digit numbers, scored by exact match on pairs
it never saw.

A pair a + b = c is the 7 digits of a, b and c with c's 3 digits written units first
(85 + 47 = 132 is 8 5 4 7 2 3 1): reversed, each digit of the sum depends on the digits
already written and a carry, so the model learns the schoolbook algorithm instead of looking
ahead. The loss counts c's digits only. The 10,000 pairs split once, whatever --seed:
TEST_SIZE drawn by randperm under SPLIT_SEED are held out.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import chainrule as cr
from chainrule import nn
from chainrule.tools.recipes.gpt import GPT, GPTConfig
from chainrule.tools.recipes.language import (
    check_positive,
    generate,
    lm_loss,
    run_metrics,
    train_steps,
    write_run,
)

DESCRIPTION = "minGPT's adder: a GPT adds two 2-digit numbers, exact-match test accuracy"
DEFAULTS: dict[str, Any] = {"steps": 2000, "lr": 3e-3, "batch_size": 64}
SHOWN = ("test_accuracy",)
RESUMES = True  # --checkpoint-every and --resume: see language.train_steps
NDIGIT = 2
SPLIT_SEED = 3407
TEST_SIZE = 1000


def digits(pairs: cr.Tensor) -> cr.Tensor:
    """Pair numbers p = a * 100 + b (N,) -> the digits of a, b and c reversed, (N, 7)."""
    rows = []
    for p in pairs.tolist():
        a, b = divmod(p, 10**NDIGIT)
        text = f"{a:0{NDIGIT}d}{b:0{NDIGIT}d}" + f"{a + b:0{NDIGIT + 1}d}"[::-1]
        rows.append([int(d) for d in text])
    return cr.tensor(rows, dtype=cr.int64)


def examples(pairs: cr.Tensor) -> tuple[cr.Tensor, cr.Tensor]:
    """Inputs (N, 6), the first 6 digits, and targets (N, 6), the next digit at each
    position, -1 (not counted) where it is a digit of a or b."""
    seq = digits(pairs)  # (N, 7)
    y = seq[:, 1:].clone()
    y[:, : 2 * NDIGIT - 1] = -1
    return seq[:, :-1], y


def accuracy(model: nn.Module, pairs: cr.Tensor) -> float:
    """The fraction of pairs whose sum's 3 digits the model writes exactly, greedily."""
    seq = digits(pairs)  # (N, 7)
    out = generate(model, seq[:, : 2 * NDIGIT], NDIGIT + 1, 2 * NDIGIT + NDIGIT, greedy=True)
    return float(((out != seq).sum(dim=1) == 0).float().mean().item())


def setup(settings: dict) -> tuple[GPT, cr.Tensor, cr.Tensor]:
    """The model (initialised under --seed) and the train and test pairs."""
    order = cr.randperm(10 ** (2 * NDIGIT), generator=cr.Generator().manual_seed(SPLIT_SEED))
    cr.manual_seed(settings["seed"])
    config = GPTConfig(vocab_size=10, block_size=3 * NDIGIT, n_layer=2, n_head=4, n_embd=64)
    return GPT(config), order[TEST_SIZE:], order[:TEST_SIZE]


def train(name: str, settings: dict, out_dir: str, quiet: bool) -> dict:
    check_positive(name, settings, "steps", "batch_size")
    model, train_pairs, test_pairs = setup(settings)
    x_train, y_train = examples(train_pairs)
    x_test, y_test = examples(test_pairs)
    g = cr.Generator().manual_seed(settings["seed"])

    def batch() -> tuple[cr.Tensor, cr.Tensor]:
        rows = cr.randint(0, len(x_train), (settings["batch_size"],), generator=g)
        return x_train[rows], y_train[rows]

    def evaluate() -> dict[str, float]:
        n = len(x_test)  # the train loss on a fixed part of the train set as large as the test
        return {"train_loss": lm_loss(model(x_train[:n]), y_train[:n]).item(),
                "test_loss": lm_loss(model(x_test), y_test).item(),
                "test_accuracy": accuracy(model, test_pairs)}  # fmt: skip

    history, start = train_steps(name, model, batch, g, evaluate, settings, out_dir, quiet,
                                 weight_decay=0.1)  # fmt: skip
    metrics = run_metrics(name, settings, history, start,
                          model={"kind": "gpt", **asdict(model.config)})  # fmt: skip
    write_run(out_dir, metrics, model, quiet)
    return metrics


def one_step(settings: dict) -> tuple[cr.Tensor, nn.Module]:
    """The loss of four training pairs, for `chainrule graph`."""
    model, train_pairs, _ = setup(settings)
    x, y = examples(train_pairs[:4])
    return lm_loss(model(x), y), model
