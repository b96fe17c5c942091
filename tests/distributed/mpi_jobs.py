"""Programs that test_distributed.py runs under ``mpiexec -n 2``: ``python mpi_jobs.py JOB``.
Each checks its results on every rank with assert (a failure aborts the job, non-zero) and
prints ``ok JOB rank R`` at the end."""

from __future__ import annotations

import sys
import time

import numpy as np

import chainrule as cr
import chainrule.distributed as dist


def close(t: cr.Tensor, expected: object, tol: float = 0.0) -> bool:
    return bool(np.allclose(t.numpy(), np.asarray(expected), rtol=0, atol=tol))


def job_collectives(rank: int, world: int) -> None:
    """Each collective against its definition, blocking and async, for world = 2."""
    R = dist.ReduceOp
    mine = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]]) * (rank + 1) + rank  # (2, 3)
    values = [np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]]) * (r + 1) + r for r in range(world)]
    stacked = np.stack(values)  # (world, 2, 3)
    expected = {
        R.SUM: stacked.sum(0),
        R.AVG: stacked.mean(0),
        R.PRODUCT: stacked.prod(0),
        R.MIN: stacked.min(0),
        R.MAX: stacked.max(0),
    }
    for dtype in (cr.float64, cr.float32):
        for op, want in expected.items():
            t = cr.tensor(mine, dtype=dtype)
            v = t._version
            assert dist.all_reduce(t, op=op) is None
            assert close(t, want, 1e-6) and t._version == v + 1, (op, t, want)
    ints = cr.tensor([0b1100 | rank, 0b1010, rank])
    for op, want in (
        (R.BAND, [0b1100, 0b1010, 0]),
        (R.BOR, [0b1101, 0b1010, 1]),
        (R.BXOR, [1, 0, 1]),
        (R.SUM, [0b11001, 0b10100, 1]),
    ):
        t = ints.clone()
        dist.all_reduce(t, op=op)
        assert t.tolist() == want, (op, t.tolist())
    # a non-contiguous view: the result lands in the tensor it views
    base = cr.tensor(np.arange(12.0).reshape(3, 4) * (rank + 1))
    dist.all_reduce(base[:, 1])
    assert base[:, 1].tolist() == [3.0, 15.0, 27.0] and base[0, 0].item() == 0.0
    # async: started, the work handle completes, the values are in after wait()
    t = cr.tensor(mine)
    work = dist.all_reduce(t, op=R.SUM, async_op=True)
    assert work.wait() is True and work.is_completed()
    assert close(t, expected[R.SUM], 1e-12)
    t = cr.tensor(mine)
    work = dist.all_reduce(t, async_op=True)
    while not work.is_completed():
        time.sleep(0.001)
    assert close(t, expected[R.SUM], 1e-12)
    # broadcast, from each rank
    for src in range(world):
        t = cr.tensor(mine, dtype=cr.float32)
        dist.broadcast(t, src=src)
        assert close(t, values[src], 1e-6)
    b = cr.tensor([[rank + 10, -(2**40)]])  # int64: the bytes travel as they are
    dist.broadcast(b, src=1)
    assert b.tolist() == [[11, -(2**40)]]
    # reduce: the sum on dst, the others unchanged
    for dst in range(world):
        t = cr.tensor(mine)
        dist.reduce(t, dst=dst, op=R.MAX)
        assert close(t, expected[R.MAX] if rank == dst else mine)
    # all_gather, gather, scatter
    outs = [cr.zeros(2, 3, dtype=cr.float64) for _ in range(world)]
    work = dist.all_gather(outs, cr.tensor(mine), async_op=True)
    work.wait()
    assert all(close(o, v) for o, v in zip(outs, values, strict=True))
    gl = [cr.zeros(2, 3, dtype=cr.float64) for _ in range(world)] if rank == 1 else None
    dist.gather(cr.tensor(mine), gl, dst=1)
    if rank == 1:
        assert all(close(o, v) for o, v in zip(gl, values, strict=True))
    t = cr.zeros(2, 3, dtype=cr.float64)
    sl = [cr.tensor(v * 7) for v in values] if rank == 0 else None
    dist.scatter(t, sl, src=0)
    assert close(t, values[rank] * 7)
    # objects
    got = [None] * world
    dist.all_gather_object(got, {"rank": rank, "text": "x" * (rank * 1000)})
    assert got == [{"rank": r, "text": "x" * (r * 1000)} for r in range(world)]
    objs = [rank, "from", {"r": rank}] if rank == 1 else [None, None, None]
    dist.broadcast_object_list(objs, src=1)
    assert objs == [1, "from", {"r": 1}]
    # wrong lists are refused on every rank before anything is sent
    for call, words in (
        (lambda: dist.all_gather([cr.zeros(2, 3)], cr.zeros(2, 3)), "list of 2 tensors"),
        (lambda: dist.gather(cr.zeros(1), [cr.zeros(1)] * 2, dst=(rank + 1) % 2), "must be None"),
        (lambda: dist.broadcast(cr.zeros(1), src=2), "from 0 to 1"),
    ):
        try:
            call()
        except ValueError as e:
            assert words in str(e), e
        else:
            raise AssertionError(words)
    # barrier: nobody leaves before the last one arrives
    start = time.monotonic()
    if rank == 0:
        time.sleep(0.5)
    dist.barrier()
    assert time.monotonic() - start >= 0.45
    dist.barrier(async_op=True).wait()


def job_raise(rank: int, world: int) -> None:
    """Rank 1 fails while rank 0 waits in a collective: the job must end, never hang."""
    if rank == 1:
        time.sleep(0.5)
        raise ValueError("rank 1 gives up")
    t = cr.ones(3)
    dist.all_reduce(t)  # never completes: rank 1 is gone
    time.sleep(60)


def job_timeout(rank: int, world: int) -> None:
    """Rank 0 waits in an all-reduce that rank 1 joins only after the timeout."""
    if rank == 1:
        time.sleep(60)
    dist.all_reduce(cr.ones(3))


def job_shared(rank: int, world: int) -> None:
    """SharedBuffer's all-reduce, for any world size: each position the sum of the ranks'
    values, in the same bits on every rank, for sizes that split unevenly (or not at all)
    over the ranks; the ranks' arrays may be written again at once, and summed again."""
    for dtype in (np.float64, np.float32):
        for n in (0, 1, 5, 1001):
            ramp = np.arange(n) % 7
            shared = dist.SharedBuffer.make(n, dtype)
            assert shared is not None and shared.array.dtype == dtype
            assert shared.array.shape == (n,) and not shared.array.any()
            for step in range(3):
                values = [(ramp + 10 * r + step).astype(dtype) / 3 for r in range(world)]
                shared.array[:] = values[rank]
                shared.all_reduce()
                want = sum(values)
                assert np.allclose(shared.array, want, rtol=1e-6), (n, step)
                everyone: list = [None] * world
                dist.all_gather_object(everyone, shared.array.tobytes())
                assert all(b == everyone[0] for b in everyone)


JOBS = {
    "shared": job_shared,
    "collectives": job_collectives,
    "raise": job_raise,
    "timeout": job_timeout,
}


def main(jobs: dict) -> None:
    """Run the job named by the first argument, the group's timeout in seconds second."""
    import datetime

    job = sys.argv[1]
    timeout = datetime.timedelta(seconds=float(sys.argv[2])) if len(sys.argv) > 2 else None
    dist.init_process_group("mpi", timeout=timeout)
    r, w = dist.get_rank(), dist.get_world_size()
    assert w >= 2, w
    jobs[job](r, w)
    dist.barrier()
    print(f"ok {job} rank {r}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(JOBS)
