"""repeat and tile as PyTorch's one RepeatBackward0 node: values, first and second
derivatives against torch, on 0-d, empty and zero-count tilings."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr

CASES: list[tuple[tuple[int, ...], str, Any]] = [
    ((2, 3), "repeat", (2, 3)),
    ((2, 3), "repeat", (2, 1, 3)),
    ((), "repeat", (3, 2)),
    ((3,), "repeat", (0, 2)),
    ((0, 2), "repeat", (2, 2)),
    ((2, 3), "tile", (2,)),
    ((2, 1, 3), "tile", (2, 1, 1, 2)),
]


@pytest.mark.parametrize(("shape", "how", "sizes"), CASES)
def test_repeat_and_tile_are_torchs_to_the_second_derivative(
    shape: tuple[int, ...], how: str, sizes: Any
) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    g = rng.standard_normal(np.tile(x, sizes).shape)  # numpy's tile is both, as PyTorch's
    seen = []
    for lib in (torch, cr):
        t = lib.tensor(x, requires_grad=True)
        y = getattr(t, how)(sizes)
        gy = lib.tensor(g, requires_grad=True)
        (gx,) = lib.autograd.grad(y, t, gy, create_graph=True)
        # the second derivative: of sum(grad_x ** 2) with respect to the upstream gradient
        ggy = g * 0  # an empty tiling: no upstream value reaches grad_x
        if g.size:
            ggy = lib.autograd.grad((gx * gx).sum(), gy)[0].numpy()
        seen.append((y.grad_fn.name(), y.detach().numpy(), gx.detach().numpy(), ggy))
    assert seen[1][0] == seen[0][0] == "RepeatBackward0"
    for ours, theirs in zip(seen[1][1:], seen[0][1:], strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_repeat_copies() -> None:
    x = cr.ones(2, 3)
    y = x.repeat(1, 1)
    y[0, 0] = 5.0
    assert x[0, 0].item() == 1.0 and y.is_contiguous()


def test_repeat_refuses_fewer_sizes_than_dims() -> None:
    with pytest.raises(ValueError, match=r"^repeat: sizes must be non-negative ints, at least one"):
        cr.ones(2, 3).repeat(2)
