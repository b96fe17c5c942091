"""A gated model whose graph has nodes of several outputs: a gate made with chunk (a GLU),
a sequence read step by step with unbind, a custom Function that returns two tensors. Its
graph is walked through next_functions (each edge with the output index it reaches), a hook
on the chunk's node records one gradient per output, and one training step is taken."""

import torch
import torch.nn as nn


class SinCos(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin(), x.cos()

    @staticmethod
    def backward(ctx, grad_sin, grad_cos):
        (x,) = ctx.saved_tensors
        return grad_sin * x.cos() - grad_cos * x.sin()


def tour(root):
    """Each node once, depth first: its name, its edges' names and output indices, its
    outputs' numbers as its consumers see them."""
    seen, stack, nodes = set(), [root.grad_fn], []
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        nodes.append(
            (fn.name(), [(None if f is None else f.name(), k) for f, k in fn.next_functions])
        )
        stack.extend(f for f, _ in fn.next_functions)
    return nodes


def main(init=None):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 8), nn.Tanh())
    head = nn.Linear(4, 1)
    if init is not None:
        init(model)
        init(head)
    opt = torch.optim.SGD([*model.parameters(), *head.parameters()], lr=0.1)
    seq = torch.linspace(-1, 1, 30).reshape(5, 2, 3)  # (time, batch, features)
    steps = seq.unbind(0)
    state = torch.zeros(2, 4)
    for x in steps:
        value, gate = model(x).chunk(2, dim=1)  # a GLU: (2, 4) and (2, 4)
        state = state * 0.5 + value * gate.sigmoid()
    s, c = SinCos.apply(state)
    loss = head(s * c + s).pow(2).mean()
    node = value.grad_fn
    seen = []
    node.register_prehook(lambda grads: seen.append([g is None for g in grads]))
    shared = [value.grad_fn is gate.grad_fn, s.grad_fn is c.grad_fn, steps[0].grad_fn]
    numbers = [value.output_nr, gate.output_nr, s.output_nr, c.output_nr]
    before = tour(loss)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {
        "shared": shared[:2] + [shared[2] is None],
        "numbers": numbers,
        "names": [node.name(), s.grad_fn.name()],
        "saved": [node._saved_dim, node._saved_split_size, list(node._saved_self_sym_sizes)],
        "before": before,
        "seen": seen,
        "loss": loss.item(),
        "after": head(model(seq[0]).chunk(2, 1)[0]).sum().item(),
    }
