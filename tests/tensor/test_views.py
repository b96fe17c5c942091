"""Views and writes through them, against PyTorch: basic indexing (integers, slices, None,
...), t(), view and reshape return views; a write into a view reaches its base, bumps one
version counter, and, in a graph, gives the base PyTorch's CopySlices node, so gradients
come out as PyTorch's. The table runs each (indexing, write, grad mode) case in both."""

from __future__ import annotations

import re
import weakref

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import chainrule as cr

INDEXINGS = {
    "x[1]": lambda x: x[1],
    "x[1, 2]": lambda x: x[1, 2],
    "x[:, 1]": lambda x: x[:, 1],
    "x[0:2, 1:]": lambda x: x[0:2, 1:],
    "x[::2]": lambda x: x[::2],
    "x[None, 1]": lambda x: x[None, 1],
    "x[..., 0]": lambda x: x[..., 0],
    "x[1][0:2]": lambda x: x[1][0:2],
    "x.t()": lambda x: x.t(),
    "x.t()[1]": lambda x: x.t()[1],
    "x.view(-1)": lambda x: x.view(-1),
    "x.reshape(4, 3)[1:3]": lambda x: x.reshape(4, 3)[1:3],
    "x.unsqueeze(0)[0, 2]": lambda x: x.unsqueeze(0)[0, 2],
    "x.split(2)[1]": lambda x: x.split(2)[1],
    "x.split([1, 2])[1]": lambda x: x.split([1, 2])[1],
    "x.chunk(2, 1)[0]": lambda x: x.chunk(2, 1)[0],
    "x.unbind(1)[3]": lambda x: x.unbind(1)[3],
    "x.split(2)[0].view(-1)": lambda x: x.split(2)[0].view(-1),
}

WRITES = {
    "fill_": lambda v, w: v.fill_(5.0),
    "add_(1)": lambda v, w: v.add_(1.0),
    "mul_(w)": lambda v, w: v.mul_(w),
    "pow_(2)": lambda v, w: v.pow_(2),
    "v[...] = w * 2": lambda v, w: v.__setitem__(Ellipsis, w * 2),
}

MODES = ["no_grad", "graph", "plain", "leaf"]


def program(lib, index, write, mode):
    """One case, in ``lib`` (chainrule or torch): what the base holds after the write, the
    gradients, and whether the base requires grad; or the error, as (type, message)."""
    x = lib.arange(12.0, dtype=lib.float64).reshape(3, 4).requires_grad_()
    w = lib.tensor(3.0, dtype=lib.float64, requires_grad=True)
    c = lib.arange(1.0, 13.0, dtype=lib.float64).reshape(3, 4)  # tells positions apart
    try:
        if mode == "no_grad":
            with lib.no_grad():
                write(index(x), w)
            return {"base": x.tolist()}
        if mode == "leaf":
            write(index(x), w)
            return {"base": x.tolist()}
        y = x * 1 if mode == "graph" else lib.arange(12.0, dtype=lib.float64).reshape(3, 4)
        v = index(y)
        write(v, w)
        got = {"base": y.tolist(), "view": v.tolist(), "requires_grad": y.requires_grad}
        if y.requires_grad:
            ((y * c).sum() + (v * v).sum()).backward()
            got["x.grad"] = None if x.grad is None else x.grad.tolist()
            got["w.grad"] = None if w.grad is None else w.grad.item()
        return got
    except (RuntimeError, IndexError) as err:
        return (type(err).__name__, str(err))


CASES = [(i, w, m) for i in INDEXINGS for w in WRITES for m in MODES]


@pytest.mark.parametrize(("index", "write", "mode"), CASES)
def test_a_write_through_a_view_means_what_it_means_in_pytorch(index, write, mode) -> None:
    mine = program(cr, INDEXINGS[index], WRITES[write], mode)
    theirs = program(torch, INDEXINGS[index], WRITES[write], mode)
    if isinstance(theirs, tuple):
        assert isinstance(mine, tuple), (mine, theirs)
        # chainrule's message is PyTorch's sentence, with the op's name and the shapes; for
        # a view of split's output PyTorch names the view's op, chainrule the split
        sentence = re.sub(r"output (\d+) of \w+", r"output \1 of", theirs[1].split(".")[0].lower())
        assert sentence in re.sub(r"output (\d+) of \w+", r"output \1 of", mine[1].lower())
        return
    assert not isinstance(mine, tuple), (mine, theirs)
    assert mine.keys() == theirs.keys()
    for key in mine:
        np.testing.assert_allclose(np.array(mine[key], float), np.array(theirs[key], float))


def test_basic_indexing_shares_memory_and_the_version_counter() -> None:
    x = cr.zeros(2, 3)
    for v in (x[1], x[1, 2], x[:, 1:], x[None, 0], x[..., 2], x.t(), x.view(6)):
        start = x.data_ptr()  # the view's first element lies in x's memory
        assert v._base is x and start <= v.data_ptr() < start + x.numel() * x.element_size()
    before = x._version
    x[1, 2].add_(1)
    assert x.tolist() == [[0, 0, 0], [0, 0, 1]] and x._version == before + 1
    # advanced indexing copies, as PyTorch's
    picked = x[[0, 1]]
    picked.fill_(7)
    assert x.sum().item() == 1 and picked._base is None


def test_a_view_taken_before_a_write_into_its_base_differentiates_what_it_holds() -> None:
    def run(lib):
        x = lib.ones(3, dtype=lib.float64, requires_grad=True)
        y = x * 2
        first, rest = y[0], y[1:]
        y.mul_(3)  # a write into the base itself: both views now hold 6 * x
        (first * rest.sum()).backward()
        return x.grad.tolist(), first.item()

    assert run(cr) == run(torch)


def test_nodes_recorded_before_a_write_keep_the_old_values_gradient() -> None:
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        y = x * 1
        early = y[1] * 10  # recorded before the write: its gradient is that of 10 * x[1]
        y[1].mul_(x[2])
        (early + y.sum()).backward()
        return x.grad.tolist()

    assert run(cr) == run(torch)


def test_a_write_through_a_view_against_finite_differences() -> None:
    """y = x * 1, then y[1:, ::2] *= w and y[0, 1:3] += w ** 2: the gradient of a weighted sum
    of y against central differences in float64."""
    rng = np.random.default_rng(0)
    weights = cr.tensor(rng.normal(size=(3, 4)))

    def f(x, w):
        y = x * 1
        y[1:, ::2].mul_(w)
        y[0, 1:3].add_(w**2)
        return (y * weights).sum()

    x0, w0 = rng.normal(size=(3, 4)), rng.normal(size=(4,))[:2]
    assert cr.autograd.gradcheck(f, (cr.tensor(x0, requires_grad=True),
                                     cr.tensor(w0, requires_grad=True)))  # fmt: skip


def test_the_references_to_views_do_not_keep_them_alive_nor_grow_forever() -> None:
    x = cr.zeros(4, requires_grad=True) * 1
    v = x[1:3]
    ref = weakref.ref(v)
    assert x._vc[1]() is v
    del v
    assert ref() is None  # freed by reference counting: no cycle through the base
    for _ in range(1000):
        x[1:3]  # made and dropped at once
    assert len(x._vc) <= 128  # dropped each time the box reaches a power of two past 64
    assert x.requires_grad


SLICE = st.one_of(
    st.integers(-3, 2),
    st.builds(slice, st.integers(0, 2) | st.none(), st.integers(1, 3) | st.none(),
              st.integers(1, 2) | st.none()),
)  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(st.lists(SLICE, min_size=1, max_size=3), st.sampled_from(list(WRITES)))
def test_random_basic_indexes_and_writes_match_pytorch(parts, write) -> None:
    index = tuple(parts)
    mine = program(cr, lambda x: x.reshape(3, 2, 2)[index], WRITES[write], "graph")
    theirs = program(torch, lambda x: x.reshape(3, 2, 2)[index], WRITES[write], "graph")
    assert isinstance(mine, tuple) == isinstance(theirs, tuple), (mine, theirs)
    if not isinstance(mine, tuple):
        for key in mine:
            np.testing.assert_allclose(np.array(mine[key], float), np.array(theirs[key], float))


def test_a_loop_writing_rows_of_a_buffer_matches_pytorch() -> None:
    """h[t] = f(h[t - 1]): each write leaves the earlier rows' views as they are (they lie
    apart from it), and the gradient is PyTorch's."""

    def run(lib):
        x = lib.tensor(np.linspace(-1, 1, 24).reshape(6, 4), requires_grad=True)
        h = lib.zeros(6, 4, dtype=lib.float64)
        for t in range(1, 6):
            h[t] = h[t - 1] * 0.5 + x[t].tanh()
        (h * h).sum().backward()
        return h.tolist(), x.grad.tolist()

    mine, theirs = run(cr), run(torch)
    np.testing.assert_allclose(mine[0], theirs[0])
    np.testing.assert_allclose(mine[1], theirs[1])


def test_a_tensor_with_views_pickles_and_copies_and_an_unpickled_view_is_its_own() -> None:
    import copy
    import pickle

    x = cr.arange(6.0).reshape(2, 3).requires_grad_()
    y = x * 1
    v = y[1]
    for again in (pickle.loads(pickle.dumps(y)), copy.deepcopy(y.detach())):
        assert again.tolist() == y.tolist()
    plain = cr.arange(6.0).reshape(2, 3)
    row = pickle.loads(pickle.dumps(plain[1]))
    assert row._base is not None  # pickled with its base, but into memory of its own
    k = cr.tensor(2.0, requires_grad=True)
    row.mul_(k)  # joins the graph as a tensor of its own: its base is left alone
    row.sum().backward()
    assert row.tolist() == [6.0, 8.0, 10.0] and k.grad.item() == 12.0
    assert row._base.tolist() == plain.flatten().tolist() and v.tolist() == [3.0, 4.0, 5.0]
