"""The selections, strided views, splits, joins and searches beyond the catalog: views that
share memory and version counter, writes through them, in-place forms, the searches' and
run-length answers against PyTorch's, and the refusals' messages."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr


def _same(ours: cr.Tensor, theirs: torch.Tensor) -> None:
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).rsplit(".", 1)[1] == str(theirs.dtype).rsplit(".", 1)[1]
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())


VIEWS = {
    "diagonal": lambda x: x.diagonal(1),
    "unfold": lambda x: x.unfold(1, 2, 2),
    "as_strided": lambda x: x.as_strided((2, 2), (1, 4), 1),
    "select": lambda x: x.select(0, 1),
    "movedim": lambda x: x.movedim(0, 1),
    "tensor_split": lambda x: x.tensor_split(2, 1)[1],
    "mH": lambda x: x.mH,
}


@pytest.mark.parametrize("name", VIEWS)
def test_views_share_memory_and_version_counter(name: str) -> None:
    x = cr.arange(12.0).reshape(3, 4)
    xt = torch.arange(12.0).reshape(3, 4)
    v, vt = VIEWS[name](x), VIEWS[name](xt)
    assert v._is_view() and vt._is_view()
    before = x._version
    v.mul_(10)
    vt.mul_(10)
    assert x._version == before + 1
    _same(x, xt)


def test_a_write_into_a_diagonal_reaches_the_gradient_as_pytorchs() -> None:
    a = cr.tensor(np.arange(1.0, 10.0).reshape(3, 3), requires_grad=True)
    at = torch.tensor(np.arange(1.0, 10.0).reshape(3, 3), requires_grad=True)
    for x, mod in ((a, cr), (at, torch)):
        y = x * 1.0
        y.diagonal().mul_(mod.tensor([2.0, 3.0, 4.0], dtype=x.dtype))
        (y * y).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), at.grad.numpy())


def test_as_strided_reads_the_memory_a_slice_views() -> None:
    base, base_t = cr.arange(10.0), torch.arange(10.0)
    v, vt = base[5:].as_strided((2, 2), (1, 2), 0), base_t[5:].as_strided((2, 2), (1, 2), 0)
    _same(v, vt)
    assert base[3:].storage_offset() == 3


def test_node_names_are_pytorchs() -> None:
    x = cr.ones(3, 4, requires_grad=True)
    assert x.diagonal().grad_fn.name() == "DiagonalBackward0"
    assert x.unfold(0, 2, 1).grad_fn.name() == "UnfoldBackward0"
    assert x.as_strided((2,), (1,)).grad_fn.name() == "AsStridedBackward0"
    assert x[0].diag_embed().grad_fn.name() == "DiagEmbedBackward0"
    assert x.select(1, 0).grad_fn.name() == "SelectBackward0"
    assert x.movedim(0, 1).grad_fn.name() == "PermuteBackward0"  # as PyTorch names it


INPLACE = {
    "put_": lambda m, x: x.put_(m.tensor([0, 5, 5]), m.tensor([1.0, 2.0, 3.0]), True),
    "index_copy_": lambda m, x: x.index_copy_(1, m.tensor([2, 0]), m.ones(2, 2)),
    "masked_scatter_": lambda m, x: x.masked_scatter_(m.tensor([True, False, True]), m.ones(4)),
    "scatter_add_": lambda m, x: x.scatter_add_(1, m.tensor([[0, 0], [2, 1]]), m.ones(2, 2)),
    "scatter_reduce_": lambda m, x: x.scatter_reduce_(
        1, m.tensor([[0, 0], [2, 1]]), m.full((2, 2), 5.0), "amax", include_self=False
    ),
}


@pytest.mark.parametrize("name", INPLACE)
def test_in_place_forms_write_into_self(name: str) -> None:
    x, xt = cr.arange(6.0).reshape(2, 3), torch.arange(6.0).reshape(2, 3)
    out, out_t = INPLACE[name](cr, x), INPLACE[name](torch, xt)
    assert out is x and out_t is xt
    assert x._version == 1
    _same(x, xt)


MASKS = {  # self's shape, the mask's: rows of one pattern (broadcast; past 1,024 places), or not
    "pattern_rows": ((400, 3), [True, False, True]),
    "pattern_planes": ((3, 100, 4), [[[True, False, False, True]] * 100]),
    "pattern_few": ((4, 3), [True, False, True]),
    "one_value": ((2, 3), True),
    "none_taken": ((2, 3), [False, False, False]),
    "broadcast_inside": ((2, 4, 3), [[[True, False, True]], [[False, True, True]]]),
    "self_broadcast": ((3,), [[True, False, True], [False, True, False]]),
}


@pytest.mark.parametrize("name", MASKS)
def test_masked_scatter_fills_in_order_as_pytorchs(name: str) -> None:
    shape, mask = MASKS[name]
    size = int(np.prod(shape)) * 2
    x, source = np.arange(1.0, 1.0 + size / 2).reshape(shape), np.arange(-size, 0.0)
    outs = []
    for m in (cr, torch):
        a = m.tensor(x, requires_grad=True)
        s = m.tensor(source, requires_grad=True)
        out = a.masked_scatter(m.tensor(mask), s)
        upstream = m.arange(1.0, 1.0 + out.numel(), dtype=out.dtype).reshape(out.shape)
        (out * upstream).sum().backward()
        outs.append((out, a.grad, s.grad))
    for ours, theirs in zip(*outs, strict=True):
        _same(ours, theirs)


SEARCHES = {
    "nan_in_both": lambda m: m.searchsorted(
        m.tensor([1.0, 2.0, float("nan")]), m.tensor([float("nan"), 5.0, 0.5, 2.0])
    ),
    "nan_right": lambda m: m.searchsorted(
        m.tensor([1.0, float("nan")]), m.tensor([float("nan"), 1.0]), right=True
    ),
    "rows": lambda m: m.searchsorted(
        m.tensor([[1.0, 3.0], [2.0, 4.0]]), m.tensor([[3.0, 0.0], [4.0, 9.0]]), side="right"
    ),
    "sorter": lambda m: m.searchsorted(
        m.tensor([3, 1, 2]), m.tensor([2, 0, 5]), sorter=m.tensor([1, 2, 0])
    ),
    "promoted": lambda m: m.searchsorted(m.tensor([1, 2]), m.tensor([1.5])),
    "scalar": lambda m: m.searchsorted(m.tensor([1.0, 2.0]), 2.0, out_int32=True),
    "bucketize": lambda m: m.bucketize(m.tensor([[0.5, 1.0], [2.0, 9.0]]), m.tensor([1.0, 2.0])),
    "bucketize_right": lambda m: m.bucketize(m.tensor([1, 2]), m.tensor([1, 2]), right=True),
    "isin": lambda m: m.isin(m.tensor([[1, 2], [3, 4]]), m.tensor([4.0, 1.0])),
    "isin_invert": lambda m: m.isin(m.tensor([1.0, float("nan")]), 1.0, invert=True),
    "tril_indices": lambda m: m.tril_indices(3, 5, -1),
    "triu_indices": lambda m: m.triu_indices(4, 2, 1, dtype=m.int32),
    "logspace": lambda m: m.logspace(-2, 2, 7),
    "logspace_base": lambda m: m.logspace(0, 10, 6, base=2, dtype=m.int64),
    "logspace_float64": lambda m: m.logspace(1, 0, 4, dtype=m.float64),
}


@pytest.mark.parametrize("name", SEARCHES)
def test_searches_and_index_factories_are_pytorchs(name: str) -> None:
    ours, theirs = SEARCHES[name](cr), SEARCHES[name](torch)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).rsplit(".", 1)[1] == str(theirs.dtype).rsplit(".", 1)[1]
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


RUNS = [
    ([1, 1, 2, 2, 3, 1, 1, 2], None),
    ([[1, 2], [1, 2], [3, 4], [1, 2]], 0),
    ([[1, 1, 2], [3, 3, 1]], 1),
    ([5.0], None),
    ([], None),
]


@pytest.mark.parametrize(("values", "dim"), RUNS)
def test_unique_consecutive_is_pytorchs(values: list, dim: int | None) -> None:
    ours = cr.tensor(values).unique_consecutive(True, True, dim)
    theirs = torch.tensor(values).unique_consecutive(True, True, dim)
    for a, b in zip(ours, theirs, strict=True):
        _same(a, b)
    _same(
        cr.unique_consecutive(cr.tensor(values), dim=dim),
        torch.tensor(values).unique_consecutive(dim=dim),
    )


def test_broadcast_shapes_and_tensors() -> None:
    assert cr.broadcast_shapes((2, 1), 3, (1,)) == torch.broadcast_shapes((2, 1), 3, (1,))
    a, b = cr.broadcast_tensors(cr.ones(2, 1), cr.ones(3))
    assert a.shape == b.shape == (2, 3) and a._is_view()


REFUSALS = [
    (lambda: cr.ones(3, 4).diagonal(0, 1, -1), "diagonal: dim1 and dim2 must differ"),
    (lambda: cr.ones(2, 3).unfold(1, 4, 1), "unfold: size must be in [0, 3]"),
    (lambda: cr.ones(2, 3).unfold(1, 2, 0), "unfold: step must be positive"),
    (lambda: cr.ones(3).as_strided((4,), (1,)), "as_strided: size (4,), stride (1,) and offset 0"),
    (lambda: cr.ones(3).as_strided((2,), (-1,)), "none negative"),
    (lambda: cr.ones(2, 3).select(1, 3), "select: index 3 is out of range for dim 1 of size 3"),
    (lambda: cr.tensor(1.0).select(0, 0), "select: cannot be applied to a 0-d tensor"),
    (lambda: cr.ones(2, 3).movedim([0, 0], [0, 1]), "movedim: repeated dim"),
    (lambda: cr.tensor(1.0).tensor_split(2), "tensor_split: expects a tensor of at least 1 dim"),
    (lambda: cr.ones(2, 3).hsplit(2), "hsplit: the size 3 of dim 1 is not divisible by 2"),
    (lambda: cr.ones(3).fliplr(), "fliplr"),
    (lambda: cr.ones(2, 3).rot90(1, [0, 0]), "rot90: the two dims must differ"),
    (lambda: cr.ones(6).take(cr.tensor([6])), "take: index 6 is out of range for a tensor of 6"),
    (lambda: cr.ones(6).take(cr.tensor([1], dtype=cr.int32)), "take: index must be an int64"),
    (lambda: cr.ones(6).put(cr.tensor([1]), cr.ones(2)), "put: source and index must have"),
    (lambda: cr.ones(3).masked_scatter(cr.tensor([True] * 3), cr.ones(2)), "masked_scatter: mask"),
    (lambda: cr.ones(3).trace(), "trace: expects a matrix; got shape (3,)"),
    (lambda: cr.ones(2, 4).cross(cr.ones(2, 4)), "cross: dim -1 must have size 3"),
    (lambda: cr.ones(3).vdot(cr.ones(4)), "vdot: expects two 1-D tensors of one size"),
    (lambda: cr.tril_indices(-1, 3), "tril_indices: row and col must not be negative"),
    (lambda: cr.isin(cr.tensor([True]), cr.tensor([1])), "isin: bool tensors are not supported"),
    (
        lambda: cr.searchsorted(cr.ones(2), cr.ones(1), side="left", right=True),
        "searchsorted: side must be 'left' or 'right' and agree with right",
    ),
    (lambda: cr.tensordot(cr.ones(2, 3), cr.ones(4, 2), ([1], [0])), "contracted dims differ"),
    (lambda: cr.cdist(cr.ones(3, 2), cr.ones(4, 3)), "cdist: expects x1 (..., P, M)"),
    (lambda: cr.block_diag(cr.ones(2, 2, 2)), "block_diag: expects tensors of at most 2 dims"),
    (lambda: cr.ones(2, 3).select_scatter(cr.ones(2), 0, 0), "select_scatter: src must have"),
    (lambda: cr.ones(2, 3).index_reduce(0, [0], cr.ones(1, 3), "sum"), "index_reduce: reduce"),
    (lambda: cr.ones(2, 3).sum_to_size(2), "sum_to_size: size (2,) is not one"),
    (lambda: cr.unravel_index(cr.tensor([6]), (2, 3)), "unravel_index: an index is out of range"),
    (
        lambda: cr.zeros(2, 0).unique_consecutive(dim=0),
        "unique_consecutive: dims of size 0 that are not dim",
    ),
]


@pytest.mark.parametrize(("call", "message"), REFUSALS, ids=[m for _, m in REFUSALS])
def test_refusals_name_the_op_and_what_is_wrong(call, message: str) -> None:
    with pytest.raises((ValueError, TypeError, IndexError)) as err:
        call()
    assert message in str(err.value)


def test_randint_like_draws_in_inputs_shape_and_dtype() -> None:
    cr.manual_seed(0)
    x = cr.zeros(200, 3, dtype=cr.int32)
    drawn = cr.randint_like(x, 2, 5)
    assert drawn.shape == (200, 3) and drawn.dtype == cr.int32
    assert set(np.unique(drawn.numpy())) == {2, 3, 4}
    assert cr.randint_like(cr.zeros(4), 3).dtype == cr.float32


def test_unravel_index_is_pytorchs() -> None:
    index = [[0, 5], [23, -1]]
    ours = cr.unravel_index(cr.tensor(index, dtype=cr.int32), (2, 3, 4))
    theirs = torch.unravel_index(torch.tensor(index, dtype=torch.int32), (2, 3, 4))
    for a, b in zip(ours, theirs, strict=True):
        _same(a, b)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int64", "int16", "uint8"])
def test_logspace_is_torchs_to_the_last_bit(dtype: str) -> None:
    """The exponents counted from each end, the ends and their difference in the dtype, and
    the C library's power: NumPy's vector power differs in the last bit."""
    rng = np.random.default_rng(7)
    for _ in range(60):
        start, end = rng.uniform(-1, 4, 2) if dtype in ("int16", "uint8") else rng.uniform(-3, 3, 2)
        steps, base = int(rng.integers(0, 30)), float(rng.choice([10.0, 2.0, 3.7]))
        try:
            want = torch.logspace(start, end, steps, base, dtype=getattr(torch, dtype))
        except RuntimeError:  # one step that does not fit the dtype
            with pytest.raises(RuntimeError, match="logspace: .* does not fit in"):
                cr.logspace(start, end, steps, base, dtype=getattr(cr, dtype))
            continue
        _same(cr.logspace(start, end, steps, base, dtype=getattr(cr, dtype)), want)


@pytest.mark.parametrize(
    "make",
    [
        lambda m, x: m.cat([x.to(memory_format=m.channels_last)] * 2, 1),
        lambda m, x: m.cat([x.to(memory_format=m.channels_last), x], 1),
        lambda m, x: m.cat([x.transpose(1, 2), x.transpose(1, 2).double()], 0),
        lambda m, x: m.cat([m.zeros(2, 4, 1, 5), x.transpose(1, 2)], 2),
        lambda m, x: m.cat([x[:, :, ::2], x[:, :, 1::2]], 2),
    ],
)
def test_cat_lays_out_its_result_as_pytorchs(make: object) -> None:
    """Row-major, or channels last where every input is; NumPy follows the inputs' order."""
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)
    ours, theirs = make(cr, cr.tensor(x)), make(torch, torch.tensor(x))  # type: ignore[operator]
    assert ours.stride() == theirs.stride()
    _same(ours, theirs)
