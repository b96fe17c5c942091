"""MNIST from IDX files in --data-dir (never downloaded): an MLP on the 784 pixels."""

from __future__ import annotations

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import datasets, nn

DESCRIPTION = "MNIST from IDX files in --data-dir: MLP 784-256-10, cross-entropy, Adam"
TASK = "multiclass"
DEFAULTS = {"epochs": 5, "lr": 1e-3, "batch_size": 128, "optimizer": "adam"}


def data(seed: int, settings: dict) -> tuple:
    root = settings.get("data_dir")
    if not root:
        raise FileNotFoundError(
            "the mnist recipe needs --data-dir DIR, a folder with the MNIST IDX files "
            "(train-images-idx3-ubyte[.gz], train-labels-idx1-ubyte[.gz], t10k-images-idx3-ubyte"
            "[.gz], t10k-labels-idx1-ubyte[.gz])"
        )
    x_train, y_train, x_test, y_test = datasets.mnist(root)
    return x_train.reshape(len(x_train), -1), y_train, x_test.reshape(len(x_test), -1), y_test


def model() -> nn.Module:
    return nn.Sequential(
        nn.Linear(784, 256),
        nn.ReLU(),  # (B, 784) -> (B, 256)
        nn.Linear(256, 10),  # -> (B, 10) logits
    )


def loss(out: cr.Tensor, y: cr.Tensor) -> cr.Tensor:
    return F.cross_entropy(out, y)
