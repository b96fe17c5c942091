"""Every dim and size argument of the sparse functions and methods, checked as torch checks
it: dims out of range, repeated or not ints, and sizes negative or not ints, refused with the
op's name (the table is derived from the signatures, so a new argument needs a row)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import sparse

ARGUMENTS = {"dim", "dim0", "dim1", "size", "sparse_dim"}


def _pair() -> tuple[Any, Any]:
    """A (2, 3) sparse matrix, ours and torch's."""
    indices, values = [[0, 1], [1, 2]], [1.0, 2.0]
    with torch.sparse.check_sparse_tensor_invariants():
        theirs = torch.sparse_coo_tensor(indices, values, (2, 3))
    return cr.sparse_coo_tensor(indices, values, (2, 3)), theirs


def _empty(lib: Any, size: Any) -> Any:
    return lib.sparse_coo_tensor(lib.zeros(2, 0, dtype=lib.int64), lib.zeros(0), size)


# (the op's name in our message, the call on a sparse matrix or on the library)
BAD: dict[str, list[tuple[str, Callable[[Any, Any], Any]]]] = {
    "sum": [
        ("sparse.sum", lambda lib, s: lib.sparse.sum(s, dim=5)),
        ("sparse.sum", lambda lib, s: lib.sparse.sum(s, dim=-3)),
        ("sparse.sum", lambda lib, s: lib.sparse.sum(s, dim=(0, 0))),
        ("sparse.sum", lambda lib, s: lib.sparse.sum(s, dim=(1, -1))),
        ("sparse.sum", lambda lib, s: lib.sparse.sum(s, dim=1.0)),
        ("sparse.sum", lambda lib, s: s.sum(2)),
    ],
    "softmax": [
        ("sparse.softmax", lambda lib, s: lib.sparse.softmax(s, 2)),
        ("sparse.softmax", lambda lib, s: lib.sparse.softmax(s, -3)),
    ],
    "log_softmax": [
        ("sparse.log_softmax", lambda lib, s: lib.sparse.log_softmax(s, 2)),
        ("sparse.log_softmax", lambda lib, s: lib.sparse.log_softmax(s, -3)),
    ],
    "sparse_coo_tensor": [
        ("sparse_coo_tensor", lambda lib, s: _empty(lib, (-1, 3))),
        ("sparse_coo_tensor", lambda lib, s: _empty(lib, (2.5, 3))),
        ("sparse_coo_tensor", lambda lib, s: _empty(lib, ("a", 3))),
        ("sparse_coo_tensor", lambda lib, s: _empty(lib, (True, 3))),
        ("sparse_coo_tensor", lambda lib, s: _empty(lib, 6)),
        ("sparse_coo_tensor", lambda lib, s: lib.sparse_coo_tensor([[0], [1]], [1.0], (2, -3))),
    ],
    "size": [
        ("size", lambda lib, s: s.size(2)),
        ("size", lambda lib, s: s.size(-3)),
        ("size", lambda lib, s: s.size(1.0)),
        ("size", lambda lib, s: s.size(True)),
    ],
    "transpose": [
        ("transpose", lambda lib, s: s.transpose(0, 2)),
        ("transpose", lambda lib, s: s.transpose(-3, 0)),
    ],
    "to_sparse": [
        ("to_sparse", lambda lib, s: s.to_dense().to_sparse(3)),
        ("to_sparse", lambda lib, s: s.to_dense().to_sparse(0)),
        ("to_sparse", lambda lib, s: s.to_dense().to_sparse(-1)),
        ("to_sparse", lambda lib, s: s.to_dense().to_sparse(1.5)),
    ],
}


def _takers() -> set[str]:
    """Every public sparse function and SparseTensor method (and the dense tensor's
    to_sparse, which sparse.py gives it) with a dim or size argument."""
    names = set()
    for items in (sparse.SparseTensor.__dict__.items(), vars(sparse).items()):
        for name, f in items:
            if name.startswith("_") or not inspect.isfunction(f):
                continue
            if name not in sparse.__all__ and name not in sparse.SparseTensor.__dict__:
                continue
            if ARGUMENTS & set(inspect.signature(f).parameters):
                names.add(name)
    if ARGUMENTS & set(inspect.signature(cr.Tensor.to_sparse).parameters):
        names.add("to_sparse")
    return names


def test_every_function_taking_a_dim_or_a_size_has_a_row() -> None:
    takers = _takers()
    assert takers, "no sparse function takes a dim or a size: the table checks nothing"
    missing = takers - set(BAD)
    assert not missing, f"add rows to BAD in tests/sparse/test_sparse_arguments.py: {missing}"


CASES = [(name, op, call) for name, rows in BAD.items() for op, call in rows]


@pytest.mark.parametrize(
    ("name", "op", "call"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_a_bad_dim_or_size_is_refused_as_torch_refuses_it(name: str, op: str, call: Any) -> None:
    ours, theirs = _pair()
    with pytest.raises((IndexError, RuntimeError, TypeError, ValueError)) as torch_error:
        with torch.sparse.check_sparse_tensor_invariants():
            call(torch, theirs)
    with pytest.raises((IndexError, TypeError, ValueError)) as error:
        call(cr, ours)
    assert str(error.value).startswith(f"{op}: ")
    if torch_error.type is IndexError:  # a dim out of range: the same class as torch's
        assert error.type is IndexError
    # a repeated dim is torch's RuntimeError and our ValueError (as for a dense tensor's dims)


@pytest.mark.parametrize("dim", [0, 1, -1, -2, (0,), (0, 1), [1], (), (-1, 0)])
def test_good_dims_sum_as_torch(dim: Any) -> None:
    ours, theirs = _pair()
    a, b = cr.sparse.sum(ours, dim=dim), torch.sparse.sum(theirs, dim=dim)
    assert a.is_sparse == b.is_sparse
    np.testing.assert_allclose(a.to_dense().numpy(), b.to_dense().numpy())


@pytest.mark.parametrize("dim", [0, 1, -1, -2])
def test_softmax_dims_as_torch(dim: int) -> None:
    ours, theirs = _pair()
    for name in ("softmax", "log_softmax"):
        a = getattr(cr.sparse, name)(ours, dim).to_dense().numpy()
        b = getattr(torch.sparse, name)(theirs, dim).to_dense().numpy()
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_size_transpose_and_to_sparse_take_negative_dims() -> None:
    ours, theirs = _pair()
    assert ours.size(-1) == theirs.size(-1) == 3
    assert ours.size() == theirs.size()
    assert ours.transpose(-1, -2).shape == theirs.transpose(-1, -2).shape
    assert ours.transpose(1, 1).shape == theirs.transpose(1, 1).shape == (2, 3)
    size = (np.int64(2), cr.tensor(3))  # NumPy ints and 0-d integer tensors are sizes
    assert _empty(cr, size).shape == (2, 3)


def test_keepdim_on_a_sparse_sum_is_refused_not_ignored() -> None:
    ours, _ = _pair()
    with pytest.raises(NotImplementedError, match=r"^sum: keepdim=True is not supported"):
        ours.sum(0, keepdim=True)
