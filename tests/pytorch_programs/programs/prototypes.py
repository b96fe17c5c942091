"""Prototype classification of signals by their windows: each signal cut into overlapping
windows (unfold, a view), each window projected (tensordot) and mixed by a block-diagonal
matrix (block_diag), the strongest response over windows kept (movedim, amax), and the class
read from the distances to learned prototypes (cdist), with a penalty on the prototypes'
squared norms (the diagonal of their Gram matrix) and on the projection's trace. The labels
come from binning each signal's energy (bucketize). Then the bookkeeping such code does with
indices: the nearest prototype's distance (take), the confident rows written over
(index_copy, masked_scatter), where new energies would fall (searchsorted), and the pairs of
prototypes (combinations), and the shape mistakes both libraries refuse."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Prototypes(nn.Module):
    def __init__(self, window=8, hidden=6, classes=3):
        super().__init__()
        self.project = nn.Parameter(torch.randn(window, hidden) * 0.3)
        self.mix_a = nn.Parameter(
            torch.eye(hidden // 2) + 0.1 * torch.randn(hidden // 2, hidden // 2)
        )
        self.mix_b = nn.Parameter(
            torch.eye(hidden // 2) + 0.1 * torch.randn(hidden // 2, hidden // 2)
        )
        self.prototypes = nn.Parameter(torch.randn(classes, hidden))

    def forward(self, signals):
        windows = signals.unfold(1, 8, 4)  # (N, 7, 8): overlapping windows, a view
        features = torch.tensordot(windows, self.project, dims=([2], [0]))  # (N, 7, H)
        features = features @ torch.block_diag(self.mix_a, self.mix_b)  # (N, 7, H)
        pooled = features.movedim(1, -1).amax(-1)  # (N, H): strongest over windows
        return -torch.cdist(pooled, self.prototypes)  # (N, C): nearer is likelier

    def penalty(self):
        gram = self.prototypes @ self.prototypes.mT  # (C, C)
        return gram.diagonal().sum() * 1e-3 + torch.trace(self.project.T @ self.project) * 1e-3


def main(seed=0, steps=25, init=None):
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 1, 32)
    amplitude = rng.uniform(0.2, 2.0, (48, 1))
    signals = torch.tensor(
        amplitude * np.sin(2 * np.pi * rng.integers(1, 4, (48, 1)) * t), dtype=torch.float32
    )
    energy = signals.pow(2).mean(1)  # (48,)
    boundaries = torch.quantile(energy, torch.tensor([1 / 3, 2 / 3]))
    labels = torch.bucketize(energy, boundaries)  # (48,): 0, 1, 2 by energy
    model = Prototypes()
    if init is not None:
        init(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(signals), labels) + model.penalty()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())

    with torch.no_grad():
        scores = model(signals)  # (48, 3)
        nearest = scores.argmax(1)
        flat = nearest + torch.arange(48) * 3  # each row's place in the flattened scores
        best = scores.take(flat)  # (48,)
        confident = best > best.median()
        marked = scores.clone().masked_scatter(confident.unsqueeze(1), torch.zeros(48 * 3))
        rows = torch.arange(48)[confident][:4]
        copied = scores.clone().index_copy(0, rows, torch.ones(len(rows), 3))
        where = torch.searchsorted(torch.sort(energy).values, torch.tensor([0.1, 0.5, 1.0]))
        pairs = torch.combinations(torch.arange(3), 2)

    mistakes = {
        "unfold-past-the-end": lambda: signals.unfold(1, 40, 1),
        "diagonal-of-one-dim": lambda: energy.diagonal(),
        "cdist-of-unequal-features": lambda: torch.cdist(signals, model.prototypes),
        "tensordot-of-unequal-dims": lambda: torch.tensordot(signals, model.project, dims=1),
    }
    refused = {}
    for name, make in mistakes.items():
        try:
            make()
            refused[name] = False
        except (RuntimeError, TypeError, ValueError, IndexError):
            refused[name] = True
    return {
        "losses": losses,
        "labels": labels.numpy(),
        "accuracy": (nearest == labels).float().mean().item(),
        "best": best.numpy(),
        "marked": marked.numpy(),
        "copied": copied.numpy(),
        "where": where.numpy(),
        "pairs": pairs.numpy(),
        "refused": refused,
    }
