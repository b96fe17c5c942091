"""A small regression net trained with the engine's escape hatches, as a user writes them: a
tensor hook that halves a hidden gradient, a LoRA-style weight delta whose node hook clips
its gradient into a buffer the program keeps, a custom Function whose backward returns a
surrogate gradient the model holds, two micro-batches accumulated per step with
zero_grad(set_to_none=False), a max-norm constraint written through .data between forward
and backward, an EMA of the weights and a tied weight kept by .data, a probe's gradient
taken by autograd.grad at the hidden layer before the loss's backward goes through it, and
the tensors printed after backward."""

import numpy as np
import torch
import torch.nn.functional as F


class SurrogateStep(torch.autograd.Function):
    """A hard step forward; backward hands back the surrogate gradient the model keeps."""

    @staticmethod
    def forward(ctx, x, surrogate):
        ctx.surrogate = surrogate
        return (x > 0).to(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        return ctx.surrogate, None


class Net(torch.nn.Module):
    def __init__(self, rng, n_in=4, hidden=8):
        super().__init__()

        def param(*shape):
            return torch.nn.Parameter(torch.tensor(rng.normal(0.0, 0.5, shape)))

        self.w1 = param(hidden, n_in)
        self.w2 = param(1, hidden)
        self.delta = torch.nn.Parameter(torch.zeros(1, hidden, dtype=torch.float64))
        self.gate = param(hidden)
        self.tied = param(hidden, n_in)  # kept equal to w1 through .data
        self.probe = param(1, hidden)
        self.surrogate = torch.full((hidden,), 0.01, dtype=torch.float64)
        self.clip_buffer = torch.zeros(1, hidden, dtype=torch.float64)

    def forward(self, x, log):
        h = torch.tanh(F.linear(x, self.w1))  # (B, hidden)
        h.register_hook(lambda g: g * 0.5)
        h = h * SurrogateStep.apply(self.gate, self.surrogate)  # (B, hidden)
        w2 = self.w2 + self.delta  # (1, hidden)
        w2.grad_fn.register_hook(self.clip_delta)
        log.append(w2.grad_fn.name())
        return h, F.linear(h, w2).squeeze(-1)  # (B,)

    def clip_delta(self, grad_inputs, grad_outputs):
        self.clip_buffer.copy_(grad_inputs[1]).clamp_(-0.05, 0.05)
        return grad_inputs[0], self.clip_buffer


def main(steps=12, lr=0.2, seed=0):
    rng = np.random.default_rng(seed)
    x = torch.tensor(rng.normal(size=(32, 4)))
    y = torch.tensor(np.sin(rng.normal(size=32)))
    model = Net(rng)
    ema = {n: p.detach().clone() for n, p in model.named_parameters()}
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.5)
    losses, probes, names, printed = [], [], [], []
    for _ in range(steps):
        opt.zero_grad(set_to_none=False)
        for half in (x[:16], y[:16]), (x[16:], y[16:]):
            h, pred = model(half[0], names)
            loss = F.mse_loss(pred, half[1])
            (g_probe,) = torch.autograd.grad(F.linear(h, model.probe).pow(2).mean(), h)
            probes.append(g_probe.norm().item())
            # a max-norm constraint through .data after the forward: backward uses it
            norm = model.w1.data.norm(dim=1, keepdim=True).clamp(min=1.5)
            model.w1.data.mul_(1.5 / norm)
            loss.backward()
            losses.append(loss.item())
            printed.append(f"{pred}|{loss}|{h.grad_fn.name()}|{loss.grad_fn.next_functions}")
        opt.step()
        with torch.no_grad():
            for n, p in model.named_parameters():
                ema[n].mul_(0.9).add_(p.data, alpha=0.1)
        model.tied.data.copy_(model.w1.data)
    return {
        "losses": losses,
        "probes": probes,
        "names": names,
        "printed": len(printed),
        "params": {n: p.detach().numpy().copy() for n, p in model.named_parameters()},
        "ema": {n: t.numpy().copy() for n, t in ema.items()},
        "held": [model.surrogate.tolist(), model.clip_buffer.tolist()],
    }
