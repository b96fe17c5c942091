"""Regression on make_regression data, raw targets in the hundreds: MSE from thousands down."""

from __future__ import annotations

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import datasets, nn

DESCRIPTION = "make_regression (10 features): MLP 10-64-64-1, MSE, Adam"
TASK = "regression"
DEFAULTS = {"epochs": 100, "lr": 3e-3, "batch_size": 32, "optimizer": "adam"}


def data(seed: int, settings: dict) -> tuple:
    return datasets.regression(n_samples=1000, n_features=10, noise=5.0, seed=seed)


def model() -> nn.Module:
    return nn.Sequential(
        nn.Linear(10, 64),
        nn.ReLU(),  # (B, 10) -> (B, 64)
        nn.Linear(64, 64),
        nn.ReLU(),  # -> (B, 64)
        nn.Linear(64, 1),  # -> (B, 1)
    )


def loss(out: cr.Tensor, y: cr.Tensor) -> cr.Tensor:
    return F.mse_loss(out.reshape(-1), y.reshape(-1))
