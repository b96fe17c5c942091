"""Counts as features: a bag-of-words classifier whose inputs are integer counts, turned into
floats where the model needs them (log1p of the counts, leaky_relu hidden units, softmax
over classes), with a helper that picks a dtype the way library code often does (None means
the default). Then the dtype mistakes such code invites, each caught: the program reports
which its library refused."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def as_features(counts, dtype=None):
    """float features of integer counts; dtype None: the default float."""
    if dtype in (None, torch.float32):  # float64 is neither: it equals no None
        dtype = torch.get_default_dtype()
    return torch.log1p(counts.to(dtype))


class BagOfWords(nn.Module):
    def __init__(self, vocab=10, hidden=8, classes=3):
        super().__init__()
        self.hidden = nn.Linear(vocab, hidden)
        self.out = nn.Linear(hidden, classes)

    def forward(self, features):
        return self.out(F.leaky_relu(self.hidden(features), 0.1))


def main(seed=0, steps=20, init=None):
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    counts = torch.tensor(rng.integers(0, 5, (32, 10)))  # int64
    labels = torch.tensor(counts.numpy()[:, :3].argmax(1))  # the commonest of 3 words
    features = as_features(counts)
    model = BagOfWords()
    if init is not None:
        init(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(features), labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    probabilities = F.softmax(model(features), dim=-1)

    ids = torch.tensor([0, 1, 2], dtype=torch.uint64)
    mistakes = {
        "leaky_relu-of-counts": lambda: F.leaky_relu(counts, 0.1),
        "softmax-of-counts": lambda: F.softmax(counts, dim=-1),
        "layer_norm-of-counts": lambda: F.layer_norm(counts, (10,)),
        "uint64-plus-int64": lambda: ids + torch.arange(3),
        "int-past-int64": lambda: torch.tensor([2**63 + 1]),
    }
    refused = {}
    for name, make in mistakes.items():
        try:
            make()
            refused[name] = False
        except (RuntimeError, TypeError, ValueError):
            refused[name] = True
    return {
        "losses": losses,
        "probabilities": probabilities.detach().numpy(),
        "features_dtype": str(features.dtype).split(".")[-1],
        "double_features_dtype": str(as_features(counts, torch.float64).dtype).split(".")[-1],
        "refused": refused,
    }
