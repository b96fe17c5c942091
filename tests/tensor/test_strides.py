"""Strides, storage offsets, contiguity and shared memory, as PyTorch's: read from the array,
views that share memory where PyTorch's do, view() refused where PyTorch refuses it,
contiguous() a copy only where needed, as_tensor on the array's memory."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr

# (name, a program of views on a base of shape (2, 3, 4)); each runs on both libraries
VIEWS: list[tuple[str, Callable[[Any], Any]]] = [
    ("itself", lambda x: x),
    ("x[1]", lambda x: x[1]),
    ("x[:, 1]", lambda x: x[:, 1]),
    ("x[1, 2]", lambda x: x[1, 2]),
    ("x[1, 2, 3]", lambda x: x[1, 2, 3]),
    ("x[..., ::2]", lambda x: x[..., ::2]),
    ("x[1:, 1:, 2:]", lambda x: x[1:, 1:, 2:]),
    ("x[:, None]", lambda x: x[:, None]),
    ("transpose(0, 2)", lambda x: x.transpose(0, 2)),
    ("permute(1, 2, 0)", lambda x: x.permute(1, 2, 0)),
    ("mT", lambda x: x.mT),
    ("x[0].t()", lambda x: x[0].t()),
    ("unsqueeze(1)", lambda x: x.unsqueeze(1)),
    ("transpose then unsqueeze", lambda x: x.transpose(0, 1).unsqueeze(-1)),
    ("narrow(2, 1, 2)", lambda x: x.narrow(2, 1, 2)),
    ("x[:, :1] squeezed", lambda x: x[:, :1].squeeze(1)),
    ("expand", lambda x: x[:, :1].expand(2, 5, 4)),
    ("view(6, 4)", lambda x: x.view(6, 4)),
    ("view(-1)", lambda x: x.view(-1)),
    ("flatten(1)", lambda x: x.flatten(1)),
    ("unflatten", lambda x: x.unflatten(2, (2, 2))),
    ("x[1:].view(12)", lambda x: x[1:].view(12)),
    ("x[:, 1:].reshape(2, 8)", lambda x: x[:, 1:].reshape(2, 8)),
    ("split(1, 1)[1]", lambda x: x.split(1, 1)[1]),
    ("chunk(2, 2)[1]", lambda x: x.chunk(2, 2)[1]),
    ("unbind(1)[2]", lambda x: x.unbind(1)[2]),
]


def _base(lib: Any) -> Any:
    return lib.arange(24.0).reshape(2, 3, 4)


@pytest.mark.parametrize(("name", "fn"), VIEWS, ids=[v[0] for v in VIEWS])
def test_stride_offset_and_contiguity_are_torchs(name: str, fn: Callable[[Any], Any]) -> None:
    x, y = _base(cr), _base(torch)
    ours, theirs = fn(x), fn(y)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.stride() == theirs.stride()
    assert ours.storage_offset() == theirs.storage_offset()
    assert ours.is_contiguous() == theirs.is_contiguous()
    for d in range(-ours.ndim, ours.ndim):
        assert ours.stride(d) == theirs.stride(d)
    # a view's first element lies storage_offset elements past its base's
    assert ours.data_ptr() == x.data_ptr() + ours.storage_offset() * ours.element_size()
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("shape", [(1,), (1, 1), (3, 1), (1, 3), (), (4,), (2, 1, 3)], ids=str)
def test_contiguity_of_size_one_dims_is_torchs(shape: tuple) -> None:
    a = np.zeros(shape, np.float32)
    ours, theirs = cr.tensor(a), torch.tensor(a)
    views = [
        lambda t: t,
        lambda t: t.T,
        lambda t: t.unsqueeze(0).transpose(0, -1),
        lambda t: t[None, ..., None],
        lambda t: t[:, None] if t.ndim else t[None],
    ]
    # (A size-1 dim's step addresses nothing; NumPy's 0 for a new axis is read as PyTorch's
    # unsqueeze would give it, which holds until that dim is moved: t[None].mT differs.)
    for f in views:
        o, t = f(ours), f(theirs)
        assert (o.is_contiguous(), o.stride()) == (t.is_contiguous(), t.stride()), shape


@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0), (3, 0, 2), (2, 3, 0)], ids=str)
def test_an_empty_tensor_is_contiguous_with_torchs_strides(shape: tuple) -> None:
    # (torch.tensor of an empty array keeps NumPy's strides, all 0; a new one has these.)
    for ours in (cr.zeros(shape), cr.tensor(np.zeros(shape)), cr.zeros(2, *shape)[1]):
        theirs = torch.zeros(shape)
        assert ours.is_contiguous() and theirs.is_contiguous()
        assert ours.stride() == theirs.stride()
        assert ours.contiguous() is ours


def test_stride_of_a_bad_dim_names_it() -> None:
    with pytest.raises(IndexError, match=r"stride: dim 3 is out of range .* shape \(2, 3\)"):
        cr.zeros(2, 3).stride(3)
    with pytest.raises(IndexError):
        torch.zeros(2, 3).stride(3)


def test_a_view_shares_memory_with_its_base() -> None:
    x = cr.zeros(2, 3)
    for v in (x.view(-1), x.view(3, 2), x[1], x.t(), x.view_as(cr.zeros(6))):
        assert np.shares_memory(v.numpy(), x.numpy())
    assert x.view(-1).data_ptr() == x.data_ptr()
    assert x[1].storage_offset() == 3
    assert x[1].data_ptr() == x.data_ptr() + 3 * x.element_size()


# (name, base program, view size): torch decides which views exist
VIEW_SIZES: list[tuple[str, Callable[[Any], Any], tuple]] = [
    ("contiguous to -1", lambda x: x, (-1,)),
    ("contiguous to (4, 6)", lambda x: x, (4, 6)),
    ("t() to -1", lambda x: x.view(6, 4).t(), (-1,)),
    ("t() to (2, 2, 6)", lambda x: x.view(6, 4).t(), (2, 2, 6)),
    ("t() to (4, 3, 2)", lambda x: x.view(6, 4).t(), (4, 3, 2)),
    ("transpose(0, 1) to (3, 8)", lambda x: x.transpose(0, 1), (3, 8)),
    ("transpose(0, 1) to (6, 4)", lambda x: x.transpose(0, 1), (6, 4)),
    ("transpose(1, 2) to (2, 12)", lambda x: x.transpose(1, 2), (2, 12)),
    ("transpose(1, 2) to (8, 3)", lambda x: x.transpose(1, 2), (8, 3)),
    ("slice of the last dim to -1", lambda x: x[..., :2], (-1,)),
    ("slice of the last dim to (6, 2)", lambda x: x[..., :2], (6, 2)),
    ("slice of the first dim to -1", lambda x: x[1:], (-1,)),
    ("step 2 to (2, 3, 2, 1)", lambda x: x[..., ::2], (2, 3, 2, 1)),
    ("step 2 to -1", lambda x: x[..., ::2], (-1,)),
    ("expand to -1", lambda x: x[:, :1].expand(2, 3, 4), (-1,)),
    ("expand to (2, 3, 2, 2)", lambda x: x[:, :1].expand(2, 3, 4), (2, 3, 2, 2)),
    ("a size-1 dim transposed to -1", lambda x: x[:1].transpose(0, 1), (-1,)),
    ("empty transposed", lambda x: x[:, :0].transpose(0, 2), (-1,)),
]


@pytest.mark.parametrize(("name", "fn", "size"), VIEW_SIZES, ids=[v[0] for v in VIEW_SIZES])
def test_view_exists_where_torchs_does(name: str, fn: Callable[[Any], Any], size: tuple) -> None:
    x, y = _base(cr), _base(torch)
    src, theirs_src = fn(x), fn(y)
    try:
        theirs = theirs_src.view(size)
    except RuntimeError as e:
        assert "view size is not compatible" in str(e)
        with pytest.raises(RuntimeError) as caught:
            src.view(size)
        message = str(caught.value)
        assert message.startswith("view: view size is not compatible with input tensor's size")
        assert f"got shape {tuple(src.shape)} with stride {src.stride()}" in message
        assert message.endswith("Use .reshape(...) instead.")
        # reshape copies there, as PyTorch's
        ours = src.reshape(size)
        assert not np.shares_memory(ours.numpy(), x.numpy())
        np.testing.assert_array_equal(ours.numpy(), theirs_src.reshape(size).numpy())
        return
    ours = src.view(size)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.stride() == theirs.stride()
    assert ours.storage_offset() == theirs.storage_offset()
    if ours.numel():
        assert np.shares_memory(ours.numpy(), x.numpy())
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    # reshape is the same view where there is one
    again = src.reshape(size)
    assert again.stride() == ours.stride() and again.data_ptr() == ours.data_ptr()


def test_a_transpose_cannot_be_viewed_flat() -> None:
    x = cr.zeros(2, 3)
    with pytest.raises(RuntimeError, match=r"view: .*got shape \(3, 2\) with stride \(1, 3\)"):
        x.t().view(-1)
    assert x.t().reshape(-1).is_contiguous()
    assert x.t().contiguous().view(-1).shape == (6,)


def test_contiguous_is_the_tensor_itself_when_contiguous() -> None:
    x = cr.zeros(2, 3)
    assert x.contiguous() is x
    assert x[1].contiguous() is x[1] or x[1].contiguous().data_ptr() == x[1].data_ptr()
    assert cr.zeros(0, 3).t().contiguous().shape == (3, 0)


@pytest.mark.parametrize(
    "fn",
    [lambda x: x.t(), lambda x: x[:, ::2], lambda x: x[:, 1:], lambda x: x.unsqueeze(0).mT],
    ids=["t", "step", "slice", "mT"],
)
def test_contiguous_copies_a_non_contiguous_tensor(fn: Callable[[Any], Any]) -> None:
    a = np.arange(12.0).reshape(3, 4)
    x, y = cr.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    ours, theirs = fn(x).contiguous(), fn(y).contiguous()
    assert not fn(x).is_contiguous()
    assert ours.is_contiguous() and ours.stride() == theirs.stride()
    assert ours.storage_offset() == theirs.storage_offset() == 0
    assert not np.shares_memory(ours.numpy(), x.numpy())
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
    seed = np.random.default_rng(0).standard_normal(tuple(theirs.shape))
    (ours * cr.tensor(seed)).sum().backward()
    (theirs * torch.tensor(seed)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.grad.numpy())


def test_a_write_into_a_contiguous_copy_does_not_reach_the_original() -> None:
    x = cr.zeros(2, 3)
    c = x.t().contiguous()
    c.add_(1.0)
    assert x.sum().item() == 0.0 and c.sum().item() == 6.0


def test_as_tensor_shares_an_arrays_memory_where_dtype_and_device_match() -> None:
    a = np.arange(6.0)
    for t in (cr.as_tensor(a), cr.as_tensor(a, dtype=cr.float64), cr.as_tensor(a, device="cpu")):
        assert t.dtype == cr.float64 and np.shares_memory(t.numpy(), a)
    assert torch.as_tensor(a).dtype == torch.float64  # PyTorch keeps the array's dtype too
    step = cr.as_tensor(a[::2])
    assert np.shares_memory(step.numpy(), a) and step.stride() == torch.as_tensor(a[::2]).stride()
    a[0] = 7.0
    assert cr.as_tensor(a)[0].item() == 7.0


def test_as_tensor_copies_where_it_cannot_share() -> None:
    a = np.arange(6.0)
    converted = cr.as_tensor(a, dtype=cr.float32)
    assert converted.dtype == cr.float32 and not np.shares_memory(converted.numpy(), a)
    assert not np.shares_memory(torch.as_tensor(a, dtype=torch.float32).numpy(), a)
    backwards = cr.as_tensor(a[::-1])  # PyTorch refuses negative strides; a copy here
    assert backwards.stride() == (1,) and not np.shares_memory(backwards.numpy(), a)
    np.testing.assert_array_equal(backwards.numpy(), a[::-1])
    listed = cr.as_tensor([1.0, 2.0])
    assert listed.dtype == cr.float32


@pytest.mark.parametrize("make", [cr.tensor, cr.as_tensor], ids=["tensor", "as_tensor"])
def test_a_torch_tensor_that_requires_grad_is_refused_with_what_to_do(make: Any) -> None:
    t = torch.ones(2, 3, requires_grad=True)
    op = make.__name__
    with pytest.raises(RuntimeError, match=rf"{op}: .*requires grad \(shape \(2, 3\)\).*detach"):
        make(t)
    np.testing.assert_array_equal(make(t.detach()).numpy(), np.ones((2, 3), np.float32))
    # PyTorch's own copies its tensor detached, warning that .detach() is the way
    with pytest.warns(UserWarning, match="detach"):
        assert not torch.tensor(t).requires_grad


@pytest.mark.skipif(cr.cuda.is_available(), reason="a machine with a CUDA device")
@pytest.mark.parametrize(
    "where",
    [cr.device("cuda"), torch.device("cuda"), "cuda", torch.device("cuda", 1)],
    ids=["cr.device", "torch.device", "str", "torch.device 1"],
)
def test_to_cuda_without_a_gpu_says_there_is_none(where: Any) -> None:
    t = cr.zeros(2)
    with pytest.raises(ValueError, match="to: chainrule computes on the CPU; got device 'cuda"):
        t.to(where)
    with pytest.raises(ValueError, match="no CUDA GPU was found"):
        t.to(device=where)
    with pytest.raises(ValueError, match="no CUDA GPU was found"):
        cr.nn.Linear(2, 2).to(where)


def test_to_takes_a_torch_device() -> None:
    t = cr.zeros(2)
    assert t.to(torch.device("cpu")) is t
    assert t.to(torch.device("cpu"), cr.float64).dtype == cr.float64
    assert t.to(device=torch.device("cpu")).device == cr.device("cpu")


@pytest.mark.skipif(not cr.cuda.is_available(), reason="needs a CUDA device (or the stand-in)")
def test_as_tensor_shares_a_cuda_arrays_memory_where_it_is() -> None:
    arr = cr.arange(6.0).cuda()._array
    assert cr.as_tensor(arr)._array is arr  # no device given: where the array is
    assert cr.as_tensor(arr, device="cuda")._array is arr
    assert cr.as_tensor(arr, device="cpu").device == cr.device("cpu")
    assert cr.as_tensor(arr, dtype=cr.float64)._array is not arr


# (name, a non-contiguous tensor); its copies by clone and by a cast are laid out as PyTorch's
COPIED: list[tuple[str, Callable[[Any], Any]]] = [
    ("a column expanded", lambda m: m.ones(3, 1).expand(3, 4)),
    ("a row expanded", lambda m: m.ones(1, 4).expand(3, 4)),
    ("a transpose", lambda m: m.ones(3, 4).t()),
    ("an expanded column transposed", lambda m: m.ones(4, 1).expand(4, 3).t()),
    ("a permutation", lambda m: m.ones(2, 3, 4).permute(2, 0, 1)),
    ("a stepped slice", lambda m: m.ones(4, 6)[:, ::2]),
    ("a transposed stepped slice", lambda m: m.ones(4, 6).t()[::2]),
    ("a size-1 dim permuted", lambda m: m.ones(3, 1, 4).permute(1, 2, 0)),
    ("two dims expanded", lambda m: m.ones(1, 3, 1).expand(2, 3, 4)),
    ("expanded then permuted", lambda m: m.ones(3, 1, 5).expand(3, 4, 5).permute(2, 1, 0)),
    ("a 0-d tensor expanded", lambda m: m.ones(()).expand(2, 3)),
]


@pytest.mark.parametrize(("name", "make"), COPIED, ids=[name for name, _ in COPIED])
@pytest.mark.parametrize("copy", ["clone", "double", "half"])
def test_a_copy_keeps_torchs_memory_order(name: str, make: Callable[[Any], Any], copy: str):
    """A dense input's copy keeps its order; an expanded or stepped one is laid out densely
    in its order by stride, expanded dims where they stand (so the clone of an expanded row
    is contiguous and can be viewed flat, as PyTorch's)."""
    ours, theirs = getattr(make(cr), copy)(), getattr(make(torch), copy)()
    assert ours.stride() == theirs.stride()
    assert ours.is_contiguous() == theirs.is_contiguous()
    assert np.array_equal(ours.numpy(), theirs.numpy())
    if theirs.is_contiguous():
        assert ours.view(-1).shape == theirs.view(-1).shape
