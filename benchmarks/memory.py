"""Peak memory (RSS) of 100 MLP training steps (784-512-512-10, batch 128, float32), each
framework in a fresh process: the growth of peak RSS over the process's RSS just before
training, so import costs (large for PyTorch) are left out.

    python benchmarks/memory.py [--steps 100] [--quick] [--steady-allocator]

Each child is a plain process unless --steady-allocator is given (malloc's thresholds fixed
first, as `chainrule train` does).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from common import parse_args

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = """
import json, resource, sys
sys.path.insert(0, {here!r})
import numpy as np
import mlp_step as M
from chainrule.fastpath.allocator import steady_allocator
if {steady!r}:
    steady_allocator()

def rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
def peak_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024

rng = np.random.default_rng(1)
x = rng.standard_normal((128, 784)).astype(np.float32)
y = rng.integers(0, 10, 128).astype(np.int64)
make = {{"chainrule": M.chainrule_step_fn, "numpy (by hand)": M.numpy_step_fn,
        "pytorch": M.torch_step_fn}}[{name!r}]
if {name!r} == "pytorch":
    import torch
step = make(M.init_weights(), x, y)
# Reset the high-water mark so only training counts (Linux: write 5 to clear_refs).
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
before = rss_mib()
for _ in range({steps}):
    step()
print(json.dumps({{"before": before, "peak": peak_mib()}}))
"""


def measure(name: str, steps: int, steady: bool = False) -> dict[str, float]:
    code = CHILD.format(here=HERE, name=name, steps=steps, steady=steady)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--quick", action="store_true")
    args = parse_args(ap, argv, __file__)
    steps = 2 if args.quick else args.steps
    names = ["chainrule", "numpy (by hand)"]
    try:
        import torch  # noqa: F401

        names.append("pytorch")
    except ImportError:
        pass
    growth = {}
    for name in names:
        m = measure(name, steps, args.steady_allocator)
        growth[name] = m["peak"] - m["before"]
    ours = growth["chainrule"]
    malloc = "malloc thresholds fixed" if args.steady_allocator else "plain processes"
    print(f"Peak RSS growth over {steps} MLP steps (MiB; each framework alone, {malloc})")
    for name, g in growth.items():
        ratio = f"{ours / g:6.2f}x" if name != "chainrule" and g > 0 else ""
        print(f"  {name:<22}{g:10.1f}   {ratio}")
    return growth


if __name__ == "__main__":
    main()
