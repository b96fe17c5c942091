"""makemore's first lecture (its part-1 notebook), as the notebook writes it, on chainrule and
on PyTorch: the bigram counts ``N[ix1, ix2] += 1`` over every name, the model's
log-likelihood ``log_likelihood += logprob`` pair by pair, names sampled letter by letter,
then the same model as one trained layer (one-hot characters @ W, 100 steps of gradient
descent over every bigram). Each part is timed on its own, each framework in a process of
its own, with threads pinned to one and unpinned.

    python benchmarks/makemore_bigram.py [--words 32033] [--steps 3] [--parts 0 1 2 3]
                                         [--quick] [--steady-allocator]
"""

from __future__ import annotations

import argparse
from typing import Any

from common import parse_args, parts_pinned_and_unpinned

import chainrule as cr

PARTS = ("count bigrams", "log-likelihood", "sample 20 names", "train 100 steps")


def lecture(lib: Any, words: list[str], part: str) -> Any:
    """One part of the notebook, its loop as written there, for ``lib`` (torch or chainrule,
    whose APIs agree); returns the step that runs it once."""
    F = lib.nn.functional
    chars = sorted(set("".join(words)))
    stoi = {s: i + 1 for i, s in enumerate(chars)}
    stoi["."] = 0
    itos = {i: s for s, i in stoi.items()}

    def count() -> Any:
        N = lib.zeros((27, 27), dtype=lib.int32)
        for w in words:
            chs = ["."] + list(w) + ["."]
            for ch1, ch2 in zip(chs, chs[1:], strict=False):
                ix1 = stoi[ch1]
                ix2 = stoi[ch2]
                N[ix1, ix2] += 1
        return N

    N = count()
    P = (N + 1).float()
    P /= P.sum(1, keepdims=True)

    def log_likelihood() -> Any:
        log_likelihood = 0.0
        n = 0
        for w in words:
            chs = ["."] + list(w) + ["."]
            for ch1, ch2 in zip(chs, chs[1:], strict=False):
                ix1 = stoi[ch1]
                ix2 = stoi[ch2]
                prob = P[ix1, ix2]
                logprob = lib.log(prob)
                log_likelihood += logprob
                n += 1
        nll = -log_likelihood
        return nll / n

    def sample() -> list[str]:
        g = lib.Generator().manual_seed(2147483647)
        names = []
        for _ in range(20):
            out = []
            ix = 0
            while True:
                p = P[ix]
                ix = lib.multinomial(p, num_samples=1, replacement=True, generator=g).item()
                out.append(itos[ix])
                if ix == 0:
                    break
            names.append("".join(out))
        return names

    xs_, ys_ = [], []
    for w in words:
        chs = ["."] + list(w) + ["."]
        for ch1, ch2 in zip(chs, chs[1:], strict=False):
            xs_.append(stoi[ch1])
            ys_.append(stoi[ch2])
    xs, ys = lib.tensor(xs_), lib.tensor(ys_)
    num = xs.nelement()

    def train() -> float:
        g = lib.Generator().manual_seed(2147483647)
        W = lib.randn((27, 27), generator=g, requires_grad=True)
        for _ in range(100):
            xenc = F.one_hot(xs, num_classes=27).float()
            logits = xenc @ W
            counts = logits.exp()
            probs = counts / counts.sum(1, keepdims=True)
            loss = -probs[lib.arange(num), ys].log().mean() + 0.01 * (W**2).mean()
            W.grad = None
            loss.backward()
            W.data += -50 * W.grad
        return loss.item()

    return {PARTS[0]: count, PARTS[1]: log_likelihood, PARTS[2]: sample, PARTS[3]: train}[part]


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--words", type=int, default=32033, help="names from the list's start")
    ap.add_argument("--steps", type=int, default=3, help="timed runs of each part")
    ap.add_argument("--parts", nargs="+", type=int, default=list(range(len(PARTS))),
                    help="which parts, by number: " + ", ".join(
                        f"{k} {p}" for k, p in enumerate(PARTS)))  # fmt: skip
    ap.add_argument("--quick", action="store_true", help="a tiny run that only checks it works")
    args = parse_args(ap, argv, __file__)
    words = cr.datasets.names()[: 100 if args.quick else args.words]
    steps, warmup = (1, 0) if args.quick else (args.steps, 1)
    return parts_pinned_and_unpinned(
        f"makemore part 1, {len(words)} names",
        [PARTS[k] for k in args.parts],
        lambda lib, part: lecture(lib, words, part),
        steps,
        warmup,
        "these parts together",
    )


if __name__ == "__main__":
    main()
