"""chainrule.scalar: the scalar autograd engine, call-compatible with micrograd.

`Value` and `weighted_sum` (a neuron's b + sum of w*x as one node) are in engine.py,
micrograd's Neuron/Layer/MLP in nn.py, its moons demo in demo.py.
"""

from .demo import demo_moons, train_moons
from .engine import Value, weighted_sum

__all__ = ["Value", "demo_moons", "train_moons", "weighted_sum"]
