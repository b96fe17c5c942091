"""The data-parallel programs that test_ddp.py runs under ``mpiexec -n 2``: ``python
mpi_ddp_jobs.py JOB`` (see mpi_jobs.py)."""

from __future__ import annotations

import copy
import os
import signal

import numpy as np
from mpi_jobs import close, main

import chainrule as cr
import chainrule.distributed as dist
import chainrule.nn.functional as F
from chainrule import nn, optim
from chainrule.nn.parallel import DistributedDataParallel as DDP


def mlp() -> nn.Module:
    return nn.Sequential(
        nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 5)
    )


def cnn() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(4 * 4 * 4, 5),
    )


class TwoHeads(nn.Module):
    """A head used only on the rows with x[:, 0] > 0: on a shard with none, it is unused."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Linear(20, 5)
        self.extra = nn.Linear(20, 5)
        self.never = nn.Linear(20, 5)  # used on no rank

    def forward(self, x: cr.Tensor) -> cr.Tensor:
        out = self.body(x)
        mask = (x[:, :1] > 0).to(x.dtype)  # (B, 1)
        if mask.sum().item() > 0:
            out = out + self.extra(x) * mask
        return out


def equal_to_one_process(
    make, x, y, dtype, rank, world, steps=3, accumulate=1, keep_grads=False, **kw
) -> float:
    """K SGD steps of DDP over the ranks' shards against one process on the whole batch
    (``keep_grads``: zero_grad(set_to_none=False)); the largest difference of a
    parameter."""
    cr.manual_seed(0)
    ref = make().to(dtype)
    model = copy.deepcopy(ref)
    if rank == 1:  # another start: DDP copies rank 0's
        with cr.no_grad():
            for p in model.parameters():
                p.mul_(3.0)
    ddp = DDP(model, **kw)
    shared = dist.SharedBuffer.make is not across_machines  # else summed by MPI's all-reduce
    assert all((b.shared is not None) == shared for b in ddp._reducer.buckets)
    o1 = optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    o2 = optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    x = x.to(dtype)
    n = x.shape[0] // world
    mine, ys = x[rank * n : (rank + 1) * n], y[rank * n : (rank + 1) * n]
    m = n // accumulate
    for _ in range(steps):
        o1.zero_grad(set_to_none=not keep_grads)
        for k in range(accumulate):  # micro-batches: all but the last under no_sync
            part = slice(k * m, (k + 1) * m)
            ctx = ddp.no_sync() if k < accumulate - 1 else _nothing()
            with ctx:
                (F.cross_entropy(ddp(mine[part]), ys[part]) / accumulate).backward()
            if k < accumulate - 1:  # not averaged yet: each rank its own
                grads = [None] * world
                dist.all_gather_object(grads, model[0].weight.grad.numpy().copy())
                assert not np.allclose(grads[0], grads[1])
        o1.step()
        o2.zero_grad()
        F.cross_entropy(ref(x), y).backward()
        o2.step()
    for a, b in zip(model.parameters(), ref.parameters(), strict=True):
        assert (a.grad is None) == (b.grad is None)
    return max(
        float((a - b).abs().max())
        for a, b in zip(model.parameters(), ref.parameters(), strict=True)
    )


class _nothing:
    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        pass


def across_machines(n: int, dtype: object) -> None:
    """SharedBuffer.make where the ranks are not all on one machine."""


def job_ddp(rank: int, world: int) -> None:
    """DDP over 2 ranks equals one process on the whole batch: an MLP, a CNN, small buckets,
    gradient accumulation under no_sync, a parameter unused on one rank and one on all;
    the buckets summed through shared memory, and by MPI's all-reduce as across machines."""
    rng = np.random.default_rng(0)
    x = cr.tensor(rng.standard_normal((16, 20)))
    y = cr.tensor(rng.integers(0, 5, 16))
    xi = cr.tensor(rng.standard_normal((16, 1, 8, 8)))
    make = dist.SharedBuffer.make
    dist.SharedBuffer.make = staticmethod(across_machines)
    try:
        for dtype, tol in ((cr.float64, 1e-12), (cr.float32, 1e-5)):
            assert equal_to_one_process(mlp, x, y, dtype, rank, world, bucket_cap_mb=0.002) <= tol
            worst = equal_to_one_process(
                cnn, xi, y, dtype, rank, world, accumulate=2, keep_grads=True,
                gradient_as_bucket_view=True, bucket_cap_mb=0.002,
            )  # fmt: skip
            assert worst <= tol
    finally:
        dist.SharedBuffer.make = make
    for dtype, tol in ((cr.float64, 1e-12), (cr.float32, 1e-5)):
        assert equal_to_one_process(mlp, x, y, dtype, rank, world) <= tol
        assert equal_to_one_process(mlp, x, y, dtype, rank, world, bucket_cap_mb=0.002) <= tol
        assert equal_to_one_process(cnn, xi, y, dtype, rank, world) <= tol
        assert equal_to_one_process(mlp, x, y, dtype, rank, world, accumulate=2) <= tol
        for keep, acc in ((False, 1), (True, 1), (True, 2)):  # .grad as slices of buckets
            worst = equal_to_one_process(
                cnn, xi, y, dtype, rank, world, accumulate=acc, keep_grads=keep,
                gradient_as_bucket_view=True, bucket_cap_mb=0.002,
            )  # fmt: skip
            assert worst <= tol
    # rows with x[:, 0] > 0 only in rank 0's half: `extra` is unused on rank 1
    xs = x.numpy().copy()
    xs[:, 0] = np.abs(xs[:, 0]) * np.where(np.arange(16) < 8, 1, -1)
    xu = cr.tensor(xs)
    for dtype, tol in ((cr.float64, 1e-12), (cr.float32, 1e-5)):
        worst = equal_to_one_process(
            TwoHeads, xu, y, dtype, rank, world, find_unused_parameters=True
        )
        assert worst <= tol
    # without find_unused_parameters, a parameter unused everywhere leaves the reduction
    # unfinished, and the next forward says so
    cr.manual_seed(0)
    ddp = DDP(TwoHeads().double())
    F.cross_entropy(ddp(x), y).backward()
    try:
        ddp(x)
    except RuntimeError as e:
        assert "find_unused_parameters=True" in str(e) and "missing: [" in str(e), e
    else:
        raise AssertionError("the unfinished reduction went unnoticed")
    # buffers: rank 0's at construction and at each forward
    bn = nn.Sequential(nn.Linear(20, 4), nn.BatchNorm1d(4)).double()
    with cr.no_grad():
        bn[1].running_mean.fill_(float(rank + 1))
    ddp = DDP(bn)
    assert close(bn[1].running_mean, [1.0] * 4)
    with cr.no_grad():
        bn[1].running_var.fill_(float(rank + 5))
    ddp(x)
    means = [None] * world
    dist.all_gather_object(means, bn[1].running_mean.numpy().copy())
    assert np.array_equal(means[0], means[1])  # from the same buffers, on different data


def job_killed(rank: int, world: int) -> None:
    """Training steps in which rank 1 is killed (SIGKILL, nothing of it runs on) while
    rank 0 waits for its gradients: the job must end, never hang."""
    ddp = DDP(mlp())
    opt = optim.SGD(ddp.parameters(), lr=0.1)
    x, y = cr.randn(8, 20), cr.tensor(np.arange(8) % 5)
    for step in range(10_000):
        if rank == 1 and step == 20:
            os.kill(os.getpid(), signal.SIGKILL)
        opt.zero_grad()
        F.cross_entropy(ddp(x), y).backward()
        opt.step()


if __name__ == "__main__":
    main({"ddp": job_ddp, "killed": job_killed})
