"""Peak memory of cr.save and cr.load on a state dict of about 200 MB (float32 tensors of
about 20 MB, one int64 and one bfloat16), each in a fresh process: the peak of what Python
and NumPy allocated (tracemalloc) during the call, and the growth of peak RSS over the RSS
just before it, both as multiples of the data's size. The data itself is 1x of a load's
peak (it is what load returns) and 0x of a save's (it is already there).

    python benchmarks/checkpoint_memory.py [--mb 200]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

CHILD = """
import json, sys, tracemalloc
import numpy as np
import chainrule as cr

def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) * 1024

what, path, mb = sys.argv[1], sys.argv[2], float(sys.argv[3])
n = max(1, int(mb * 2**20 / 4 / 10))  # ten float32 tensors of n elements
if what == "save":
    rng = np.random.default_rng(0)
    state = {f"layer{i}.weight": cr.tensor(rng.standard_normal(n, dtype=np.float32))
             for i in range(10)}
    state["steps"] = cr.arange(1000)
    state["half"] = cr.ones(1000).bfloat16()
size = 10 * n * 4 + 8000 + 2000
with open("/proc/self/clear_refs", "w") as f:  # the high-water mark from here (Linux)
    f.write("5")
before = status("VmRSS:")
tracemalloc.start()
if what == "save":
    cr.save(state, path)
else:
    state = cr.load(path)
    assert sum(t.numel() * t.element_size() for t in state.values()) == size
peak = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
print(json.dumps({"traced": peak / size, "rss": (status("VmHWM:") - before) / size,
                  "size_mb": size / 2**20}))
"""


def measure(what: str, path: str, mb: float) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, what, path, str(mb)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(out.stdout.splitlines()[-1])


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mb", type=float, default=200.0, help="the state dict's size (default 200)")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "state.safetensors")
        results = {"save": measure("save", path, args.mb), "load": measure("load", path, args.mb)}
    size = results["save"]["size_mb"]
    print(f"cr.save and cr.load of a {size:.0f} MB state dict: peak memory as multiples of it")
    print(f"{'':6}{'tracemalloc':>12}{'RSS growth':>12}")
    for what, r in results.items():
        print(f"{what:6}{r['traced']:>11.2f}x{r['rss']:>11.2f}x")
    return results


if __name__ == "__main__":
    main()
