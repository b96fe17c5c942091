"""torch.multiprocessing's names over Python's, and its spawn: one process per rank, a
failure brought back to the parent with the child's traceback."""

import multiprocessing
import os

import pytest

import chainrule as cr
import chainrule.multiprocessing as mp
from tests.utils.ranks import exit_with_code, fail_on_one, write_rank


def test_the_names_are_pythons_and_torchs():
    import torch.multiprocessing as tmp

    assert set(multiprocessing.__all__) <= set(mp.__all__)
    assert mp.Queue is multiprocessing.Queue and mp.get_context is multiprocessing.get_context
    assert set(tmp.__all__) <= set(mp.__all__) | {"get_all_start_methods"}
    assert mp.get_all_sharing_strategies() == tmp.get_all_sharing_strategies()
    mp.set_sharing_strategy("file_system")
    try:
        assert mp.get_sharing_strategy() == "file_system"
    finally:
        mp.set_sharing_strategy("file_descriptor")
    with pytest.raises(ValueError, match="set_sharing_strategy: unknown strategy 'shm'"):
        mp.set_sharing_strategy("shm")


def test_spawn_runs_each_rank(tmp_path):
    assert mp.spawn(write_rank, args=(str(tmp_path), 10.0), nprocs=2) is None
    for rank in (0, 1):
        assert cr.load(tmp_path / f"{rank}.pt").tolist() == [rank, 10.0 + rank, 20.0 + rank]


def test_spawn_without_join_returns_the_context(tmp_path):
    context = mp.spawn(write_rank, args=(str(tmp_path), 1.0), nprocs=2, join=False)
    assert len(context.pids()) == 2
    while not context.join():
        pass
    assert sorted(os.listdir(tmp_path)) == ["0.pt", "1.pt"]


def test_a_rank_that_raises_comes_back_with_its_traceback():
    with pytest.raises(mp.ProcessRaisedException) as info:
        mp.spawn(fail_on_one, nprocs=2)
    assert info.value.error_index == 1
    assert "-- Process 1 terminated with the following error:" in str(info.value)
    assert "ValueError: rank 1 cannot go on" in str(info.value)


def test_a_rank_that_exits_gives_its_code():
    with pytest.raises(mp.ProcessExitedException, match="process 0 terminated with exit code 3"):
        mp.start_processes(exit_with_code, nprocs=1, start_method="fork")


def test_spawn_with_another_start_method_warns_as_torchs(tmp_path):
    with pytest.warns(FutureWarning, match="only supports start_method=spawn"):
        mp.spawn(write_rank, args=(str(tmp_path), 1.0), nprocs=1, start_method="fork")
    assert os.listdir(tmp_path) == ["0.pt"]
