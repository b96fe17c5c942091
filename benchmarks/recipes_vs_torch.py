"""Each tensor recipe trained twice: by chainrule's own loop (recipes/train.py) and by the same
loop written in PyTorch, with the same data, architecture, starting weights, optimizer,
learning rate, epochs and batch size. PyTorch's loop starts from the random state chainrule's
loop started from, and chainrule draws PyTorch's numbers, so both draw the same shuffles and
dropout masks: the final metrics differ only by float rounding (the two BLAS libraries).

    python benchmarks/recipes_vs_torch.py [--seed 0] [--recipes moons ...] [--quick] [--markdown]
        [--steady-allocator]

Seconds are the training loop with its per-epoch evaluation, timed as recipes/train.py
times it (data loading, model building and the files a run writes are left out). Both run in
one plain process unless --steady-allocator is given (then both with malloc's thresholds
fixed, as `chainrule train` runs chainrule's loop).
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from collections import OrderedDict
from collections.abc import Callable
from types import ModuleType
from typing import Any

import torch
import torch.nn.functional as TF
from common import parse_args, pin_torch_threads, process_note
from torch.utils.data import DataLoader, TensorDataset

import chainrule as cr
from chainrule import nn
from chainrule.tools import recipes
from chainrule.tools.cli import settings_for
from chainrule.tools.recipes.train import evaluate, train

RECIPES = ["regression", "breast-cancer", "moons", "digits-mlp", "digits-cnn"]
TORCH_OPTIMIZERS = {
    "sgd": torch.optim.SGD,
    "adam": torch.optim.Adam,
    "adamw": torch.optim.AdamW,
    "rmsprop": torch.optim.RMSprop,
}
# recipe.TASK -> the recipes' loss for that task, written with torch.nn.functional; compare() checks
# that it gives the recipe's own loss at the shared starting weights
TORCH_LOSSES: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "binary": lambda out, y: TF.binary_cross_entropy_with_logits(out.reshape(-1), y),
    "multiclass": lambda out, y: TF.cross_entropy(out, y),
    "regression": lambda out, y: TF.mse_loss(out.reshape(-1), y.reshape(-1)),
}
# chainrule layer -> its PyTorch twin, built from the same constructor arguments
MIRRORS: dict[type, Callable[[Any], torch.nn.Module]] = {
    nn.Linear: lambda m: torch.nn.Linear(m.in_features, m.out_features, bias=m.bias is not None),
    nn.ReLU: lambda m: torch.nn.ReLU(),
    nn.Dropout: lambda m: torch.nn.Dropout(m.p),
    nn.Conv2d: lambda m: torch.nn.Conv2d(
        m.in_channels,
        m.out_channels,
        m.kernel_size,
        stride=m.stride,
        padding=m.padding,
        dilation=m.dilation,
        groups=m.groups,
        bias=m.bias is not None,
    ),
    nn.MaxPool2d: lambda m: torch.nn.MaxPool2d(m.kernel_size, m.stride, m.padding),
    nn.Flatten: lambda m: torch.nn.Flatten(m.start_dim, m.end_dim),
}


def mirror(model: nn.Module) -> torch.nn.Module:
    """The PyTorch twin of a chainrule Sequential: layer for layer, under the same names, so
    the state_dict keys match."""
    if not isinstance(model, nn.Sequential):
        raise TypeError(f"mirror: expected an nn.Sequential; got {type(model).__name__}")
    layers = OrderedDict()
    for name, m in model.named_children():
        if type(m) not in MIRRORS:
            known = ", ".join(t.__name__ for t in MIRRORS)
            raise TypeError(f"mirror: no PyTorch twin for {type(m).__name__}; known: {known}")
        layers[name] = MIRRORS[type(m)](m)
    return torch.nn.Sequential(layers)


def recording(recipe: ModuleType) -> tuple[ModuleType, dict[str, Any]]:
    """A copy of ``recipe`` that keeps what chainrule's run starts from: the data split, and
    the model with a copy of its freshly initialised weights. Extra plots are left out."""
    seen: dict[str, Any] = {}
    copy = ModuleType(recipe.__name__)
    copy.__dict__.update({k: v for k, v in vars(recipe).items() if k != "plot_extra"})

    def data(seed: int, settings: dict) -> tuple:
        seen["data"] = recipe.data(seed, settings)
        return seen["data"]

    def model() -> nn.Module:
        seen["model"] = recipe.model()
        seen["weights"] = {k: v.numpy().copy() for k, v in seen["model"].state_dict().items()}
        seen["rng_state"] = cr.get_rng_state().numpy().copy()  # where the training's draws begin
        return seen["model"]

    copy.data, copy.model = data, model  # type: ignore[attr-defined]
    return copy, seen


def run_chainrule(name: str, settings: dict) -> tuple[dict[str, Any], dict[str, Any]]:
    """Train with recipes/train.py; returns its metrics and what the run started from, with
    the starting test loss added (``start_loss``)."""
    recipe, seen = recording(recipes.load(name))
    with tempfile.TemporaryDirectory() as out_dir:
        metrics = train(recipe, name, settings, out_dir, quiet=True)
    fresh = recipes.load(name).model()
    fresh.load_state_dict(seen["weights"])
    _, _, x_test, y_test = seen["data"]
    seen["start_loss"], _ = evaluate(recipe, fresh, x_test, y_test)
    return metrics, seen


def torch_evaluate(
    task: str, model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor
) -> tuple[float, float]:
    """recipes/train.py's evaluate, in PyTorch: (loss, accuracy or MSE) on a whole split."""
    model.eval()
    with torch.no_grad():
        out = model(x)
        loss = TORCH_LOSSES[task](out, y).item()
        if task == "regression":
            metric = ((out.reshape(-1) - y.reshape(-1)) ** 2).mean().item()
        elif task == "binary":
            metric = ((out.reshape(-1) > 0) == (y.reshape(-1) > 0.5)).double().mean().item()
        else:
            metric = (out.argmax(dim=1) == y).double().mean().item()
    model.train()
    return loss, metric


def run_torch(task: str, settings: dict, seen: dict[str, Any]) -> tuple[float, float, float]:
    """recipes/train.py's loop in PyTorch from chainrule's data and starting weights; returns
    (starting test loss, final metric, seconds)."""
    x_train, y_train, x_test, y_test = (torch.from_numpy(t.numpy().copy()) for t in seen["data"])
    model = mirror(seen["model"])
    model.load_state_dict({k: torch.from_numpy(v) for k, v in seen["weights"].items()})
    start_loss, _ = torch_evaluate(task, model, x_test, y_test)
    opt = TORCH_OPTIMIZERS[settings["optimizer"]](model.parameters(), lr=settings["lr"])
    # PyTorch's global generator where chainrule's stood when its training began: both
    # loops then draw the same shuffles and dropout masks
    torch.set_rng_state(torch.from_numpy(seen["rng_state"]))
    loader = DataLoader(
        TensorDataset(x_train, y_train), batch_size=settings["batch_size"], shuffle=True
    )
    loss_fn = TORCH_LOSSES[task]
    start = time.perf_counter()
    for _ in range(settings["epochs"]):
        for xb, yb in loader:
            loss = loss_fn(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        torch_evaluate(task, model, x_train, y_train)  # train.py's train loss, for equal work
        _, metric = torch_evaluate(task, model, x_test, y_test)
    return start_loss, metric, time.perf_counter() - start


def compare(name: str, seed: int, quick: bool) -> dict[str, Any]:
    """One recipe on both frameworks: the metric's name, and each one's value and seconds."""
    recipe = recipes.load(name)
    settings = settings_for(recipe, argparse.Namespace(seed=seed, epochs=1 if quick else None))
    metrics, seen = run_chainrule(name, settings)
    torch_start, torch_metric, torch_seconds = run_torch(recipe.TASK, settings, seen)
    if not math.isclose(seen["start_loss"], torch_start, rel_tol=1e-4, abs_tol=1e-6):
        raise RuntimeError(
            f"{name}: the PyTorch twin disagrees before training; starting test loss "
            f"{seen['start_loss']} (chainrule) vs {torch_start} (PyTorch)"
        )
    metric = "test_mse" if recipe.TASK == "regression" else "test_accuracy"
    return {
        "metric": metric,
        "epochs": settings["epochs"],
        "chainrule": {"value": metrics["final"][metric], "seconds": metrics["seconds"]},
        "pytorch": {"value": torch_metric, "seconds": torch_seconds},
    }


def table(results: dict[str, dict[str, Any]], markdown: bool) -> str:
    """The comparison as aligned text, or as a markdown table ready for the README."""
    head = ["recipe", "epochs", "metric", "chainrule", "s", "PyTorch", "s", "time ratio"]
    rows = [
        [name, str(r["epochs"]), r["metric"].replace("_", " "),
         f"{r['chainrule']['value']:.4f}", f"{r['chainrule']['seconds']:.2f}",
         f"{r['pytorch']['value']:.4f}", f"{r['pytorch']['seconds']:.2f}",
         f"{r['chainrule']['seconds'] / r['pytorch']['seconds']:.2f}x"]
        for name, r in results.items()
    ]  # fmt: skip
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|---|---:|---|" + "---:|" * 5]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head))]
    return "\n".join(
        "  ".join(cell.ljust(w) if i in (0, 2) else cell.rjust(w) for i, (cell, w) in
                  enumerate(zip(row, widths, strict=True)))
        for row in [head, *rows]
    )  # fmt: skip


def main(argv: list[str] | None = None) -> dict[str, dict[str, Any]]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--recipes",
        nargs="+",
        choices=RECIPES,
        default=RECIPES,
        metavar="RECIPE",
        help=f"a subset of: {' '.join(RECIPES)}",
    )
    ap.add_argument("--quick", action="store_true", help="one epoch each: only checks it works")
    ap.add_argument("--markdown", action="store_true", help="print a markdown table")
    args = parse_args(ap, argv, __file__)
    pin_torch_threads()
    results = {name: compare(name, args.seed, args.quick) for name in args.recipes}
    note = (
        f"seed {args.seed}, one process, chainrule first, {process_note()}; s: seconds of the "
        f"training loop with its per-epoch evaluation; time ratio: chainrule's seconds / PyTorch's"
    )
    if args.markdown:
        print(table(results, markdown=True) + f"\n\n{note[0].upper()}{note[1:]}.")
    else:
        print(f"recipes, chainrule vs PyTorch ({note})\n{table(results, markdown=False)}")
    return results


if __name__ == "__main__":
    main()
