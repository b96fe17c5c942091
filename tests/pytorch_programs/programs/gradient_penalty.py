"""A small critic trained with a gradient penalty (WGAN-GP's, on the inputs' gradient taken with
create_graph=True), its layers partly custom autograd Functions: an activation with two
outputs that saves one of them, a scaling written in place into a slice of the hidden layer
(mark_dirty of a view), and a loss whose backward is marked once_differentiable."""

import torch
from torch.autograd.function import once_differentiable


class SoftplusSigmoid(torch.autograd.Function):
    """softplus(x) and sigmoid(x), its derivative, in one pass; the sigmoid is saved."""

    @staticmethod
    def forward(ctx, x):
        s = torch.sigmoid(x)
        ctx.save_for_backward(s)
        return torch.nn.functional.softplus(x), s

    @staticmethod
    def backward(ctx, grad_softplus, grad_sigmoid):
        (s,) = ctx.saved_tensors
        return grad_softplus * s + grad_sigmoid * s * (1 - s)


class ScaleInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, factor):
        ctx.factor = factor
        x.mul_(factor)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.factor, None


GRAD_MODE_IN_LOSS_BACKWARD = []


class SquaredError(torch.autograd.Function):
    @staticmethod
    def forward(ctx, pred, target):
        diff = pred - target
        ctx.save_for_backward(diff)
        return (diff * diff).mean()

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        GRAD_MODE_IN_LOSS_BACKWARD.append(torch.is_grad_enabled())
        (diff,) = ctx.saved_tensors
        return grad * 2 * diff / diff.numel(), None


class Critic(torch.nn.Module):
    def __init__(self, hidden=8):
        super().__init__()
        self.fc1 = torch.nn.Linear(2, hidden)
        self.fc2 = torch.nn.Linear(hidden, 1)

    def forward(self, x):
        h = self.fc1(x)  # (N, hidden)
        ScaleInPlace.apply(h[:, : h.shape[1] // 2], 0.5)  # the first half, damped in place
        soft, sig = SoftplusSigmoid.apply(h)
        return self.fc2(soft + 0.1 * sig).squeeze(1)  # (N,)


def gradient_penalty(critic, x):
    x = x.detach().requires_grad_(True)
    (g,) = torch.autograd.grad(critic(x).sum(), x, create_graph=True)  # (N, 2)
    return ((g.norm(2, dim=1) - 1) ** 2).mean()


def main(seed=0, steps=40, init=None, weight=10.0):
    torch.manual_seed(seed)
    t = torch.linspace(-2, 2, 64)
    x = torch.stack([t, torch.cos(3 * t)], dim=1)  # (64, 2), the same on either library
    y = torch.sin(2 * x[:, 0]) + x[:, 1] ** 2
    critic = Critic()
    if init is not None:
        init(critic)
    opt = torch.optim.Adam(critic.parameters(), lr=1e-2)
    GRAD_MODE_IN_LOSS_BACKWARD.clear()
    losses, penalties = [], []
    for _ in range(steps):
        fit = SquaredError.apply(critic(x), y)
        penalty = gradient_penalty(critic, x)
        loss = fit + weight * penalty
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        penalties.append(penalty.item())
    grads = [p.grad.detach().numpy().copy() for p in critic.parameters()]
    return {
        "losses": losses,
        "penalties": penalties,
        "grads": grads,
        "grad_mode_in_loss_backward": list(GRAD_MODE_IN_LOSS_BACKWARD),
    }


if __name__ == "__main__":
    out = main()
    print(out["losses"][0], out["losses"][-1])
