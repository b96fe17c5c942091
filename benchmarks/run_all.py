"""Every benchmark, with threads pinned to one and unpinned, each in a fresh process (the
thread count is fixed when NumPy and PyTorch load). Each process is a plain one, as a user's
script is; --steady-allocator has the benchmarks that take it fix malloc's thresholds first,
as `chainrule train` does.

    python benchmarks/run_all.py [--quick] [--steady-allocator]
"""

from __future__ import annotations

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RUNS = [
    ["mlp_step.py", "--batch", "32"],
    ["mlp_step.py", "--batch", "128"],
    ["mlp_step.py", "--batch", "1024", "--steps", "15"],
    ["fixed_cost.py"],
    ["per_op.py"],
    ["small_ops.py"],
    ["cnn_step.py"],
    ["gpt_step.py"],
    ["lstm_step.py"],
    ["makemore_step.py"],
    ["scalar_demo.py"],
    ["memory.py"],
    ["recipes_vs_torch.py"],
    ["onnx_inference.py"],
]
TAKE_ALLOCATOR_FLAG = {"mlp_step.py", "fixed_cost.py", "per_op.py", "cnn_step.py", "memory.py",
                       "recipes_vs_torch.py", "onnx_inference.py", "lstm_step.py",
                       "gpt_step.py", "makemore_step.py", "small_ops.py"}  # fmt: skip
PINNED = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def main() -> None:
    quick = "--quick" in sys.argv[1:]
    steady = "--steady-allocator" in sys.argv[1:]
    for label, extra in (("pinned", PINNED), ("unpinned", {})):
        env = {k: v for k, v in os.environ.items() if k not in PINNED} | extra
        print(f"=== {label} ===", flush=True)
        for run in RUNS:
            script = os.path.join(HERE, run[0])
            if not os.path.exists(script):
                continue
            args = [sys.executable, script, *run[1:], *(["--quick"] if quick else [])]
            if steady and run[0] in TAKE_ALLOCATOR_FLAG:
                args.append("--steady-allocator")
            subprocess.run(args, env=env, check=True)
            print(flush=True)


if __name__ == "__main__":
    main()
