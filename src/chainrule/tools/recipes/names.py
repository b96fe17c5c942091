"""makemore's names: a character-level model of first names, --model bigram, mlp, rnn, gru,
lstm or transformer, scored by its test loss in nats per character.

Each name is read as '.' + name, predicting name + '.': the end counts as a character. The
test set is fixed whatever --seed: TEST_SIZE names drawn by randperm under SPLIT_SEED (the
size makemore uses, min(1000, 10%)); --seed sets the initialisation and the batches.
"""

from __future__ import annotations

from typing import Any

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import datasets, nn
from chainrule.tools.recipes import RecipeError, gpt
from chainrule.tools.recipes.gpt import GPT, GPTConfig, encode_prompt
from chainrule.tools.recipes.language import (
    Sizes,
    check_positive,
    checked_config,
    checked_vocab,
    generate,
    lm_loss,
    load_weights,
    run_metrics,
    train_steps,
    write_run,
)

DESCRIPTION = "makemore's names: --model bigram|mlp|rnn|gru|lstm|transformer, test loss (nats)"
DEFAULTS: dict[str, Any] = {"model": "transformer", "steps": None, "lr": None, "batch_size": None}
SHOWN = ("test_loss",)
RESUMES = True  # --checkpoint-every and --resume: see language.train_steps
SPLIT_SEED = 3407
TEST_SIZE = 1000
BLOCK_SIZE = 16  # the longest name (15 characters) and its start


class Bigram(nn.Module):
    """The next character's logits read from a table by the current character alone."""

    def __init__(self, vocab_size: int) -> None:
        super().__init__()
        self.logits = nn.Embedding(vocab_size, vocab_size)

    def forward(self, idx: cr.Tensor) -> cr.Tensor:
        return self.logits(idx)  # (B, T) -> (B, T, V)


class MLP(nn.Module):
    """Bengio et al. (2003), as makemore has it: the embeddings of the last ``context``
    characters (a blank token before the start), side by side, through a tanh layer."""

    def __init__(self, vocab_size: int, context: int, n_embd: int, n_hidden: int) -> None:
        super().__init__()
        self.context, self.blank = context, vocab_size
        self.wte = nn.Embedding(vocab_size + 1, n_embd)  # one row more: the blank
        self.mlp = nn.Sequential(
            nn.Linear(context * n_embd, n_hidden),
            nn.Tanh(),  # (B, T, context*E) -> (B, T, H)
            nn.Linear(n_hidden, vocab_size),  # -> (B, T, V)
        )

    def forward(self, idx: cr.Tensor) -> cr.Tensor:
        b, t = idx.shape
        padded = F.pad(idx, (self.context - 1, 0), value=self.blank)  # (B, context-1+T)
        ctx = cr.stack([padded[:, i : i + t] for i in range(self.context)], dim=2)  # (B, T, ctx)
        return self.mlp(self.wte(ctx).reshape(b, t, -1))  # (B, T, ctx, E) -> (B, T, ctx*E)


class Recurrent(nn.Module):
    """nn.RNN, nn.GRU or nn.LSTM over the characters' embeddings; a linear head reads each
    step's output."""

    def __init__(self, vocab_size: int, cell: str, n_embd: int, hidden_size: int) -> None:
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        layer = {"rnn": nn.RNN, "gru": nn.GRU, "lstm": nn.LSTM}[cell]
        self.rnn = layer(n_embd, hidden_size, batch_first=True)
        self.lm_head = nn.Linear(hidden_size, vocab_size)

    def forward(self, idx: cr.Tensor) -> cr.Tensor:
        out, _ = self.rnn(self.wte(idx))  # (B, T, E) -> (B, T, hidden)
        return self.lm_head(out)  # (B, T, V)


# kind: (the model's sizes, its training defaults: steps, batch_size, lr)
MODELS: dict[str, tuple[dict[str, int], dict[str, Any]]] = {
    "bigram": ({}, {"steps": 1000, "batch_size": 64, "lr": 5e-2}),
    "mlp": ({"context": 8, "n_embd": 24, "n_hidden": 256},
            {"steps": 3000, "batch_size": 64, "lr": 3e-3}),
    "rnn": ({"n_embd": 32, "hidden_size": 128}, {"steps": 3000, "batch_size": 64, "lr": 3e-3}),
    "gru": ({"n_embd": 32, "hidden_size": 128}, {"steps": 3000, "batch_size": 64, "lr": 3e-3}),
    "lstm": ({"n_embd": 32, "hidden_size": 128}, {"steps": 3000, "batch_size": 64, "lr": 3e-3}),
    "transformer": ({"n_layer": 4, "n_head": 4, "n_embd": 64},
                    {"steps": 3000, "batch_size": 64, "lr": 2e-3}),
}  # fmt: skip


def build(kind: str, vocab_size: int, **sizes: int) -> nn.Module:
    """The ``kind`` of model for a vocabulary of ``vocab_size``, of the given sizes."""
    if kind == "bigram":
        return Bigram(vocab_size)
    if kind == "mlp":
        return MLP(vocab_size, **sizes)
    if kind == "transformer":
        return GPT(GPTConfig(vocab_size=vocab_size, block_size=BLOCK_SIZE, **sizes))
    return Recurrent(vocab_size, kind, **sizes)


def split() -> tuple[list[str], list[str]]:
    """(train, test) names: the test set is TEST_SIZE names drawn under SPLIT_SEED."""
    words = datasets.names()
    order = cr.randperm(len(words), generator=cr.Generator().manual_seed(SPLIT_SEED)).tolist()
    return [words[i] for i in order[TEST_SIZE:]], [words[i] for i in order[:TEST_SIZE]]


def encode(words: list[str], vocab: datasets.CharVocab) -> tuple[cr.Tensor, cr.Tensor]:
    """Inputs '.' + name and targets name + '.', padded to BLOCK_SIZE: (N, BLOCK_SIZE) each;
    inputs pad with 0, targets with -1 (not counted)."""
    x = [[0] * BLOCK_SIZE for _ in words]
    y = [[-1] * BLOCK_SIZE for _ in words]
    for row_x, row_y, word in zip(x, y, words, strict=True):
        ids = vocab.encode(word)
        row_x[1 : len(ids) + 1] = ids
        row_y[: len(ids) + 1] = ids + [0]
    return cr.tensor(x, dtype=cr.int64), cr.tensor(y, dtype=cr.int64)


def settings_of(name: str, settings: dict) -> dict:
    """The settings with the chosen model's training defaults where none was given."""
    kind = settings["model"]
    if kind not in MODELS:
        raise RecipeError(f"{name}: --model must be one of {', '.join(MODELS)}; got {kind!r}")
    defaults = MODELS[kind][1]
    resolved = {**settings, **{k: v for k, v in defaults.items() if settings.get(k) is None}}
    check_positive(name, resolved, "steps", "batch_size")
    return resolved


def setup(name: str, settings: dict) -> tuple[nn.Module, dict, datasets.CharVocab, Any, Any]:
    """The model (initialised under --seed), its configuration, the vocabulary, and the
    (inputs, targets) of the train and test names."""
    train_words, test_words = split()
    vocab = datasets.CharVocab(train_words + test_words)
    config = {"kind": settings["model"], "vocab_size": len(vocab), **MODELS[settings["model"]][0]}
    cr.manual_seed(settings["seed"])
    return build(**config), config, vocab, encode(train_words, vocab), encode(test_words, vocab)


def train(name: str, settings: dict, out_dir: str, quiet: bool) -> dict:
    settings = settings_of(name, settings)
    model, config, vocab, (x_train, y_train), (x_test, y_test) = setup(name, settings)
    g = cr.Generator().manual_seed(settings["seed"])

    def batch() -> tuple[cr.Tensor, cr.Tensor]:
        rows = cr.randint(0, len(x_train), (settings["batch_size"],), generator=g)
        x, y = x_train[rows], y_train[rows]
        t = int((y >= 0).sum(dim=1).max().item())  # the longest name of the batch, and its end
        return x[:, :t], y[:, :t]  # trailing padding cut: no position before it reads it

    def evaluate() -> dict[str, float]:
        # the train loss on a fixed part of the train set as large as the test set
        return {"train_loss": lm_loss(model(x_train[:TEST_SIZE]), y_train[:TEST_SIZE]).item(),
                "test_loss": lm_loss(model(x_test), y_test).item()}  # fmt: skip

    history, start = train_steps(name, model, batch, g, evaluate, settings, out_dir, quiet,
                                 weight_decay=0.01)  # fmt: skip
    metrics = run_metrics(
        name,
        settings,
        history,
        start,
        model=config,
        vocab={"chars": "".join(vocab.itos.values()), "end": vocab.end},
    )
    gen = cr.Generator().manual_seed(settings["seed"])
    metrics["final"]["samples"] = new_names(model, vocab, "", 10, BLOCK_SIZE, 1.0, None, gen)
    write_run(out_dir, metrics, model, quiet)
    return metrics


def one_step(settings: dict) -> tuple[cr.Tensor, nn.Module]:
    """The loss of one batch of four names, for `chainrule graph`."""
    settings = settings_of("names", settings)
    model, _, _, (x, y), _ = setup("names", settings)
    t = int((y[:4] >= 0).sum(dim=1).max().item())
    return lm_loss(model(x[:4, :t]), y[:4, :t]), model


def new_names(
    model: nn.Module,
    vocab: datasets.CharVocab,
    prompt: str,
    num: int,
    max_new_tokens: int,
    temperature: float,
    top_k: int | None,
    generator: cr.Generator,
) -> list[str]:
    """``num`` names drawn from the model, each starting with ``prompt`` and cut at its end
    (or after ``max_new_tokens`` characters)."""
    start = [0, *vocab.encode(prompt)]
    idx = cr.tensor([start] * num, dtype=cr.int64)  # (num, 1 + len(prompt))
    out = generate(model, idx, max_new_tokens, BLOCK_SIZE, temperature, top_k, generator)
    names = []
    for row in out[:, 1:].tolist():
        end = row.index(0, len(prompt)) if 0 in row[len(prompt) :] else len(row)
        names.append(vocab.decode(row[:end]))
    return names


def state_sizes(config: dict) -> Sizes:
    """Where each size of a model of ``config`` shows in its state_dict (see
    checked_config)."""
    v, kind = config["vocab_size"], config["kind"]
    if kind == "bigram":
        return {"logits.weight": (("vocab_size", v), ("vocab_size", v))}
    if kind == "mlp":
        e = config["n_embd"]
        return {"wte.weight": (("vocab_size + 1", v + 1), ("n_embd", e)),
                "mlp.0.weight": (("n_hidden", config["n_hidden"]),
                                 ("context * n_embd", config["context"] * e))}  # fmt: skip
    if kind == "transformer":
        return gpt.state_sizes({**config, "block_size": BLOCK_SIZE})
    e, h = config["n_embd"], config["hidden_size"]  # a recurrent model
    return {"wte.weight": (("vocab_size", v), ("n_embd", e)),
            "lm_head.weight": (("vocab_size", v), ("hidden_size", h))}  # fmt: skip


def rebuild(run_dir: str, metrics: dict, command: str = "sample") -> nn.Module:
    """A trained names run's model, from its metrics.json (checked against its
    model.safetensors first) and model.safetensors."""
    kind = metrics["model"].get("kind") if isinstance(metrics.get("model"), dict) else None
    if kind not in MODELS:
        raise RecipeError(f"{command}: {run_dir}/metrics.json's model.kind must be one of "
                          f"{', '.join(MODELS)}; got {kind!r}")  # fmt: skip
    ints = ("vocab_size", *MODELS[kind][0])
    config = checked_config(command, run_dir, metrics, ints, state_sizes)
    model: nn.Module
    if kind == "transformer":
        model = gpt.model_of({**config, "block_size": BLOCK_SIZE}, command, run_dir)
    else:
        model = build(**config)
    return load_weights(model, run_dir, command)


def sample(run_dir: str, metrics: dict, options: dict) -> str:
    """`chainrule sample` for a names run: ``num`` new names (default 10), each starting with
    ``prompt`` (default none), one a line."""
    model = rebuild(run_dir, metrics)
    chars = checked_vocab("sample", run_dir, metrics, metrics["model"]["vocab_size"], end=True)
    vocab = datasets.CharVocab(chars[1:], end=chars[0])
    prompt = options["prompt"] or ""
    if vocab.end in prompt:
        raise RecipeError(
            f"sample: --prompt holds the end token {vocab.end!r}, which ends a name; got {prompt!r}"
        )
    encode_prompt(vocab, prompt)
    gen = cr.Generator().manual_seed(options["seed"])
    names = new_names(model, vocab, prompt, options["num"] or 10,
                      options["max_new_tokens"] or BLOCK_SIZE, options["temperature"],
                      options["top_k"], gen)  # fmt: skip
    return "\n".join(names)
