"""Handwritten digits (8x8 images from scikit-learn): an MLP on the 64 pixels."""

from __future__ import annotations

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import datasets, nn

DESCRIPTION = "digits 8x8: MLP 64-128-64-10 with dropout, cross-entropy, Adam"
TASK = "multiclass"
DEFAULTS = {"epochs": 60, "lr": 1e-3, "batch_size": 32, "optimizer": "adam"}


def data(seed: int, settings: dict) -> tuple:
    return datasets.digits(seed=seed)


def model() -> nn.Module:
    return nn.Sequential(
        nn.Linear(64, 128),
        nn.ReLU(),  # (B, 64) -> (B, 128)
        nn.Dropout(0.2),
        nn.Linear(128, 64),
        nn.ReLU(),  # -> (B, 64)
        nn.Dropout(0.2),
        nn.Linear(64, 10),  # -> (B, 10) logits
    )


def loss(out: cr.Tensor, y: cr.Tensor) -> cr.Tensor:
    return F.cross_entropy(out, y)
