"""Sparse COO tensors against torch's: construction and coalescing (duplicates summed),
conversion both ways, the products with dense matrices and their gradients (to the dense
operand and to the sparse one's values), sums, softmax, the few elementwise forms, the repr,
the refusals of every dense op, the lazy scipy import, and a GCN trained with torch aliased
to chainrule."""

from __future__ import annotations

import operator
import pickle
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import chainrule as cr
from tests.pytorch_programs.test_pytorch_programs import F32, assert_follows, twins
from tests.tolerances import OP, tol

DTYPES = [np.float64, np.float32]


@pytest.fixture(autouse=True)
def _no_invariant_warning() -> Any:
    """torch warns once that it does not check sparse invariants; the checks are cheap here."""
    with torch.sparse.check_sparse_tensor_invariants():
        yield


def _coo(rng: np.random.Generator, shape: tuple[int, int], nnz: int, dtype: Any) -> tuple:
    """Indices (with repeats, unsorted) and values of a random sparse matrix."""
    indices = np.stack([rng.integers(0, n, nnz) for n in shape]).astype(np.int64)
    return indices, rng.standard_normal(nnz).astype(dtype)


def _pair(indices: np.ndarray, values: np.ndarray, shape: Any, **kw: Any) -> tuple:
    ours = cr.sparse_coo_tensor(cr.tensor(indices), cr.tensor(values), shape, **kw)
    theirs = torch.sparse_coo_tensor(torch.tensor(indices), torch.tensor(values), shape, **kw)
    return ours, theirs


def _same_entries_and_gradients(ours, theirs, v_ours, v_theirs, rng, dtype) -> None:
    """Coalesced results with torch's indices and values, and the values' gradients of a
    random weighting of them equal to torch's."""
    np.testing.assert_array_equal(ours.indices().numpy(), theirs.indices().numpy())
    _close(ours.values(), theirs.values(), dtype)
    upstream = rng.standard_normal(theirs._nnz()).astype(dtype)
    (ours.values() * cr.tensor(upstream)).sum().backward()
    (theirs.values() * torch.tensor(upstream)).sum().backward()
    _close(v_ours.grad, v_theirs.grad, dtype)


def _on_leaf_values(indices: np.ndarray, values: np.ndarray, shape: Any) -> tuple:
    """(values, values, sparse, sparse), ours and torch's: sparse tensors built on values
    that require grad, so the gradient reaches the values."""
    v_ours = cr.tensor(values, requires_grad=True)
    v_theirs = torch.tensor(values, requires_grad=True)
    s_ours = cr.sparse_coo_tensor(cr.tensor(indices), v_ours, shape)
    s_theirs = torch.sparse_coo_tensor(torch.tensor(indices), v_theirs, shape)
    return v_ours, v_theirs, s_ours, s_theirs


def _close(ours: Any, theirs: Any, dtype: Any, what: str = "") -> None:
    if isinstance(theirs, torch.Tensor) and theirs.is_sparse:
        theirs = theirs.to_dense()
    if isinstance(ours, cr.Tensor) and ours.is_sparse:
        ours = ours.to_dense()
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), err_msg=what,
                               **tol(dtype, OP))  # fmt: skip


# -- construction, coalescing, conversion ----------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_construction_and_to_dense_sum_duplicates(dtype) -> None:
    rng = np.random.default_rng(0)
    indices, values = _coo(rng, (4, 5), 12, dtype)
    indices[:, 1] = indices[:, 0]  # a repeat for certain
    ours, theirs = _pair(indices, values, (4, 5))
    assert isinstance(ours, cr.Tensor) and ours.is_sparse and ours.layout is cr.sparse_coo
    assert (ours.shape, ours.ndim, ours.numel(), len(ours)) == ((4, 5), 2, 20, 4)
    assert ours.dtype == dtype and ours._nnz() == theirs._nnz() == 12
    assert (ours.sparse_dim(), ours.dense_dim()) == (2, 0)
    assert ours.is_coalesced() is theirs.is_coalesced() is False
    np.testing.assert_array_equal(ours._indices().numpy(), theirs._indices().numpy())
    np.testing.assert_array_equal(ours._values().numpy(), theirs._values().numpy())
    _close(ours.to_dense(), theirs.to_dense(), dtype)
    assert not cr.ones(2).is_sparse and cr.ones(2).layout is cr.strided
    assert repr(cr.strided) == repr(torch.strided) and repr(cr.sparse_coo) == "torch.sparse_coo"
    assert pickle.loads(pickle.dumps(cr.sparse_coo)) is cr.sparse_coo  # one object per layout


def test_size_is_inferred_and_flags_follow_torch() -> None:
    indices = [[0, 2, 1], [1, 0, 3]]
    ours = cr.sparse_coo_tensor(indices, [1, 2, 3])
    theirs = torch.sparse_coo_tensor(indices, [1, 2, 3])
    assert ours.shape == tuple(theirs.shape) == (3, 4) and ours.dtype == cr.int64
    one = cr.sparse_coo_tensor([[0], [1]], [1.0], (2, 2))
    assert one.is_coalesced() and one.dtype == cr.float32
    claimed = cr.sparse_coo_tensor(indices, [1.0, 2.0, 3.0], is_coalesced=True)
    assert claimed.is_coalesced()
    hybrid = cr.sparse_coo_tensor(indices, cr.ones(3, 5))  # values of (nnz, 5): a dense dim
    their_hybrid = torch.sparse_coo_tensor(indices, torch.ones(3, 5))
    assert hybrid.shape == tuple(their_hybrid.shape) == (3, 4, 5) and hybrid.dense_dim() == 1
    _close(hybrid.to_dense(), their_hybrid.to_dense(), np.float32)


@pytest.mark.parametrize("dtype", DTYPES)
def test_coalesce_sums_duplicates_with_torchs_gradient(dtype) -> None:
    rng = np.random.default_rng(1)
    indices, values = _coo(rng, (3, 3), 15, dtype)
    v_ours = cr.tensor(values, requires_grad=True)
    v_theirs = torch.tensor(values, requires_grad=True)
    ours = cr.sparse_coo_tensor(cr.tensor(indices), v_ours, (3, 3)).coalesce()
    theirs = torch.sparse_coo_tensor(torch.tensor(indices), v_theirs, (3, 3)).coalesce()
    assert ours.is_coalesced() and ours.grad_fn is not None and not ours.is_leaf
    _same_entries_and_gradients(ours, theirs, v_ours, v_theirs, rng, dtype)
    assert ours.coalesce() is ours


def test_indices_and_values_need_a_coalesced_tensor() -> None:
    s = cr.sparse_coo_tensor([[0, 0], [1, 1]], [1.0, 2.0], (2, 2))
    with pytest.raises(RuntimeError, match="Cannot get indices on an uncoalesced tensor"):
        s.indices()
    with pytest.raises(RuntimeError, match="Cannot get values on an uncoalesced tensor"):
        s.values()
    assert s._values().tolist() == [1.0, 2.0] and s._indices().tolist() == [[0, 0], [1, 1]]
    assert s.coalesce().values().tolist() == [3.0]


@pytest.mark.parametrize("dtype", DTYPES)
def test_to_sparse_of_a_dense_tensor(dtype) -> None:
    x = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -3.0]], dtype=dtype)
    ours, theirs = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    s_ours, s_theirs = ours.to_sparse(), theirs.to_sparse()
    assert s_ours.is_coalesced() and s_ours._nnz() == s_theirs._nnz() == 3
    np.testing.assert_array_equal(s_ours.indices().numpy(), s_theirs.indices().numpy())
    _close(s_ours.values(), s_theirs.values(), dtype)
    d = np.arange(6, dtype=dtype).reshape(3, 2)
    cr.sparse.mm(s_ours, cr.tensor(d)).sum().backward()
    torch.sparse.mm(s_theirs, torch.tensor(d)).sum().backward()
    _close(ours.grad, theirs.grad.to_dense(), dtype)  # torch's grad is sparse here
    assert ours.to_dense() is ours
    hybrid = cr.tensor(x).to_sparse(1)  # rows with a nonzero, each row dense
    their_hybrid = torch.tensor(x).to_sparse(1)
    assert hybrid.shape == tuple(their_hybrid.shape) and hybrid._nnz() == their_hybrid._nnz()
    _close(hybrid.to_dense(), their_hybrid.to_dense(), dtype)


def test_repr_is_torchs() -> None:
    indices, values = [[0, 1, 1, 0], [1, 0, 2, 1]], [1.0, 2.0, 3.0, 4.0]
    ours = cr.sparse_coo_tensor(indices, values, (2, 3))
    theirs = torch.sparse_coo_tensor(indices, values, (2, 3))
    assert repr(ours) == repr(theirs)
    assert repr(ours.coalesce()) == repr(theirs.coalesce())
    ours = cr.sparse_coo_tensor(indices, values, (2, 3), dtype=cr.float64, requires_grad=True)
    theirs = torch.sparse_coo_tensor(
        indices, values, (2, 3), dtype=torch.float64, requires_grad=True
    )
    # chainrule names its dtypes chainrule.float64 where PyTorch says torch.float64
    assert repr(ours) == repr(theirs).replace("dtype=torch.", "dtype=chainrule.")
    assert "dtype=chainrule.float64" in repr(ours)


@pytest.mark.parametrize("values", [[1, 2, 3, 4], [True, False, True, True]], ids=["int64", "bool"])
def test_repr_leaves_out_the_dtypes_torch_leaves_out(values: list) -> None:
    """As PyTorch: no dtype for int64, bool or the default float, whichever that is."""
    indices = [[0, 1, 1, 0], [1, 0, 2, 1]]
    ours, theirs = cr.sparse_coo_tensor(indices, values), torch.sparse_coo_tensor(indices, values)
    assert repr(ours) == repr(theirs) and "dtype=" not in repr(ours)
    floats = [1.0, 2.0, 3.0, 4.0]
    try:
        cr.set_default_dtype(cr.float64)
        torch.set_default_dtype(torch.float64)
        for dtype, their_dtype in ((None, None), (cr.float32, torch.float32)):
            ours = cr.sparse_coo_tensor(indices, floats, dtype=dtype)
            theirs = torch.sparse_coo_tensor(indices, floats, dtype=their_dtype)
            assert repr(ours) == repr(theirs).replace("dtype=torch.", "dtype=chainrule.")
    finally:
        cr.set_default_dtype(cr.float32)
        torch.set_default_dtype(torch.float32)


# -- products ----------------------------------------------------------------------------------

PRODUCTS = {
    "sparse.mm": (lambda s, d: cr.sparse.mm(s, d)),
    "mm": (lambda s, d: cr.mm(s, d)),
    "method mm": (lambda s, d: s.mm(d)),
    "@": operator.matmul,
    "spmm": (lambda s, d: cr.spmm(s, d)),
    "matmul": (lambda s, d: cr.matmul(s, d)),
}


def _check_product(product: Any, indices, values, shape, n: int, dtype, seed: int = 0) -> None:
    """Forward, and gradients with a random upstream: to the dense matrix, to values that
    require grad, and to a sparse leaf (its .grad is sparse, on its entries, as
    torch.sparse.mm's)."""
    rng = np.random.default_rng(seed)
    dense = rng.standard_normal((shape[1], n)).astype(dtype)
    upstream = rng.standard_normal((shape[0], n)).astype(dtype)
    d_ours, d_theirs = cr.tensor(dense, requires_grad=True), torch.tensor(dense, requires_grad=True)
    v_ours, v_theirs, s_ours, s_theirs = _on_leaf_values(indices, values, shape)
    out_ours, out_theirs = product(s_ours, d_ours), torch.sparse.mm(s_theirs, d_theirs)
    assert not out_ours.is_sparse and out_ours.shape == tuple(out_theirs.shape)
    _close(out_ours, out_theirs, dtype, "forward")
    out_ours.backward(cr.tensor(upstream))
    out_theirs.backward(torch.tensor(upstream))
    _close(d_ours.grad, d_theirs.grad, dtype, "grad of the dense matrix")
    _close(v_ours.grad, v_theirs.grad, dtype, "grad of the values")
    leaf_ours, leaf_theirs = _pair(indices, values, shape, requires_grad=True)
    assert leaf_ours.is_leaf and leaf_ours.requires_grad and leaf_ours.grad is None
    product(leaf_ours, cr.tensor(dense)).backward(cr.tensor(upstream))
    torch.sparse.mm(leaf_theirs, torch.tensor(dense)).backward(torch.tensor(upstream))
    assert leaf_ours.grad.is_sparse and leaf_ours.grad.is_coalesced()
    _close(leaf_ours.grad, leaf_theirs.grad, dtype, "grad of the sparse leaf")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(PRODUCTS))
def test_sparse_times_dense(name, dtype) -> None:
    indices, values = _coo(np.random.default_rng(2), (5, 4), 9, dtype)
    indices[:, 3] = indices[:, 2]  # a duplicate entry: both copies get the gradient
    _check_product(PRODUCTS[name], indices, values, (5, 4), 3, dtype)


@settings(max_examples=30, deadline=None)
@given(
    m=st.integers(1, 7),
    k=st.integers(1, 7),
    n=st.integers(1, 5),
    density=st.floats(0.0, 1.5),
    seed=st.integers(0, 2**16),
)
def test_products_over_shapes_and_densities(m, k, n, density, seed) -> None:
    """Any shape, from no entry to more entries than the matrix has places (repeats)."""
    nnz = int(density * m * k)
    indices, values = _coo(np.random.default_rng(seed), (m, k), nnz, np.float64)
    _check_product(PRODUCTS["@"], indices, values, (m, k), n, np.float64, seed)


@pytest.mark.parametrize("dtype", DTYPES)
def test_dense_times_sparse_and_matrix_times_vector(dtype) -> None:
    rng = np.random.default_rng(3)
    indices, values = _coo(rng, (4, 3), 7, dtype)
    s_ours, s_theirs = _pair(indices, values, (4, 3), requires_grad=True)
    dense = rng.standard_normal((2, 4)).astype(dtype)
    d_ours, d_theirs = cr.tensor(dense, requires_grad=True), torch.tensor(dense, requires_grad=True)
    out_ours, out_theirs = d_ours @ s_ours, d_theirs @ s_theirs
    _close(out_ours, out_theirs, dtype)
    _close(d_ours.mm(s_ours), d_theirs.mm(s_theirs), dtype)
    _close(cr.mm(d_ours, s_ours), torch.mm(d_theirs, s_theirs), dtype)
    upstream = rng.standard_normal((2, 3)).astype(dtype)
    out_ours.backward(cr.tensor(upstream))
    out_theirs.backward(torch.tensor(upstream))
    _close(d_ours.grad, d_theirs.grad, dtype)
    # torch's dense @ sparse gives the sparse leaf a dense gradient; ours is on its entries
    grad_ours, grad_theirs = s_ours.grad.to_dense().numpy(), s_theirs.grad.to_dense().numpy()
    mask = grad_ours != 0
    np.testing.assert_allclose(grad_ours[mask], grad_theirs[mask], **tol(dtype, OP))
    vector = rng.standard_normal(3).astype(dtype)
    _close(
        cr.matmul(s_ours, cr.tensor(vector)), torch.matmul(s_theirs, torch.tensor(vector)), dtype
    )
    _close(s_ours @ cr.tensor(vector), s_theirs @ torch.tensor(vector), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_batch_of_dense_matrices_times_sparse(dtype) -> None:
    rng = np.random.default_rng(8)
    indices, values = _coo(rng, (4, 3), 7, dtype)
    v_ours, v_theirs, s_ours, s_theirs = _on_leaf_values(indices, values, (4, 3))
    dense = rng.standard_normal((2, 5, 4)).astype(dtype)
    d_ours, d_theirs = cr.tensor(dense, requires_grad=True), torch.tensor(dense, requires_grad=True)
    out_ours, out_theirs = d_ours @ s_ours, d_theirs @ s_theirs
    assert out_ours.shape == tuple(out_theirs.shape) == (2, 5, 3)
    _close(out_ours, out_theirs, dtype)
    upstream = rng.standard_normal((2, 5, 3)).astype(dtype)
    out_ours.backward(cr.tensor(upstream))
    out_theirs.backward(torch.tensor(upstream))
    _close(d_ours.grad, d_theirs.grad, dtype)
    _close(v_ours.grad, v_theirs.grad, dtype)


def test_product_errors_name_the_shapes_and_dtypes() -> None:
    s = cr.sparse_coo_tensor([[0, 1], [1, 2]], [1.0, 2.0], (2, 3))
    with pytest.raises(ValueError, match=r"mm: .*differ; got sizes \(2, 3\) and \(4, 2\)"):
        cr.sparse.mm(s, cr.ones(4, 2))
    with pytest.raises(
        TypeError, match="mm: .* one dtype; got chainrule.float32 and chainrule.float64"
    ):
        s @ cr.ones(3, 2, dtype=cr.float64)
    with pytest.raises(ValueError, match=r"1-D or 2-D dense operand; got shape \(3, 2, 2\)"):
        s @ cr.ones(3, 2, 2)
    with pytest.raises(NotImplementedError, match="product of two sparse tensors"):
        s @ s.t()
    with pytest.raises(ValueError, match=r"matmul: .*differ; got sizes \(4, 3\) and \(2, 3\)"):
        cr.ones(4, 3) @ s
    with pytest.raises(ValueError, match="mm: expects a sparse matrix"):
        cr.sparse.mm(cr.ones(2, 3), cr.ones(3, 2))


# -- sums, softmax, elementwise forms, transpose -------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [None, 0, 1, -1, (0, 1)])
def test_sparse_sum(dim, dtype) -> None:
    rng = np.random.default_rng(4)
    indices, values = _coo(rng, (4, 3), 8, dtype)
    v_ours, v_theirs, s_ours, s_theirs = _on_leaf_values(indices, values, (4, 3))
    args = () if dim is None else (dim,)
    out_ours, out_theirs = cr.sparse.sum(s_ours, *args), torch.sparse.sum(s_theirs, *args)
    assert out_ours.is_sparse is out_theirs.is_sparse and out_ours.shape == tuple(out_theirs.shape)
    _close(out_ours, out_theirs, dtype)
    _close(s_ours.sum(*args), out_theirs, dtype)
    ours_dense = out_ours.to_dense() if out_ours.is_sparse else out_ours
    theirs_dense = out_theirs.to_dense() if out_theirs.is_sparse else out_theirs
    upstream = rng.standard_normal(theirs_dense.shape).astype(dtype)
    (ours_dense * cr.tensor(upstream)).sum().backward()
    (theirs_dense * torch.tensor(upstream)).sum().backward()
    _close(v_ours.grad, v_theirs.grad, dtype)


def test_hybrid_tensors_coalesce_and_sum_over_their_dense_dim() -> None:
    indices = [[0, 1, 1, 0], [1, 0, 2, 1]]
    rows = np.arange(8.0).reshape(4, 2)  # each entry a row of 2: one dense dim
    ours = cr.sparse_coo_tensor(indices, cr.tensor(rows), (2, 3, 2))
    theirs = torch.sparse_coo_tensor(indices, torch.tensor(rows), (2, 3, 2))
    _close(ours.coalesce()._values(), theirs.coalesce()._values(), np.float64)
    for dim in (2, 0, (0, 2)):
        out_ours, out_theirs = cr.sparse.sum(ours, dim), torch.sparse.sum(theirs, dim)
        assert out_ours.shape == tuple(out_theirs.shape)
        _close(out_ours, out_theirs, np.float64, f"dim {dim}")


def test_the_dtype_arguments_and_to_sparses_range() -> None:
    s = cr.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], (2, 2))
    assert cr.sparse.sum(s, dtype=cr.float64).dtype == cr.float64
    assert cr.sparse.softmax(s, 1, dtype=cr.float64).dtype == cr.float64
    assert cr.sparse.log_softmax(s, 1, dtype=cr.float64).dtype == cr.float64
    with pytest.raises(ValueError, match=r"to_sparse: sparse_dim must lie in \[1, 2\]; got 3"):
        cr.ones(2, 3).to_sparse(3)
    with pytest.raises(ValueError, match="sparse.softmax: expects a sparse tensor of 0 dense"):
        cr.sparse.softmax(cr.ones(2, 2), 1)
    with pytest.raises(TypeError, match="sparse.sum: expects a sparse tensor"):
        cr.sparse.sum(cr.ones(2, 2))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_sparse_softmax_over_the_given_entries(name, dim, dtype) -> None:
    rng = np.random.default_rng(5)
    indices, values = _coo(rng, (5, 4), 12, dtype)
    v_ours, v_theirs, s_ours, s_theirs = _on_leaf_values(indices, values, (5, 4))
    out_ours = getattr(cr.sparse, name)(s_ours, dim)
    # torch's backward mishandles dim=-1 (its gradient differs from dim=1's, which finite
    # differences confirm): torch is given the dim as a non-negative one
    out_theirs = getattr(torch.sparse, name)(s_theirs, dim % 2)
    assert out_ours.is_coalesced() and out_theirs.is_coalesced()
    _same_entries_and_gradients(out_ours, out_theirs, v_ours, v_theirs, rng, dtype)


FORMS = {
    "dense + sparse": (lambda d, s: d + s),
    "dense - sparse": (lambda d, s: d - s),
    "sparse * 2.5": (lambda d, s: s * 2.5),
    "3 * sparse": (lambda d, s: 3 * s),
    "sparse / 4": (lambda d, s: s / 4),
    "-sparse": (lambda d, s: -s),
    "sparse + sparse": (lambda d, s: s + s * 2),
    "sparse - sparse": (lambda d, s: s - s * 3),
    "t()": (lambda d, s: s.t()),
    "T": (lambda d, s: s.T),
    "transpose": (lambda d, s: s.transpose(0, 1)),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(FORMS))
def test_elementwise_forms_and_transpose(name, dtype) -> None:
    rng = np.random.default_rng(6)
    indices, values = _coo(rng, (3, 4), 6, dtype)
    dense = rng.standard_normal((3, 4)).astype(dtype)
    d_ours, d_theirs = cr.tensor(dense, requires_grad=True), torch.tensor(dense, requires_grad=True)
    v_ours, v_theirs, s_ours, s_theirs = _on_leaf_values(indices, values, (3, 4))
    out_ours, out_theirs = FORMS[name](d_ours, s_ours), FORMS[name](d_theirs, s_theirs)
    assert out_ours.is_sparse is out_theirs.is_sparse and out_ours.shape == tuple(out_theirs.shape)
    _close(out_ours, out_theirs, dtype)
    ours_dense = out_ours.to_dense() if out_ours.is_sparse else out_ours
    theirs_dense = out_theirs.to_dense() if out_theirs.is_sparse else out_theirs
    upstream = rng.standard_normal(theirs_dense.shape).astype(dtype)
    (ours_dense * cr.tensor(upstream)).sum().backward()
    (theirs_dense * torch.tensor(upstream)).sum().backward()
    _close(v_ours.grad, v_theirs.grad, dtype)
    if d_theirs.grad is not None:
        _close(d_ours.grad, d_theirs.grad, dtype)


def test_sparse_plus_dense_is_torchs_error() -> None:
    s = cr.sparse_coo_tensor([[0], [1]], [1.0], (2, 2))
    with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported"):
        s + cr.ones(2, 2)
    with pytest.raises(ValueError, match=r"add: the sizes .* differ; got \(3, 2\) and \(2, 2\)"):
        cr.ones(3, 2) + s


# the sparse functions as functions of the values (and of the dense operand), for gradcheck
# and gradgradcheck against central differences in float64
INDICES = [[0, 2, 1, 0, 2], [1, 0, 2, 1, 1]]  # (0, 1) twice


def _s(v: Any) -> Any:
    return cr.sparse_coo_tensor(INDICES, v, (3, 3))


CHECKED = {
    "mm": (lambda v, d: cr.sparse.mm(_s(v), d)),
    "dense @ sparse": (lambda v, d: d.t() @ _s(v)),
    "to_dense": (lambda v, d: _s(v).to_dense() * d[:, :1]),
    "coalesce": (lambda v, d: _s(v).coalesce().values()),
    "sum": (lambda v, d: cr.sparse.sum(_s(v), 0).to_dense()),
    "softmax": (lambda v, d: cr.sparse.softmax(_s(v), 1).values()),
    "log_softmax": (lambda v, d: cr.sparse.log_softmax(_s(v), 0).values()),
}


@pytest.mark.parametrize("name", list(CHECKED))
def test_gradients_against_finite_differences(name) -> None:
    rng = np.random.default_rng(7)
    v = cr.tensor(rng.standard_normal(5), requires_grad=True)
    d = cr.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    assert cr.testing.gradcheck(CHECKED[name], (v, d))
    assert cr.testing.gradgradcheck(CHECKED[name], (v, d))


def test_methods_that_keep_the_tensor_sparse() -> None:
    s = cr.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], (2, 2))
    for made in (s.detach(), s.clone(), s.double(), s.to(cr.float64), s.float(), s.to_sparse()):
        assert made.is_sparse and made.shape == (2, 2) and made._nnz() == 2
        np.testing.assert_array_equal(made.to_dense().numpy(), s.to_dense().numpy())
    assert s.double().dtype == cr.float64 and s.to_dense(cr.float64).dtype == cr.float64
    assert not s.requires_grad and s.requires_grad_() is s and s.requires_grad and s.is_leaf
    (s * 2).to_dense().sum().backward()
    assert s.grad.is_sparse and s.grad.to_dense().tolist() == [[0.0, 2.0], [2.0, 0.0]]
    s.grad = None  # as optimizer.zero_grad() sets it
    assert s.grad is None and s._values().grad is None
    made = cr.sparse_coo_tensor([[0], [1]], cr.tensor([1.0], requires_grad=True), (2, 2))
    assert not made.is_leaf and made.grad_fn.name() == "SparseCooTensorWithDimsAndTensorsBackward0"
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf"):
        made.requires_grad_(False)


# -- refusals ----------------------------------------------------------------------------------

REFUSED = [  # (the op the error names, the call)
    ("exp", lambda s: s.exp()),
    ("exp", lambda s: cr.exp(s)),
    ("view", lambda s: s.view(4)),
    ("reshape", lambda s: s.reshape(4)),
    ("getitem", lambda s: s[0]),
    ("numpy", lambda s: s.numpy()),
    ("tolist", lambda s: s.tolist()),
    ("item", lambda s: s.item()),
    ("gt", lambda s: s > 0),
    ("cat", lambda s: cr.cat([s, s])),
    ("softmax", lambda s: s.softmax(1)),
    ("softmax", lambda s: cr.nn.functional.softmax(s, 1)),
    ("mean", lambda s: s.mean()),
    ("backward", lambda s: s.backward()),
    ("relu", lambda s: cr.nn.functional.relu(s)),
    ("linear", lambda s: cr.nn.Linear(2, 2)(s)),
    ("add_", lambda s: s.add_(1.0)),
    ("data", lambda s: s.data),
    ("copy_", lambda s: cr.ones(2, 2).copy_(s)),
    ("maximum", lambda s: cr.maximum(cr.ones(2, 2), s)),
]


@pytest.mark.parametrize(
    ("op", "call"), REFUSED, ids=[f"{i}-{op}" for i, (op, _) in enumerate(REFUSED)]
)
def test_dense_ops_refuse_a_sparse_tensor_by_name(op, call) -> None:
    s = cr.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], (2, 2), requires_grad=True)
    with pytest.raises(NotImplementedError) as caught:
        call(s)
    assert str(caught.value) == (
        f"{op}: not supported on a sparse tensor (layout=torch.sparse_coo, size (2, 2)); "
        "call .to_dense() first"
    )


def test_constructor_errors_name_what_is_wrong() -> None:
    i = [[0, 1, 1], [1, 0, 2]]
    with pytest.raises(
        ValueError, match="same nnz, but got nnz from indices: 3, nnz from values: 2"
    ):
        cr.sparse_coo_tensor(i, [1.0, 2.0], (2, 3))
    with pytest.raises(
        ValueError, match=r"'len\(size\) == sparse_dim \+ dense_dim'.*len\(size\) = 1"
    ):
        cr.sparse_coo_tensor(i, [1.0, 2.0, 3.0], (2,))
    with pytest.raises(ValueError, match=r"indices of dim 1 must lie in \[0, 2\); got \[0, 2\]"):
        cr.sparse_coo_tensor(i, [1.0, 2.0, 3.0], (2, 2))
    with pytest.raises(
        ValueError, match=r"indices must be 2-D \(sparse_dim, nnz\); got shape \(3,\)"
    ):
        cr.sparse_coo_tensor([0, 1, 2], [1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="indices must be integers; got dtype chainrule.float64"):
        cr.sparse_coo_tensor([[0.5]], [1.0])
    with pytest.raises(ValueError, match="sparse tensors live on the CPU only"):
        cr.sparse_coo_tensor(i, [1.0, 2.0, 3.0], device="cuda")


# -- scipy, imported on first use ----------------------------------------------------------------


def test_importing_chainrule_does_not_import_scipy() -> None:
    code = "import sys, chainrule; assert 'scipy' not in sys.modules, 'scipy imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_without_scipy_the_first_sparse_call_names_the_extra(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "scipy", None)  # import scipy.sparse raises ImportError
    monkeypatch.setitem(sys.modules, "scipy.sparse", None)
    with pytest.raises(ImportError, match=r'pip install "chainrule\[sparse\]"'):
        cr.sparse_coo_tensor([[0], [0]], [1.0])
    with pytest.raises(ImportError, match=r"chainrule\[sparse\]"):
        cr.ones(2, 2).to_sparse()


# -- a whole program -------------------------------------------------------------------------------


def test_a_gcn_on_a_sparse_normalised_adjacency_trains_as_on_torch() -> None:
    theirs, ours = twins("gcn")
    assert ours["nnz"] == theirs["nnz"]  # of the adjacency and of the features
    np.testing.assert_allclose(ours["adjacency_sum"], theirs["adjacency_sum"], rtol=1e-6)
    assert_follows(ours["losses"], theirs["losses"], F32)
    assert ours["losses"][-1] < 0.2 * ours["losses"][0]  # it fits the labels
    assert ours["accuracy"] == theirs["accuracy"] and ours["accuracy"] > 0.8
    np.testing.assert_allclose(ours["hidden"], theirs["hidden"], rtol=10 * F32, atol=1e-5)
