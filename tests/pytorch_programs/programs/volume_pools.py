"""A small classifier of 3-D volumes in the PyTorch style: Conv3d, MaxPool3d keeping its
indices, AdaptiveAvgPool3d to one value a channel; trained a few steps of SGD, then: one
unbatched volume (C, D, H, W) classified as it is, the first layer's maxima put back by
MaxUnpool3d, each example's gradient by vmap(grad) checked against a loop, and the grad_fn
names of every pool on an unbatched input."""

import numpy as np
import torch
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap


class VolumeNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv3d(2, 4, 3, padding=1)
        self.pool = torch.nn.MaxPool3d(2, return_indices=True)
        self.squash = torch.nn.AdaptiveAvgPool3d(1)
        self.head = torch.nn.Linear(4, 3)

    def forward(self, x):  # x: (N, 2, 6, 6, 6) or unbatched (2, 6, 6, 6)
        h, _ = self.pool(torch.relu(self.conv(x)))  # (N, 4, 3, 3, 3)
        return self.head(self.squash(h).flatten(-4))  # (N, 3)


def main(seed=0, steps=5, lr=0.2, init=None):
    rng = np.random.default_rng(seed)
    x = torch.tensor(rng.standard_normal((4, 2, 6, 6, 6)), dtype=torch.float32)
    y = torch.tensor(rng.integers(0, 3, 4))
    model = VolumeNet()
    if init is not None:
        init(model)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())

    with torch.no_grad():
        one = model(x[0])  # an unbatched volume: (3,)
        batched = model(x[:1])[0]
        h = torch.relu(model.conv(x[:2]))
        pooled, where = F.max_pool3d(h, 2, return_indices=True)
        back = F.max_unpool3d(pooled, where, 2, output_size=h.shape)
        kept = (back != 0).sum().item()  # one place a window
    params = {name: p.detach() for name, p in model.named_parameters()}

    def loss_one(p, xi, yi):
        return F.cross_entropy(functional_call(model, p, (xi.unsqueeze(0),)), yi.unsqueeze(0))

    per_sample = vmap(grad(loss_one), in_dims=(None, 0, 0))(params, x, y)
    looped = [grad(loss_one)(params, x[i], y[i]) for i in range(len(x))]
    apart = max(
        (per_sample[n] - torch.stack([g[n] for g in looped])).abs().max().item() for n in params
    )

    v = x[0].clone().requires_grad_(True)  # (2, 6, 6, 6)
    names = {
        "max_pool3d": F.max_pool3d(v, 2).grad_fn.name(),
        "avg_pool3d": F.avg_pool3d(v, 3, 2, 1, count_include_pad=False).grad_fn.name(),
        "adaptive_max_pool3d": F.adaptive_max_pool3d(v, (2, 3, 2)).grad_fn.name(),
        "adaptive_avg_pool3d": F.adaptive_avg_pool3d(v, (3, 2, 3)).grad_fn.name(),
        "max_pool2d": F.max_pool2d(v[0], 2).grad_fn.name(),
        "avg_pool2d": F.avg_pool2d(v[0], 3, 2, 1, ceil_mode=True).grad_fn.name(),
    }
    return {
        "losses": losses,
        "one": one.numpy(),
        "same_as_batched": bool(torch.allclose(one, batched, atol=1e-6)),
        "back": back.numpy(),
        "kept": kept,
        "per_sample": {n: g.numpy() for n, g in per_sample.items()},
        "apart": apart,
        "names": names,
    }
