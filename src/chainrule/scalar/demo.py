"""Micrograd's moons demo (its demo.ipynb) as a reusable training loop on the scalar engine.

Used by `python -m chainrule.tools.demo`, the tests and benchmarks/scalar_demo.py; needs
scikit-learn.
"""

from __future__ import annotations

import gc
import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from .engine import Value
from .nn import MLP

DATASETS_HINT = 'pip install "chainrule[datasets]"'


@contextmanager
def _collector_paused(pause: bool) -> Iterator[None]:
    was_enabled = gc.isenabled()
    if pause:
        gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def train_moons(
    steps: int = 100,
    seed: int = 1337,
    value: Callable[[float], Any] = Value,
    mlp: Callable[[int, list[int]], Any] = MLP,
    pause_gc: bool = True,
) -> Iterator[tuple[float, float]]:
    """Yield (loss, accuracy) at each step of micrograd's demo, computed before that step's update.

    100 noisy moons, ``MLP(2, [16, 16, 1])``, SVM max-margin loss plus 1e-4 L2, full-batch
    SGD with learning rate ``1.0 - 0.9*k/100``. Seeds Python's ``random`` (the weights) with
    ``seed``; the data come from ``RandomState(seed)``, the draws ``np.random.seed(seed)``
    gives. ``value`` and ``mlp`` let the benchmark run micrograd's classes on this same loop.

    ``pause_gc`` pauses Python's cyclic garbage collector during each step. chainrule's graphs
    hold no reference cycles, so reference counting frees them; the collector would only walk
    the live graph again and again, most of a step's time. Pass False for micrograd, whose
    every graph is a cycle, or to time the default.
    """
    try:
        from sklearn.datasets import make_moons
    except ImportError as e:
        raise ImportError(f"the moons demo needs scikit-learn: {DATASETS_HINT}") from e
    random.seed(seed)
    X, y = make_moons(n_samples=100, noise=0.1, random_state=seed)
    # Python numbers: the same values as the notebook's NumPy scalars, without NumPy's
    # operator dispatch on every `-yi * score`.
    rows, ys = X.tolist(), (y * 2 - 1).tolist()
    model = mlp(2, [16, 16, 1])
    alpha = 1e-4
    for k in range(steps):
        with _collector_paused(pause_gc):
            inputs = [list(map(value, row)) for row in rows]
            scores = list(map(model, inputs))
            losses = [(1 + -yi * si).relu() for yi, si in zip(ys, scores, strict=True)]
            data_loss = sum(losses) * (1.0 / len(losses))
            reg_loss = alpha * sum(p * p for p in model.parameters())
            total_loss = data_loss + reg_loss
            correct = sum((yi > 0) == (si.data > 0) for yi, si in zip(ys, scores, strict=True))

            model.zero_grad()
            total_loss.backward()
            learning_rate = 1.0 - 0.9 * k / 100
            for p in model.parameters():
                p.data -= learning_rate * p.grad
            loss = float(total_loss.data)
            # Free the graph inside the step, so that its cost is counted there and the
            # collector never sees it.
            del inputs, scores, losses, data_loss, reg_loss, total_loss
        yield loss, float(correct) / len(ys)


def demo_moons(steps: int = 100, seed: int = 1337) -> tuple[float, float]:
    """Run :func:`train_moons` on chainrule; return the last step's (loss, accuracy)."""
    if steps < 1:
        raise ValueError(f"demo_moons: steps must be at least 1; got {steps}")
    *_, last = train_moons(steps, seed)
    return last
