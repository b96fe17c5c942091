"""Programs that test_collective_checks.py runs under ``mpiexec -n 2``: ranks that call
collectives that do not match. ``python mpi_check_jobs.py JOB``; each asserts on every rank
and prints ``ok JOB rank R`` at the end (mpi_jobs.main)."""

from __future__ import annotations

import numpy as np
from mpi_jobs import main

import chainrule as cr
import chainrule.distributed as dist

R = dist.ReduceOp


def mismatches(rank: int) -> list[tuple[object, str]]:
    """(a call that differs between the ranks, the message every rank must raise)."""
    other = 1 - rank
    deep = (1,) * 9
    return [
        (
            lambda: dist.all_reduce(cr.ones(4 if rank == 0 else 8)),
            "all_reduce: the ranks' calls do not match (they differ in shape); got rank 0: "
            "all_reduce of shape (4,) float32 with op SUM, rank 1: all_reduce of shape (8,) "
            "float32 with op SUM",
        ),
        (
            lambda: dist.all_reduce(cr.ones(3, dtype=cr.float32 if rank == 0 else cr.float64)),
            "(they differ in dtype); got rank 0: all_reduce of shape (3,) float32 with op SUM, "
            "rank 1: all_reduce of shape (3,) float64 with op SUM",
        ),
        (
            lambda: dist.all_reduce(cr.ones(3), op=R.SUM if rank == 0 else R.MAX),
            "(they differ in op); got rank 0: all_reduce of shape (3,) float32 with op SUM, "
            "rank 1: all_reduce of shape (3,) float32 with op MAX",
        ),
        (
            lambda: dist.all_reduce(cr.ones(2, 3)) if rank == 0 else dist.barrier(),
            "(they differ in collective, shape, dtype, op); got rank 0: all_reduce of shape "
            "(2, 3) float32 with op SUM, rank 1: barrier",
        ),
        (
            lambda: dist.all_gather(
                [cr.zeros(2, 3)] * 2 if rank == 0 else [cr.zeros(3, 2)] * 2,
                cr.zeros(2, 3) if rank == 0 else cr.zeros(3, 2),
            ),
            "all_gather: the ranks' calls do not match (they differ in shape); got rank 0: "
            "all_gather of shape (2, 3) float32, rank 1: all_gather of shape (3, 2) float32",
        ),
        (
            lambda: dist.reduce(cr.ones(2), dst=rank),
            "reduce: the ranks' calls do not match (they differ in src/dst); got rank 0: "
            "reduce of shape (2,) float32 with dst=0 with op SUM, rank 1: reduce of shape (2,) "
            "float32 with dst=1 with op SUM",
        ),
        (
            lambda: dist.gather(
                cr.ones(2 + rank), [cr.zeros(2 + rank)] * 2 if rank == 0 else None, dst=0
            ),
            "gather: the ranks' calls do not match (they differ in shape); got rank 0: gather "
            "of shape (2,) float32 with dst=0, rank 1: gather of shape (3,) float32 with dst=0",
        ),
        (
            lambda: dist.scatter(
                cr.zeros(2, dtype=cr.int64 if rank else cr.float32),
                [cr.zeros(2)] * 2 if rank == 0 else None,
                src=0,
            ),
            "(they differ in dtype); got rank 0: scatter of shape (2,) float32 with src=0, "
            "rank 1: scatter of shape (2,) int64 with src=0",
        ),
        (
            lambda: dist.all_reduce(cr.ones(*deep, 2 + rank)),
            "(they differ in shape); got rank 0: all_reduce of shape (1, 1, 1, 1, 1, 1, 1, 1, "
            "...) float32 with op SUM, rank 1: all_reduce of shape (1, 1, 1, 1, 1, 1, 1, 1, ...) "
            "float32 with op SUM",
        ),
        (
            lambda: dist.broadcast_object_list([rank], src=other),
            "broadcast_object_list: the ranks' calls do not match (they differ in src/dst); got "
            "rank 0: broadcast_object_list with src=1, rank 1: broadcast_object_list with src=0",
        ),
    ]


def job_mismatch(rank: int, world: int) -> None:
    """Every mismatch raises on every rank, leaves the tensors alone, and the ranks stay in
    step: a matching collective afterwards is right."""
    for call, words in mismatches(rank):
        try:
            call()
        except RuntimeError as e:
            assert words in str(e), (str(e), words)
        else:
            raise AssertionError(f"no error on rank {rank}: {words}")
    # broadcast from a src that differs per rank: the source's own tensor stays its own
    mine = cr.tensor([float(rank)] * 3)
    try:
        dist.broadcast(mine, src=rank)
    except RuntimeError as e:
        assert "rank 0: broadcast of shape (3,) float32 with src=0, rank 1: broadcast of " in str(e)
        assert "shape (3,) float32 with src=1" in str(e), str(e)
    else:
        raise AssertionError("broadcast with a different src per rank")
    assert mine.tolist() == [float(rank)] * 3
    t = cr.tensor(np.arange(4.0) * (rank + 1))
    dist.all_reduce(t)
    assert t.tolist() == [0.0, 3.0, 6.0, 9.0]
    print(f"rank {rank} raised {len(mismatches(rank)) + 1} mismatches", flush=True)


def job_uncaught(rank: int, world: int) -> None:
    """A mismatch nobody catches ends the job, naming the collective and each rank's call."""
    dist.all_reduce(cr.ones(4 if rank == 0 else 8))


def job_unchecked(rank: int, world: int) -> None:
    """With CHAINRULE_CHECK_COLLECTIVES=0 nothing is exchanged first: the calls go to MPI as
    they are, so a mismatch raises nothing (what MPI makes of it is undefined: here the
    longer tensor's tail is garbage or left as it was)."""
    t = cr.ones(4 if rank == 0 else 8)
    dist.all_reduce(t)
    same = cr.tensor([1.0, 2.0]) * (rank + 1)
    dist.all_reduce(same)
    assert same.tolist() == [3.0, 6.0]


def job_ddp_layout(rank: int, world: int) -> None:
    """DDP refuses, at construction and on every rank, bucket_cap_mb that differ between
    the ranks and a parameter frozen on one rank only, naming the cause and the ranks."""
    from chainrule import nn
    from chainrule.nn.parallel import DistributedDataParallel as DDP

    def model() -> nn.Module:
        cr.manual_seed(0)
        return nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))

    frozen = model()
    if rank == 1:
        frozen[0].bias.requires_grad_(False)
    for make, words in (
        (
            lambda: DDP(model(), bucket_cap_mb=25 if rank == 0 else 1),
            "DistributedDataParallel: the ranks' bucket_cap_mb differ, so their gradient "
            "buckets would not match; got bucket_cap_mb=25 on rank 0 and bucket_cap_mb=1 on "
            "rank 1",
        ),
        (
            lambda: DDP(model(), bucket_cap_mb=None if rank == 0 else 25),
            "got bucket_cap_mb=None on rank 0 and bucket_cap_mb=25 on rank 1",
        ),
        (
            lambda: DDP(frozen),
            "DistributedDataParallel: the ranks' models train different parameters "
            "(requires_grad), so their gradient buckets would not match; got ['0.bias'] "
            "requires a gradient on rank 0 and not on rank 1",
        ),
    ):
        try:
            make()
        except RuntimeError as e:
            assert words in str(e), (str(e), words)
        else:
            raise AssertionError(f"no error on rank {rank}: {words}")
    # the ranks are still in step: a DDP both build alike averages the gradients
    ddp = DDP(model(), bucket_cap_mb=1)
    ddp(cr.ones(2, 4) * (rank + 1)).sum().backward()
    grads = [p.grad.numpy() for p in ddp.parameters()]
    everyone: list = [None] * world
    dist.all_gather_object(everyone, grads)
    assert all(np.array_equal(a, b) for a, b in zip(everyone[0], everyone[1], strict=True))
    print(f"rank {rank} refused 3 layouts", flush=True)


JOBS = {
    "mismatch": job_mismatch,
    "uncaught": job_uncaught,
    "unchecked": job_unchecked,
    "ddp_layout": job_ddp_layout,
}

if __name__ == "__main__":
    main(JOBS)
