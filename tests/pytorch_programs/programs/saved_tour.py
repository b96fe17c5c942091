"""A small image classifier read as torchviz's show_saved reads it: a convolution, max
pooling, a clamp, layer norm, attention over the pooled positions and a linear head, trained
for one step with nll_loss of log_softmax. Before and after backward, the node of each step
tells what backward saved (grad_fn._saved_*): tensors by shape, the rest by value (a negative
int, which PyTorch prints as an unsigned 64-bit one, as negative); after backward the
tensors are refused, the rest kept."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.norm = nn.LayerNorm(4)
        self.head = nn.Linear(4, 3)

    def forward(self, x):
        steps = {"conv": self.conv(x)}  # (N, 4, 6, 6)
        steps["pool"] = F.max_pool2d(steps["conv"], 2)  # (N, 4, 3, 3)
        steps["clamp"] = steps["pool"].clamp_min(0)
        h = steps["clamp"].flatten(2)  # (N, 4, 9)
        steps["transpose"] = h.transpose(1, 2)  # (N, 9, 4): the positions as a sequence
        steps["norm"] = self.norm(steps["transpose"])
        h = steps["norm"].unsqueeze(1)  # (N, 1, 9, 4): one head
        steps["attention"] = F.scaled_dot_product_attention(h, h, h, is_causal=True)
        steps["mean"] = steps["attention"].mean((1, 2))  # (N, 4)
        steps["head"] = self.head(steps["mean"])  # (N, 3)
        steps["log_softmax"] = F.log_softmax(steps["head"], dim=1)
        return steps


def saved_values(fn):
    """A node's name and _saved_* (a tensor by its shape, a refusal as "refused")."""
    values = {}
    for attr in sorted(a for a in dir(fn) if a.startswith("_saved_")):
        try:
            value = getattr(fn, attr)
        except RuntimeError:
            value = "refused"
        if isinstance(value, torch.Tensor):
            value = tuple(value.shape)
        elif isinstance(value, int) and value >= 2**63:
            value -= 2**64
        values[attr] = value
    return fn.name(), values


def main(init=None):
    torch.manual_seed(0)
    model = Net()
    if init is not None:
        init(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.linspace(-1, 1, 2 * 36).reshape(2, 1, 6, 6)
    target = torch.tensor([0, 2])
    steps = model(x)
    steps["loss"] = F.nll_loss(steps["log_softmax"], target)
    nodes = {step: t.grad_fn for step, t in steps.items()}
    before = {step: saved_values(fn) for step, fn in nodes.items()}
    opt.zero_grad()
    steps["loss"].backward()
    opt.step()
    after = {step: saved_values(fn) for step, fn in nodes.items()}
    return {"before": before, "after": after, "loss": steps["loss"].item()}
