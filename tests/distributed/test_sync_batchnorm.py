"""SyncBatchNorm under chainrule's distributed: a real job of two processes
(mpi_sync_batchnorm_jobs.py) refuses training, naming the group's size."""

from __future__ import annotations

import pytest

from tests.distributed.test_distributed import job

pytest.importorskip("mpi4py")


@pytest.mark.slow  # a job of two processes: ~8 s
def test_sync_batchnorm_refuses_to_train_in_a_group_of_two() -> None:
    code, out, _ = job("sync_bn", script="mpi_sync_batchnorm_jobs.py")
    assert code == 0, out
    assert "ok sync_bn rank 0" in out and "ok sync_bn rank 1" in out, out
