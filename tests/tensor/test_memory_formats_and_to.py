"""Tensor.to's positional forms, the memory formats (cr.channels_last, ...) wherever
memory_format= is taken and casts to bfloat16 on the graph, against PyTorch."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

import chainrule as cr

X = np.random.default_rng(4).standard_normal((2, 3, 4, 5)).astype(np.float32)


def _named(lib: object, value: object) -> object:
    """A dtype's name as lib's dtype ('cpu' and flags as they are)."""
    found = getattr(lib, value, None) if isinstance(value, str) else None
    return found if isinstance(found, (cr.dtype, torch.dtype)) else value


def _both() -> tuple[cr.Tensor, torch.Tensor]:
    return cr.tensor(X, requires_grad=True), torch.tensor(X, requires_grad=True)


@pytest.mark.parametrize(
    ("args", "fmt"),
    [
        (("cpu", "float64", False, True), None),
        (("cpu", "float64", True, False), "channels_last"),
        (("float64", False, True), "preserve_format"),
        (("float32", False, True), None),  # copy=True: a copy even of the same dtype
        (("float32", False, False), None),  # itself
        ((), "channels_last"),
        (("other", False, True), None),
    ],
)
def test_to_positional_forms_and_memory_format_as_torch(args: tuple, fmt: str | None) -> None:
    c, t = _both()
    other = (cr.zeros(1, dtype=cr.float64), torch.zeros(1, dtype=torch.float64))
    ca = tuple(other[0] if a == "other" else _named(cr, a) for a in args)
    ta = tuple(other[1] if a == "other" else _named(torch, a) for a in args)
    ckw = {} if fmt is None else {"memory_format": getattr(cr, fmt)}
    tkw = {} if fmt is None else {"memory_format": getattr(torch, fmt)}
    ours, theirs = c.to(*ca, **ckw), t.to(*ta, **tkw)
    assert (ours is c) == (theirs is t)
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
    assert ours.stride() == theirs.stride()
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
    if ours is not c:
        assert ours.grad_fn.name() == theirs.grad_fn.name()
        g = np.random.default_rng(1).standard_normal(X.shape)
        ours.backward(cr.tensor(g, dtype=ours.dtype))
        theirs.backward(torch.tensor(g, dtype=theirs.dtype))
        assert c.grad.dtype == cr.float32
        np.testing.assert_allclose(c.grad.numpy(), t.grad.numpy(), rtol=1e-6)


def test_memory_formats_print_pickle_and_lay_out_as_torch() -> None:
    for name in ("contiguous_format", "preserve_format", "channels_last", "channels_last_3d"):
        fmt = getattr(cr, name)
        assert repr(fmt) == repr(getattr(torch, name))
        assert pickle.loads(pickle.dumps(fmt)) is fmt
    c, t = _both()
    for op in ("clone", "contiguous"):
        ours = getattr(c, op)(memory_format=cr.channels_last)
        theirs = getattr(t, op)(memory_format=torch.channels_last)
        assert ours.stride() == theirs.stride() == (60, 1, 15, 3)
        assert ours.grad_fn.name() == theirs.grad_fn.name() == "CloneBackward0"
        assert ours.is_contiguous(memory_format=cr.channels_last)
        assert not ours.is_contiguous()
        assert ours.contiguous().stride() == theirs.contiguous().stride()
        assert ours.clone().stride() == theirs.clone().stride()  # preserved
        for like in ("zeros_like", "empty_like", "ones_like"):
            assert getattr(cr, like)(ours).stride() == getattr(torch, like)(theirs).stride()
    assert c.clone().grad_fn.name() == t.clone().grad_fn.name()
    assert c.double(memory_format=cr.channels_last).stride() == (60, 1, 15, 3)
    five = cr.zeros(2, 3, 4, 5, 6).contiguous(memory_format=cr.channels_last_3d)
    assert (
        five.stride()
        == torch.zeros(2, 3, 4, 5, 6).contiguous(memory_format=torch.channels_last_3d).stride()
    )
    perm = cr.zeros(2, 3, 4, 5).permute(3, 2, 1, 0)
    assert (
        cr.empty_like(perm).stride()
        == torch.empty_like(torch.zeros(2, 3, 4, 5).permute(3, 2, 1, 0)).stride()
    )


def test_memory_format_refusals() -> None:
    with pytest.raises(RuntimeError, match="to: required rank 4 tensor to use channels_last"):
        cr.zeros(3).to(memory_format=cr.channels_last)
    with pytest.raises(TypeError, match="clone: memory_format must be a cr.memory_format"):
        cr.zeros(3).clone(memory_format=1)


def test_bfloat16_cast_stays_on_the_graph_as_torch() -> None:
    c, t = _both()
    ours, theirs = c.bfloat16(), t.bfloat16()
    assert ours.grad_fn.name() == theirs.grad_fn.name() == "ToCopyBackward0"
    g = np.random.default_rng(2).standard_normal(X.shape).astype(np.float32)
    ours.float().backward(cr.tensor(g))
    theirs.float().backward(torch.tensor(g))
    assert c.grad.dtype == cr.float32
    np.testing.assert_array_equal(c.grad.numpy(), t.grad.float().numpy())
    assert c.half().grad_fn.name() == t.half().grad_fn.name()
