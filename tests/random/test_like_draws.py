"""The ``*_like`` factories draw what PyTorch's draw, element for element, on inputs of
every layout: PyTorch makes ``empty_like(input)`` (input's strides where its elements lie
without gaps, a suggested format otherwise) and fills it in memory order, so on a permuted
input the draws land where torch's land, and the result's strides are torch's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")

LAYOUTS: dict[str, Callable[[Any], Any]] = {
    "row-major": lambda m: m.empty(5, 4),
    "transposed": lambda m: m.empty(5, 4).t(),
    "transposed, 16 or more": lambda m: m.empty(20, 8).t(),
    "permuted 3-d": lambda m: m.empty(4, 5, 6).permute(2, 0, 1),
    "permuted with a dim of 1": lambda m: m.empty(3, 1, 4).permute(2, 1, 0),
    "sliced": lambda m: m.empty(6, 8)[:, ::2],
    "channels last": lambda m: m.empty(2, 3, 4, 5).to(memory_format=m.channels_last),
    "channels last, sliced": lambda m: m.empty(2, 3, 4, 6).to(memory_format=m.channels_last)[
        ..., ::2
    ],
    "channels last 3-d": lambda m: m.empty(2, 3, 4, 5, 2).to(memory_format=m.channels_last_3d),
    "expanded": lambda m: m.empty(1, 4).expand(3, 4),
    "float64 transposed": lambda m: m.empty(30, 7, dtype=m.float64).t(),
    "0-d": lambda m: m.empty(()),
    "empty": lambda m: m.empty(0, 3),
}

DRAWS: dict[str, Callable[[Any, Any], Any]] = {
    "rand_like": lambda m, x: m.rand_like(x),
    "randn_like": lambda m, x: m.randn_like(x),
    "randint_like": lambda m, x: m.randint_like(x, 3, 10),
    "randint_like(high)": lambda m, x: m.randint_like(x, 7),
    "rand_like float64": lambda m, x: m.rand_like(x, dtype=m.float64),
    "randn_like with a generator": lambda m, x: m.randn_like(
        x, generator=m.Generator().manual_seed(3)
    ),
    "empty_like": lambda m, x: m.empty_like(x).zero_(),
    "full_like": lambda m, x: m.full_like(x, 2.5),
}


FAST = ("transposed, 16 or more", "channels last, sliced")  # the rest under make test-all


@pytest.mark.parametrize("draw", DRAWS)
@pytest.mark.parametrize(
    "layout", [n if n in FAST else pytest.param(n, marks=pytest.mark.slow) for n in LAYOUTS]
)
def test_like_draws_and_strides_are_pytorchs(layout: str, draw: str) -> None:
    torch.manual_seed(11)
    theirs = DRAWS[draw](torch, LAYOUTS[layout](torch))
    cr.manual_seed(11)
    ours = DRAWS[draw](cr, LAYOUTS[layout](cr))
    assert ours.stride() == theirs.stride()
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    t, o = theirs.numpy(), ours.numpy()
    assert (t.view(f"u{t.itemsize}") == o.view(f"u{o.itemsize}")).all() if t.size else True
    torch_next, ours_next = torch.rand(3), cr.rand(3)  # the streams stay in step after
    assert np.array_equal(torch_next.numpy(), ours_next.numpy())


def test_like_draws_keep_requires_grad_and_the_device() -> None:
    x = cr.empty(5, 4).t()
    y = cr.randn_like(x, requires_grad=True)
    assert y.requires_grad and y.is_leaf and y.device == x.device


def test_like_draws_refuse_what_pytorch_refuses() -> None:
    with pytest.raises(TypeError, match="rand_like: needs a floating-point tensor; got dtype"):
        cr.rand_like(cr.zeros(3, dtype=cr.int64))
    with pytest.raises(TypeError, match="normal_: needs a floating-point tensor"):
        cr.randn_like(cr.zeros(3, dtype=cr.int64))
    with pytest.raises(ValueError, match="randint_like: expected low < high; got low=5"):
        cr.randint_like(cr.zeros(3), 5, 5)
