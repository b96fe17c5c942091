"""The autograd tutorial's tour of a graph: a small classifier's loss, its grad_fn printed and
walked through next_functions down to the leaves' AccumulateGrad nodes, each node's saved
values listed, a hook on a node, then one training step, after which the tour is taken
again: what a learner reads of the graph, before and after backward."""

import torch
import torch.nn as nn


def tour(loss):
    """Each node once, depth first: its type's name (what torchviz labels it), its
    next_functions' names and output indices, and its saved values (a tensor by its shape,
    or the refusal once backward has freed it)."""
    seen, stack, nodes = set(), [loss.grad_fn], []
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        saved = {}
        for attr in sorted(a for a in dir(fn) if a.startswith("_saved_")):
            try:
                value = getattr(fn, attr)
            except RuntimeError:
                value = "freed"
            saved[attr] = list(value.shape) if isinstance(value, torch.Tensor) else value
        nexts = [(type(f).__name__ if f is not None else None, i) for f, i in fn.next_functions]
        nodes.append((type(fn).__name__, nexts, saved))
        stack.extend(f for f, _ in fn.next_functions)
    return nodes


def main(init=None):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    if init is not None:
        init(model)
    x = torch.linspace(-1, 1, 20).reshape(5, 4)
    target = nn.functional.one_hot(torch.tensor([0, 2, 1, 1, 0]), 3).float()
    probs = model(x).softmax(1)
    loss = ((probs - target) ** 2).sum(1).mean() + probs[:, 0].abs().mean() * 0.01
    reached = []
    loss.grad_fn.register_prehook(lambda grads: reached.append(len(grads)))
    before = tour(loss)
    printed = repr(loss.grad_fn).split(" object at ")[0]
    loss.backward()
    return {
        "before": before,
        "after": tour(loss),
        "printed": printed,
        "name": loss.grad_fn.name(),
        "reached": reached,
        "loss": loss.item(),
    }
