"""micrograd's demo on the scalar engine: 100 moons, MLP(2, [16, 16, 1]), max-margin loss,
full-batch SGD, one Value per number. Seed 0 is micrograd's own run (its seed 1337)."""

from __future__ import annotations

import os
import time

import numpy as np

from chainrule.scalar import Value
from chainrule.scalar.demo import train_moons
from chainrule.scalar.nn import MLP
from chainrule.tools.recipes.train import decision_boundary, outputs, print_finished, write_outputs

DESCRIPTION = "micrograd's moons demo on the scalar engine: MLP 2-16-16-1, SVM loss, SGD"
TASK = "binary"
DEFAULTS = {"epochs": 100, "lr": 1.0, "batch_size": 100, "optimizer": "sgd"}


def score(model: MLP, x: list[float]) -> Value:
    out = model([Value(a) for a in x])
    assert isinstance(out, Value)  # the last layer has one neuron
    return out


def scores(model: MLP, points: np.ndarray) -> np.ndarray:
    return np.array([score(model, p).data for p in points.tolist()])


def one_step(settings: dict) -> tuple:
    """The loss of one example, for `chainrule graph moons-scalar`: one Value per number."""
    import random

    from sklearn.datasets import make_moons

    random.seed(1337 + settings["seed"])
    x, y = make_moons(n_samples=1, noise=0.1, random_state=1337 + settings["seed"])
    model = MLP(2, [4, 4, 1])  # smaller than the recipe's, so the drawing stays readable
    return (1 + -(2 * int(y[0]) - 1) * score(model, x[0].tolist())).relu(), None


def train(name: str, settings: dict, out_dir: str, quiet: bool) -> dict:
    """micrograd's loop (chainrule.scalar.demo.train_moons), one step an epoch, with a
    held-out set of 100 more moons scored after every step. Its learning rate schedule is
    micrograd's (1.0 - 0.9 k / 100); --lr, --batch-size and --optimizer do not apply."""
    from sklearn.datasets import make_moons
    from tqdm.auto import tqdm

    seed = 1337 + settings["seed"]
    x_test, y_test = make_moons(n_samples=100, noise=0.1, random_state=seed + 1)
    made: list[MLP] = []

    def mlp(nin: int, nouts: list[int]) -> MLP:
        made.append(MLP(nin, nouts))
        return made[-1]

    history = []
    start = time.perf_counter()
    steps = train_moons(settings["epochs"], seed, mlp=mlp)
    bar = tqdm(steps, total=settings["epochs"], desc=name, disable=quiet, leave=False)
    for epoch, (loss, _) in enumerate(bar, 1):
        test_scores = scores(made[0], x_test)
        margins = np.maximum(0.0, 1 - (y_test * 2 - 1) * test_scores)
        accuracy = float(((test_scores > 0) == (y_test == 1)).mean())
        history.append(
            {
                "epoch": epoch,
                "train_loss": loss,
                "test_loss": float(margins.mean()),
                "test_accuracy": accuracy,
            }
        )
        bar.set_postfix(loss=f"{loss:.4f}", test_accuracy=f"{accuracy:.4f}")
    if not quiet:
        print_finished(bar)
    metrics = {
        "recipe": name,
        "seed": settings["seed"],
        "epochs": settings["epochs"],
        "seconds": round(time.perf_counter() - start, 3),
        "history": history,
        "final": {k: v for k, v in history[-1].items() if k != "epoch"},
    }
    state = {f"p{i}": np.array([p.data]) for i, p in enumerate(made[0].parameters())}
    x_train, y_train = make_moons(n_samples=100, noise=0.1, random_state=seed)
    with outputs(out_dir) as folder:
        write_outputs(folder, metrics, state, quiet)
        decision_boundary(lambda pts: scores(made[0], pts), x_train, y_train,
                          os.path.join(folder, "decision_boundary.png"),
                          "moons: scalar engine", quiet)  # fmt: skip
    return metrics
