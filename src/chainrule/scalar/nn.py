"""Micrograd's neural network on `Value`: Module, Neuron, Layer, MLP.

Same semantics, initialisation order and reprs as micrograd 0.1.0, so its code runs unchanged.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from .engine import Value, weighted_sum


class Module:
    def zero_grad(self) -> None:
        for p in self.parameters():
            p.grad = 0.0

    def parameters(self) -> list[Value]:
        return []


class Neuron(Module):
    """act = b + sum_i w_i * x_i, then ReLU unless ``nonlin`` is False. Weights are drawn
    from random.uniform(-1, 1) in order; the bias starts at 0."""

    def __init__(self, nin: int, nonlin: bool = True) -> None:
        self.w = [Value(random.uniform(-1, 1)) for _ in range(nin)]
        self.b = Value(0)
        self.nonlin = nonlin

    def __call__(self, x: Sequence[Value | float]) -> Value:
        if len(x) != len(self.w):
            # micrograd's zip would silently drop the extra inputs or weights.
            raise ValueError(f"Neuron: expected {len(self.w)} inputs; got {len(x)}")
        # micrograd's sum((wi*xi for ...), self.b) as one node: the same value and gradients.
        act = weighted_sum(self.b, self.w, x)
        return act.relu() if self.nonlin else act

    def parameters(self) -> list[Value]:
        return self.w + [self.b]

    def __repr__(self) -> str:
        return f"{'ReLU' if self.nonlin else 'Linear'}Neuron({len(self.w)})"


class Layer(Module):
    """``nout`` neurons on the same inputs; returns a list, or a Value when nout is 1."""

    def __init__(self, nin: int, nout: int, **kwargs: bool) -> None:
        self.neurons = [Neuron(nin, **kwargs) for _ in range(nout)]

    def __call__(self, x: Sequence[Value | float]) -> Value | list[Value]:
        out = [n(x) for n in self.neurons]
        return out[0] if len(out) == 1 else out

    def parameters(self) -> list[Value]:
        return [p for n in self.neurons for p in n.parameters()]

    def __repr__(self) -> str:
        return f"Layer of [{', '.join(str(n) for n in self.neurons)}]"


class MLP(Module):
    """Layers of sizes ``nin -> nouts[0] -> ... -> nouts[-1]``: ReLU, the last one linear."""

    def __init__(self, nin: int, nouts: list[int]) -> None:
        sz = [nin] + nouts
        self.layers = [
            Layer(sz[i], sz[i + 1], nonlin=i != len(nouts) - 1) for i in range(len(nouts))
        ]

    def __call__(self, x: Sequence[Value | float]) -> Value | list[Value]:
        out: Any = x  # a list between layers; a Value after a one-neuron layer
        for layer in self.layers:
            out = layer(out)
        return out

    def parameters(self) -> list[Value]:
        return [p for layer in self.layers for p in layer.parameters()]

    def __repr__(self) -> str:
        return f"MLP of [{', '.join(str(layer) for layer in self.layers)}]"
