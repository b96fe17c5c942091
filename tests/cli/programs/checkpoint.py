"""A user's checkpoint, written as PyTorch programs write them: a small model trained a few
steps, then its state, the optimizer's, some views of a weight kept for analysis (a row, one
weight as a 0-d view, the transposed matrix) and a sparse adjacency saved in one file; loaded
back into a fresh model and optimizer, which train on exactly where the first left off."""

import torch
import torch.nn as nn


def make_model():
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))


def main(path, steps=5, init=None):
    torch.manual_seed(0)
    model = make_model()
    if init is not None:
        init(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    x = torch.linspace(-1, 1, 64).reshape(16, 4)
    y = torch.stack([x.sum(dim=1), (x**2).mean(dim=1)], dim=1)
    adjacency = torch.sparse_coo_tensor(
        torch.tensor([[0, 1, 2, 2], [1, 2, 0, 2]]), torch.tensor([1.0, 2.0, 3.0, 4.0]), (3, 3)
    )

    def step(m, opt):
        opt.zero_grad()
        loss = ((m(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss.item()

    losses = [step(model, optimizer) for _ in range(steps)]
    weight = model[0].weight.data
    torch.save(
        {
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "first_row": weight[0],
            "one_weight": weight[0, 0],
            "transposed": weight.t(),
            "adjacency": adjacency,
            "losses": losses,
        },
        path,
    )
    going_on = [step(model, optimizer) for _ in range(steps)]

    checkpoint = torch.load(path, weights_only=True)
    fresh = make_model()
    fresh.load_state_dict(checkpoint["model"])
    fresh_optimizer = torch.optim.Adam(fresh.parameters(), lr=0.01)
    fresh_optimizer.load_state_dict(checkpoint["optimizer"])
    resumed = [step(fresh, fresh_optimizer) for _ in range(steps)]

    loaded_weight = checkpoint["model"]["0.weight"]
    views = {
        "row": checkpoint["first_row"].tolist() == loaded_weight[0].tolist(),
        "one": checkpoint["one_weight"].item() == loaded_weight[0, 0].item(),
        "transposed": checkpoint["transposed"].tolist() == loaded_weight.t().tolist(),
    }
    with torch.no_grad():  # the views share the loaded weight's memory, as they did when saved
        loaded_weight[0, 0] = 42.0
    views["shared"] = [
        checkpoint["first_row"][0].item(),
        checkpoint["one_weight"].item(),
        checkpoint["transposed"][0, 0].item(),
    ]
    return {
        "losses": losses,
        "going_on": going_on,
        "resumed": resumed,
        "saved_losses": checkpoint["losses"],
        "views": views,
        "one_weight_dim": checkpoint["one_weight"].dim(),
        "adjacency": checkpoint["adjacency"].to_dense().tolist(),
        "coalesced": checkpoint["adjacency"].is_coalesced(),
    }
