"""Two interleaving moons on the tensor engine: an MLP with a decision boundary to show."""

from __future__ import annotations

import os

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import datasets, nn
from chainrule.tools.recipes.train import decision_boundary

DESCRIPTION = "two moons (tensor engine): MLP 2-16-16-1, BCE with logits, Adam"
TASK = "binary"
DEFAULTS = {"epochs": 100, "lr": 1e-2, "batch_size": 32, "optimizer": "adam"}


def data(seed: int, settings: dict) -> tuple:
    x_train, y_train, x_test, y_test = datasets.moons(n_samples=500, noise=0.1, seed=seed)
    return x_train, y_train.float(), x_test, y_test.float()


def model() -> nn.Module:
    return nn.Sequential(
        nn.Linear(2, 16),
        nn.ReLU(),  # (B, 2) -> (B, 16)
        nn.Linear(16, 16),
        nn.ReLU(),  # -> (B, 16)
        nn.Linear(16, 1),  # -> (B, 1): one logit
    )


def loss(out: cr.Tensor, y: cr.Tensor) -> cr.Tensor:
    return F.binary_cross_entropy_with_logits(out.reshape(-1), y)


def plot_extra(
    net: nn.Module, x_train: cr.Tensor, y_train: cr.Tensor, out_dir: str, quiet: bool
) -> None:
    def predict(points):
        with cr.no_grad():
            return net(cr.tensor(points)).numpy()

    decision_boundary(
        predict,
        x_train.numpy(),
        y_train.numpy(),
        os.path.join(out_dir, "decision_boundary.png"),
        "moons: tensor engine",
        quiet,
    )
