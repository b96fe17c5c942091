"""Attention over the edges of a small graph, kept sparse: scores on the given edges only,
torch.sparse.softmax along the last dim (each node's neighbours), aggregation by a sparse
product, and node degrees by torch.sparse.sum; a linear layer learns to regress a target
from the aggregated features. Then the dims and sizes a user can get wrong (a dim past the
last, a repeated dim, a negative size), each caught: the program reports which its library
refused."""

import numpy as np
import torch
import torch.nn as nn


def graph(n=7, seed=0):
    rng = np.random.default_rng(seed)
    edges = {(i, i) for i in range(n)} | {tuple(rng.integers(0, n, 2)) for _ in range(3 * n)}
    src, dst = np.array(sorted(edges)).T
    return torch.tensor(np.stack([src, dst])), n


def main(seed=0, steps=12, init=None):
    torch.manual_seed(seed)
    index, n = graph(seed=seed)
    rng = np.random.default_rng(seed + 1)
    x = torch.tensor(rng.standard_normal((n, 4)), dtype=torch.float32)
    target = torch.tensor(rng.standard_normal((n, 2)), dtype=torch.float32)
    # fixed scores: torch 2.13's gradient to the values under sparse.softmax is not the
    # dense masked softmax's (chainrule's is), so only the layer learns here
    score = torch.tensor(rng.standard_normal(index.shape[1]), dtype=torch.float32)
    scores = torch.sparse_coo_tensor(index, score, (n, n))
    attention = torch.sparse.softmax(scores, dim=-1)  # over each node's neighbours
    model = nn.Linear(4, 2)
    if init is not None:
        init(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = ((model(torch.sparse.mm(attention, x)) - target) ** 2).mean()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    ones = torch.sparse_coo_tensor(index, torch.ones(index.shape[1]), (n, n))
    degrees = torch.sparse.sum(ones, dim=1).to_dense()
    in_degrees = torch.sparse.sum(ones, dim=(-2,)).to_dense()

    mistakes = {
        "softmax-dim-past-the-last": lambda: torch.sparse.softmax(ones, dim=2),
        "sum-dim-past-the-first": lambda: torch.sparse.sum(ones, dim=-3),
        "sum-repeated-dim": lambda: torch.sparse.sum(ones, dim=(0, 0)),
        "negative-size": lambda: torch.sparse_coo_tensor(
            torch.zeros(2, 0, dtype=torch.long), torch.zeros(0), (-1, 3)
        ),
    }
    refused = {}
    for name, make in mistakes.items():
        try:
            make()
            refused[name] = False
        except (IndexError, RuntimeError, ValueError, TypeError):
            refused[name] = True
    return {
        "losses": losses,
        "degrees": degrees.tolist(),
        "in_degrees": in_degrees.tolist(),
        "refused": refused,
    }
