"""The GPT lecture's first program (Karpathy's ng-video-lecture, bigram.py), as it is written
there, on chainrule and on PyTorch: a character-level bigram model (one Embedding(vocab,
vocab) read as logits, cross-entropy), trained with AdamW on batches that ``get_batch`` stacks
slice by slice (``data[i:i+block_size] for i in ix``, each ``i`` a 0-d tensor), the loss
estimated under ``@no_grad`` every ``eval_interval`` steps, then text generated token by token
with multinomial. The text is the names list, one name a line (the only text that ships).
Training and generation are timed each on its own, each framework in a process of its own,
with threads pinned to one and unpinned.

    python benchmarks/bigram_lecture.py [--iters 3000] [--steps 3] [--quick]
                                        [--steady-allocator]
"""

from __future__ import annotations

import argparse
from typing import Any

from common import parse_args, parts_pinned_and_unpinned

import chainrule as cr

PARTS = ("train", "generate")
# bigram.py's hyperparameters: max_iters and eval_iters come from the command line
BATCH_SIZE, BLOCK_SIZE, EVAL_INTERVAL, LEARNING_RATE = 32, 8, 300, 1e-2


def lecture(lib: Any, text: str, iters: int, eval_iters: int, new_tokens: int) -> Any:
    """bigram.py for ``lib`` (torch or chainrule, whose APIs agree): returns its two parts,
    ``train()`` (seeded, a new model trained ``iters`` steps; returns the model and the
    estimated losses) and ``generate(model)`` (``new_tokens`` characters from a newline)."""
    nn, F = lib.nn, lib.nn.functional
    chars = sorted(set(text))
    vocab_size = len(chars)
    stoi = {ch: i for i, ch in enumerate(chars)}
    itos = dict(enumerate(chars))
    data = lib.tensor([stoi[c] for c in text], dtype=lib.long)
    n = int(0.9 * len(data))
    train_data, val_data = data[:n], data[n:]

    def get_batch(split: str) -> tuple[Any, Any]:
        data = train_data if split == "train" else val_data
        ix = lib.randint(len(data) - BLOCK_SIZE, (BATCH_SIZE,))
        x = lib.stack([data[i : i + BLOCK_SIZE] for i in ix])  # (B, T)
        y = lib.stack([data[i + 1 : i + BLOCK_SIZE + 1] for i in ix])  # (B, T)
        return x, y

    class BigramLanguageModel(nn.Module):
        def __init__(self, vocab_size: int) -> None:
            super().__init__()
            self.token_embedding_table = nn.Embedding(vocab_size, vocab_size)

        def forward(self, idx: Any, targets: Any = None) -> tuple[Any, Any]:
            logits = self.token_embedding_table(idx)  # (B, T, C)
            if targets is None:
                loss = None
            else:
                B, T, C = logits.shape
                logits = logits.view(B * T, C)  # (B*T, C)
                targets = targets.view(B * T)  # (B*T,)
                loss = F.cross_entropy(logits, targets)
            return logits, loss

        def generate(self, idx: Any, max_new_tokens: int) -> Any:
            for _ in range(max_new_tokens):
                logits, loss = self(idx)
                logits = logits[:, -1, :]  # (B, C)
                probs = F.softmax(logits, dim=-1)  # (B, C)
                idx_next = lib.multinomial(probs, num_samples=1)  # (B, 1)
                idx = lib.cat((idx, idx_next), dim=1)  # (B, T+1)
            return idx

    @lib.no_grad()
    def estimate_loss(model: Any) -> dict[str, float]:
        out = {}
        model.eval()
        for split in ["train", "val"]:
            losses = lib.zeros(eval_iters)
            for k in range(eval_iters):
                X, Y = get_batch(split)
                logits, loss = model(X, Y)
                losses[k] = loss.item()
            out[split] = losses.mean().item()
        model.train()
        return out

    def train() -> tuple[Any, list[dict[str, float]]]:
        lib.manual_seed(1337)
        model = BigramLanguageModel(vocab_size)
        optimizer = lib.optim.AdamW(model.parameters(), lr=LEARNING_RATE)
        estimates = []
        for step in range(iters):
            if step % EVAL_INTERVAL == 0:
                estimates.append(estimate_loss(model))
            xb, yb = get_batch("train")
            logits, loss = model(xb, yb)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        estimates.append({"last batch": loss.item()})
        return model, estimates

    def generate(model: Any) -> str:
        lib.manual_seed(1337)
        context = lib.zeros((1, 1), dtype=lib.long)
        return "".join(itos[i] for i in model.generate(context, new_tokens)[0].tolist())

    return train, generate


def part(lib: Any, name: str, args: Any) -> Any:
    """The step that runs one part once: training, or generation by a model trained first."""
    text = "\n".join(cr.datasets.names())
    train, generate = lecture(lib, text, args.iters, args.eval_iters, args.tokens)
    if name == PARTS[0]:
        return train
    model, _ = train()
    return lambda: generate(model)


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--iters", type=int, default=3000, help="training steps (max_iters)")
    ap.add_argument("--eval-iters", type=int, default=200, help="batches per loss estimate")
    ap.add_argument("--tokens", type=int, default=500, help="characters generated")
    ap.add_argument("--steps", type=int, default=3, help="timed runs of each part")
    ap.add_argument("--quick", action="store_true", help="a tiny run that only checks it works")
    args = parse_args(ap, argv, __file__)
    if args.quick:
        args.iters, args.eval_iters, args.tokens = 20, 4, 20
    steps, warmup = (1, 0) if args.quick else (args.steps, 1)
    return parts_pinned_and_unpinned(
        f"bigram.py, {args.iters} steps, {args.eval_iters} batches per estimate, "
        f"{args.tokens} characters",
        PARTS,
        lambda lib, name: part(lib, name, args),
        steps,
        warmup,
        "the program",
    )


if __name__ == "__main__":
    main()
