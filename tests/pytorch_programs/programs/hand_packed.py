"""A GRU over sequences packed by hand: the time-major rows of every sequence still running
at each step, and batch_sizes counting them, as a PackedSequence built directly (no
pack_sequence), trained to predict each sequence's sum. Then the mistakes such a hand-made
packing invites (batch sizes one too many, growing, or indices that are no permutation),
each caught: the program reports which ones its library refused."""

import numpy as np
import torch
import torch.nn as nn
from torch.nn.utils.rnn import PackedSequence, pad_packed_sequence


def pack_by_hand(seqs):
    """seqs sorted longest first, each (L_i, 1): the packed rows and the batch sizes."""
    rows, sizes = [], []
    for t in range(len(seqs[0])):
        running = [s for s in seqs if len(s) > t]
        rows.extend(s[t] for s in running)
        sizes.append(len(running))
    return torch.stack(rows), torch.tensor(sizes)  # (sum of lengths, 1), (longest,)


class Summer(nn.Module):
    def __init__(self, hidden=8):
        super().__init__()
        self.gru = nn.GRU(1, hidden)
        self.head = nn.Linear(hidden, 1)

    def forward(self, packed):
        _, h_n = self.gru(packed)  # (1, B, hidden)
        return self.head(h_n[-1]).squeeze(1)  # (B,)


def main(seed=0, steps=15, init=None):
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    lengths = sorted(rng.integers(1, 7, 6).tolist(), reverse=True)
    seqs = [torch.tensor(rng.uniform(-1, 1, (n, 1)), dtype=torch.float32) for n in lengths]
    target = torch.stack([s.sum() for s in seqs])
    data, batch_sizes = pack_by_hand(seqs)

    model = Summer()
    if init is not None:
        init(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = ((model(PackedSequence(data, batch_sizes)) - target) ** 2).mean()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    padded, out_lengths = pad_packed_sequence(PackedSequence(data, batch_sizes))

    mistakes = {
        "one-too-many": lambda: PackedSequence(data, batch_sizes + torch.tensor(1)),
        "growing": lambda: PackedSequence(data, batch_sizes.flip(0)),
        "not-a-permutation": lambda: PackedSequence(
            data, batch_sizes, torch.zeros(len(seqs), dtype=torch.long)
        ),
    }
    refused = {}
    for name, make in mistakes.items():
        try:
            model(make())  # torch lets some of these through to the GRU, which then fails
            refused[name] = False
        except (RuntimeError, ValueError, IndexError):
            refused[name] = True
    return {
        "losses": losses,
        "padded": padded.numpy(),
        "lengths": out_lengths.tolist(),
        "refused": refused,
    }
