"""Fitting sin(x) on [-pi, pi] with a cubic polynomial, updated by hand: first as a Linear layer
over the powers of x (p.data.add_ and model.zero_grad), then as four loose tensors
(p -= lr * p.grad under no_grad, and p.grad.zero_()), then as a module of coefficients in a
ParameterList trained by a hand-written Adam."""

import math

import torch


class Cubic(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.coefs = torch.nn.ParameterList([torch.nn.Parameter(torch.randn(())) for _ in range(4)])

    def forward(self, x):
        return sum(c * x**i for i, c in enumerate(self.coefs))


def adam_fit(x, y, steps, init, lr=0.05, betas=(0.9, 0.999), eps=1e-8):
    model = Cubic()
    if init is not None:
        init(model)
    beta1, beta2 = betas
    state = {p: (torch.zeros_like(p), torch.zeros_like(p)) for p in model.parameters()}
    losses = []
    for t in range(1, steps + 1):
        loss = torch.nn.functional.mse_loss(model(x), y)
        losses.append(loss.item())
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                m, v = state[p]
                m.mul_(beta1).add_(p.grad, alpha=1 - beta1)
                v.mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)
                m_hat = m / (1 - beta1**t)
                v_hat = v / (1 - beta2**t)
                p.addcdiv_(m_hat, v_hat.sqrt().add_(eps), value=-lr)
    return losses, [c.item() for c in model.coefs]


def main(seed=0, steps=500, init=None, verbose=False):
    torch.manual_seed(seed)
    x = torch.linspace(-math.pi, math.pi, 2000)
    y = torch.sin(x)

    # y is a linear function of (x, x^2, x^3), so a Linear layer can fit it
    p = torch.tensor([1, 2, 3])
    xx = x.unsqueeze(-1).pow(p)  # (2000, 3)

    model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
    if init is not None:
        init(model)
    loss_fn = torch.nn.MSELoss(reduction="sum")
    learning_rate = 2e-6
    layer_losses = []
    for t in range(steps):
        y_pred = model(xx)
        loss = loss_fn(y_pred, y)
        if not torch.isfinite(loss):
            raise RuntimeError(f"step {t}: the loss diverged ({loss.item()})")
        if verbose and t % 100 == 99:
            print(t, loss.item())
        layer_losses.append(loss.item())
        model.zero_grad()
        loss.backward()
        for param in model.parameters():
            param.data.add_(param.grad, alpha=-learning_rate)
    linear_layer = model[0]
    fit = (linear_layer.bias.item(), *linear_layer.weight[0].tolist())
    if verbose:
        print(f"Result: y = {fit[0]} + {fit[1]} x + {fit[2]} x^2 + {fit[3]} x^3")

    # the same fit with the coefficients as loose tensors
    a = torch.randn((), requires_grad=True)
    b = torch.randn((), requires_grad=True)
    c = torch.randn((), requires_grad=True)
    d = torch.randn((), requires_grad=True)
    if init is not None:
        init([a, b, c, d])
    tensor_losses = []
    for _ in range(steps):
        y_pred = a + b * x + c * x**2 + d * x**3
        loss = (y_pred - y).pow(2).sum()
        tensor_losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            for coef in (a, b, c, d):
                coef -= learning_rate * coef.grad
                coef.grad.zero_()
    with torch.no_grad():
        err = a + b * x + c * x**2 + d * x**3 - y
        r2 = 1 - torch.dot(err, err) / torch.dot(y - y.mean(), y - y.mean())
    if verbose:
        print(f"Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3")
        print(f"R^2 = {r2.item():.4f}")
    adam_losses, adam_fit_coefs = adam_fit(x, y, steps // 2, init)
    if verbose:
        print(f"Adam: loss {adam_losses[-1]:.5f}, coefficients {adam_fit_coefs}")
    return {
        "adam_losses": adam_losses,
        "adam_fit": adam_fit_coefs,
        "layer_losses": layer_losses,
        "tensor_losses": tensor_losses,
        "layer_fit": fit,
        "tensor_fit": [a.item(), b.item(), c.item(), d.item()],
        "r2": r2.item(),
    }


if __name__ == "__main__":
    main(verbose=True)
