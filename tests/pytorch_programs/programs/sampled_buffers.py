"""A sampler that reuses its buffers, in the style of PyTorch code written for fixed memory:
noise drawn into a preallocated tensor with torch.randn(..., out=), a running sum kept with
torch.zeros(..., out=) and torch.where(..., out=), then a batch of per-example draws under
torch.func.vmap with randomness='different' (each example its own categories from one
shared table of weights, its own Bernoulli mask, its own feature dropout) and 'same' in
chunks (one draw for all, every chunk alike). Seeded, so the draws are the numbers torch
draws."""

import torch
import torch.nn.functional as F
from torch.func import vmap


def main(seed=0, init=None):
    torch.manual_seed(seed)
    noise = torch.empty(0)
    total = torch.empty(4, 6)
    kept = torch.empty(4, 6)
    torch.zeros(4, 6, out=total)
    for _ in range(3):
        torch.randn(4, 6, out=noise)  # resized on the first pass, reused after
        torch.where(noise > 0, noise, torch.zeros(4, 6), out=kept)
        total += kept
    steps = torch.arange(0, 1, 0.25, out=torch.empty(0, dtype=torch.float64))

    weights = torch.tensor([1.0, 2.0, 3.0, 4.0])  # one table, shared by every example
    x = torch.rand(5, 2, 3)

    def per_example(row):
        picks = torch.multinomial(weights, 3)
        mask = torch.bernoulli(torch.full((3,), 0.5))
        dropped = F.dropout1d(row + 1, 0.5)
        return picks, mask, dropped

    picks, masks, dropped = vmap(per_example, randomness="different")(x)
    shared = vmap(lambda row: row + torch.rand(3), randomness="same", chunk_size=2)(x[:, 0])
    return {
        "total": total.numpy().copy(),
        "steps": steps.numpy().copy(),
        "picks": picks.numpy().copy(),
        "masks": masks.numpy().copy(),
        "dropped": dropped.numpy().copy(),
        "shared": shared.numpy().copy(),
        "offsets": (shared - x[:, 0]).numpy().copy(),
    }
