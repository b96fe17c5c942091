"""What drawing PyTorch's random numbers costs a recipe's run: each recipe trained by `chainrule
train` twice, alternately, in fresh processes: with PyTorch's streams (chainrule's own
generator) and with every sampler of the generator swapped for NumPy's PCG64 samplers (the
way chainrule drew before its numbers were PyTorch's). Model construction, the data split's
shuffle, the DataLoader's shuffles, dropout masks and training are all in the run.

For each recipe: the medians of the whole run's CPU time in both modes and their ratio, and
the time spent in the generator's samplers in each mode, as a share of the run: their
difference is what the streams cost, measured where it arises, so run-to-run noise of the
whole run (a few percent) does not hide it. CPU time, as the machine may be shared; threads
pinned to one.

    python benchmarks/random_cost.py [--rounds 5] [--recipes moons ...] [--quick]
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np

# recipe -> the options that keep its run short (the language recipes train by steps)
RUNS = {
    "breast-cancer": [],
    "regression": [],
    "moons": [],
    "digits-mlp": [],
    "digits-cnn": ["--epochs", "3"],
    "names": ["--steps", "100"],
    "gpt": ["--steps", "20"],
    "adder": ["--steps", "100"],
}
# the generator's samplers (array/generator.py): what every draw of chainrule calls
SAMPLERS = (
    "uniform", "normal", "integers", "full_range", "permutation", "bernoulli",
    "bernoulli_probs", "exponential", "multinomial", "words",
)  # fmt: skip


def numpy_samplers(generator_module: Any) -> None:
    """Give chainrule's Generator NumPy's PCG64 samplers, as a NumPy Generator passed as
    ``generator=`` has them (one NumPy Generator per chainrule Generator, seeded from its
    seed); the samplers NumPy lacks keep PyTorch's recipes on PCG64's words."""
    ours, numpys = generator_module.Generator, generator_module._NumpyWords

    seed = ours.manual_seed

    def manual_seed(self: Any, value: int) -> Any:
        self.__dict__["_pcg"] = np.random.default_rng(value)  # the stream starts again
        return seed(self, value)

    def rng(self: Any) -> np.random.Generator:
        if "_pcg" not in self.__dict__:
            self.__dict__["_pcg"] = np.random.default_rng(self.initial_seed())
        return self.__dict__["_pcg"]  # type: ignore[no-any-return]

    ours.manual_seed, ours._rng = manual_seed, property(rng)
    for name in vars(numpys):
        if name in SAMPLERS:
            setattr(ours, name, getattr(numpys, name))


def timed_samplers(generator_class: Any) -> list[float]:
    """Wrap each sampler so that the CPU time spent in it adds up in the returned list's one
    element (a sampler called by another counts once)."""
    spent, depth = [0.0], [0]

    def wrap(fn: Any) -> Any:
        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            depth[0] += 1
            start = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                depth[0] -= 1
                if depth[0] == 0:
                    spent[0] += time.process_time() - start

        return timed

    for name in SAMPLERS:
        setattr(generator_class, name, wrap(getattr(generator_class, name)))
    return spent


def worker(mode: str, recipe: str) -> None:
    from chainrule.tools import cli

    generator = importlib.import_module("chainrule.array.generator")

    if mode == "numpy":
        numpy_samplers(generator)
    spent = timed_samplers(generator.Generator)
    with tempfile.TemporaryDirectory() as out:
        argv = ["train", recipe, "--seed", "0", "--quiet", "--out", out, *RUNS[recipe]]
        start = time.process_time()
        with open(os.devnull, "w") as quiet:
            stdout, sys.stdout = sys.stdout, quiet
            try:
                code = cli.main(argv)
            finally:
                sys.stdout = stdout
        cpu = time.process_time() - start
    if code:
        raise SystemExit(f"{recipe}: chainrule train exited with {code}")
    print(json.dumps({"cpu": cpu, "draws": spent[0]}))


def run(mode: str, recipe: str) -> dict[str, float]:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", f"{mode}:{recipe}"]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--recipes", nargs="+", default=list(RUNS), choices=list(RUNS))
    ap.add_argument("--quick", action="store_true", help="one round of one recipe")
    ap.add_argument("--worker", help=argparse.SUPPRESS)  # MODE:RECIPE
    args = ap.parse_args(argv)
    if args.worker:
        worker(*args.worker.split(":"))
        return
    recipes, rounds = (["moons"], 1) if args.quick else (args.recipes, args.rounds)
    print(f"CPU seconds of each run, median of {rounds} alternated runs, threads pinned to one")
    head = f"{'recipe':14s} {'torch streams':>14s} {'NumPy PCG64':>12s} {'ratio':>7s}"
    print(f"{head} {'in samplers: streams':>21s} {'PCG64':>6s} {'extra':>6s}")
    for recipe in recipes:
        runs: dict[str, list[dict[str, float]]] = {"torch": [], "numpy": []}
        for _ in range(rounds):
            for mode in runs:
                runs[mode].append(run(mode, recipe))
        ours, numpy = (statistics.median(r["cpu"] for r in runs[m]) for m in ("torch", "numpy"))
        shares = [statistics.median(r["draws"] / r["cpu"] for r in runs[m]) for m in runs]
        print(
            f"{recipe:14s} {ours:14.2f} {numpy:12.2f} {ours / numpy:7.3f} {shares[0]:21.2%} "
            f"{shares[1]:6.2%} {shares[0] - shares[1]:6.2%}"
        )


if __name__ == "__main__":
    main()
