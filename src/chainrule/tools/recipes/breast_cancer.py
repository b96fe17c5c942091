"""Breast cancer (569 tumours, 30 features): an MLP trained with BCE on logits."""

from __future__ import annotations

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import datasets, nn

DESCRIPTION = "breast cancer diagnosis: MLP 30-32-16-1 with dropout, BCE with logits, Adam"
TASK = "binary"
DEFAULTS = {"epochs": 40, "lr": 1e-3, "batch_size": 32, "optimizer": "adam"}


def data(seed: int, settings: dict) -> tuple:
    x_train, y_train, x_test, y_test = datasets.breast_cancer(seed=seed)  # standardised
    return x_train, y_train.float(), x_test, y_test.float()


def model() -> nn.Module:
    return nn.Sequential(
        nn.Linear(30, 32),
        nn.ReLU(),  # (B, 30) -> (B, 32)
        nn.Dropout(0.3),
        nn.Linear(32, 16),
        nn.ReLU(),  # -> (B, 16)
        nn.Dropout(0.3),
        nn.Linear(16, 1),  # -> (B, 1): one logit
    )


def loss(out: cr.Tensor, y: cr.Tensor) -> cr.Tensor:
    return F.binary_cross_entropy_with_logits(out.reshape(-1), y)
