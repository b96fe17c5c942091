"""chainrule.scalar: the scalar autograd engine, call-compatible with micrograd.

`Value` is in engine.py, micrograd's Neuron/Layer/MLP in nn.py, its moons demo in demo.py.
"""

from .demo import demo_moons, train_moons
from .engine import Value

__all__ = ["Value", "demo_moons", "train_moons"]
