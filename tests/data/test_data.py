"""Dataset, TensorDataset, DataLoader, default_collate and random_split (torch as oracle)."""

import gc
import inspect
import itertools
import multiprocessing
import warnings
from collections import namedtuple

import numpy as np
import pytest
import torch
import torch.utils.data as tdata

import chainrule as cr
from chainrule.data import (
    DataLoader,
    Dataset,
    IterableDataset,
    Subset,
    TensorDataset,
    default_collate,
    default_convert,
    random_split,
)


def xy(n=10):
    x = cr.tensor(np.arange(n * 3, dtype=np.float32).reshape(n, 3))
    return x, cr.tensor(np.arange(n) % 3)


def as_lists(batches):
    return [[b.numpy().tolist() for b in batch] for batch in batches]


def paired(n, kind="tensors"):
    """The same n samples as a dataset for chainrule and one for torch: TensorDatasets of
    xy(n), or (kind "samples", n = 7) one SevenSquares both loaders read."""
    if kind == "samples":
        samples = SevenSquares()
        return samples, samples
    x, y = xy(n)
    return TensorDataset(x, y), tdata.TensorDataset(
        torch.tensor(x.numpy()), torch.tensor(y.numpy())
    )


def test_tensor_dataset():
    x, y = xy()
    ds = TensorDataset(x, y)
    assert len(ds) == 10
    xi, yi = ds[4]
    np.testing.assert_array_equal(xi.numpy(), [12, 13, 14])
    assert yi.item() == 1 and yi.dtype == np.int64
    arrays = TensorDataset(np.zeros((4, 2)), [[1], [2], [3], [4]])
    assert arrays[3][1].tolist() == [4]


def test_tensor_dataset_errors():
    with pytest.raises(ValueError, match=r"same size in dim 0; got shapes \[\(10, 3\), \(4,\)\]"):
        TensorDataset(xy()[0], cr.zeros(4))
    with pytest.raises(ValueError, match="at least one tensor"):
        TensorDataset()


def test_loader_in_order_matches_torch():
    ours_ds, theirs_ds = paired(10)
    ours = DataLoader(ours_ds, batch_size=4)
    theirs = tdata.DataLoader(theirs_ds, batch_size=4)
    assert len(ours) == len(theirs) == 3
    got = list(ours)
    assert all(isinstance(b, list) for b in got)
    assert as_lists(got) == as_lists(theirs)
    assert got[0][0].dtype == np.float32 and got[0][1].dtype == np.int64


def test_drop_last():
    loader = DataLoader(TensorDataset(*xy(10)), batch_size=4, drop_last=True)
    batches = list(loader)
    assert len(loader) == len(batches) == 2
    assert [b[0].shape for b in batches] == [(4, 3), (4, 3)]


def test_shuffle_is_seeded_by_manual_seed():
    loader = DataLoader(TensorDataset(*xy(10)), batch_size=3, shuffle=True)
    cr.manual_seed(7)
    first = as_lists(loader)
    second = as_lists(loader)
    cr.manual_seed(7)
    assert as_lists(loader) == first
    assert second != first  # a fresh permutation each pass
    rows = [r for batch in first for r in batch[1]]
    assert sorted(r[0] for batch in first for r in batch[0]) == list(range(0, 30, 3))
    assert len(rows) == 10


def test_shuffle_with_own_generator():
    ds = TensorDataset(*xy(10))
    a = as_lists(DataLoader(ds, 4, shuffle=True, generator=np.random.default_rng(3)))
    b = as_lists(DataLoader(ds, 4, shuffle=True, generator=np.random.default_rng(3)))
    rng = np.random.default_rng(3)
    rng.integers(2**63)  # the loader's base seed, drawn first
    order = rng.permutation(10)
    assert a == b
    np.testing.assert_array_equal([r[0] / 3 for batch in a for r in batch[0]], order)


@pytest.mark.parametrize("subset", [False, True])
def test_fast_path_equals_per_sample_collation(subset):
    ds = TensorDataset(*xy(13))
    if subset:
        ds = Subset(Subset(ds, list(range(12, 0, -1))), [0, 5, 2, 7, 9, 1, 3])
    fast = DataLoader(ds, 2, shuffle=True, generator=np.random.default_rng(0))
    slow = DataLoader(
        ds, 2, shuffle=True, generator=np.random.default_rng(0), collate_fn=default_collate
    )
    assert as_lists(fast) == as_lists(slow)
    assert len(list(fast)) == (4 if subset else 7)


def test_default_collate_kinds():
    Point = namedtuple("Point", "x y")
    samples = [
        {
            "t": cr.tensor([i, i + 1.0]),
            "a": np.full(2, i, dtype=np.int32),
            "i": i,
            "f": i / 2,
            "b": i % 2 == 0,
            "s": f"#{i}",
            "p": Point(i, float(i)),
            "n": np.float64(i),
        }
        for i in range(3)
    ]
    batch = default_collate(samples)
    assert batch["t"].shape == (3, 2) and batch["t"].dtype == np.float32
    assert batch["a"].dtype == np.int32 and batch["a"].shape == (3, 2)
    assert batch["i"].dtype == np.int64 and batch["i"].tolist() == [0, 1, 2]
    assert batch["f"].dtype == np.float32 and batch["f"].tolist() == [0, 0.5, 1]
    assert batch["b"].dtype == np.bool_ and batch["b"].tolist() == [True, False, True]
    assert batch["s"] == ["#0", "#1", "#2"]
    assert isinstance(batch["p"], Point) and batch["p"].x.dtype == np.int64
    assert batch["n"].dtype == np.float64
    # The same structure and shapes as torch's collate (which makes Python floats float64).
    theirs = tdata.default_collate(
        [
            {k: torch.tensor(v.numpy()) if isinstance(v, cr.Tensor) else v for k, v in s.items()}
            for s in samples
        ]
    )
    assert set(theirs) == set(batch)
    for key in ("t", "a", "i", "b", "n"):
        np.testing.assert_array_equal(batch[key].numpy(), np.asarray(theirs[key]))


def test_default_collate_keeps_the_graph():
    w = cr.ones(2, requires_grad=True)
    batch = default_collate([(w * 2, 0), (w * 3, 1)])
    batch[0].sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [5, 5])
    with pytest.raises(ValueError, match=r"differ in length; got lengths \[1, 2\]"):
        default_collate([(1, 2), (3,)])


def test_custom_dataset_and_collate_fn():
    class Squares(Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return float(i), i * i

    loader = DataLoader(Squares(), batch_size=2)
    assert [b[1].tolist() for b in loader] == [[0, 1], [4, 9], [16]]
    summed = DataLoader(Squares(), batch_size=5, collate_fn=lambda s: sum(v for _, v in s))
    assert list(summed) == [30]
    with pytest.raises(NotImplementedError, match="must define __len__"):
        len(Dataset())


class SevenSquares(Dataset):
    def __len__(self):
        return 7

    def __getitem__(self, i):
        return i, float(i * i)


SAMPLING = [  # loader options, on a TensorDataset and on a Dataset of samples
    dict(sampler=[6, 0, 3, 3, 1], batch_size=2),
    dict(sampler=(4, 5, 6), batch_size=2, drop_last=True),
    dict(batch_sampler=[[0, 1, 2], [6], [5, 5, 4]]),
    dict(batch_size=3, num_workers=2, pin_memory=True),
]


@pytest.mark.parametrize("options", SAMPLING)
@pytest.mark.parametrize("kind", ["tensors", "samples"])
def test_samplers_and_worker_options_match_torch(options, kind):
    """sampler and batch_sampler pick the batches as PyTorch's do; num_workers (worker
    processes) and pin_memory change nothing of what comes out."""
    ours_ds, theirs_ds = paired(7, kind)
    theirs_options = {k: v for k, v in options.items() if k not in ("num_workers", "pin_memory")}
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "DataLoader: pin_memory", UserWarning)
        ours = DataLoader(ours_ds, **options)
    theirs = tdata.DataLoader(theirs_ds, **theirs_options)
    assert len(ours) == len(theirs)
    for _ in range(2):  # a sampler is read afresh each pass
        assert as_lists(ours) == as_lists(theirs)


def test_loader_errors():
    ds = TensorDataset(*xy())
    with pytest.raises(ValueError, match="batch_size must be a positive int or None; got 0"):
        DataLoader(ds, batch_size=0)
    with pytest.raises(ValueError, match="batch_size=None turns batching off, so drop_last"):
        DataLoader(ds, batch_size=None, drop_last=True)
    with pytest.raises(ValueError, match="batch_sampler is mutually exclusive with"):
        DataLoader(ds, batch_size=None, batch_sampler=[[0, 1]])
    with pytest.raises(TypeError, match="generator must be a numpy.random.Generator or None"):
        DataLoader(ds, shuffle=True, generator=42)
    with pytest.raises(ValueError, match="num_workers must be a non-negative int; got -1"):
        DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError, match="sampler is mutually exclusive with shuffle"):
        DataLoader(ds, sampler=[0, 1], shuffle=True)
    for bad in (dict(batch_size=2), dict(shuffle=True), dict(drop_last=True)):
        with pytest.raises(ValueError, match="batch_sampler is mutually exclusive with"):
            DataLoader(ds, batch_sampler=[[0, 1]], **bad)


WORKER_OPTIONS = [  # PyTorch's worker-only options, the one under test first
    dict(timeout=0),
    dict(timeout=2.5, num_workers=2),
    dict(timeout=-1),
    dict(timeout=-0.5, num_workers=2),
    dict(timeout=5),  # accepted, then refused when iterating: no worker to wait for
    dict(timeout="1"),
    dict(timeout=None),
    dict(worker_init_fn=abs),
    dict(worker_init_fn=abs, num_workers=2),
    dict(multiprocessing_context=None),
    dict(multiprocessing_context="fork", num_workers=2),
    dict(multiprocessing_context=multiprocessing.get_context("fork"), num_workers=1),
    dict(multiprocessing_context="fork"),
    dict(multiprocessing_context="bogus", num_workers=2),
    dict(multiprocessing_context=42, num_workers=2),
    dict(prefetch_factor=None),
    dict(prefetch_factor=2),
    dict(prefetch_factor=None, num_workers=2),  # stored as 2
    dict(prefetch_factor=4, num_workers=2),
    dict(prefetch_factor=-1, num_workers=2),
    dict(prefetch_factor=0, num_workers=2),  # accepted, then refused when iterating
    dict(prefetch_factor="2", num_workers=2),
    dict(persistent_workers=False),
    dict(persistent_workers=True),
    dict(persistent_workers=True, num_workers=2),
    dict(pin_memory_device="cuda"),
    dict(pin_memory_device="cuda", pin_memory=True, num_workers=2),
    dict(in_order=False),
    dict(in_order=False, num_workers=2),
]
WORKER_ATTRS = (
    "num_workers",
    "pin_memory",
    "timeout",
    "worker_init_fn",
    "multiprocessing_context",
    "prefetch_factor",
    "persistent_workers",
    "pin_memory_device",
    "in_order",
)


def two_passes(make):
    """The loader and its batches over two passes, or the exception and None."""
    try:
        loader = make()
        return loader, as_lists(loader) + as_lists(loader)
    except Exception as e:  # noqa: BLE001 - the kind of error is what is compared
        # torch's worker iterator that failed half-made complains when collected: let it do
        # so now, inside this test, whose marks silence it, not in whichever test runs next
        gc.collect()
        return e, None


@pytest.mark.filterwarnings("ignore::UserWarning")  # torch: no accelerator for pin_memory
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize(
    "options",
    WORKER_OPTIONS,
    ids=lambda options: ",".join(
        f"{k}={v!r}" if isinstance(v, (int, float, str, type(None))) else f"{k}={type(v).__name__}"
        for k, v in options.items()
    ),
)
def test_worker_options_accepted_or_refused_as_torch(options):
    """Each worker option is accepted or refused (same exception type, at construction or
    on iterating) as by PyTorch's DataLoader, which here runs real worker processes; when
    accepted, the stored options and the batches equal PyTorch's."""
    ours_ds, theirs_ds = paired(7)
    ours, got = two_passes(lambda: DataLoader(ours_ds, 3, **options))
    theirs, expected = two_passes(lambda: tdata.DataLoader(theirs_ds, 3, **options))
    if isinstance(theirs, Exception):
        assert type(ours) is type(theirs), f"ours: {ours!r}; torch: {theirs!r}"
        name, value = next(iter(options.items()))
        assert str(ours).startswith("DataLoader: ") and name in str(ours)
        assert repr(value) in str(ours)
    else:
        assert isinstance(ours, DataLoader), f"ours refused: {ours!r}"
        assert {a: getattr(ours, a) for a in WORKER_ATTRS} == {
            a: getattr(theirs, a) for a in WORKER_ATTRS
        }
        if options.get("in_order", True):
            assert got == expected
        else:  # PyTorch's workers may then hand batches back in any order
            assert sorted(got) == sorted(expected)


def test_worker_init_fn_is_not_called_without_workers():
    """With num_workers=0 there is no worker, so no worker_init_fn call, as in PyTorch
    (tests/data/test_dataloader_workers.py has the calls in workers)."""
    calls = []
    assert len(list(DataLoader(TensorDataset(*xy(7)), 3, worker_init_fn=calls.append))) == 3
    list(tdata.DataLoader(tdata.TensorDataset(torch.zeros(7)), 3, worker_init_fn=calls.append))
    assert calls == []


def test_signature_matches_torch():
    """Every option at PyTorch's position (so positional calls mean the same), of the same
    kind and with PyTorch's default."""
    ours = inspect.signature(DataLoader).parameters
    theirs = inspect.signature(tdata.DataLoader).parameters
    assert [(p.name, p.kind, p.default) for p in ours.values()] == [
        (p.name, p.kind, p.default) for p in theirs.values()
    ]


def plain(x):
    """A loader's output, chainrule's or torch's, as comparable Python values: each tensor
    as ("tensor", dtype name, values), containers kept as their own types."""
    if isinstance(x, (cr.Tensor, torch.Tensor)):
        dtype = str(x.dtype).replace("torch.", "chainrule.")
        return ("tensor", dtype, x.numpy().tolist())
    if isinstance(x, dict):
        return type(x), {k: plain(v) for k, v in x.items()}
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x), [plain(v) for v in x]
    if isinstance(x, (list, tuple)):
        return type(x), [plain(v) for v in x]
    if isinstance(x, np.ndarray):
        return "array", x.dtype.str, x.tolist()
    return type(x), x


Pair = namedtuple("Pair", "a b")


class Listed(list):
    """A list subclass: default_convert keeps the type (a copy, updated in place)."""


CONVERTED = [  # samples default_convert meets, torch's conversion as the oracle
    np.arange(3, dtype=np.int32),
    np.float64(1.5),
    np.bool_(True),
    np.array(2.0, np.float32),
    np.ones((2, 2)),
    7,
    2.5,
    "text",
    b"raw",
    None,
    np.array(["a", "b"]),
    np.array([{}, 1], dtype=object),
    np.str_("s"),
    (np.zeros(2), 3),
    [np.ones(1), "x"],
    Listed([np.int64(4)]),
    range(3),
    {"x": np.arange(2), "y": (np.float32(1), [np.zeros(1)])},
    Pair(np.arange(2), 5),
]


@pytest.mark.parametrize("sample", CONVERTED, ids=lambda s: type(s).__name__)
def test_default_convert_matches_torch(sample):
    """What an unbatched DataLoader yields for each kind of sample: NumPy numbers become
    tensors, tuples lists, the rest keeps its structure and type, as in PyTorch."""
    ours, theirs = default_convert(sample), tdata.default_convert(sample)
    assert plain(ours) == plain(theirs)
    if isinstance(sample, np.ndarray) and sample.dtype.kind in "if":
        assert np.shares_memory(ours.numpy(), sample)  # as torch.as_tensor: no copy


class Mixed(Dataset):
    """Samples of several kinds, by index."""

    def __len__(self):
        return 5

    def __getitem__(self, i):
        return {"x": np.full(2, i, np.float32), "i": i, "pair": (np.int64(i), f"#{i}")}


UNBATCHED = [  # options of an unbatched loader (batch_size=None)
    dict(),
    dict(sampler=[4, 0, 2, 2]),
    dict(collate_fn=lambda sample: sample["i"] * 10 if isinstance(sample, dict) else sample),
]


@pytest.mark.parametrize("options", UNBATCHED, ids=["plain", "sampler", "collate_fn"])
@pytest.mark.parametrize("kind", ["tensors", "samples"])
def test_unbatched_loader_matches_torch(options, kind):
    """batch_size=None yields one sample at a time, through collate_fn or default_convert,
    in the sampler's order, as PyTorch's DataLoader does."""
    ours_ds, theirs_ds = paired(5) if kind == "tensors" else (Mixed(), Mixed())
    ours = DataLoader(ours_ds, batch_size=None, **options)
    theirs = tdata.DataLoader(theirs_ds, batch_size=None, **options)
    assert ours.batch_size is None
    assert len(ours) == len(theirs)
    for _ in range(2):
        assert [plain(s) for s in ours] == [plain(s) for s in theirs]


def test_unbatched_shuffle_is_a_seeded_permutation():
    loader = DataLoader(TensorDataset(cr.arange(9)), batch_size=None, shuffle=True)
    cr.manual_seed(4)
    first = [int(s[0].item()) for s in loader]
    cr.manual_seed(4)
    assert [int(s[0].item()) for s in loader] == first
    assert sorted(first) == list(range(9)) and first != list(range(9))


def test_batch_sampler_stores_no_batch_size():
    """With a batch_sampler, batch_size reads None and drop_last False, as in PyTorch."""
    ds = TensorDataset(*xy(4))
    ours = DataLoader(ds, batch_sampler=[[0, 1], [3]])
    theirs = tdata.DataLoader(tdata.TensorDataset(torch.zeros(4)), batch_sampler=[[0, 1], [3]])
    assert (
        (ours.batch_size, ours.drop_last) == (theirs.batch_size, theirs.drop_last) == (None, False)
    )
    assert len(ours) == 2 and [b[1].tolist() for b in ours] == [[0, 1], [0]]


def stream(base, sized):
    """An IterableDataset class on ``base`` (chainrule's or torch's) that yields 7 samples,
    with a __len__ if ``sized``, and counts its passes."""

    class Stream(base):
        passes = 0

        def __iter__(self):
            type(self).passes += 1
            return iter((i, np.float32(i) / 2) for i in range(7))

    if sized:
        Stream.__len__ = lambda self: 7
    return Stream()


STREAMED = [  # loader options over an IterableDataset
    dict(batch_size=3),
    dict(batch_size=3, drop_last=True),
    dict(batch_size=7, drop_last=True),
    dict(batch_size=10),
    dict(batch_size=None),
    dict(batch_size=2, collate_fn=lambda batch: sum(i for i, _ in batch)),
    dict(batch_size=3, shuffle=False),
    dict(batch_size=3, shuffle=True),
    dict(sampler=[0, 1]),
    dict(batch_sampler=[[0, 1]]),
    dict(batch_size=None, drop_last=True),
]


@pytest.mark.parametrize(
    "options",
    STREAMED,
    ids=lambda o: ",".join(
        f"{k}={v!r}" if isinstance(v, (int, list, type(None))) else k for k, v in o.items()
    ),
)
@pytest.mark.parametrize("sized", [True, False], ids=["sized", "unsized"])
def test_iterable_dataset_matches_torch(options, sized):
    """An IterableDataset is read afresh each pass, in its own order, batch_size samples a
    batch; options that would reorder it are refused (ValueError), and len() needs the
    dataset's own, as in PyTorch."""

    def run(base, loader_class):
        ds = stream(base, sized)
        try:
            loader = loader_class(ds, **options)
        except ValueError as e:
            return e, None, None
        try:
            length = len(loader)
        except TypeError as e:
            length = type(e)
        return loader, length, [plain(b) for _ in range(2) for b in loader] + [type(ds).passes]

    ours, ours_len, got = run(IterableDataset, DataLoader)
    theirs, theirs_len, expected = run(tdata.IterableDataset, tdata.DataLoader)
    if isinstance(theirs, ValueError):
        assert isinstance(ours, ValueError), f"ours accepted {options}"
        assert str(ours).startswith("DataLoader: ")
        return
    assert ours_len == theirs_len
    assert got == expected


def test_iterable_dataset_protocol():
    with pytest.raises(NotImplementedError, match="must define __iter__"):
        iter(IterableDataset())
    with pytest.raises(NotImplementedError, match="iterate over it, not index it"):
        stream(IterableDataset, True)[0]
    with pytest.raises(TypeError, match="an IterableDataset without __len__"):
        len(stream(IterableDataset, False))


@pytest.mark.parametrize(
    "n,lengths",
    [
        (10, [0.5, 0.5]),
        (10, [0.33, 0.33, 0.34]),
        (11, [0.1, 0.2, 0.7]),
        (7, [0.5, 0.25, 0.25]),
        (10, [3, 7]),
        (5, [0, 5]),
    ],
)
def test_random_split_lengths_match_torch(n, lengths):
    parts = random_split(TensorDataset(cr.arange(n)), lengths, np.random.default_rng(0))
    theirs = tdata.random_split(range(n), lengths, torch.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [len(p) for p in theirs]
    seen = sorted(int(p[i][0].item()) for p in parts for i in range(len(p)))
    assert seen == list(range(n))


def test_random_split_is_seeded():
    ds = TensorDataset(cr.arange(20))
    cr.manual_seed(1)
    a = [p.indices for p in random_split(ds, [0.8, 0.2])]
    cr.manual_seed(1)
    assert [p.indices for p in random_split(ds, [0.8, 0.2])] == a
    b = [p.indices for p in random_split(ds, [16, 4], generator=np.random.default_rng(5))]
    assert b != a and sorted(b[0] + b[1]) == list(range(20))


def test_random_split_errors():
    ds = TensorDataset(cr.arange(10))
    with pytest.raises(ValueError, match=r"sum to the dataset's length; got \[3, 4\] \(sum 7\)"):
        random_split(ds, [3, 4])
    with pytest.raises(ValueError, match="fractions must lie in"):
        random_split(ds, [1.5, -0.5])
    with pytest.raises(ValueError, match="non-negative ints"):
        random_split(ds, [0.5, 0.2])


def test_utils_data_alias():
    import chainrule.utils.data as utils_data

    assert cr.utils.data.DataLoader is DataLoader and utils_data.random_split is random_split
    assert cr.utils.data.TensorDataset is cr.data.TensorDataset


@pytest.mark.parametrize(
    "n,batch_size,drop_last",
    [(7, 3, False), (7, 3, True), (6, 3, True), (2, 5, False), (2, 5, True)],
)
def test_sequential_and_batch_samplers_match_torch(n, batch_size, drop_last):
    ours = cr.data.BatchSampler(cr.data.SequentialSampler(range(n)), batch_size, drop_last)
    theirs = tdata.BatchSampler(tdata.SequentialSampler(range(n)), batch_size, drop_last)
    assert list(ours) == list(theirs) and len(ours) == len(theirs)
    ours_ds, theirs_ds = paired(n)
    loaded = DataLoader(ours_ds, batch_sampler=ours)
    expected = tdata.DataLoader(theirs_ds, batch_sampler=theirs)
    assert as_lists(loaded) == as_lists(expected)


def test_random_sampler():
    data = range(5)
    cr.manual_seed(0)
    one = list(cr.data.RandomSampler(data))
    cr.manual_seed(0)
    assert list(cr.data.RandomSampler(data)) == one and sorted(one) == list(data)
    # beyond the length, whole permutations follow one another, the last cut short
    long = cr.data.RandomSampler(data, num_samples=12, generator=np.random.default_rng(1))
    got = list(long)
    assert len(long) == len(got) == 12
    assert sorted(got[:5]) == sorted(got[5:10]) == list(data) and len(set(got[10:])) == 2
    assert got != list(long)  # a fresh order each pass
    drawn = list(cr.data.RandomSampler(range(4), True, 8000, np.random.default_rng(2)))
    assert set(drawn) == set(range(4))
    np.testing.assert_allclose(np.bincount(drawn) / 8000, 0.25, atol=0.02)
    sub = cr.data.SubsetRandomSampler([10, 20, 30, 40], np.random.default_rng(3))
    assert len(sub) == 4 and sorted(sub) == [10, 20, 30, 40]


def test_random_sampler_draws_as_it_goes():
    """With replacement, a pass of 10**10 indices starts at once; its indices come from a
    generator of the pass's own, seeded from the global one when it begins (as PyTorch's),
    so global draws in between change nothing. Without, permutation after permutation."""
    huge = cr.data.RandomSampler(range(10), replacement=True, num_samples=10**10)
    cr.manual_seed(0)
    first = list(itertools.islice(huge, 100))
    cr.manual_seed(0)
    interleaved = []
    for i in iter(huge):
        interleaved.append(i)
        cr.rand(3)  # what a training step draws between batches
        if len(interleaved) == 100:
            break
    assert interleaved == first and set(first) == set(range(10))
    chained = cr.data.RandomSampler(range(3), num_samples=10**10, generator=cr.Generator())
    got = list(itertools.islice(chained, 8))
    assert sorted(got[:3]) == sorted(got[3:6]) == [0, 1, 2]


def test_weighted_random_sampler_draws_as_numpy_choice():
    """Drawn CHUNK at a time as the pass goes, the indices are NumPy's Generator.choice's of
    the same generator, all at once."""
    w = np.array([0.0, 1.0, 3.0, 0.5, 0.0, 2.0])
    got = list(cr.data.WeightedRandomSampler(w, 1000, generator=np.random.default_rng(4)))
    expected = np.random.default_rng(4).choice(6, 1000, p=w / w.sum())
    assert got == expected.tolist()
    huge = cr.data.WeightedRandomSampler(w, 10**10, generator=np.random.default_rng(4))
    assert list(itertools.islice(huge, 1000)) == got and len(huge) == 10**10


def test_weighted_random_sampler():
    weights = [0.0, 1.0, 3.0]
    drawn = list(cr.data.WeightedRandomSampler(weights, 20000, generator=np.random.default_rng(0)))
    np.testing.assert_allclose(np.bincount(drawn, minlength=3) / 20000, [0, 0.25, 0.75], atol=0.015)
    once = cr.data.WeightedRandomSampler(cr.tensor([5.0, 0.0, 1.0, 2.0]), 3, replacement=False)
    assert len(once) == 3 and sorted(once) == [0, 2, 3]  # each positive weight once
    # without replacement the zero weights come last, as in PyTorch
    for sampler in (
        cr.data.WeightedRandomSampler([0, 2, 0, 1], 4, False),
        tdata.WeightedRandomSampler([0, 2, 0, 1], 4, False),
    ):
        got = list(sampler)
        assert sorted(got[:2]) == [1, 3] and sorted(got[2:]) == [0, 2]
    # first draws without replacement follow the weights: index 0 first 3 times in 4
    cr.manual_seed(0)
    firsts = [next(iter(cr.data.WeightedRandomSampler([3.0, 1.0], 2, False))) for _ in range(4000)]
    assert abs(firsts.count(0) / 4000 - 0.75) < 0.03
    seconds = [
        list(cr.data.WeightedRandomSampler([2.0, 1.0, 1.0], 2, False, np.random.default_rng(k)))
        for k in range(6000)
    ]
    # P(first 1, then 0) = 1/4 * 2/3 = 1/6
    assert abs(sum(d == [1, 0] for d in seconds) / 6000 - 1 / 6) < 0.02


SAMPLER_ERRORS = [  # (sampler class name, arguments), refused as torch refuses them
    ("RandomSampler", (range(3),), dict(replacement=1)),
    ("RandomSampler", (range(3),), dict(num_samples=0)),
    ("RandomSampler", (range(3),), dict(num_samples=2.0)),
    ("RandomSampler", (range(0),), {}),
    ("BatchSampler", (range(3), 0, False), {}),
    ("BatchSampler", (range(3), 2, 1), {}),
    ("WeightedRandomSampler", ([1, 2], 0), {}),
    ("WeightedRandomSampler", ([1, 2], 3), dict(replacement=1)),
    ("WeightedRandomSampler", ([[1, 2]], 3), {}),
    ("WeightedRandomSampler", ([1, -1], 2), {}),
    ("WeightedRandomSampler", ([0, 0], 2), {}),
    ("WeightedRandomSampler", ([1, 0], 3), dict(replacement=False)),
]


@pytest.mark.parametrize(
    "name,args,kwargs", SAMPLER_ERRORS, ids=lambda v: v if isinstance(v, str) else None
)
def test_sampler_errors_match_torch(name, args, kwargs):
    """The same exception type as PyTorch's, when made or when iterated."""

    def outcome(module):
        try:
            return list(getattr(module, name)(*args, **kwargs))
        except Exception as e:  # noqa: BLE001 - the kind of error is what is compared
            return e

    ours, theirs = outcome(cr.data), outcome(tdata)
    assert isinstance(theirs, Exception)
    assert type(ours) is type(theirs), f"ours: {ours!r}; torch: {theirs!r}"
    assert str(ours).startswith(name + ": ")


class Numbers(Dataset):
    def __init__(self, *values):
        self.values = values

    def __len__(self):
        return len(self.values)

    def __getitem__(self, i):
        return self.values[i]


def test_concat_dataset_matches_torch():
    parts = [Numbers(1, 2, 3), Numbers(), Numbers(4, 5)]
    ours = cr.data.ConcatDataset(parts)
    theirs = tdata.ConcatDataset(parts)
    assert ours.cumulative_sizes == theirs.cumulative_sizes and len(ours) == len(theirs) == 5
    assert [ours[i] for i in range(-5, 5)] == [theirs[i] for i in range(-5, 5)]
    with pytest.raises(IndexError, match="index 5 is out of range for 5 samples"):
        ours[5]
    with pytest.raises(IndexError, match="index -6 is out of range"):
        ours[-6]
    both = TensorDataset(cr.arange(3)) + Numbers(7)
    assert isinstance(both, cr.data.ConcatDataset) and both[3] == 7
    cr.manual_seed(0)
    seen = sorted(int(v) for batch in DataLoader(ours, 2, shuffle=True) for v in batch.tolist())
    assert seen == [1, 2, 3, 4, 5]
    with pytest.raises(ValueError, match="at least one dataset"):
        cr.data.ConcatDataset([])
    with pytest.raises(TypeError, match="map-style datasets only"):
        cr.data.ConcatDataset([Numbers(1), stream(IterableDataset, True)])


def test_chain_dataset_matches_torch():
    ours = stream(IterableDataset, True) + stream(IterableDataset, False)
    theirs = stream(tdata.IterableDataset, True) + stream(tdata.IterableDataset, False)
    assert isinstance(ours, cr.data.ChainDataset)
    assert list(ours) == list(theirs) and len(list(ours)) == 14
    with pytest.raises(TypeError, match="without __len__"):
        len(ours)
    assert len(cr.data.ChainDataset([stream(IterableDataset, True)] * 2)) == 14
    assert [b[0].tolist() for b in DataLoader(ours, 5)] == [
        b[0].tolist() for b in tdata.DataLoader(theirs, 5)
    ]
    with pytest.raises(TypeError, match="IterableDatasets only; got Numbers"):
        list(cr.data.ChainDataset([Numbers(1)]))


def sharded(base, info):
    """A stream of 0..9 on ``base`` that each worker reads its share of, by ``info``."""

    class Sharded(base):
        def __iter__(self):
            worker = info()
            start, step = (0, 1) if worker is None else (worker.id, worker.num_workers)
            return iter(range(start, 10, step))

    return Sharded()


@pytest.mark.parametrize("num_workers", [0, 2])
def test_sharded_stream_matches_torch(num_workers):
    """The usual sharding by get_worker_info: None in the main process (the whole stream
    once); in each of 2 workers its share, the batches coming from the workers in turn, as
    PyTorch's."""
    assert cr.data.get_worker_info() is tdata.get_worker_info() is None
    ours = DataLoader(sharded(IterableDataset, cr.data.get_worker_info), 4, num_workers=num_workers)
    theirs = tdata.DataLoader(
        sharded(tdata.IterableDataset, tdata.get_worker_info), 4, num_workers=num_workers
    )
    expected = [b.tolist() for b in theirs]
    assert [b.tolist() for b in ours] == expected
    if num_workers == 0:
        assert expected == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_pin_memory_warns_that_there_is_nothing_to_pin():
    ds = TensorDataset(cr.arange(6.0))
    with pytest.warns(UserWarning, match="pin_memory=True has nothing to pin"):
        loader = DataLoader(ds, batch_size=2, pin_memory=True)
    assert [b[0].tolist() for b in loader] == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    with pytest.warns(UserWarning, match="pin_memory"):  # PyTorch warns here too
        list(torch.utils.data.DataLoader(torch.arange(6.0), batch_size=2, pin_memory=True))
