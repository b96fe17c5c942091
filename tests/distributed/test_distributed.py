"""chainrule.distributed and DistributedSampler: real jobs under
``mpiexec -n 2`` (the programs are in mpi_jobs.py), and the API in this one process, where
MPI starts as a world of one."""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import chainrule as cr
import chainrule.distributed as dist
from chainrule.data import DistributedSampler

pytest.importorskip("mpi4py")

HERE = Path(__file__).resolve().parent
MPIEXEC = str(Path(sys.executable).parent / "mpiexec")


def mpiexec(*args: str, timeout: float = 240, cwd: Path | None = None, ranks: int = 2) -> tuple:
    """Run ``mpiexec -n RANKS ARGS``; (return code, stdout + stderr, seconds)."""
    start = time.monotonic()
    done = subprocess.run(
        [MPIEXEC, "-n", str(ranks), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    return done.returncode, done.stdout + done.stderr, time.monotonic() - start


def job(name: str, *extra: str, script: str = "mpi_jobs.py", ranks: int = 2) -> tuple:
    return mpiexec(sys.executable, str(HERE / script), name, *extra, ranks=ranks)


# -- two ranks ----------------------------------------------------------------------------


def test_every_collective_matches_its_definition_on_two_ranks() -> None:
    """all_reduce (each op, float and int, a strided view, async), broadcast (int64 too),
    reduce, all_gather, gather, scatter, the object collectives, barrier, wrong lists."""
    code, out, _ = job("collectives")
    assert code == 0, out
    assert "ok collectives rank 0" in out and "ok collectives rank 1" in out


@pytest.mark.parametrize("ranks", [2, 3])
def test_shared_memory_sums_match_on_every_rank(ranks) -> None:
    code, out, _ = job("shared", ranks=ranks)
    assert code == 0, out
    assert all(f"ok shared rank {r}" in out for r in range(ranks))


def test_a_rank_that_raises_takes_the_job_down_naming_itself() -> None:
    code, out, seconds = job("raise")
    assert code != 0
    assert seconds < 30
    assert "ValueError: rank 1 gives up" in out
    assert "rank 1 of 2 failed with ValueError" in out
    assert "ok raise" not in out


def test_a_collective_past_the_timeout_aborts_the_job() -> None:
    code, out, seconds = job("timeout", "2")
    assert code != 0
    assert seconds < 30
    assert "rank 0 of 2: all_reduce did not finish within the timeout (0:00:02)" in out


# -- one process: a world of one ----------------------------------------------------------


@pytest.fixture
def world():
    hook = sys.excepthook
    dist.init_process_group("gloo", init_method="env://")
    yield
    if dist.is_initialized():
        dist.destroy_process_group()
    assert sys.excepthook is hook


def test_a_world_of_one(world) -> None:
    assert dist.is_available() and dist.is_initialized()
    assert (dist.get_rank(), dist.get_world_size()) == (0, 1)
    assert sys.excepthook is not sys.__excepthook__
    t = cr.tensor([1.0, -2.0, 3.0])
    for op in dist.ReduceOp:
        if op in (dist.ReduceOp.BAND, dist.ReduceOp.BOR, dist.ReduceOp.BXOR):
            continue
        dist.all_reduce(t, op=op)
        assert t.tolist() == [1.0, -2.0, 3.0]
    work = dist.broadcast(t, src=0, async_op=True)
    assert work.wait() and work.is_completed()
    outs = [cr.zeros(3)]
    dist.all_gather(outs, t)
    assert outs[0].tolist() == t.tolist()
    objs = [None]
    dist.all_gather_object(objs, {"a": 1})
    assert objs == [{"a": 1}]
    assert dist.SharedBuffer.make(4, cr.float32) is None  # nothing to share with


def test_init_process_group_refuses_what_mpi_cannot_be(world) -> None:
    dist.destroy_process_group()
    assert not dist.is_initialized()
    for kwargs, words in (
        ({"backend": "nccl"}, "backend must be 'mpi'"),
        ({"init_method": "tcp://127.0.0.1:23456"}, "init_method must be None or 'env://'"),
        (
            {"world_size": 2},
            "world_size comes from the MPI launcher, which says 1; got world_size=2",
        ),
        ({"rank": 1}, "rank comes from the MPI launcher, which says 0; got rank=1"),
    ):
        with pytest.raises(ValueError, match="init_process_group: " + words.split(";")[0]):
            dist.init_process_group(**kwargs)
        assert not dist.is_initialized()
    with pytest.raises(TypeError, match="timeout must be a datetime.timedelta; got int"):
        dist.init_process_group(timeout=30)
    dist.init_process_group(timeout=datetime.timedelta(seconds=5))
    with pytest.raises(RuntimeError, match="already initialized"):
        dist.init_process_group()


def test_collectives_check_their_arguments(world) -> None:
    with pytest.raises(ValueError, match="broadcast: src must be a rank from 0 to 0; got src=1"):
        dist.broadcast(cr.zeros(2), src=1)
    with pytest.raises(ValueError, match="broadcast: src must be a rank"):
        dist.broadcast(cr.zeros(2))
    with pytest.raises(TypeError, match="all_reduce: ReduceOp.AVG needs a floating-point"):
        dist.all_reduce(cr.tensor([1, 2]), op=dist.ReduceOp.AVG)
    with pytest.raises(TypeError, match="all_reduce: BAND needs an integer or bool tensor"):
        dist.all_reduce(cr.zeros(2), op=dist.ReduceOp.BAND)
    with pytest.raises(TypeError, match="all_reduce: tensor must be a Tensor; got list"):
        dist.all_reduce([1.0])
    with pytest.raises(RuntimeError, match="all_reduce: the tensor .* is a read-only view"):
        dist.all_reduce(cr.zeros(1).expand(3))
    with pytest.raises(ValueError, match="all_gather: tensor_list\\[0\\] must have the tensor's"):
        dist.all_gather([cr.zeros(3)], cr.zeros(2))
    with pytest.raises(ValueError, match="only the default group \\(group=None\\)"):
        dist.barrier(group="mine")
    with pytest.raises(ValueError, match="broadcast_object_list: the only device is the CPU"):
        dist.broadcast_object_list([1], src=0, device="cuda")


def test_before_init_the_group_calls_say_to_init() -> None:
    assert not dist.is_initialized()
    for call in (dist.get_rank, dist.get_world_size, lambda: dist.all_reduce(cr.zeros(1))):
        with pytest.raises(ValueError, match="has not been initialized; call init_process_group"):
            call()


def test_without_mpi4py_import_works_and_init_says_what_to_install(monkeypatch) -> None:
    code = "import sys, chainrule; assert 'mpi4py' not in sys.modules; print('fine')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "fine", done.stderr
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    assert not dist.is_available()
    with pytest.raises(ImportError, match='pip install "chainrule\\[mpi\\]"'):
        dist.init_process_group()


def test_the_world_size_comes_from_the_launcher_variables(monkeypatch) -> None:
    for name in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "MV2_COMM_WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)
    assert dist.launched_world_size() == 1
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "4")
    assert dist.launched_world_size() == 4
    monkeypatch.setenv("PMI_SIZE", "3")
    assert dist.launched_world_size() == 3


# -- DistributedSampler -------------------------------------------------------------------


CASES = [(n, r, drop) for n in (0, 1, 7, 10, 13) for r in (1, 2, 3, 4) for drop in (False, True)]


@pytest.mark.parametrize("n,replicas,drop_last", CASES)
def test_distributed_sampler_is_pytorchs_without_shuffle(n, replicas, drop_last) -> None:
    from torch.utils.data import DistributedSampler as TorchSampler

    for rank in range(replicas):
        ours = DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = TorchSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(ours) == list(theirs)
        assert len(ours) == len(theirs) and ours.total_size == theirs.total_size


def test_distributed_sampler_shuffles_one_order_split_over_the_ranks() -> None:
    n, replicas = 23, 3
    samplers = [DistributedSampler(range(n), replicas, r, seed=5) for r in range(replicas)]
    shares = [list(s) for s in samplers]
    assert all(len(s) == 8 for s in shares)  # 23 padded to 24
    assert set().union(*shares) == set(range(n))
    assert sum(len(s) for s in shares) == 24  # one index twice: the padding
    again = [list(DistributedSampler(range(n), replicas, r, seed=5)) for r in range(replicas)]
    assert again == shares  # deterministic per seed, on every rank alike
    assert shares != [list(range(r, 24, replicas)) for r in range(replicas)]  # shuffled
    for s in samplers:
        s.set_epoch(1)
    epoch1 = [list(s) for s in samplers]
    assert epoch1 != shares and set().union(*epoch1) == set(range(n))
    other = [list(DistributedSampler(range(n), replicas, r, seed=6)) for r in range(replicas)]
    assert other != shares
    dropped = [
        list(DistributedSampler(range(n), replicas, r, drop_last=True)) for r in range(replicas)
    ]
    flat = sum(dropped, [])
    assert len(flat) == len(set(flat)) == 21


def test_distributed_sampler_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="rank must be in the interval \\[0, 1\\]; got rank=2"):
        DistributedSampler(range(4), num_replicas=2, rank=2)
    with pytest.raises(RuntimeError, match="not initialized"):
        DistributedSampler(range(4))


def test_distributed_sampler_takes_the_world_from_the_group(world) -> None:
    s = DistributedSampler(range(5), shuffle=False)
    assert (s.num_replicas, s.rank, list(s)) == (1, 0, [0, 1, 2, 3, 4])
