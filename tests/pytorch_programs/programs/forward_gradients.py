"""Forward-mode AD in the style of PyTorch's tutorial: the directional derivative of a small
model's loss with respect to its parameters, through functional_call and make_dual, checked
against the reverse-mode gradient; then "forward gradient" training, each step moving the
parameters along a random direction scaled by the loss's derivative along it; a custom
Function with its own jvp; and autograd.functional's jvp and hvp of the loss in the input."""

import numpy as np
import torch
import torch.autograd.forward_ad as fwAD
import torch.nn.functional as F
from torch.func import functional_call


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * grad

    @staticmethod
    def jvp(ctx, tangent):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * tangent


def directional(model, params, tangents, x, y):
    """The loss and its derivative along ``tangents`` (a dict of the parameters' shapes)."""
    with fwAD.dual_level():
        duals = {name: fwAD.make_dual(p, tangents[name]) for name, p in params.items()}
        loss = F.mse_loss(functional_call(model, duals, (x,)), y)
        primal, tangent = fwAD.unpack_dual(loss)
        return primal.item(), tangent.item()


def main(seed=0, steps=25, lr=0.05, init=None):
    rng = np.random.default_rng(seed)
    x = torch.tensor(rng.standard_normal((32, 5)), dtype=torch.float32)
    y = torch.tensor(rng.standard_normal((32, 1)), dtype=torch.float32)
    model = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    if init is not None:
        init(model)
    params = {name: p.detach() for name, p in model.named_parameters()}

    def draw():
        return {
            name: torch.tensor(rng.standard_normal(tuple(p.shape)), dtype=torch.float32)
            for name, p in params.items()
        }

    # the tangent of the loss is the gradient dotted with the direction
    tangents = draw()
    _, forward = directional(model, params, tangents, x, y)
    loss = F.mse_loss(model(x), y)
    loss.backward()
    reverse = sum((p.grad * tangents[n]).sum() for n, p in model.named_parameters()).item()

    losses = []
    for _ in range(steps):
        v = draw()
        value, slope = directional(model, params, v, x, y)
        losses.append(value)
        params = {name: p - lr * slope * v[name] for name, p in params.items()}

    t = torch.tensor([0.5, -1.0, 2.0])
    with fwAD.dual_level():
        cube = fwAD.unpack_dual(Cube.apply(fwAD.make_dual(t, torch.ones(3)))).tangent
        plain = fwAD.unpack_dual(torch.sin(fwAD.make_dual(t, torch.ones(3))) * t).tangent

    def in_input(inp):
        return F.mse_loss(functional_call(model, params, (inp,)), y)

    _, jvp = torch.autograd.functional.jvp(in_input, x, torch.ones_like(x))
    _, hvp = torch.autograd.functional.hvp(in_input, x, torch.ones_like(x))
    return {
        "forward": forward,
        "reverse": reverse,
        "losses": losses,
        "cube": cube.tolist(),
        "plain": plain.tolist(),
        "jvp": jvp.item(),
        "hvp": hvp.numpy().copy() if hasattr(hvp, "numpy") else hvp,
    }
