"""Collectives that the ranks call differently raise on every rank, naming each rank's
call (shape, dtype, src or dst, op), instead of giving garbage: real jobs under
``mpiexec -n 2`` (the programs are in mpi_check_jobs.py)."""

from __future__ import annotations

import os

import pytest

import chainrule as cr
import chainrule.distributed as dist
from tests.distributed.test_distributed import HERE, mpiexec

pytest.importorskip("mpi4py")

SCRIPT = str(HERE / "mpi_check_jobs.py")


def run(name: str, **env: str) -> tuple:
    import sys

    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        return mpiexec(sys.executable, SCRIPT, name, timeout=120)
    finally:
        for k, v in saved.items():
            if v is None:
                del os.environ[k]
            else:
                os.environ[k] = v


def test_every_mismatch_raises_on_every_rank_and_the_ranks_stay_in_step() -> None:
    code, out, _ = run("mismatch")
    assert code == 0, out
    for rank in (0, 1):
        assert f"rank {rank} raised 11 mismatches" in out, out
        assert f"ok mismatch rank {rank}" in out, out


def test_an_uncaught_mismatch_ends_the_job_naming_both_calls() -> None:
    code, out, _ = run("uncaught")
    assert code != 0
    assert (
        "RuntimeError: all_reduce: the ranks' calls do not match (they differ in shape); got "
        "rank 0: all_reduce of shape (4,) float32 with op SUM, rank 1: all_reduce of shape (8,) "
        "float32 with op SUM" in out
    ), out
    assert "failed with RuntimeError" in out
    assert "ok uncaught" not in out


def test_the_check_can_be_turned_off() -> None:
    code, out, _ = run("unchecked", CHAINRULE_CHECK_COLLECTIVES="0")
    assert code == 0, out
    assert "ok unchecked rank 0" in out and "ok unchecked rank 1" in out


def test_a_world_of_one_has_no_one_to_disagree_with() -> None:
    dist.init_process_group("mpi")
    try:
        t = cr.ones(3)
        dist.all_reduce(t)
        dist.broadcast(t, src=0)
        assert t.tolist() == [1.0, 1.0, 1.0]
    finally:
        dist.destroy_process_group()


def test_ddp_refuses_buckets_that_differ_between_the_ranks_at_construction() -> None:
    """Two bucket_cap_mb, or a parameter frozen on one rank only: named, with the ranks."""
    code, out, _ = run("ddp_layout")
    assert code == 0, out
    assert "rank 0 refused 3 layouts" in out and "rank 1 refused 3 layouts" in out, out
