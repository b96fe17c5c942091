"""DataLoader with num_workers > 0: real worker processes, against num_workers=0 and against
PyTorch's DataLoader (which forks its workers too): order, seeds, worker_init_fn,
get_worker_info, errors, prefetch, persistence, laziness and shutdown."""

import itertools
import multiprocessing
import os
import random
import signal
import time
import tracemalloc

import numpy as np
import pytest
import torch.utils.data as tdata

import chainrule as cr
from chainrule.data import (
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    Sampler,
    TensorDataset,
    WeightedRandomSampler,
    get_worker_info,
)


@pytest.fixture(autouse=True)
def no_workers_left():
    """Every test leaves no worker process behind."""
    yield
    assert multiprocessing.active_children() == []


def values(batches):
    """Batches (lists of tensors, tensors, or other values) as nested Python lists."""
    out = []
    for batch in batches:
        if isinstance(batch, (list, tuple)):
            out.append([b.tolist() if hasattr(b, "tolist") else b for b in batch])
        else:
            out.append(batch.tolist() if hasattr(batch, "tolist") else batch)
    return out


class Squares(Dataset):
    """Sample i is (i, i*i as a float), both kinds of loader can read it."""

    def __len__(self):
        return 11

    def __getitem__(self, i):
        return i, float(i * i)


def xy(n=11):
    return TensorDataset(cr.arange(n * 2).reshape(n, 2), cr.arange(n) % 3)


LOADERS = [  # options where num_workers=2 must give num_workers=0's batches
    dict(batch_size=3),
    dict(batch_size=3, drop_last=True),
    dict(batch_size=3, shuffle=True),
    dict(batch_size=None),
    dict(batch_size=None, shuffle=True),
    dict(batch_size=2, sampler=[9, 0, 3, 3, 1, 10, 2]),
    dict(batch_sampler=[[0, 1, 2], [10], [5, 5, 4], [7, 8]]),
    dict(batch_size=4, collate_fn=lambda samples: sum(i for i, _ in samples)),
    dict(batch_size=4, prefetch_factor=1),
    dict(batch_size=1, prefetch_factor=5, in_order=True),
]


@pytest.mark.parametrize("options", LOADERS, ids=lambda o: ",".join(o))
@pytest.mark.parametrize("kind", ["tensors", "samples"])
def test_workers_give_the_single_process_batches(options, kind):
    """The same batches in the same order as num_workers=0, from the same seed."""
    dataset = xy() if kind == "tensors" else Squares()
    single = {k: v for k, v in options.items() if k != "prefetch_factor"}
    cr.manual_seed(5)
    expected = values(DataLoader(dataset, **single))
    cr.manual_seed(5)
    loader = DataLoader(dataset, num_workers=2, **options)
    assert values(loader) == expected
    assert len(loader) == len(expected)


@pytest.mark.parametrize("options", LOADERS[:2] + LOADERS[3:4] + LOADERS[5:7])
def test_workers_match_torch(options):
    """Order, number of batches and drop_last as PyTorch's DataLoader with 2 workers."""
    ours = DataLoader(Squares(), num_workers=2, **options)
    theirs = tdata.DataLoader(Squares(), num_workers=2, **options)
    assert len(ours) == len(theirs)
    assert values(ours) == values(theirs)


class Slow(Dataset):
    """Sample i, the first ones slowest, so later batches are ready first."""

    def __len__(self):
        return 8

    def __getitem__(self, i):
        time.sleep(0.02 * (i < 2))
        return i


def test_batches_come_in_order_or_as_ready():
    """in_order (the default) keeps the sampler's order whichever worker is done first;
    in_order=False yields batches as they are ready, all of them once."""
    assert values(DataLoader(Slow(), 2, num_workers=2)) == [[0, 1], [2, 3], [4, 5], [6, 7]]
    got = values(DataLoader(Slow(), 2, num_workers=2, in_order=False))
    assert sorted(got) == [[0, 1], [2, 3], [4, 5], [6, 7]]


class Report(Dataset):
    """What each worker knows about itself, per sample: its info, its seeds' draws, what
    its worker_init_fn left, and its process id."""

    def __init__(self, torch_side=False):
        self.torch_side = torch_side

    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = (tdata if self.torch_side else cr.data).get_worker_info()
        return {
            "i": i,
            "id": info.id,
            "num_workers": info.num_workers,
            "seed": info.seed,
            "dataset": info.dataset is self,  # this process's copy
            "init": INIT.get("worker"),
            "pid": os.getpid(),
        }


INIT = {}


def remember(worker_id):
    """A worker_init_fn: records its argument and the worker's info in this process."""
    info = get_worker_info() or tdata.get_worker_info()
    INIT["worker"] = worker_id if info.id == worker_id else None


def reports(loader):
    return [
        {k: v.tolist() if hasattr(v, "tolist") else v for k, v in batch.items()} for batch in loader
    ]


def test_worker_info_and_init_fn_match_torch():
    """get_worker_info in a worker gives its id, num_workers, seed and its own copy of the
    dataset; worker_init_fn(id) runs in each worker before its first batch; as PyTorch."""
    ours = reports(DataLoader(Report(), 2, num_workers=2, worker_init_fn=remember))
    theirs = reports(tdata.DataLoader(Report(True), 2, num_workers=2, worker_init_fn=remember))
    for batches in (ours, theirs):
        assert [b["id"] for b in batches] == [[0, 0], [1, 1], [0, 0], [1, 1]]
        assert all(b["num_workers"] == [2, 2] and b["dataset"] == [True, True] for b in batches)
        assert [b["init"] for b in batches] == [[0, 0], [1, 1], [0, 0], [1, 1]]
        seeds = [b["seed"][0] for b in batches]
        assert seeds[1] - seeds[0] == 1 and seeds[2:] == seeds[:2]  # base_seed + id
    assert INIT == {} and get_worker_info() is None  # the main process is untouched


def draws(_):
    """What a worker's generators give: chainrule's global, Python's and NumPy's legacy."""
    info = get_worker_info()
    return (
        info.seed,
        cr.initial_seed(),
        cr.rand(1).item(),
        random.random(),
        np.random.random(),
    )


def test_workers_are_seeded_from_the_loader_generator():
    """base_seed comes from the loader's generator (else the global one), once per
    iterator; worker i seeds chainrule's, Python's and NumPy's generators from base_seed +
    i, so the draws repeat with the seed and differ between workers."""
    ds = TensorDataset(cr.arange(4))

    def run(**options):
        return list(DataLoader(ds, 1, num_workers=2, collate_fn=draws, **options))

    first = run(generator=cr.Generator().manual_seed(3))
    assert run(generator=cr.Generator().manual_seed(3)) == first
    assert run(generator=cr.Generator().manual_seed(4)) != first
    for seed, initial, rand, py, _ in first[:2]:
        assert initial == seed and py == random.Random(seed).random()
        cr.manual_seed(seed)
        assert rand == cr.rand(1).item()
    assert first[0][0] + 1 == first[1][0] and first[0][4] != first[1][4]
    base = int(cr.empty((), dtype=cr.int64).random_(generator=cr.Generator().manual_seed(3)))
    assert [s[0] for s in first] == [base, base + 1, base, base + 1]
    cr.manual_seed(9)
    global_seeded = run()
    cr.manual_seed(9)
    assert run() == global_seeded


class Fails(Dataset):
    def __init__(self, error):
        self.error = error

    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            raise self.error
        return i


def unhold(caught):
    """Let go of a caught exception's traceback, whose frames hold the loader's iterator:
    torch's exception is also a local of a frame of its own traceback, a cycle that only
    the garbage collector would free (its workers then take 10 s to stop); ours is not."""
    caught.value.__traceback__ = None


class TwoArgs(Exception):
    def __init__(self, a, b):
        super().__init__(a, b)


@pytest.mark.parametrize(
    "error",
    [ValueError("bad sample 5"), KeyError("missing"), TwoArgs(1, 2)],
    ids=["ValueError", "KeyError", "custom"],
)
def test_worker_error_is_raised_again_as_torch(error):
    """An exception in a worker comes back of the same type (RuntimeError when the type
    cannot be made from a message), naming the worker and quoting its traceback; the pass
    can go on past it; as in PyTorch."""

    def outcome(loader_class):
        batches = iter(loader_class(Fails(error), 2, num_workers=2))
        got = [next(batches), next(batches)]
        with pytest.raises(Exception) as caught:
            next(batches)
        got.append(next(batches))
        kind, message = caught.type, str(caught.value).strip("'\"")
        unhold(caught)
        del caught  # which holds a traceback through this frame, where it is held
        return kind, message, [[int(v) for v in b] for b in got]

    ours, message, got = outcome(DataLoader)
    assert multiprocessing.active_children() == []  # nothing holds our iterator
    theirs, theirs_message, expected = outcome(tdata.DataLoader)
    assert ours is theirs
    assert got == expected == [[0, 1], [2, 3], [6, 7]]
    assert message.splitlines()[:2] == theirs_message.splitlines()[:2]
    assert (
        message.splitlines()[0] == f"Caught {type(error).__name__} in DataLoader worker process 0."
    )
    assert message.splitlines()[1] == "Original Traceback (most recent call last):"
    assert "in __getitem__" in message and "raise self.error" in message


def broken_init(worker_id):
    raise ValueError(f"init of worker {worker_id} failed")


def test_worker_init_fn_error_is_raised_as_torch():
    def first_error(loader_class):
        with pytest.raises(ValueError) as caught:
            list(loader_class(Squares(), 2, num_workers=2, worker_init_fn=broken_init))
        lines = str(caught.value).splitlines()
        unhold(caught)
        del caught  # which holds a traceback through this frame, where it is held
        return lines

    ours = first_error(DataLoader)
    assert multiprocessing.active_children() == []
    theirs = first_error(tdata.DataLoader)
    assert ours[0] == theirs[0] == "Caught ValueError in DataLoader worker process 0."
    assert ours[-1] == theirs[-1] == "ValueError: init of worker 0 failed"


class Sleepy(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        time.sleep(2)
        return i


def test_timeout_raises_and_shuts_down():
    loader = DataLoader(Sleepy(), 2, num_workers=2, timeout=0.1)
    with pytest.raises(RuntimeError, match=r"DataLoader: timed out after 0.1 seconds"):
        next(iter(loader))


class Dies(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        os._exit(3)


def test_dead_worker_is_reported_as_torch():
    dead = r"worker .*\(pid\(s\) \d+\) exited unexpectedly"
    with pytest.raises(RuntimeError, match=dead + r"; got exit code\(s\) 3$"):
        next(iter(DataLoader(Dies(), 2, num_workers=1)))
    with pytest.raises(RuntimeError, match=dead):
        next(iter(tdata.DataLoader(Dies(), 2, num_workers=1)))


def test_workers_shut_down_when_done_deleted_or_left_by_an_error():
    loader = DataLoader(xy(), 3, num_workers=2)
    batches = iter(loader)
    next(batches)
    assert len(multiprocessing.active_children()) == 2
    del batches  # a pass left half way
    assert multiprocessing.active_children() == []
    with pytest.raises(ValueError, match="the loop's body"):
        for _ in loader:
            raise ValueError("an error in the loop's body")
    assert multiprocessing.active_children() == []
    list(loader)  # a pass to its end


def test_keyboard_interrupt_shuts_the_workers_down():
    """Ctrl-C while waiting for a batch stops the workers, and no process is left."""

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        batches = iter(DataLoader(Sleepy(), 2, num_workers=2))
        with pytest.raises(KeyboardInterrupt):  # raised in here, or pytest would stop
            signal.setitimer(signal.ITIMER_REAL, 0.2)
            next(batches)  # its batch takes 2 s
        assert multiprocessing.active_children() == []
        with pytest.raises(RuntimeError, match="shut down by an earlier error"):
            next(batches)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class Pids(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        return os.getpid()


def test_persistent_workers_serve_every_pass():
    """persistent_workers keeps the same worker processes from one pass to the next, even
    after a pass left half way; without it each pass has new ones."""
    loader = DataLoader(Pids(), 2, num_workers=2, persistent_workers=True)
    first = values(loader)
    next(iter(loader))  # a pass left half way: what it had in flight is dropped
    assert values(loader) == first and len(set(itertools.chain(*first))) == 2
    assert len(multiprocessing.active_children()) == 2
    del loader
    assert multiprocessing.active_children() == []
    fresh = DataLoader(Pids(), 2, num_workers=2)
    assert set(itertools.chain(*values(fresh))).isdisjoint(itertools.chain(*values(fresh)))


class Counting:
    """A stream of 0..4 in each worker's copy, that counts its passes there."""

    passes = 0

    def __iter__(self):
        type(self).passes += 1
        return iter([(i, type(self).passes) for i in range(5)])


class Counted(Counting, IterableDataset):
    pass


class TorchCounted(Counting, tdata.IterableDataset):
    pass


STREAMED = [
    dict(batch_size=2),
    dict(batch_size=2, drop_last=True),
    dict(batch_size=None),
    dict(batch_size=2, persistent_workers=True),
]


@pytest.mark.parametrize(
    "options", STREAMED, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items())
)
def test_each_worker_reads_its_copy_of_a_stream_as_torch(options):
    """Without sharding, every worker reads the whole stream, afresh each pass; the batches
    come from the workers in turn, as PyTorch's."""
    ours = DataLoader(Counted(), num_workers=2, **options)
    theirs = tdata.DataLoader(TorchCounted(), num_workers=2, **options)
    for _ in range(2):
        assert values(ours) == values(theirs)
    assert Counted.passes == TorchCounted.passes == 0  # counted in the workers' copies


class Pulls(Sampler):
    """0, 1, 2, ... without end, counting what was pulled (in the main process)."""

    def __init__(self):
        self.pulled = 0

    def __iter__(self):
        for i in itertools.count():
            self.pulled += 1
            yield i % 7


@pytest.mark.parametrize("num_workers,prefetch_factor", [(0, None), (2, 1), (2, 3)])
def test_indices_are_pulled_as_needed(num_workers, prefetch_factor):
    """A loader pulls from its sampler as it goes: one batch ahead of what was taken
    without workers; prefetch_factor batches per worker in flight with them."""
    sampler = Pulls()
    loader = DataLoader(
        xy(7), 3, sampler=sampler, num_workers=num_workers, prefetch_factor=prefetch_factor
    )
    batches = iter(loader)
    ahead = num_workers * (prefetch_factor or 0)
    assert sampler.pulled == 3 * ahead
    taken = [b[1].tolist() for b in itertools.islice(batches, 3)]
    assert taken == [[0, 1, 2], [0, 1, 2], [0, 0, 1]]  # indices 0..6, 0, 1; y = i % 3
    assert sampler.pulled == 3 * (3 + ahead)
    del batches


@pytest.mark.parametrize("num_workers", [0, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_huge_sampler_is_drawn_lazily(num_workers, weighted):
    """A sampler of 10**10 samples (74.5 GiB as int64) starts at once, in little memory."""
    ds = xy(10)
    if weighted:
        sampler = WeightedRandomSampler(cr.ones(10), 10**10, generator=np.random.default_rng(0))
    else:
        sampler = RandomSampler(ds, replacement=True, num_samples=10**10)
    loader = DataLoader(ds, 4, sampler=sampler, num_workers=num_workers)
    assert len(sampler) == 10**10 and len(loader) == 10**10 // 4
    tracemalloc.start()
    try:
        batches = [b[0].shape for b in itertools.islice(loader, 3)]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert batches == [(4, 2)] * 3
    assert peak < 2**20


def make_leaf(samples):
    return cr.ones(len(samples)).requires_grad_()


def make_graph(samples):
    w = cr.ones(2, requires_grad=True)
    return [w * len(samples)]


def test_tensors_cross_as_arrays_but_graphs_do_not():
    """A batch's tensors arrive as tensors of the same dtype (a leaf keeps requires_grad);
    one with a graph is refused, as PyTorch refuses it."""
    ds = TensorDataset(cr.arange(4, dtype=cr.int64), cr.ones(4, dtype=cr.float64))
    a, b = next(iter(DataLoader(ds, 2, num_workers=1)))
    assert a.dtype == np.int64 and b.dtype == np.float64 and a.grad_fn is None
    leaf = next(iter(DataLoader(ds, 2, num_workers=1, collate_fn=make_leaf)))
    assert leaf.requires_grad and leaf.is_leaf
    with pytest.raises(RuntimeError, match="holds a tensor with grad_fn=.*cannot cross processes"):
        next(iter(DataLoader(ds, 2, num_workers=1, collate_fn=make_graph)))


@pytest.mark.parametrize("context", [None, "spawn"])
def test_multiprocessing_context_is_honoured(context):
    """The workers start by the given method (None: the platform's default); a spawned
    worker unpickles the dataset (here chainrule's own, so it imports nothing else)."""
    loader = DataLoader(
        TensorDataset(cr.arange(4)), 2, num_workers=1, multiprocessing_context=context
    )
    batches = iter(loader)
    kinds = [type(p) for p in multiprocessing.active_children()]
    assert kinds == [multiprocessing.get_context(context).Process]
    assert values(batches) == [[[0, 1]], [[2, 3]]]
