"""An ensemble trained with dropout by torch.func.vmap, in the style of PyTorch's model
ensembling tutorial: three MLPs stacked by stack_module_state, their forward passes mapped
by vmap over functional_call with randomness='different' (each model its own dropout mask
and input noise), then 'same' (one mask for all), and a per-example Gaussian perturbation
with randn_like. Seeded, so the draws are the numbers torch draws."""

import numpy as np
import torch
import torch.nn.functional as F
from torch.func import functional_call, stack_module_state, vmap


def make_mlp():
    return torch.nn.Sequential(
        torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Dropout(0.3), torch.nn.Linear(8, 2)
    )


def main(seed=0, init=None):
    rng = np.random.default_rng(seed)
    models = [make_mlp() for _ in range(3)]
    for m in models:
        if init is not None:
            init(m)
    params, buffers = stack_module_state(models)
    x = torch.tensor(rng.standard_normal((5, 4)), dtype=torch.float32)

    def forward(p, b, inp):
        noisy = inp + 0.1 * torch.randn(inp.shape)  # each model its own noise
        return functional_call(models[0], (p, b), (noisy,))

    torch.manual_seed(seed)
    different = vmap(forward, in_dims=(0, 0, None), randomness="different")(params, buffers, x)
    same = vmap(forward, in_dims=(0, 0, None), randomness="same")(params, buffers, x)
    perturbed = vmap(lambda row: row + torch.randn_like(row), randomness="different")(x)
    masks = vmap(lambda row: F.dropout(torch.ones_like(row), 0.5), randomness="different")(x)
    try:
        vmap(forward, in_dims=(0, 0, None))(params, buffers, x)
        refused = ""
    except RuntimeError as err:
        refused = str(err)
    return {
        "different": different.detach().numpy().copy(),
        "same": same.detach().numpy().copy(),
        "perturbed": perturbed.numpy().copy(),
        "masks": masks.numpy().copy(),
        "refused": refused,
    }
