"""DistributedDataParallel: a real job under ``mpiexec -n 2`` against one process (the
program is in mpi_ddp_jobs.py), the wrapper, its buckets and their timing in this one
process, where MPI starts as a world of one, and `chainrule train` under ``mpiexec -n 2``."""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest

import chainrule as cr
import chainrule.distributed as dist
from chainrule import nn
from chainrule.nn.parallel import DistributedDataParallel, bucket_assignment
from tests.distributed.test_distributed import job, mpiexec, world  # noqa: F401  (world: the fixture)

pytest.importorskip("mpi4py")


def test_ddp_on_two_ranks_equals_one_process_on_the_whole_batch() -> None:
    """After 3 steps: an MLP, a CNN, small buckets, no_sync accumulation, a parameter
    unused on one rank (find_unused_parameters) to 1e-12 in float64 and 1e-5 in float32;
    the unfinished reduction's error; buffers from rank 0."""
    code, out, _ = job("ddp", script="mpi_ddp_jobs.py")
    assert code == 0, out
    assert "ok ddp rank 0" in out and "ok ddp rank 1" in out


def test_a_rank_killed_in_training_takes_the_job_down() -> None:
    code, out, seconds = job("killed", script="mpi_ddp_jobs.py")
    assert code != 0 and seconds < 30
    assert "ok killed" not in out and "Killed (signal 9)" in out, out


@pytest.mark.parametrize("limits", [[1 << 20, 25 << 20], [4000], [1, 10**9], [10**9]])
def test_buckets_are_pytorchs(limits) -> None:
    """The same grouping as torch's _compute_bucket_assignment_by_size, dtypes mixed."""
    torch = pytest.importorskip("torch")
    import torch.distributed as tdist

    shapes = [(512, 784), (512,), (512, 512), (512,), (10, 512), (10,), (300,), (1000,)]
    ours = [cr.zeros(*s, dtype=cr.float64 if i == 6 else cr.float32) for i, s in enumerate(shapes)]
    theirs = [
        torch.zeros(*s, dtype=torch.float64 if i == 6 else torch.float32)
        for i, s in enumerate(shapes)
    ]
    expected, _ = tdist._compute_bucket_assignment_by_size(theirs, limits, [False] * len(shapes))
    assert bucket_assignment(ours, limits) == expected


@pytest.mark.usefixtures("world")
def test_ddp_wraps_the_module_as_pytorchs() -> None:
    cr.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 2))
    ddp = DistributedDataParallel(model)
    assert ddp.module is model
    assert list(ddp.state_dict()) == ["module." + k for k in model.state_dict()]
    assert [id(p) for p in ddp.parameters()] == [id(p) for p in model.parameters()]
    x = cr.randn(5, 4)
    model.eval()
    assert np.array_equal(ddp(x).numpy(), model(x).numpy())
    ddp.train()
    assert model.training
    with pytest.raises(ValueError, match="device_ids and output_device only work with GPU"):
        DistributedDataParallel(model, device_ids=[0])
    with pytest.raises(ValueError, match="bucket_cap_mb must be positive; got 0"):
        DistributedDataParallel(model, bucket_cap_mb=0)
    with pytest.raises(ValueError, match="only the default group"):
        DistributedDataParallel(model, process_group=object())


def test_ddp_needs_the_process_group() -> None:
    with pytest.raises(ValueError, match="has not been initialized"):
        DistributedDataParallel(nn.Linear(2, 2))


@pytest.mark.usefixtures("world")
def test_buckets_start_while_backward_still_runs(monkeypatch) -> None:
    """Last parameters first, the first bucket 1 MiB by default; each bucket's all-reduce
    starts before the gradients of the earlier layers exist."""
    cr.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)
    )
    ddp = DistributedDataParallel(model)
    buckets = ddp._reducer.buckets
    params = list(model.parameters())
    index = {id(p): i for i, p in enumerate(params)}
    # 10*512 + 10 + 512*512 floats reach 1 MiB with the middle weight; the rest follows
    assert [[index[id(p)] for p in b.params] for b in buckets] == [[5, 4, 3, 2], [1, 0]]
    started = []
    real = dist.all_reduce

    def spy(tensor, *args, **kwargs):
        started.append(model[0].weight.grad is None)  # the first layer's gradient not yet in
        return real(tensor, *args, **kwargs)

    monkeypatch.setattr(dist, "all_reduce", spy)
    loss = ddp(cr.randn(8, 784)).square().mean()
    loss.backward()
    assert started == [True, False]
    assert all(p.grad is not None for p in params)
    # no_sync: nothing starts
    started.clear()
    with ddp.no_sync():
        ddp(cr.randn(8, 784)).sum().backward()
    assert started == []
    # an evaluation between a forward and its backward leaves the averaging to be done
    loss = ddp(cr.randn(8, 784)).sum()
    with cr.no_grad():
        ddp(cr.randn(8, 784))
    loss.backward()
    assert len(started) == 2


@pytest.mark.usefixtures("world")
def test_gradient_as_bucket_view_makes_each_grad_its_slice_of_a_bucket() -> None:
    cr.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 3))
    ref = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 3))
    ref.load_state_dict(model.state_dict())
    ddp = DistributedDataParallel(model, gradient_as_bucket_view=True, bucket_cap_mb=0.00005)
    flats = {id(b.flat._array) for b in ddp._reducer.buckets}
    assert len(flats) > 1
    x = cr.randn(4, 6)
    for zero in ("none", "kept", "by hand", "kept"):
        for m in (model, ref):
            if zero == "by hand":  # each rank's gradient then accumulates in its slice
                for p in m.parameters():
                    p.grad.zero_()
            else:  # zero_grad(set_to_none=False) zeroes in place too
                m.zero_grad(set_to_none=zero == "none")
        held = model[0].weight.grad
        ddp(x).square().sum().backward()
        ref(x).square().sum().backward()
        for p, q in zip(model.parameters(), ref.parameters(), strict=True):
            assert id(p.grad._array.base) in flats
            np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())  # a world of one
        assert (held is model[0].weight.grad) == (zero != "none")
    assert DistributedDataParallel(nn.Linear(2, 2), static_graph=True, check_reduction=True)


# -- the command line under mpiexec ---------------------------------------------------------


def train_under_mpiexec(out, *args: str) -> tuple:
    return mpiexec(sys.executable, "-m", "chainrule", "train", *args, "--out", str(out), "--quiet")


def test_chainrule_train_under_mpiexec_trains_data_parallel(tmp_path) -> None:
    out = tmp_path / "run"
    code, text, _ = train_under_mpiexec(out, "moons", "--epochs", "2")
    assert code == 0, text
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["world_size"] == 2 and len(metrics["history"]) == 2
    assert metrics["settings"]["batch_size"] == 32  # the global batch: 16 a rank
    written = ["curves.png", "decision_boundary.png", "metrics.json", "model.safetensors"]
    assert sorted(os.listdir(out)) == written  # once, by rank 0, no temporary left
    assert text.count("wrote ") == 1 and text.count("test accuracy: ") == 1


def test_one_process_records_a_world_of_one(tmp_path) -> None:
    from chainrule.tools import cli

    assert cli.main(["train", "moons", "--epochs", "1", "--out", str(tmp_path), "--quiet"]) == 0
    assert json.loads((tmp_path / "metrics.json").read_text())["world_size"] == 1


def test_under_mpiexec_the_batch_must_split_evenly(tmp_path) -> None:
    code, text, _ = train_under_mpiexec(tmp_path / "run", "moons", "--batch-size", "33")
    assert code == 2
    assert "--batch-size is the global batch, split evenly over the 2 processes; got 33" in text
    assert not (tmp_path / "run" / "metrics.json").exists()  # nothing written


@pytest.mark.slow
def test_digits_mlp_reaches_its_goal_on_two_ranks(tmp_path) -> None:
    """The recipe at its defaults, data-parallel, as good as in one process (test_cli's
    goal); a recipe with a loop of its own is refused."""
    from test_cli import GOALS

    out = tmp_path / "run"
    code, text, _ = train_under_mpiexec(out, "digits-mlp")
    assert code == 0, text
    metrics = json.loads((out / "metrics.json").read_text())
    metric, goal = GOALS["digits-mlp"]
    assert metrics["world_size"] == 2 and metrics["final"][metric] >= goal
    code, text, _ = train_under_mpiexec(tmp_path / "names", "names", "--steps", "2")
    assert code == 2 and "the names recipe trains in one process only; got 2" in text


def test_under_mpiexec_only_rank_0_logs_for_tensorboard(tmp_path) -> None:
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    tb = tmp_path / "tb"
    code, text, _ = train_under_mpiexec(tmp_path / "run", "moons", "--epochs", "2",
                                        "--tensorboard", str(tb))  # fmt: skip
    assert code == 0, text
    assert len(os.listdir(tb)) == 1  # one event file: rank 0's
    acc = EventAccumulator(str(tb), size_guidance={"scalars": 0})
    acc.Reload()
    assert [e.step for e in acc.Scalars("epoch/test_accuracy")] == [1, 2]
