"""Per-example gradients through spatial resampling, in the style of torch.func's tutorials:
a small spatial-transformer classifier (an affine grid learned from the image, grid_sample,
pixel_unshuffle, nearest upsampling, unfold into patches, fold back) whose per-example
gradients vmap(grad(loss)) gives at once; they are checked against one backward pass per
example, then used for a few steps of clipped per-example SGD."""

import numpy as np
import torch
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap


class Warper(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.locate = torch.nn.Linear(36, 6)  # the affine map, from the image
        self.mix = torch.nn.Conv2d(4, 2, 1)
        self.head = torch.nn.Linear(2 * 6 * 6, 3)

    def forward(self, x):  # x (N, 1, 6, 6)
        theta = self.locate(x.flatten(1)).reshape(-1, 2, 3) * 0.1
        theta = theta + torch.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
        grid = F.affine_grid(theta, [x.shape[0], 1, 6, 6], align_corners=False)
        warped = F.grid_sample(x, grid, padding_mode="border", align_corners=False)
        small = self.mix(F.pixel_unshuffle(warped, 2))  # (N, 2, 3, 3)
        big = F.interpolate(small, scale_factor=2, mode="nearest")  # (N, 2, 6, 6)
        patches = F.unfold(big, 2, stride=2)  # (N, 8, 9)
        back = F.fold(patches.tanh(), (6, 6), 2, stride=2)  # (N, 2, 6, 6)
        return self.head(back.flatten(1))


def main(seed=0, steps=5, lr=0.5, init=None):
    rng = np.random.default_rng(seed)
    x = torch.tensor(rng.standard_normal((6, 1, 6, 6)), dtype=torch.float32)
    y = torch.tensor(rng.integers(0, 3, 6))
    model = Warper()
    if init is not None:
        init(model)
    params = {name: p.detach() for name, p in model.named_parameters()}

    def loss_one(p, xi, yi):
        logits = functional_call(model, p, (xi.unsqueeze(0),))  # a batch of one
        return F.cross_entropy(logits, yi.unsqueeze(0))

    per_sample = vmap(grad(loss_one), in_dims=(None, 0, 0))(params, x, y)
    looped = {name: [] for name in params}
    for i in range(len(x)):
        model.zero_grad()
        F.cross_entropy(model(x[i : i + 1]), y[i : i + 1]).backward()
        for name, p in model.named_parameters():
            looped[name].append(p.grad.clone())
    apart = max((per_sample[n] - torch.stack(looped[n])).abs().max().item() for n in params)

    losses = []
    for _ in range(steps):
        losses.append(F.cross_entropy(functional_call(model, params, (x,)), y).item())
        g = vmap(grad(loss_one), in_dims=(None, 0, 0))(params, x, y)
        norms = torch.sqrt(sum((g[n].flatten(1) ** 2).sum(1) for n in params))  # (6,)
        scale = 1.0 / torch.clamp(norms, min=1.0)  # clipped to norm 1
        params = {
            n: p - lr * (g[n] * scale.reshape(-1, *([1] * p.dim()))).mean(0)
            for n, p in params.items()
        }
    return {"apart": apart, "losses": losses, "norms": norms.tolist()}


if __name__ == "__main__":
    print(main())
