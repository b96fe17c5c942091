"""Edge cases of grid_sample and nearest interpolation against PyTorch: empty batches, empty
grids and empty channels (values and gradients' shapes), an axis of one with align_corners
under reflection (its one position, slope 0), positions reflected many times over, NaN and
infinite positions, and constant padding's value cast into an integer dtype (within its
range: out of it PyTorch refuses, chainrule wraps)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr

EMPTY = [
    ((0, 2, 3, 4), (0, 2, 2, 2)),  # no samples
    ((1, 2, 3, 4), (1, 0, 2, 2)),  # no positions
    ((1, 0, 3, 4), (1, 2, 2, 2)),  # no channels
    ((0, 2, 3, 4, 2), (0, 1, 2, 2, 3)),
    ((1, 2, 3, 4, 2), (1, 0, 2, 2, 3)),
]


NONFINITE = [np.nan, np.inf, -np.inf, 1e30, -1e30, 0.5, -0.7]


@pytest.mark.parametrize("corners", [False, True])
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample_at_nan_and_infinite_positions(mode: str, corners: bool) -> None:
    """Every pair of NaN, inf, huge and plain coordinates, zeros padding: PyTorch's values
    and gradients. A tap outside added its NaN weight to grad_x, grad_grid was NaN along an
    axis whose own weights were finite (PyTorch's is NaN only beside a non-finite one), and
    nearest's grad_grid was grid * 0, NaN there (PyTorch's: zeros). Not the other paddings:
    there PyTorch's vector loop reads a NaN position's taps at an arbitrary index (the
    process can crash); nor 3-D, where PyTorch's loop skips a tap outside altogether."""
    x = np.random.default_rng(0).standard_normal((1, 2, 3, 4))
    grid = np.array(np.meshgrid(NONFINITE, NONFINITE, indexing="ij")).T.reshape(1, 7, 7, 2)
    ours, theirs = _both(
        lambda m, a, g: m.nn.functional.grid_sample(
            a, g, mode=mode, padding_mode="zeros", align_corners=corners
        ),
        x,
        grid,
    )
    for got, want in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)  # NaN where PyTorch's


def _both(fn: Any, *arrays: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """fn's output and its inputs' gradients (upstream: ones) on chainrule and on torch."""
    out = []
    for m in (cr, torch):
        xs = [m.tensor(a, requires_grad=True) for a in arrays]
        y = fn(m, *xs)
        y.backward(m.ones_like(y))
        out.append([y.detach().numpy()] + [x.grad.numpy() for x in xs])
    return out[0], out[1]


@pytest.mark.parametrize(
    ("shapes", "mode"),
    [
        (s, m)
        for s in EMPTY
        for m in ("bilinear", "nearest", "bicubic")
        if len(s[0]) == 4 or m != "bicubic"
    ],
)
def test_grid_sample_of_empty_tensors(shapes: tuple, mode: str) -> None:
    rng = np.random.default_rng(0)
    x, g = rng.standard_normal(shapes[0]), rng.uniform(-1, 1, shapes[1])
    ours, theirs = _both(
        lambda m, a, b: m.nn.functional.grid_sample(a, b, mode=mode, align_corners=False), x, g
    )
    for a, b in zip(ours, theirs, strict=True):
        assert a.shape == b.shape


@pytest.mark.parametrize("corners", [True, False])
def test_grid_sample_reflection_on_an_axis_of_one(corners: bool) -> None:
    """With align_corners, an axis of one has a single position: every sample reads it, and
    the grid's gradient along it is 0."""
    rng = np.random.default_rng(1)
    x, g = rng.standard_normal((2, 3, 1, 4)), rng.uniform(-2, 2, (2, 3, 5, 2))
    ours, theirs = _both(
        lambda m, a, b: m.nn.functional.grid_sample(
            a, b, padding_mode="reflection", align_corners=corners
        ),
        x,
        g,
    )
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    ("shapes", "mode"),
    [
        (((2, 3, 5, 4), (2, 6, 7, 2)), "bilinear"),
        (((2, 3, 5, 4), (2, 6, 7, 2)), "bicubic"),
        (((2, 3, 5, 4), (2, 6, 7, 2)), "nearest"),
        (((1, 2, 3, 4, 5), (1, 3, 4, 2, 3)), "bilinear"),
    ],
)
@pytest.mark.parametrize("corners", [True, False])
def test_grid_sample_reflects_positions_folded_many_times(
    shapes: tuple, mode: str, corners: bool
) -> None:
    """Positions up to 12 spans outside the input, each fold's parity mirroring it (or not):
    values and both gradients as PyTorch's, with a random upstream gradient."""
    rng = np.random.default_rng(2)
    x, g = rng.standard_normal(shapes[0]), rng.uniform(-12, 12, shapes[1])
    up = rng.standard_normal(shapes[0][:2] + shapes[1][1:-1])
    outs = []
    for m in (cr, torch):
        a, b = m.tensor(x, requires_grad=True), m.tensor(g, requires_grad=True)
        y = m.nn.functional.grid_sample(
            a, b, mode=mode, padding_mode="reflection", align_corners=corners
        )
        y.backward(m.tensor(up))
        outs.append([y.detach().numpy(), a.grad.numpy(), b.grad.numpy()])
    for ours, theirs in zip(*outs, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize(
    ("shapes", "mode"),
    [
        (((3, 2, 5, 4), (3, 20, 20, 2)), "bilinear"),
        (((3, 2, 5, 4), (3, 20, 20, 2)), "bicubic"),
        (((3, 2, 5, 4), (3, 20, 20, 2)), "nearest"),
        (((2, 2, 3, 4, 5), (2, 6, 10, 10, 3)), "bilinear"),
    ],
)
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_grid_sample_of_many_positions(shapes: tuple, mode: str, padding: str) -> None:
    """More positions than the kept constants' shapes hold (1,024): the constants broadcast
    along the taps; values and both gradients as PyTorch's, with a random upstream
    gradient."""
    rng = np.random.default_rng(3)
    x, g = rng.standard_normal(shapes[0]), rng.uniform(-1.4, 1.4, shapes[1])
    up = rng.standard_normal(shapes[0][:2] + shapes[1][1:-1])
    outs = []
    for m in (cr, torch):
        a, b = m.tensor(x, requires_grad=True), m.tensor(g, requires_grad=True)
        y = m.nn.functional.grid_sample(a, b, mode=mode, padding_mode=padding, align_corners=False)
        y.backward(m.tensor(up))
        outs.append([y.detach().numpy(), a.grad.numpy(), b.grad.numpy()])
    for ours, theirs in zip(*outs, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
def test_nearest_interpolation_of_an_empty_batch(mode: str) -> None:
    x = np.zeros((0, 3, 4, 5))
    ours, theirs = _both(lambda m, a: m.nn.functional.interpolate(a, scale_factor=2, mode=mode), x)
    assert [a.shape for a in ours] == [b.shape for b in theirs]


@pytest.mark.parametrize(("dtype", "value"), [("uint8", 2.7), ("uint8", 255), ("int8", -1.5)])
def test_constant_pad_casts_its_value_as_torch(dtype: str, value: float) -> None:
    x = np.arange(6, dtype=dtype).reshape(2, 3)
    ours = cr.pad(cr.tensor(x), (1, 2, 0, 1), value=value).numpy()
    theirs = torch.nn.functional.pad(torch.tensor(x), (1, 2, 0, 1), value=value).numpy()
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)
