"""Element writes and in-place arithmetic on tensors that record nothing (makemore's
``N[i, j] += 1``, ``loss += logprob``, ``x[i] = v``), with the fast path's one ufunc and
without: PyTorch's values, dtypes, version counts and refusals."""

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import fastpath


@pytest.fixture(params=[True, False], ids=["fast", "plain"])
def switch(request):
    was = fastpath.enabled()
    fastpath.set_enabled(request.param)
    yield request.param
    fastpath.set_enabled(was)


def both(fn):
    """fn on chainrule and on torch: the two tensors' values and dtype names."""
    ours, theirs = fn(cr), fn(torch)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_array_equal(np.asarray(ours.numpy()), theirs.numpy())


# (name, program): each writes into a tensor that records nothing and returns it
PROGRAMS = [
    ("count bigrams", lambda m: _count(m)),
    ("0-d loss += logprob", lambda m: _sum_logs(m)),
    ("int32 += small int", lambda m: m.arange(6, dtype=m.int32).add_(3)),
    ("uint8 wraps past 255", lambda m: m.arange(4, dtype=m.uint8).add_(300)),
    ("uint8 -= 1 wraps", lambda m: m.arange(4, dtype=m.uint8).sub_(1)),
    ("int64 *= int", lambda m: m.arange(4).mul_(7)),
    ("bool += True", lambda m: m.tensor([True, False]).add_(True)),
    ("bool *= bool tensor", lambda m: m.tensor([True, False]).mul_(m.tensor([False, True]))),
    ("float32 += float64 0-d", lambda m: m.ones(3).add_(m.tensor(0.1, dtype=m.float64))),
    ("float32 /= int", lambda m: m.ones(3).div_(3)),
    ("float32 -= row, broadcast", lambda m: m.ones(2, 3).sub_(m.arange(3.0))),
    ("alpha", lambda m: m.ones(3).add_(m.ones(3), alpha=2.5)),
    ("into a view", lambda m: _into_view(m)),
    ("itself", lambda m: _itself(m)),
    ("setitem int of float", lambda m: _set(m.zeros(3, dtype=m.int32), 1, 2.7)),
    ("setitem a 0-d of another dtype", lambda m: _set(m.zeros(3), 0, m.tensor(5))),
    ("setitem a mask", lambda m: _set(m.arange(5.0), m.arange(5) > 2, -1.0)),
    ("setitem rows, repeated", lambda m: _set(m.zeros(3, 2), m.tensor([0, 2]), m.ones(2))),
    ("setitem broadcast row", lambda m: _set(m.zeros(3, 2), slice(None), m.arange(2.0))),
]


def _count(m):
    n = m.zeros((3, 3), dtype=m.int32)
    for i, j in [(0, 1), (1, 2), (0, 1), (2, 2), (0, 1)]:
        n[i, j] += 1
    return n


def _sum_logs(m):
    p = m.tensor([[0.5, 0.25], [0.125, 0.75]])
    total = 0.0
    for i, j in [(0, 0), (1, 1), (0, 1)]:
        total += m.log(p[i, j])
    return total


def _into_view(m):
    x = m.zeros(3, 4)
    x[1].add_(2.0)
    x[:, 2] *= 3.0
    x[1, 2] = 7.0
    return x


def _itself(m):
    x = m.arange(5.0)
    x.add_(x)
    x[1:] *= x[1:]
    return x


def _set(x, index, value):
    x[index] = value
    return x


@pytest.mark.parametrize("program", [p for _, p in PROGRAMS], ids=[n for n, _ in PROGRAMS])
def test_writes_give_torch_values_and_dtypes(program, switch):
    both(program)


def test_each_write_bumps_the_shared_version_count_and_views_see_it(switch):
    n = cr.zeros(3, 3, dtype=cr.int32)
    row = n[1]
    n[1, 2] += 1  # one write into the element's view, one setitem
    assert n._version == row._version == 2
    row.add_(1)
    np.testing.assert_array_equal(n.numpy()[1], [1, 1, 2])
    x = cr.zeros(())
    x += 1.5
    x.mul_(2)
    assert x._version == 2 and float(x) == 3.0


@pytest.mark.parametrize(
    ("write", "error", "words"),
    [
        (lambda: cr.zeros(3, dtype=cr.int32).add_(2.5), RuntimeError, "add_: the result's dtype"),
        (lambda: cr.arange(3).div_(2), RuntimeError, "div_: the result's dtype"),
        (lambda: cr.ones(3).add_(cr.ones(2, 3)), RuntimeError, "add_: the result's shape"),
        (lambda: cr.tensor([True]).sub_(True), TypeError, "sub: not defined for bool"),
        (lambda: cr.ones(3).expand(2, 3).mul_(2), RuntimeError, "read-only view"),
        (lambda: cr.zeros(3).__setitem__(5, 1.0), IndexError, "out of bounds"),
        (lambda: cr.zeros(3, 2).__setitem__(0, cr.ones(3)), ValueError, "indexput: shapes"),
    ],
)
def test_refusals_are_the_same_with_the_fast_path_or_without(write, error, words, switch):
    with pytest.raises(error, match=words):
        write()


def test_a_write_that_joins_a_graph_still_records_it(switch):
    w = cr.tensor([1.0, 2.0], requires_grad=True)
    acc = cr.zeros(2)
    acc += w * 3.0  # acc requires grad from here on
    acc[0] = w[1]
    assert acc.requires_grad and acc.grad_fn is not None
    acc.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [0.0, 4.0])
    with cr.no_grad():
        w += 1.0  # a leaf's update under no_grad: the fast path when it is on
    np.testing.assert_array_equal(w.detach().numpy(), [2.0, 3.0])


def test_a_view_made_without_recording_is_still_refused(switch):
    base = cr.ones(3, requires_grad=True) * 1.0
    with cr.no_grad():
        view = base[:2]
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode"):
        view.add_(1.0)
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode"):
        view[0] = 1.0


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_a_0d_integer_divided_in_place_is_refused_as_in_pytorch(dtype: str) -> None:
    """int / int is a float, which an integer tensor cannot hold: PyTorch refuses, and the
    one-ufunc path must not cast the 0-d result back silently."""
    with pytest.raises(RuntimeError, match="result type Float"):
        torch.tensor(3, dtype=getattr(torch, dtype)).div_(
            torch.tensor(2, dtype=getattr(torch, dtype))
        )
    t = cr.tensor(3, dtype=getattr(cr, dtype))
    with pytest.raises(RuntimeError, match=r"^div_: the result's dtype float32"):
        t.div_(cr.tensor(2, dtype=getattr(cr, dtype)))
    assert t.item() == (True if dtype == "bool" else 3) and t._version == 0
