"""Weak scaling of data-parallel training: an SGD step of the MLP 784-512-512-10 on a batch
of 128 per rank, one thread per rank, with chainrule's DistributedDataParallel over MPI
(mpiexec) and PyTorch's over its gloo backend (processes meeting at a local TCP port), at 1
and 2 ranks. Reported: the step's median time, the throughput in examples per second and
its ratio to one rank, the time a step waits for its all-reduce (chainrule: measured in
the wait itself; both: the step's time less that of the same step without DDP), and the
step's CPU time, with the ratio it gives, which holds on a machine busy with other work.

    python benchmarks/ddp_scaling.py [--batch 128] [--steps 60] [--ranks 1 2]
                                     [--gradient-as-bucket-view] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = (784, 512, 512, 10)
LR = 0.01
PINNED = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def init_weights(seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [
        ((rng.uniform(-1, 1, (o, i)) / np.sqrt(i)).astype(np.float32), np.zeros(o, np.float32))
        for i, o in zip(SIZES, SIZES[1:], strict=False)
    ]


def make_model(lib: Any) -> Any:
    layers = []
    weights = init_weights()
    for k, (w, b) in enumerate(weights):
        lin = lib.nn.Linear(w.shape[1], w.shape[0])
        lin.load_state_dict({"weight": lib.tensor(w), "bias": lib.tensor(b)})
        layers += [lin, lib.nn.ReLU()] if k < len(weights) - 1 else [lin]
    return lib.nn.Sequential(*layers)


def timed_steps(lib: Any, model: Any, rank: int, batch: int, steps: int, warmup: int) -> tuple:
    """Each step's seconds, by the clock and in this process's CPU time (all its threads):
    cross-entropy SGD on this rank's own random batch."""
    rng = np.random.default_rng(100 + rank)
    x = lib.tensor(rng.standard_normal((batch, SIZES[0])).astype(np.float32))
    y = lib.tensor(rng.integers(0, SIZES[-1], batch).astype(np.int64))
    opt = lib.optim.SGD(model.parameters(), lr=LR)
    times, cpu = [], []
    for i in range(warmup + steps):
        start, start_cpu = time.perf_counter(), time.process_time()
        loss = lib.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if i >= warmup:
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
    return times, cpu


def worker(args: argparse.Namespace) -> None:
    """One rank: the step without DDP, then with it; rank 0 prints the medians as JSON."""
    if args.framework == "chainrule":
        import chainrule as lib
        import chainrule.distributed as dist
        from chainrule.nn.parallel import DistributedDataParallel as DDP

        dist.init_process_group("mpi")
        waited = [0.0]
        original_wait = dist.Work.wait

        def timed_wait(self: Any) -> bool:  # the time this rank blocks on a collective
            start = time.perf_counter()
            try:
                return original_wait(self)
            finally:
                waited[0] += time.perf_counter() - start

        dist.Work.wait = timed_wait  # type: ignore[method-assign]
    else:
        import torch as lib
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        lib.set_num_threads(1)
        dist.init_process_group("gloo", init_method="env://")
        waited = [float("nan")]
    rank, world = dist.get_rank(), dist.get_world_size()
    plain, _ = timed_steps(lib, make_model(lib), rank, args.batch, args.steps, args.warmup)
    ddp = DDP(make_model(lib), gradient_as_bucket_view=args.gradient_as_bucket_view)
    dist.barrier()
    waited[0] = 0.0 if args.framework == "chainrule" else waited[0]
    times, cpu = timed_steps(lib, ddp, rank, args.batch, args.steps, args.warmup)
    # the waits counted cover warm-up and timed steps alike
    wait_per_step = waited[0] / (args.steps + args.warmup)
    result = {"plain": statistics.median(plain), "ddp": statistics.median(times),
              "cpu": statistics.median(cpu), "wait": wait_per_step}  # fmt: skip
    everyone = [None] * world
    dist.all_gather_object(everyone, result)
    if rank == 0:
        ddp_step = max(r["ddp"] for r in everyone)  # a step ends when the slowest rank's does
        plain_step = statistics.mean(r["plain"] for r in everyone)
        wait = statistics.mean(r["wait"] for r in everyone)
        cpu_step = max(r["cpu"] for r in everyone)
        print("RESULT " + json.dumps({"ddp": ddp_step, "plain": plain_step, "wait": wait,
                                      "cpu": cpu_step}))  # fmt: skip
    dist.destroy_process_group()
    if args.framework == "pytorch":
        # the group is gone and the result printed; leave without the interpreter's teardown,
        # where gloo's threads now and then abort the process ("terminate called without an
        # active exception") and so fail a run that finished
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(framework: str, ranks: int, args: argparse.Namespace) -> dict[str, float]:
    """Run the workers of one configuration; rank 0's result."""
    env = {**os.environ, **PINNED}
    cmd = [sys.executable, __file__, "--worker", framework, "--batch", str(args.batch),
           "--steps", str(args.steps), "--warmup", str(args.warmup)]  # fmt: skip
    if args.gradient_as_bucket_view:
        cmd.append("--gradient-as-bucket-view")
    if framework == "chainrule":
        mpiexec = os.path.join(os.path.dirname(sys.executable), "mpiexec")
        procs = [subprocess.Popen([mpiexec, "-n", str(ranks), *cmd], env=env,
                                  stdout=subprocess.PIPE, text=True)]  # fmt: skip
    else:
        env |= {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port()),
                "WORLD_SIZE": str(ranks)}  # fmt: skip
        procs = [
            subprocess.Popen(cmd, env={**env, "RANK": str(r)}, stdout=subprocess.PIPE, text=True)
            for r in range(ranks)
        ]
    outs = [p.communicate(timeout=args.timeout)[0] for p in procs]
    if any(p.returncode for p in procs):
        raise RuntimeError(f"ddp_scaling: {framework} at {ranks} ranks failed; got {outs}")
    line = next(ln for out in outs for ln in out.splitlines() if ln.startswith("RESULT "))
    return json.loads(line[len("RESULT ") :])


def main(argv: list[str] | None = None) -> dict[str, dict[int, dict[str, float]]]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--batch", type=int, default=128, help="examples per rank and step")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--quick", action="store_true", help="a tiny run that only checks it works")
    ap.add_argument(
        "--gradient-as-bucket-view",
        action="store_true",
        help="DDP(..., gradient_as_bucket_view=True) on both frameworks: each .grad a slice "
        "of its bucket, so the averages are not copied back",
    )
    ap.add_argument("--worker", choices=["chainrule", "pytorch"], help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        args.framework = args.worker
        worker(args)
        return {}
    if args.quick:
        args.batch, args.steps, args.warmup = 8, 2, 1
    results: dict[str, dict[int, dict[str, float]]] = {}
    for framework in ("chainrule", "pytorch"):
        results[framework] = {n: launch(framework, n, args) for n in args.ranks}
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    views = ", gradient_as_bucket_view" if args.gradient_as_bucket_view else ""
    print(
        f"DDP weak scaling: MLP 784-512-512-10 SGD step, batch {args.batch} per rank, float32, "
        f"1 thread per rank{views}; {os.cpu_count()} cores, load average {load:.1f} at the end"
    )
    print(f"{'':<11}{'ranks':>6}{'step ms':>10}{'examples/s':>12}{'vs 1 rank':>11}"
          f"{'wait ms':>9}{'DDP cost ms':>13}{'CPU ms':>8}{'vs 1 by CPU':>13}")  # fmt: skip
    for framework, by_ranks in results.items():
        one = by_ranks.get(1)
        for n, r in by_ranks.items():
            throughput = n * args.batch / r["ddp"]
            ratio = throughput / (args.batch / one["ddp"]) if one else float("nan")
            # on a machine shared with other work, the CPU time a step takes is what it would
            # take on idle cores: the ratio it gives is the scaling the ranks would reach
            by_cpu = n * one["cpu"] / r["cpu"] if one else float("nan")
            wait = f"{r['wait'] * 1e3:.2f}" if r["wait"] == r["wait"] else "-"
            print(f"{framework:<11}{n:>6}{r['ddp'] * 1e3:>10.2f}{throughput:>12.0f}{ratio:>10.2f}x"
                  f"{wait:>9}{(r['ddp'] - r['plain']) * 1e3:>13.2f}{r['cpu'] * 1e3:>8.2f}"
                  f"{by_cpu:>12.2f}x")  # fmt: skip
    return results


if __name__ == "__main__":
    main()
