"""Every keyword a PyTorch script passes is taken, with torch's meaning: each call below runs
on torch and on chainrule and gives equal values (and dtypes)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.helpers import torch_dtype_text

CALLS: dict[str, Any] = {
    "flip(dims=)": lambda m, t: t.flip(dims=(0,)),
    "m.flip(dims=)": lambda m, t: m.flip(t, dims=(0, 1)),
    "permute(dims=)": lambda m, t: t.permute(dims=(1, 0)),
    "m.permute(dims=)": lambda m, t: m.permute(t, dims=(1, 0)),
    "reshape(shape=)": lambda m, t: t.reshape(shape=(3, 2)),
    "m.reshape(shape=)": lambda m, t: m.reshape(t, shape=(6,)),
    "view(size=)": lambda m, t: t.view(size=(3, 2)),
    "expand(size=)": lambda m, t: t[:1].expand(size=(4, 3)),
    "repeat(repeats=)": lambda m, t: t.repeat(repeats=(2, 1)),
    "all(dim=)": lambda m, t: (t > 0).all(dim=0),
    "any(dim=, keepdim=)": lambda m, t: (t > 1).any(dim=1, keepdim=True),
    "m.all(dim=tuple)": lambda m, t: m.all(t > -5, dim=(0, 1)),
    "cumsum(dtype=)": lambda m, t: t.cumsum(0, dtype=m.float64),
    "m.cumprod(dtype=)": lambda m, t: m.cumprod(t, 1, dtype=m.float64),
    "clone(memory_format=)": lambda m, t: (
        t.clone(memory_format=m.preserve_format) if m is torch else t.clone(memory_format=None)
    ),
    "float()": lambda m, t: t.long().float(),
    "div(rounding_mode='floor')": lambda m, t: t.div(0.7, rounding_mode="floor"),
    "div(rounding_mode='trunc')": lambda m, t: t.div(-0.7, rounding_mode="trunc"),
    "int div trunc": lambda m, t: (t * 3).long().div(-2, rounding_mode="trunc"),
    "int div floor": lambda m, t: (t * 3).long().div(-2, rounding_mode="floor"),
    "m.div(rounding_mode=)": lambda m, t: m.div(t, 2, rounding_mode="floor"),
    "new_zeros(size=)": lambda m, t: t.new_zeros(size=(2,)),
    "new_ones(size=)": lambda m, t: t.new_ones(size=(1, 2)),
    "take_along_dim(indices=, dim=)": lambda m, t: t.take_along_dim(
        indices=m.tensor([[1, 0, 1]]), dim=0
    ),
    "m.take_along_dim(no dim)": lambda m, t: m.take_along_dim(t, m.tensor([5, 0, 2])),
    "swapaxes(axis0=)": lambda m, t: t.swapaxes(axis0=0, axis1=1),
    "swapdims(dim0=)": lambda m, t: t.swapdims(dim0=0, dim1=1),
    "pow(exponent=)": lambda m, t: t.pow(exponent=2),
    "m.pow(exponent=)": lambda m, t: m.pow(t, exponent=3),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_the_keyword_means_what_torchs_does(name: str) -> None:
    data = np.array([[1.5, -2.0, 3.25], [0.5, 4.0, -1.0]])
    ours = CALLS[name](cr, cr.tensor(data))
    theirs = CALLS[name](torch, torch.tensor(data))
    assert torch_dtype_text(ours.dtype) == str(theirs.dtype)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_a_size_given_twice_is_named() -> None:
    with pytest.raises(TypeError, match=r"permute: dims is given twice, as \(1, 0\) and as dims"):
        cr.ones(2, 3).permute(1, 0, dims=(1, 0))


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_as_torchs(accumulate: bool) -> None:
    got = []
    for lib in (torch, cr):
        x = lib.zeros(5, requires_grad=True)
        y = x * 1
        v = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y.index_put_((lib.tensor([0, 0, 3]),), v, accumulate=accumulate)
        (y * lib.arange(5.0)).sum().backward()
        z = lib.index_put(lib.zeros(3, 2), (lib.tensor([0, 2]),), lib.tensor(7.0))
        got.append((y.tolist() if accumulate else y.tolist()[1:], x.grad.tolist(),
                    v.grad.tolist()[2:], z.tolist()))  # fmt: skip
    assert got[0] == got[1]  # (duplicates without accumulate: the last write is torch's too)


OUT_CALLS = {
    "add": lambda m, a, b, out: m.add(a, b, alpha=2, out=out),
    "mul": lambda m, a, b, out: m.mul(a, b, out=out),
    "matmul": lambda m, a, b, out: m.matmul(a, b.T, out=out),
    "cat": lambda m, a, b, out: m.cat([a, b], dim=0, out=out),
}


@pytest.mark.parametrize("name", list(OUT_CALLS))
def test_out_writes_the_result_into_the_given_tensor(name: str) -> None:
    data = np.arange(6.0).reshape(2, 3)
    results = []
    for lib in (torch, cr):
        out = lib.empty(0, dtype=lib.float64)  # resized to the result, as PyTorch resizes it
        back = OUT_CALLS[name](lib, lib.tensor(data), lib.tensor(data + 1), out)
        assert back is out
        results.append(out.numpy().copy())
    np.testing.assert_array_equal(results[0], results[1])
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic"):
        OUT_CALLS[name](cr, cr.tensor(data, requires_grad=True), cr.tensor(data + 1), cr.empty(0))
