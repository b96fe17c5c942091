"""Time micrograd's moons demo per step: chainrule's scalar engine against micrograd 0.1.0.

Every row runs the notebook's loop as it is written: builtin sum() over the losses and over
p*p, model.zero_grad(), p.data -= lr * p.grad. "collector on" leaves Python's cyclic garbage
collector running, as a notebook does; "collector paused" pauses it during each step.
"the notebook" is micrograd's demo.ipynb cell for cell (NumPy data, the collector on, a
step's graph alive until the next one's loss), with chainrule's Value and MLP and with
micrograd's: what a user who swaps the imports sees.

Run `python benchmarks/scalar_demo.py [--steps N] [--micrograd-steps M] [--repeat R] [--quick]`.
With --repeat, every configuration runs R times, interleaved, and the medians are reported
with their range: the ratio to micrograd is taken within each repeat.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Iterator, Sequence

from chainrule.scalar import nn
from chainrule.scalar.demo import DATASETS_HINT, train_moons


class WrittenOutNeuron(nn.Neuron):
    """micrograd's neuron as micrograd writes it: a + and a * node per weight, not one
    weighted-sum node. It times the Value engine alone, op by op."""

    def __call__(self, x):  # type: ignore[no-untyped-def]
        act = sum((wi * xi for wi, xi in zip(self.w, x, strict=True)), self.b)
        return act.relu() if self.nonlin else act


class WrittenOutMLP(nn.MLP):
    def __init__(self, nin: int, nouts: list[int]) -> None:
        super().__init__(nin, nouts)  # the same weights, drawn in the same order
        for layer in self.layers:
            for n in layer.neurons:
                n.__class__ = WrittenOutNeuron


def notebook(steps: int, value=None, mlp=None):  # type: ignore[no-untyped-def]
    """micrograd's demo.ipynb as it is written, cell for cell, on ``value`` and ``mlp``
    (chainrule's by default): the data as NumPy arrays (so ``-yi*scorei`` meets a NumPy
    integer), the collector on, each step's graph alive until the next step's loss replaces
    it; yields (loss, accuracy) each step, as train_moons does."""
    import random

    import numpy as np
    from sklearn.datasets import make_moons

    from chainrule.scalar import Value

    value = Value if value is None else value
    mlp = nn.MLP if mlp is None else mlp
    np.random.seed(1337)
    random.seed(1337)
    X, y = make_moons(n_samples=100, noise=0.1)
    y = y * 2 - 1  # make y be -1 or 1
    model = mlp(2, [16, 16, 1])  # 2-layer neural network

    def loss(batch_size=None):  # type: ignore[no-untyped-def]
        # inline DataLoader :)
        if batch_size is None:
            Xb, yb = X, y
        else:
            ri = np.random.permutation(X.shape[0])[:batch_size]
            Xb, yb = X[ri], y[ri]
        inputs = [list(map(value, xrow)) for xrow in Xb]
        # forward the model to get scores
        scores = list(map(model, inputs))
        # svm "max-margin" loss
        losses = [(1 + -yi * scorei).relu() for yi, scorei in zip(yb, scores, strict=True)]
        data_loss = sum(losses) * (1.0 / len(losses))
        # L2 regularization
        alpha = 1e-4
        reg_loss = alpha * sum(p * p for p in model.parameters())
        total_loss = data_loss + reg_loss
        # also get accuracy
        accuracy = [(yi > 0) == (scorei.data > 0) for yi, scorei in zip(yb, scores, strict=True)]
        return total_loss, sum(accuracy) / len(accuracy)

    for k in range(steps):
        # forward
        total_loss, acc = loss()
        # backward
        model.zero_grad()
        total_loss.backward()
        # update (sgd)
        learning_rate = 1.0 - 0.9 * k / 100
        for p in model.parameters():
            p.data -= learning_rate * p.grad
        yield float(total_loss.data), float(acc)


def time_steps(steps: Iterator[tuple[float, float]]) -> tuple[list[float], list[float]]:
    """Seconds taken by each step of a training loop, and the losses it reported."""
    seconds: list[float] = []
    losses: list[float] = []
    while True:
        start = time.perf_counter()
        try:
            loss, _ = next(steps)
        except StopIteration:
            return seconds, losses
        seconds.append(time.perf_counter() - start)
        losses.append(loss)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=20, help="steps timed on chainrule")
    parser.add_argument("--micrograd-steps", type=int, default=3, help="steps timed on micrograd")
    parser.add_argument("--repeat", type=int, default=1, help="runs of every configuration")
    parser.add_argument("--quick", action="store_true", help="a tiny run: one step of each")
    args = parser.parse_args(argv)
    steps, mg_steps = (1, 1) if args.quick else (args.steps, args.micrograd_steps)
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1; got {args.repeat}")
    try:
        import sklearn.datasets  # noqa: F401  (imported here so that no step times it)
    except ImportError:
        print(f"the benchmark needs scikit-learn: {DATASETS_HINT}", file=sys.stderr)
        return 1

    configurations = {
        "chainrule, collector paused": lambda: train_moons(steps),
        "chainrule, collector on": lambda: train_moons(steps, pause_gc=False),
        "chainrule, written out": lambda: train_moons(steps, mlp=WrittenOutMLP),
        "chainrule, written out, on": lambda: train_moons(steps, mlp=WrittenOutMLP, pause_gc=False),
        "chainrule, the notebook": lambda: notebook(steps),
    }
    try:
        from micrograd.engine import Value
        from micrograd.nn import MLP
    except ImportError:
        print("micrograd is not installed (pip install micrograd==0.1.0); timing chainrule only")
    else:
        # micrograd's graphs are reference cycles: only the collector frees them.
        configurations["micrograd 0.1.0"] = lambda: train_moons(
            mg_steps, value=Value, mlp=MLP, pause_gc=False
        )
        configurations["micrograd, the notebook"] = lambda: notebook(mg_steps, Value, MLP)
    # runs[name][r]: (seconds of each step, losses) of repeat r
    runs: dict[str, list[tuple[list[float], list[float]]]] = {name: [] for name in configurations}
    for _ in range(args.repeat):
        for name, make in configurations.items():
            runs[name].append(time_steps(make()))

    print("micrograd's moons demo (MLP(2, [16, 16, 1]), 100 points, full batch), per step;")
    print("'written out': each neuron as micrograd writes it, a + and a * node per weight")
    medians = {name: [statistics.median(s) * 1e3 for s, _ in rs] for name, rs in runs.items()}
    for name, ms in medians.items():
        spread = f"  (runs {min(ms):.1f}-{max(ms):.1f})" if len(ms) > 1 else ""
        count = sum(len(s) for s, _ in runs[name])
        print(f"  {name:<28} {count:4d} steps  median {statistics.median(ms):9.1f} ms{spread}")
    fused = runs["chainrule, collector paused"][0][1]
    written = runs["chainrule, written out"][0][1]
    diff = max(abs(a - b) / abs(b) for a, b in zip(fused, written, strict=True))
    print(f"  largest relative difference of the losses, written out or not: {diff:.1e}")
    if "micrograd 0.1.0" in runs:
        ratios = []
        for name, ms in medians.items():
            if name.startswith("chainrule"):  # each against micrograd run the same way
                mg_ms = medians[name.replace("chainrule", "micrograd")
                                if "notebook" in name else "micrograd 0.1.0"]  # fmt: skip
                each = [m / c for m, c in zip(mg_ms, ms, strict=True)]
                spread = f" [{min(each):.1f}-{max(each):.1f}]" if len(each) > 1 else ""
                short = name.removeprefix("chainrule, ")
                ratios.append(f"{statistics.median(each):.1f}x{spread} ({short})")
        print(f"  micrograd / chainrule: {', '.join(ratios)}")
        # Same loop, same seeds: the losses agree but for the order of float additions.
        cr_losses = runs["chainrule, collector paused"][0][1]
        mg_losses = runs["micrograd 0.1.0"][0][1]
        diff = max(abs(a - b) / abs(b) for a, b in zip(cr_losses, mg_losses, strict=False))
        print(f"  largest relative difference of the losses over common steps: {diff:.1e}")
        ours, theirs = (runs[f"{who}, the notebook"][0][1] for who in ("chainrule", "micrograd"))
        diff = max(abs(a - b) / abs(b) for a, b in zip(ours, theirs, strict=False))
        print(f"  the same, the notebook as written: {diff:.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
