"""Fusion: which neighbouring modules of a Sequential run as one graph node, and how. Every
rule is here; Sequential only asks plan(). The fused ops themselves live in ops/.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from ..ops import conv as conv_ops
from ..ops import linalg
from ..tensor import Tensor
from .activation import ReLU
from .conv import Conv1d, Conv2d, _ConvNd
from .layers import Linear, _check_last_dim
from .module import Module


def enabled() -> bool:
    """Whether fusions run: on, like the engine's other speed tricks, unless the
    environment sets CHAINRULE_FASTPATH=0."""
    return os.environ.get("CHAINRULE_FASTPATH") != "0"


# -- the fused forwards: relu(layer(input)) as one node, the same values and gradients ------


def linear_relu(layer: Linear, input: Tensor) -> Tensor:
    """One LinearReLU node, which computes relu in place on the product's fresh array.

    Measured, a training step (forward, backward, SGD) of benchmarks/mlp_step.py's MLP,
    fused and not in turn in one process, threads pinned to 1, two sittings: it saves
    -0.7 to 1.1% at batch 32 (1.72-1.77 ms a step), 0.6-0.7% at 128 (4.1 ms), 1.3-1.9%
    at 1024 (27 ms): short of the 5% a speed trick is kept for."""
    _check_last_dim(input, layer.in_features, "Linear", "in_features")
    return linalg.LinearReLU.apply(input, layer.weight, layer.bias)


def conv_relu(layer: _ConvNd, input: Tensor) -> Tensor:
    """One Conv2dReLU node (a Conv1d's too, run as a 2-D convolution over a height of 1).

    Measured as linear_relu, on benchmarks/cnn_step.py's CNN at batch 64: it saves 2.7-3.4%
    of a step (14.0-14.4 ms unfused): short of the 5% a speed trick is kept for."""
    return layer._convolve(input, conv_ops.Conv2dReLU)


# The layers a following ReLU fuses into, each with its fused forward.
_WITH_RELU: dict[type[Module], Callable[[Any, Tensor], Tensor]] = {
    Linear: linear_relu,
    Conv1d: conv_relu,
    Conv2d: conv_relu,
}


class Fused(NamedTuple):
    """A layer and the activation after it, run as one node by ``run(layer, input)``."""

    layer: Module
    activation: Module
    run: Callable[[Any, Tensor], Tensor]

    def __call__(self, input: Tensor) -> Tensor:
        return self.run(self.layer, input)


def _as_defined(m: Module) -> bool:
    """Whether m's forward is its class's (none set on the instance), so a fused node
    computes what calling m would."""
    return "forward" not in m.__dict__


def plan(modules: Sequence[Module]) -> Sequence[Module | Fused]:
    """The steps a Sequential calls in order, each on the previous one's output: its modules,
    but a layer of _WITH_RELU followed by a ReLU (each of exactly that class, as chainrule
    defines it) is one Fused step. With fusion off, the modules as they are."""
    if not enabled():
        return modules
    steps: list[Module | Fused] = []
    i = 0
    while i < len(modules):
        layer = modules[i]
        run = _WITH_RELU.get(type(layer))
        after = modules[i + 1] if i + 1 < len(modules) else None
        if run and type(after) is ReLU and _as_defined(layer) and _as_defined(after):
            steps.append(Fused(layer, after, run))
            i += 2
        else:
            steps.append(layer)
            i += 1
    return steps
