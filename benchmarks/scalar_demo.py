"""Time micrograd's moons demo per step: chainrule's scalar engine against micrograd 0.1.0.

Run `python benchmarks/scalar_demo.py [--steps N] [--micrograd-steps M] [--quick]`.
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
    parser.add_argument("--quick", action="store_true", help="a tiny run: one step of each")
    args = parser.parse_args(argv)
    steps, mg_steps = (1, 1) if args.quick else (args.steps, args.micrograd_steps)
    try:
        import sklearn.datasets  # noqa: F401  (imported here so that no step times it)
    except ImportError:
        print(f"the benchmark needs scikit-learn: {DATASETS_HINT}", file=sys.stderr)
        return 1

    runs = {
        "chainrule, collector paused": time_steps(train_moons(steps)),
        "chainrule, collector on": time_steps(train_moons(steps, pause_gc=False)),
        "chainrule, written out": time_steps(train_moons(steps, mlp=WrittenOutMLP)),
        "chainrule, written out, on": time_steps(
            train_moons(steps, mlp=WrittenOutMLP, pause_gc=False)
        ),
    }
    try:
        from micrograd.engine import Value
        from micrograd.nn import MLP
    except ImportError:
        print("micrograd is not installed (pip install micrograd==0.1.0); timing chainrule only")
    else:
        # micrograd's graphs are reference cycles: only the collector frees them.
        runs["micrograd 0.1.0"] = time_steps(
            train_moons(mg_steps, value=Value, mlp=MLP, pause_gc=False)
        )

    print("micrograd's moons demo (MLP(2, [16, 16, 1]), 100 points, full batch), per step;")
    print("'written out': each neuron as micrograd writes it, a + and a * node per weight")
    median_ms = {name: statistics.median(s) * 1e3 for name, (s, _) in runs.items()}
    for name, (seconds, _) in runs.items():
        print(f"  {name:<28} {len(seconds):4d} steps  median {median_ms[name]:9.1f} ms")
    fused, written = runs["chainrule, collector paused"][1], runs["chainrule, written out"][1]
    diff = max(abs(a - b) / abs(b) for a, b in zip(fused, written, strict=True))
    print(f"  largest relative difference of the losses, written out or not: {diff:.1e}")
    if "micrograd 0.1.0" in runs:
        mg_ms = median_ms["micrograd 0.1.0"]
        ratios = ", ".join(
            f"{mg_ms / ms:.1f}x ({name.removeprefix('chainrule, ')})"
            for name, ms in median_ms.items()
            if name.startswith("chainrule")
        )
        print(f"  micrograd / chainrule: {ratios}")
        # Same loop, same seeds: the losses agree but for the order of float additions.
        cr_losses, mg_losses = runs["chainrule, collector paused"][1], runs["micrograd 0.1.0"][1]
        diff = max(abs(a - b) / abs(b) for a, b in zip(cr_losses, mg_losses, strict=False))
        print(f"  largest relative difference of the losses over common steps: {diff:.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
