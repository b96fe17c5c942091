"""Per-sample gradients in the style of PyTorch's torch.func tutorial: vmap(grad(loss)) over
functional_call gives each example's gradient of a small CNN classifier at once; they are
checked against one backward pass per example, then used for a few steps of DP-SGD (each
example's gradient clipped to norm 1 before averaging); an ensemble of three MLPs runs by
vmap over their stacked states."""

import numpy as np
import torch
import torch.nn.functional as F
from torch.func import functional_call, grad, stack_module_state, vmap


def make_cnn():
    return torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Flatten(),
        torch.nn.Linear(4 * 4 * 4, 3),
    )


def main(seed=0, steps=5, lr=0.5, init=None):
    rng = np.random.default_rng(seed)
    x = torch.tensor(rng.standard_normal((8, 1, 8, 8)), dtype=torch.float32)
    y = torch.tensor(rng.integers(0, 3, 8))
    model = make_cnn()
    if init is not None:
        init(model)
    params = {name: p.detach() for name, p in model.named_parameters()}

    def loss_one(p, xi, yi):
        logits = functional_call(model, p, (xi.unsqueeze(0),))  # a batch of one
        return F.cross_entropy(logits, yi.unsqueeze(0))

    per_sample = vmap(grad(loss_one), in_dims=(None, 0, 0))(params, x, y)
    chunked = vmap(grad(loss_one), in_dims=(None, 0, 0), chunk_size=5)(params, x, y)
    looped = {name: [] for name in params}
    for i in range(len(x)):
        model.zero_grad()
        F.cross_entropy(model(x[i : i + 1]), y[i : i + 1]).backward()
        for name, p in model.named_parameters():
            looped[name].append(p.grad.clone())
    apart = max((per_sample[n] - torch.stack(looped[n])).abs().max().item() for n in params)
    chunk_apart = max((per_sample[n] - chunked[n]).abs().max().item() for n in params)

    losses = []
    for _ in range(steps):
        losses.append(F.cross_entropy(functional_call(model, params, (x,)), y).item())
        g = vmap(grad(loss_one), in_dims=(None, 0, 0))(params, x, y)
        norms = torch.sqrt(sum((g[n].flatten(1) ** 2).sum(1) for n in params))  # (8,)
        scale = 1.0 / torch.clamp(norms, min=1.0)  # clipped to norm 1
        params = {
            n: p - lr * (g[n] * scale.reshape(-1, *([1] * p.dim()))).mean(0)
            for n, p in params.items()
        }

    mlps = [
        torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.Tanh(), torch.nn.Linear(6, 2))
        for _ in range(3)
    ]
    for m in mlps:
        if init is not None:
            init(m)
    stacked, buffers = stack_module_state(mlps)
    xs = torch.tensor(rng.standard_normal((5, 4)), dtype=torch.float32)

    def run(p, b, inp):
        return functional_call(mlps[0], (p, b), (inp,))

    ensemble = vmap(run, in_dims=(0, 0, None))(stacked, buffers, xs)
    one_by_one = torch.stack([m(xs) for m in mlps])
    return {
        "norms": [float(v) for v in norms],
        "apart": apart,
        "chunk_apart": chunk_apart,
        "losses": losses,
        "ensemble": ensemble.detach().numpy().copy(),
        "ensemble_apart": (ensemble - one_by_one).abs().max().item(),
    }
