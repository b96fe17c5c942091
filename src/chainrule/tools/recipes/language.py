"""What the language-model recipes (names, gpt, adder) share: training by optimizer steps
(AdamW with decay and no-decay groups, linear warmup then cosine decay, gradient clipping),
drawing tokens one at a time, and the run's files, each written whole or not at all.

The models are in gpt.py and names.py; the data and the metrics in each recipe.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable
from typing import Any, TypeVar

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn, optim
from chainrule.serialization import header_shapes
from chainrule.tools.recipes import RecipeError
from chainrule.tools.recipes.train import (
    Progress,
    outputs,
    print_finished,
    pyplot,
    strict_json,
    tensorboard_writer,
)
from chainrule.tools.run_files import file_in

Batch = tuple[cr.Tensor, cr.Tensor]
M = TypeVar("M", bound=nn.Module)


def check_positive(recipe: str, settings: dict, *keys: str) -> None:
    """Settings that must be positive integers (given to train() directly, not through the
    command line, which checks them itself)."""
    for key in keys:
        value = settings[key]
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise RecipeError(
                f"{recipe}: --{key.replace('_', '-')} must be a positive integer; got {value!r}"
            )


def lm_loss(logits: cr.Tensor, targets: cr.Tensor) -> cr.Tensor:
    """Cross-entropy per token, in nats: logits (B, T, V), targets (B, T); a target of -1
    is padding and does not count."""
    b, t, v = logits.shape
    return F.cross_entropy(logits.reshape(b * t, v), targets.reshape(b * t), ignore_index=-1)


def adamw(
    model: nn.Module, lr: float, weight_decay: float, betas: tuple[float, float] = (0.9, 0.99)
) -> optim.AdamW:
    """AdamW that decays the matrices (Linear and Embedding weights) and leaves the biases and
    LayerNorm's scales alone, as nanoGPT does: shrinking a bias or a scale towards 0
    regularises nothing useful."""
    params = list(model.parameters())
    groups = [
        {"params": [p for p in params if p.ndim >= 2], "weight_decay": weight_decay},
        {"params": [p for p in params if p.ndim < 2], "weight_decay": 0.0},
    ]
    return optim.AdamW(groups, lr=lr, betas=betas)


def warmup_cosine(warmup: int, steps: int, final: float = 0.1) -> Callable[[int], float]:
    """The learning rate's factor at each step: linear from 1/warmup to 1 over ``warmup``
    steps, then half a cosine down to ``final`` at ``steps``."""

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        progress = min(1.0, (step - warmup) / max(1, steps - warmup))
        return final + (1 - final) * 0.5 * (1 + math.cos(math.pi * progress))

    return factor


def train_steps(
    name: str,
    model: nn.Module,
    batch: Callable[[], Batch],
    generator: cr.Generator,
    evaluate: Callable[[], dict[str, float]],
    settings: dict[str, Any],
    out_dir: str,
    quiet: bool,
    weight_decay: float = 0.1,
    grad_clip: float = 1.0,
    evals: int = 10,
) -> tuple[list[dict], float]:
    """``settings["steps"]`` AdamW steps on ``batch()``'s (inputs, targets), which draws
    from ``generator``, warmup then cosine; ``evaluate()`` (under no_grad, in eval mode)
    about ``evals`` times and after the last step. Returns the history (one row per
    evaluation) and the run's start on time.perf_counter's clock.

    The whole state (model, optimizer, scheduler, the batches' generator and the global
    random state, the step, the history) is checkpointed in out_dir by recipes/train.py's
    Progress every ``settings["checkpoint_every"]`` steps, after the last one and on Ctrl-C
    (which raises Interrupted once the step is done); ``settings["resume"]`` goes on from it.
    """
    from tqdm.auto import tqdm

    steps = settings["steps"]
    opt = adamw(model, settings["lr"], weight_decay)
    schedule = optim.lr_scheduler.LambdaLR(opt, warmup_cosine(max(1, steps // 20), steps))
    every = max(1, steps // evals)
    run = Progress(out_dir, name, settings, 1)
    fields = {"scheduler": "object", "generator": "random state"}  # the loop's own
    saved = run.load(model, opt, fields) if settings.get("resume") else None
    evaluated = [s for s in range(1, steps + 1) if s % every == 0 or s == steps]
    if saved and not (
        saved["steps"] <= steps and len(saved["history"]) == sum(s <= run.steps for s in evaluated)
    ):
        raise RecipeError(
            f"train: --resume: {run.path!r} holds {run.steps} steps done after "
            f"{len(saved['history'])} evaluations, which no run of {steps} steps checkpoints; "
            "the checkpoint was altered or damaged"
        )
    history: list[dict] = saved["history"] if saved else []
    start = time.perf_counter() - (saved["seconds"] if saved else 0.0)
    if saved:
        try:
            schedule.load_state_dict(saved["scheduler"])
        except (KeyError, TypeError, ValueError) as e:
            raise RecipeError(
                f"train: --resume: {run.path!r} holds a scheduler state this run's scheduler "
                f"does not take ({type(e).__name__}: {e}); the checkpoint was altered or damaged"
            ) from None
        generator.set_state(saved["generator"])
        cr.set_rng_state(saved["rng"])

    def position() -> dict[str, Any]:
        return {"scheduler": schedule.state_dict(), "generator": generator.get_state()}

    writer = tensorboard_writer(settings, name, 0)
    bar = tqdm(range(run.steps + 1, steps + 1), desc=name, disable=quiet, leave=False)
    with run.interruptible():
        for step in bar:
            x, y = batch()
            loss = lm_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
            opt.step()
            schedule.step()
            if writer is not None:
                writer.add_scalar("loss/train_step", float(loss), step)
                writer.add_scalar("lr", opt.param_groups[0]["lr"], step)
            if step % every == 0 or step == steps:
                model.eval()
                with cr.no_grad():
                    row = {"step": step, "lr": opt.param_groups[0]["lr"], **evaluate()}
                model.train()
                history.append(row)
                if writer is not None:
                    for key, value in row.items():
                        if key not in ("step", "lr"):
                            writer.add_scalar(f"eval/{key}", value, step)
                bar.set_postfix({k: f"{v:.4f}" for k, v in row.items() if k.endswith("loss")})
            run.step_done(model, opt, history, start, **position())
            if step == steps and not (run.every and steps % run.every == 0):
                run.save(model, opt, history, start, **position())  # what follows may be killed
    if not quiet:
        print_finished(bar)
    if writer is not None:
        writer.close()
    return history, start


@cr.no_grad()
def generate(
    model: nn.Module,
    idx: cr.Tensor,
    max_new_tokens: int,
    block_size: int,
    temperature: float = 1.0,
    top_k: int | None = None,
    generator: cr.Generator | None = None,
    greedy: bool = False,
) -> cr.Tensor:
    """Append ``max_new_tokens`` tokens to each row of ``idx`` (B, T), each drawn from the
    model's next-token distribution given at most the last ``block_size`` tokens:
    logits / temperature, only the ``top_k`` largest kept, sampled with ``generator``
    (or the most likely token, with ``greedy``)."""
    model.eval()
    for _ in range(max_new_tokens):
        logits = model(idx[:, -block_size:])[:, -1, :]  # (B, V): the last position's
        if greedy:
            nxt = logits.argmax(dim=-1, keepdim=True)  # (B, 1)
        else:
            logits = logits / temperature
            if top_k is not None and top_k < logits.shape[-1]:
                kth = cr.topk(logits, top_k).values[:, -1:]  # (B, 1): the k-th largest
                logits = logits.masked_fill(logits < kth, float("-inf"))
            probs = F.softmax(logits, dim=-1)
            nxt = cr.multinomial(probs, num_samples=1, generator=generator)  # (B, 1)
        idx = cr.cat([idx, nxt], dim=1)
    return idx


def load_weights(model: M, run_dir: str, command: str = "sample") -> M:
    """``model`` with the weights of ``run_dir``/model.safetensors, in eval mode."""
    try:
        path = file_in(run_dir, "model.safetensors", f"{command}: RUN_DIR")
        model.load_state_dict(cr.load(path))
    except (OSError, ValueError, KeyError, RuntimeError) as e:
        raise RecipeError(
            f"{command}: RUN_DIR's model cannot be loaded ({e}); got {run_dir!r}"
        ) from None
    model.eval()
    return model


# Where each size of a configuration shows in its model's state_dict: tensor name -> its
# shape, each dimension with the field it comes from (None: a tensor such a model lacks).
Sizes = dict[str, "tuple[tuple[str, int], ...] | None"]


def checked_config(
    command: str,
    run_dir: str,
    metrics: dict,
    ints: tuple[str, ...],
    sizes: Callable[[dict], Sizes],
    fractions: tuple[str, ...] = (),
) -> dict:
    """metrics.json's model configuration, checked before any model is built from it (a run
    folder someone sent may hold any value there): a kind and exactly the fields ``ints``
    (positive integers) and ``fractions`` (in [0, 1): dropout), each size equal to the one
    run_dir/model.safetensors holds, read from its header alone (``sizes(config)`` says
    where each shows). An altered configuration never builds a model its weights do not
    fit, nor one too large to allocate."""
    config = metrics.get("model")
    where = f"{os.path.join(run_dir, 'metrics.json')}'s model"
    if not isinstance(config, dict) or set(config) != {"kind", *ints, *fractions}:
        raise RecipeError(
            f"{command}: {where} must hold kind, {', '.join((*ints, *fractions))}; got "
            f"{str(config)[:200]}"
        )
    for key in ints:
        if type(config[key]) is not int or config[key] < 1:
            raise RecipeError(
                f"{command}: {where}.{key} must be a positive integer; got {config[key]!r}"
            )
    for key in fractions:
        if type(config[key]) not in (int, float) or not 0 <= config[key] < 1:
            raise RecipeError(f"{command}: {where}.{key} must be in [0, 1); got {config[key]!r}")
    try:
        path = file_in(run_dir, "model.safetensors", f"{command}: RUN_DIR")
        shapes = header_shapes(path)
    except (OSError, ValueError) as e:
        raise RecipeError(
            f"{command}: RUN_DIR's model cannot be loaded ({e}); got {run_dir!r}"
        ) from None
    for tensor, dims in sizes(config).items():
        held = shapes.get(tensor)
        if dims is None and held is not None:
            raise RecipeError(
                f"{command}: {where} does not fit {path}: a model of {config} has no "
                f"{tensor!r}, which the file holds (shape {held}); the run folder was altered"
            )
        if dims is None or held == tuple(n for _, n in dims):
            continue
        if held is None:  # a tensor named by a size (a layer's index), which the file lacks
            raise RecipeError(
                f"{command}: {where} does not fit {path}: a model of {config} has "
                f"{tensor!r}, which the file lacks; the run folder was altered or damaged"
            )
        field, n = next(
            (d for i, d in enumerate(dims) if i >= len(held) or held[i] != d[1]),
            dims[0],
        )
        raise RecipeError(
            f"{command}: {where}.{field} is {n}, which does not fit {path}: its {tensor!r} "
            f"has shape {held}, not {tuple(n for _, n in dims)}; the run folder was altered or "
            "damaged"
        )
    return config


def checked_vocab(command: str, run_dir: str, metrics: dict, size: int, end: bool) -> str:
    """metrics.json's vocabulary, checked: ``size`` distinct characters, the end token first
    where the model has one (``end``); the characters returned."""
    vocab = metrics.get("vocab")
    chars = vocab.get("chars") if isinstance(vocab, dict) else None
    if (
        not isinstance(vocab, dict)
        or not isinstance(chars, str)
        or not len(set(chars)) == len(chars) == size
        or vocab.get("end") != (chars[:1] if end else None)
    ):
        first = ", the end token first and named by end" if end else " and end null"
        raise RecipeError(
            f"{command}: {os.path.join(run_dir, 'metrics.json')}'s vocab must hold {size} "
            f"distinct characters (the model's vocab_size){first}; got {str(vocab)[:200]}"
        )
    return chars


def write_run(out_dir: str, metrics: dict, model: nn.Module, quiet: bool) -> None:
    """The run's files, replacing an earlier run's as one set: model.safetensors (the
    state_dict), curves.png, and metrics.json (which names the model's configuration, so
    the model can be rebuilt)."""
    with outputs(out_dir) as folder:
        state, moved = {}, {}  # a file for any machine: each tensor on the host, once, so
        for k, v in model.state_dict().items():  # a tied one (GPT's head) stays tied in it
            where = (v.data_ptr(), v.shape)
            if where not in moved:
                moved[where] = v.cpu()
            state[k] = moved[where]
        cr.save(state, os.path.join(folder, "model.safetensors"))
        plt = pyplot(quiet)
        if plt is not None:
            plot_steps(plt, metrics, os.path.join(folder, "curves.png"))
        with open(os.path.join(folder, "metrics.json"), "w", encoding="utf-8") as f:
            json.dump(strict_json(metrics), f, indent=2, ensure_ascii=False, allow_nan=False)


def plot_steps(plt: Any, metrics: dict, path: str) -> None:
    """Losses against steps; beside them, any other metric of the history (accuracy)."""
    hist = metrics["history"]
    steps = [row["step"] for row in hist]
    losses = [k for k in hist[0] if k.endswith("_loss")]
    others = [k for k in hist[0] if k not in losses and k not in ("step", "lr")]
    fig, axes = plt.subplots(1, 1 + bool(others), figsize=(5 + 5 * bool(others), 3.8))
    ax = axes[0] if others else axes
    for key in losses:
        ax.plot(steps, [r[key] for r in hist], label=key.removesuffix("_loss"))
    ax.set(xlabel="step", ylabel="loss (nats per token)", title=f"{metrics['recipe']}: loss")
    ax.legend()
    for key in others:
        axes[1].plot(steps, [r[key] for r in hist], label=key.replace("_", " "))
        axes[1].set(xlabel="step", title=f"{metrics['recipe']}: {key.replace('_', ' ')}")
    fig.tight_layout()
    fig.savefig(path, dpi=110, format="png")
    plt.close(fig)


def run_metrics(name: str, settings: dict, history: list[dict], start: float, **extra: Any) -> dict:
    """metrics.json's content: the recipe, seed, settings, history, final row and seconds,
    and ``extra`` (the model's configuration, the vocabulary)."""
    final = {k: v for k, v in history[-1].items() if k not in ("step", "lr")}
    return {
        "recipe": name,
        "seed": settings["seed"],
        "steps": settings["steps"],
        "seconds": round(time.perf_counter() - start, 3),
        "settings": {k: v for k, v in settings.items() if k not in ("seed", "resume")},
        "history": history,
        "final": final,
        **extra,
    }
