"""The one training loop every tensor recipe shares, and what a run leaves behind:
a progress bar, metrics.json, curves.png and model.safetensors.
"""

from __future__ import annotations

import json
import os
import time
from types import ModuleType
from typing import Any

import numpy as np

import chainrule as cr
from chainrule import nn, optim
from chainrule.data import DataLoader, TensorDataset

OPTIMIZERS = {"sgd": optim.SGD, "adam": optim.Adam, "adamw": optim.AdamW, "rmsprop": optim.RMSprop}


def evaluate(
    recipe: ModuleType, model: nn.Module, x: cr.Tensor, y: cr.Tensor
) -> tuple[float, float]:
    """(loss, metric) on a whole split: accuracy for classifiers, MSE for regression."""
    model.eval()
    with cr.no_grad():
        out = model(x)
        loss = recipe.loss(out, y).item()
        if recipe.TASK == "regression":
            metric = float(((out.reshape(-1) - y.reshape(-1)) ** 2).mean().item())
        elif recipe.TASK == "binary":
            metric = float(((out.reshape(-1) > 0).numpy() == (y.reshape(-1).numpy() > 0.5)).mean())
        else:
            metric = float((out.argmax(dim=1).numpy() == y.numpy()).mean())
    model.train()
    return loss, metric


def train(
    recipe: ModuleType, name: str, settings: dict[str, Any], out_dir: str, quiet: bool
) -> dict:
    """Train ``recipe`` with ``settings`` (epochs, lr, batch_size, optimizer, seed, data_dir);
    write the run's files to ``out_dir`` and return the metrics."""
    from tqdm.auto import tqdm

    seed = settings["seed"]
    cr.manual_seed(seed)
    x_train, y_train, x_test, y_test = recipe.data(seed, settings)
    model = recipe.model()
    opt = OPTIMIZERS[settings["optimizer"]](model.parameters(), lr=settings["lr"])
    loader = DataLoader(
        TensorDataset(x_train, y_train), batch_size=settings["batch_size"], shuffle=True
    )
    metric_name = "test_mse" if recipe.TASK == "regression" else "test_accuracy"
    history = []
    start = time.perf_counter()
    bar = tqdm(range(1, settings["epochs"] + 1), desc=name, disable=quiet, leave=False)
    for epoch in bar:
        for xb, yb in loader:
            loss = recipe.loss(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        train_loss, _ = evaluate(recipe, model, x_train, y_train)
        test_loss, metric = evaluate(recipe, model, x_test, y_test)
        history.append(
            {"epoch": epoch, "train_loss": train_loss, "test_loss": test_loss, metric_name: metric}
        )
        bar.set_postfix(loss=f"{train_loss:.4f}", **{metric_name: f"{metric:.4f}"})
    final = {k: v for k, v in history[-1].items() if k != "epoch"}
    metrics = {
        "recipe": name,
        "seed": seed,
        "epochs": settings["epochs"],
        "seconds": round(time.perf_counter() - start, 3),
        "settings": {k: v for k, v in settings.items() if k != "seed"},
        "history": history,
        "final": final,
    }
    write_outputs(out_dir, metrics, model.state_dict(), quiet)
    if hasattr(recipe, "plot_extra"):
        recipe.plot_extra(model, x_train, y_train, out_dir, quiet)
    return metrics


def write_outputs(out_dir: str, metrics: dict, state: dict, quiet: bool) -> None:
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "metrics.json"), "w") as f:
        json.dump(metrics, f, indent=2)
    cr.save(state, os.path.join(out_dir, "model.safetensors"))
    plot_curves(metrics, os.path.join(out_dir, "curves.png"), quiet)


def pyplot(quiet: bool) -> Any:
    """matplotlib's pyplot (headless), or None with a note saying how to get plots."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        if not quiet:
            print('note: matplotlib is not installed, so no plots; pip install "chainrule[plot]"')
        return None
    return plt


def plot_curves(metrics: dict, path: str, quiet: bool) -> None:
    plt = pyplot(quiet)
    if plt is None:
        return
    hist = metrics["history"]
    epochs = [row["epoch"] for row in hist]
    metric = next(k for k in hist[0] if k.startswith("test_") and k != "test_loss")
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
    ax1.plot(epochs, [r["train_loss"] for r in hist], label="train")
    ax1.plot(epochs, [r["test_loss"] for r in hist], label="test")
    ax1.set(xlabel="epoch", ylabel="loss", title=f"{metrics['recipe']}: loss")
    if max(r["train_loss"] for r in hist) > 50 * max(min(r["train_loss"] for r in hist), 1e-12):
        ax1.set_yscale("log")
    ax1.legend()
    ax2.plot(epochs, [r[metric] for r in hist], color="tab:green")
    label = metric.replace("_", " ")
    ax2.set(xlabel="epoch", ylabel=label, title=f"{metrics['recipe']}: {label}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def decision_boundary(predict: Any, x: np.ndarray, y: np.ndarray, path: str, title: str,
                      quiet: bool) -> None:
    """Plot a 2-D classifier's decision regions; ``predict`` maps (n, 2) points to scores."""
    plt = pyplot(quiet)
    if plt is None:
        return
    lo, hi = x.min(axis=0) - 0.5, x.max(axis=0) + 0.5
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], 200), np.linspace(lo[1], hi[1], 200))
    scores = predict(np.c_[gx.ravel(), gy.ravel()].astype(np.float32)).reshape(gx.shape)
    fig, ax = plt.subplots(figsize=(5, 4.2))
    ax.contourf(gx, gy, scores > 0, alpha=0.35, cmap="coolwarm")
    ax.scatter(x[:, 0], x[:, 1], c=y, s=14, cmap="coolwarm", edgecolors="k", linewidths=0.3)
    ax.set(title=title, xlabel="x1", ylabel="x2")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
