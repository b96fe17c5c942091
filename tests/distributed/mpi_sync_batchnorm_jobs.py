"""The program test_sync_batchnorm.py runs under ``mpiexec -n 2``: SyncBatchNorm in a group of
two processes refuses to train (its statistics would need collectives inside the layer), and
evaluates as BatchNorm from its running statistics. Prints ``ok sync_bn rank R`` (mpi_jobs.main)."""

from __future__ import annotations

from mpi_jobs import main

import chainrule as cr


def job_sync_bn(rank: int, world: int) -> None:
    layer = cr.nn.SyncBatchNorm(3)
    try:
        layer(cr.ones(4, 3, 2))
    except RuntimeError as e:
        assert f"got a process group of {world} processes in training" in str(e), e
    else:
        raise AssertionError(f"rank {rank}: SyncBatchNorm trained in a group of {world}")
    layer.eval()
    out = layer(cr.ones(4, 3, 2))  # the running statistics: mean 0, variance 1
    assert cr.allclose(out, cr.ones(4, 3, 2) / (1 + 1e-5) ** 0.5), out


if __name__ == "__main__":
    main({"sync_bn": job_sync_bn})
