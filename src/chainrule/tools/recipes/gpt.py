"""A character-level GPT, in one file as nanoGPT has it, and the `gpt` recipe that trains it
on a text: --data-file, or by default a fixed selection of this Python's standard library.

The model serves the names and adder recipes too; the training loop, sampling and the run's
files are in language.py.
"""

from __future__ import annotations

import math
import os
import sysconfig
from dataclasses import asdict, dataclass
from typing import Any

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import datasets, nn
from chainrule.tools.recipes import RecipeError
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

# -- the model ------------------------------------------------------------------------------


@dataclass
class GPTConfig:
    vocab_size: int
    block_size: int  # the longest context the model reads (its position embeddings)
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    dropout: float = 0.0

    def __post_init__(self) -> None:
        if self.n_embd % self.n_head:  # each head takes n_embd / n_head of every vector
            raise ValueError(
                f"GPTConfig: n_embd must be a multiple of n_head; got n_embd {self.n_embd} "
                f"and n_head {self.n_head}"
            )


SIZES = ("vocab_size", "block_size", "n_layer", "n_head", "n_embd")  # GPTConfig's ints


def state_sizes(config: dict) -> Sizes:
    """Where each size of a GPT of ``config`` shows in its state_dict (see checked_config):
    its embeddings, its last block, and no block after it."""
    v, t, c, n = (config[k] for k in ("vocab_size", "block_size", "n_embd", "n_layer"))
    return {
        "wte.weight": (("vocab_size", v), ("n_embd", c)),
        "wpe.weight": (("block_size", t), ("n_embd", c)),
        f"h.{n - 1}.ln_1.weight": (("n_embd", c),),
        f"h.{n}.ln_1.weight": None,
    }


def model_of(config: dict, command: str, run_dir: str) -> GPT:
    """A GPT of a checked configuration (kind and sizes) read back from a run; a
    configuration GPTConfig refuses is the run's error."""
    try:
        return GPT(GPTConfig(**{k: v for k, v in config.items() if k != "kind"}))
    except ValueError as e:
        raise RecipeError(
            f"{command}: {os.path.join(run_dir, 'metrics.json')}'s model cannot be built: {e}"
        ) from None


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention in which each position sees itself and those before it."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.n_head = config.n_head
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)  # q, k, v in one product
        self.c_proj = nn.Linear(config.n_embd, config.n_embd)
        self.dropout = config.dropout

    def forward(self, x: cr.Tensor) -> cr.Tensor:
        b, t, c = x.shape
        h = self.n_head
        q, k, v = self.c_attn(x).split(c, dim=2)  # 3 x (B, T, C)
        q = q.view(b, t, h, c // h).transpose(1, 2)  # (B, H, T, C/H)
        k = k.view(b, t, h, c // h).transpose(1, 2)  # (B, H, T, C/H)
        v = v.view(b, t, h, c // h).transpose(1, 2)  # (B, H, T, C/H)
        p = self.dropout if self.training else 0.0
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)  # (B, H, T, C/H)
        y = y.transpose(1, 2).reshape(b, t, c)  # (B, T, C): the heads side by side
        return F.dropout(self.c_proj(y), p)


class MLP(nn.Module):
    """Position by position: widen to 4 x n_embd, GELU, back to n_embd."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd)
        # GPT-2's GELU, the tanh form: erf's series made the names test set's forward pass
        # 3.4x slower (2.9 s against 0.84 s, one sitting)
        self.gelu = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x: cr.Tensor) -> cr.Tensor:
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))  # (B, T, C) -> 4C -> C


class Block(nn.Module):
    """Pre-norm transformer block: x + attention(ln(x)), then x + mlp(ln(x))."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd)
        self.mlp = MLP(config)

    def forward(self, x: cr.Tensor) -> cr.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """Token and position embeddings, ``n_layer`` blocks, a final LayerNorm and a head that
    shares its weight with the token embedding (weight tying). Maps token indices (B, T),
    T <= block_size, to next-token logits (B, T, vocab_size)."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.wpe = nn.Embedding(config.block_size, config.n_embd)
        self.drop = nn.Dropout(config.dropout)
        self.h = nn.ModuleList([Block(config) for _ in range(config.n_layer)])
        self.ln_f = nn.LayerNorm(config.n_embd)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight  # one matrix reads tokens in and writes them out
        # GPT-2's initialisation: N(0, 0.02), zero biases, and the projections that add into
        # the residual stream scaled by 1/sqrt(2 n_layer) so its variance stays put with depth.
        for name, p in self.named_parameters():
            if name.endswith("bias"):
                nn.init.zeros_(p)
            elif name.endswith("c_proj.weight"):
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * config.n_layer))
            elif p.ndim >= 2:
                nn.init.normal_(p, 0.0, 0.02)

    def forward(self, idx: cr.Tensor) -> cr.Tensor:
        b, t = idx.shape
        if t > self.config.block_size:
            raise ValueError(
                f"GPT: a sequence is longer than the block size; got length {t} and block_size "
                f"{self.config.block_size}"
            )
        x = self.drop(self.wte(idx) + self.wpe(cr.arange(t)))  # (B, T, C) + (T, C)
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))  # (B, T, vocab_size)


# -- the gpt recipe ---------------------------------------------------------------------------

DESCRIPTION = (
    "character-level GPT on --data-file or this Python's stdlib source: 4 layers of 128, AdamW"
)
DEFAULTS: dict[str, Any] = {"steps": 1000, "lr": 1e-3, "batch_size": 32, "data_file": None}
SHOWN = ("val_loss",)
RESUMES = True  # --checkpoint-every and --resume: see language.train_steps
BLOCK_SIZE = 64
# The default corpus: these modules of the running Python's standard library, concatenated
# in this order (about 0.5 MB of Python on 3.11; the text differs a little between versions).
STDLIB_MODULES = (
    "abc", "bisect", "calendar", "colorsys", "contextlib", "copy", "csv", "dataclasses",
    "fnmatch", "fractions", "functools", "glob", "heapq", "keyword", "linecache", "numbers",
    "operator", "queue", "random", "reprlib", "sched", "shlex", "statistics", "string",
    "textwrap", "tokenize", "traceback", "types", "weakref",
)  # fmt: skip
VAL_FRACTION = 0.1  # the text's last tenth is the validation part
EVAL_WINDOWS = 128  # windows of each part read for its loss, evenly spaced


def stdlib_text() -> str:
    """The default corpus: the source of STDLIB_MODULES, read from this Python's stdlib."""
    root = sysconfig.get_paths()["stdlib"]
    paths = [os.path.join(root, f"{m}.py") for m in STDLIB_MODULES]
    missing = [p for p in paths if not os.path.isfile(p)]
    if missing:
        raise RecipeError(
            f"gpt: the standard library's source files are not installed; got none at "
            f"{', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''} (give --data-file)"
        )
    parts = []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            parts.append(f.read())
    return "".join(parts)


def read_text(path: str, minimum: int) -> str:
    """A UTF-8 text file of at least ``minimum`` characters, or a RecipeError saying why not."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise RecipeError(f"gpt: --data-file cannot be read ({e.strerror}); got {path!r}") from None
    if not raw:
        raise RecipeError(f"gpt: --data-file is empty; got {path!r}")
    if b"\x00" in raw:
        raise RecipeError(
            f"gpt: --data-file is binary (it holds NUL bytes at offset {raw.index(0)}), not "
            f"text; got {path!r}"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise RecipeError(
            f"gpt: --data-file is not UTF-8 text (byte {raw[e.start]:#04x} at offset "
            f"{e.start}); got {path!r}"
        ) from None
    if len(text) < minimum:
        raise RecipeError(
            f"gpt: --data-file is too short to train on: it needs at least {minimum} characters "
            f"(a tenth for validation, each part longer than the context of {BLOCK_SIZE}); got "
            f"{len(text)} characters in {path!r}"
        )
    return text


def windows(data: cr.Tensor, starts: cr.Tensor) -> tuple[cr.Tensor, cr.Tensor]:
    """Inputs and next-token targets (B, BLOCK_SIZE) of the windows starting at ``starts``."""
    offsets = starts.reshape(-1, 1) + cr.arange(BLOCK_SIZE)  # (B, 1) + (T,) -> (B, T)
    return data[offsets], data[offsets + 1]


def window_loss(model: nn.Module, data: cr.Tensor) -> float:
    """Mean loss over EVAL_WINDOWS windows spread evenly over ``data`` (the same every time)."""
    starts = cr.linspace(0, len(data) - BLOCK_SIZE - 1, EVAL_WINDOWS).long()
    losses = [lm_loss(model(x), y).item() for x, y in
              (windows(data, chunk) for chunk in starts.split(32))]  # fmt: skip
    return sum(losses) / len(losses)


def setup(settings: dict) -> tuple[GPT, datasets.CharVocab, cr.Tensor, cr.Tensor]:
    """The model (initialised under --seed), the vocabulary, and the text's train and
    validation parts as token indices."""
    path = settings["data_file"]
    minimum = math.ceil((BLOCK_SIZE + 2) / VAL_FRACTION)
    text = read_text(path, minimum) if path is not None else stdlib_text()
    vocab = datasets.CharVocab(text, end=None)
    data = cr.tensor(vocab.encode(text), dtype=cr.int64)
    n = int(len(data) * (1 - VAL_FRACTION))
    cr.manual_seed(settings["seed"])
    model = GPT(GPTConfig(vocab_size=len(vocab), block_size=BLOCK_SIZE))
    return model, vocab, data[:n], data[n:]


def train(name: str, settings: dict, out_dir: str, quiet: bool) -> dict:
    check_positive(name, settings, "steps", "batch_size")
    model, vocab, train_data, val_data = setup(settings)
    g = cr.Generator().manual_seed(settings["seed"])

    def batch() -> tuple[cr.Tensor, cr.Tensor]:
        last = len(train_data) - BLOCK_SIZE - 1  # the last window's start
        starts = cr.randint(0, last + 1, (settings["batch_size"],), generator=g)
        return windows(train_data, starts)

    def evaluate() -> dict[str, float]:
        return {"train_loss": window_loss(model, train_data),
                "val_loss": window_loss(model, val_data)}  # fmt: skip

    history, start = train_steps(name, model, batch, g, evaluate, settings, out_dir, quiet)
    prompt = default_prompt(vocab)
    metrics = run_metrics(
        name, settings, history, start,
        model={"kind": "gpt", **asdict(model.config)},
        vocab={"chars": "".join(vocab.itos.values()), "end": None},
        corpus=settings["data_file"] or f"stdlib: {', '.join(STDLIB_MODULES)}",
    )  # fmt: skip
    gen = cr.Generator().manual_seed(settings["seed"])
    metrics["final"]["sample"] = complete(model, vocab, prompt, 1, 200, 1.0, None, gen)[0]
    write_run(out_dir, metrics, model, quiet)
    return metrics


def default_prompt(vocab: datasets.CharVocab) -> str:
    """A line break where the text has them (a sample starts as a new line), else the
    vocabulary's first character."""
    return "\n" if "\n" in vocab.stoi else vocab.itos[0]


def complete(
    model: GPT,
    vocab: datasets.CharVocab,
    prompt: str,
    num: int,
    max_new_tokens: int,
    temperature: float,
    top_k: int | None,
    generator: cr.Generator,
) -> list[str]:
    """``num`` continuations of ``prompt``, each of ``max_new_tokens`` characters."""
    idx = cr.tensor([vocab.encode(prompt)] * num, dtype=cr.int64)  # (num, len(prompt))
    out = generate(model, idx, max_new_tokens, model.config.block_size, temperature, top_k,
                   generator)  # fmt: skip
    return [prompt + vocab.decode(row[idx.shape[1] :]) for row in out]


def rebuild(run_dir: str, metrics: dict, command: str = "sample") -> GPT:
    """A trained gpt or adder run's model, from its metrics.json (checked against its
    model.safetensors first) and model.safetensors."""
    config = checked_config(command, run_dir, metrics, SIZES, state_sizes, ("dropout",))
    if config["kind"] != "gpt":
        raise RecipeError(f"{command}: {run_dir}/metrics.json's model.kind must be gpt for a "
                          f"{metrics['recipe']} run; got {config['kind']!r}")  # fmt: skip
    return load_weights(model_of(config, command, run_dir), run_dir, command)


def sample(run_dir: str, metrics: dict, options: dict) -> str:
    """`chainrule sample` for a gpt run: ``num`` continuations of ``prompt`` (default: a line
    break), separated by a line of dashes."""
    model = rebuild(run_dir, metrics)
    chars = checked_vocab("sample", run_dir, metrics, model.config.vocab_size, end=False)
    vocab = datasets.CharVocab(chars, end=None)
    prompt = options["prompt"] if options["prompt"] is not None else default_prompt(vocab)
    if not prompt:
        raise RecipeError(
            "sample: --prompt is empty; got '' (a gpt run continues a prompt of "
            "at least one character)"
        )
    encode_prompt(vocab, prompt)
    gen = cr.Generator().manual_seed(options["seed"])
    texts = complete(model, vocab, prompt, options["num"] or 1,
                     options["max_new_tokens"] or 200, options["temperature"], options["top_k"],
                     gen)  # fmt: skip
    return "\n-----\n".join(texts)


def one_step(settings: dict) -> tuple[cr.Tensor, nn.Module]:
    """The loss of four windows of the text, for `chainrule graph`."""
    model, _, data, _ = setup(settings)
    x, y = windows(data, cr.arange(4))
    return lm_loss(model(x), y), model


def encode_prompt(vocab: datasets.CharVocab, prompt: str) -> list[int]:
    """The prompt's indices, or a RecipeError naming --prompt and the characters the run's
    vocabulary lacks."""
    try:
        return vocab.encode(prompt)
    except ValueError:
        unknown = "".join(sorted(set(prompt) - vocab.stoi.keys()))
        raise RecipeError(
            f"sample: --prompt holds characters the run's vocabulary lacks ({unknown!r}); got "
            f"{prompt!r}"
        ) from None
