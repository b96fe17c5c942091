"""What watching training costs: SGD steps of the MLP 784-512-512-10 (cross-entropy, float32)
unmonitored, and with a cr.viz.Monitor recording every step and every 10th step. Each timed
call runs 10 steps, so it holds one recorded step at every=10; the ratios are to the
unmonitored steps of the same run.

    python benchmarks/monitor_overhead.py [--batch 128] [--steps 30] [--quick]
"""

from __future__ import annotations

import argparse

import numpy as np
from common import interleaved, parse_args
from mlp_step import LR, SIZES, init_weights

import chainrule as cr

STEPS_PER_CALL = 10


def steps_fn(x: np.ndarray, y: np.ndarray, every: int | None):
    """STEPS_PER_CALL SGD steps of the MLP, watched by a Monitor recording every ``every``
    steps (None: no Monitor)."""
    layers: list[cr.nn.Module] = []
    weights = init_weights()
    for k, (w, b) in enumerate(weights):
        lin = cr.nn.Linear(w.shape[1], w.shape[0])
        lin.load_state_dict({"weight": w, "bias": b})
        layers += [lin, cr.nn.ReLU()] if k < len(weights) - 1 else [lin]
    model = cr.nn.Sequential(*layers)
    opt = cr.optim.SGD(model.parameters(), lr=LR)
    if every is not None:
        cr.viz.Monitor(model, opt, every=every)
    xt, yt = cr.tensor(x), cr.tensor(y)

    def steps() -> None:
        for _ in range(STEPS_PER_CALL):
            loss = cr.nn.functional.cross_entropy(model(xt), yt)
            opt.zero_grad()
            loss.backward()
            opt.step()

    return steps


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--steps", type=int, default=30, help="timed calls of 10 steps each")
    ap.add_argument("--quick", action="store_true", help="a tiny run that only checks it works")
    args = parse_args(ap, argv, __file__)
    calls, warmup = (2, 1) if args.quick else (args.steps, 3)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((args.batch, SIZES[0])).astype(np.float32)
    y = rng.integers(0, SIZES[-1], args.batch).astype(np.int64)
    makers = {
        "unmonitored": lambda: steps_fn(x, y, None),
        "monitor every=1": lambda: steps_fn(x, y, 1),
        "monitor every=10": lambda: steps_fn(x, y, 10),
    }
    medians = interleaved(makers, calls, warmup)
    base = medians["unmonitored"]
    print(f"MLP 784-512-512-10 SGD step, batch {args.batch}, float32, watched by a Monitor")
    for name, t in medians.items():
        print(f"  {name:<20}{t / STEPS_PER_CALL * 1e3:9.3f} ms/step   {t / base:6.3f}x")
    return medians


if __name__ == "__main__":
    main()
