"""Handwritten digits (8x8 images) with a small convolutional network."""

from __future__ import annotations

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import datasets, nn

DESCRIPTION = "digits 8x8: CNN conv16-conv32-pool-linear, cross-entropy, Adam"
TASK = "multiclass"
DEFAULTS = {"epochs": 30, "lr": 2e-3, "batch_size": 32, "optimizer": "adam"}


def data(seed: int, settings: dict) -> tuple:
    x_train, y_train, x_test, y_test = datasets.digits(seed=seed)
    return x_train.reshape(-1, 1, 8, 8), y_train, x_test.reshape(-1, 1, 8, 8), y_test


def model() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1),
        nn.ReLU(),  # (B, 1, 8, 8) -> (B, 16, 8, 8)
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),  # -> (B, 32, 8, 8)
        nn.MaxPool2d(2),  # -> (B, 32, 4, 4)
        nn.Flatten(),  # -> (B, 512)
        nn.Dropout(0.25),
        nn.Linear(512, 10),  # -> (B, 10) logits
    )


def loss(out: cr.Tensor, y: cr.Tensor) -> cr.Tensor:
    return F.cross_entropy(out, y)
