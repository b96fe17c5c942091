"""interpolate in every mode and its modules, unfold and fold, the shuffles, affine_grid and
grid_sample against PyTorch (outputs, gradients, reprs), with the errors that name the op."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.tolerances import tol

rng = np.random.default_rng(2)


def assert_close(ours: cr.Tensor, theirs: torch.Tensor) -> None:
    want = theirs.detach().numpy()
    if want.dtype.kind != "f":  # integers and bools: equal
        np.testing.assert_array_equal(ours.numpy(), want)
        return
    np.testing.assert_allclose(ours.detach().numpy(), want, **tol(want.dtype))


def both(fn, *arrays: np.ndarray) -> None:  # type: ignore[no-untyped-def]
    """fn(module, *tensors) on chainrule and on torch: outputs and input gradients agree."""
    outs, grads = [], []
    for m in (cr, torch):
        xs = [m.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = fn(m, *xs)
        outs.append(y)
        if y.requires_grad:
            y.backward(m.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape))))
            grads.append([x.grad for x in xs if x.requires_grad])
    assert tuple(outs[0].shape) == tuple(outs[1].shape)
    assert_close(outs[0], outs[1])
    for a, b in zip(*grads, strict=True):
        assert_close(a, b)


SIZES = [{"size": 7}, {"size": 3}, {"scale_factor": 1.7}, {"scale_factor": 0.6},
         {"scale_factor": 2.5, "recompute_scale_factor": True}]  # fmt: skip
MODES = [
    ("nearest", (2, 3, 5), None),
    ("nearest", (2, 3, 4, 5, 3), None),
    ("nearest-exact", (2, 3, 4, 5), None),
    ("linear", (2, 3, 5), True),
    ("bilinear", (2, 3, 4, 5), False),
    ("bicubic", (2, 3, 4, 5), True),
    ("bicubic", (2, 3, 4, 5), None),
    ("trilinear", (1, 2, 3, 4, 5), False),
    ("area", (2, 3, 6, 5), None),
]


@pytest.mark.parametrize("mode, shape, corners", MODES)
@pytest.mark.parametrize("sizes", SIZES, ids=lambda s: "-".join(f"{k}={v}" for k, v in s.items()))
def test_interpolate_matches_torch(
    mode: str, shape: tuple, corners: bool | None, sizes: dict
) -> None:
    x = rng.standard_normal(shape)
    both(lambda m, t: m.nn.functional.interpolate(t, mode=mode, align_corners=corners, **sizes), x)
    both(lambda m, t: m.nn.functional.interpolate(t, mode=mode, align_corners=corners, **sizes),
         x.astype(np.float32))  # fmt: skip


def test_upsample_modules_and_uint8_nearest() -> None:
    x = rng.standard_normal((2, 3, 4, 5))
    for args in ((None, 2.0, "bilinear", True), ((5, 3), None, "nearest", None)):
        ours, theirs = cr.nn.Upsample(*args), torch.nn.Upsample(*args)
        assert repr(ours) == repr(theirs)
        both(lambda m, t, o=ours, th=theirs: (o if m is cr else th)(t), x)
    for name in ("UpsamplingNearest2d", "UpsamplingBilinear2d"):
        ours, theirs = getattr(cr.nn, name)(scale_factor=2), getattr(torch.nn, name)(scale_factor=2)
        assert repr(ours) == repr(theirs)
        both(lambda m, t, o=ours, th=theirs: (o if m is cr else th)(t), x)
    pixels = rng.integers(0, 256, (1, 2, 3, 4)).astype(np.uint8)
    ours = cr.nn.functional.interpolate(cr.tensor(pixels), size=(5, 7))
    want = torch.nn.functional.interpolate(torch.tensor(pixels), size=(5, 7))
    assert ours.dtype == cr.uint8 and np.array_equal(ours.numpy(), want.numpy())
    with pytest.warns(UserWarning, match="upsample_bilinear is deprecated"):
        cr.nn.functional.upsample_bilinear(cr.tensor(x), scale_factor=2)


def test_interpolate_errors_name_the_op() -> None:
    f, x = cr.nn.functional, cr.tensor(rng.standard_normal((1, 2, 3, 4)))
    with pytest.raises(ValueError, match="interpolate: antialias=True is not supported"):
        f.interpolate(x, size=2, mode="bilinear", antialias=True)
    with pytest.raises(ValueError, match="interpolate: give exactly one of size and scale_factor"):
        f.interpolate(x)
    with pytest.raises(ValueError, match="interpolate: mode 'trilinear' needs a 5-D input"):
        f.interpolate(x, size=2, mode="trilinear")
    with pytest.raises(ValueError, match="interpolate: align_corners can only be set"):
        f.interpolate(x, size=2, align_corners=True)
    with pytest.raises(ValueError, match="interpolate: recompute_scale_factor is not meaningful"):
        f.interpolate(x, size=2, recompute_scale_factor=True)
    with pytest.raises(TypeError, match="interpolate: uint8 input is resampled by the nearest"):
        f.interpolate(x.to(cr.uint8), size=2, mode="bilinear")
    with pytest.raises(ValueError, match=r"interpolate: the output size \(0, 1\) must be positive"):
        f.interpolate(x, scale_factor=0.3)


def test_unfold_fold_and_shuffles_match_torch() -> None:
    x = rng.standard_normal((2, 3, 5, 6))
    both(lambda m, t: m.nn.Unfold((2, 3), dilation=(1, 2), padding=1, stride=(2, 1))(t), x)
    cols = rng.standard_normal((3 * 6, 12))
    both(lambda m, t: m.nn.Fold((5, 6), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))(t), cols)
    both(lambda m, t: m.nn.PixelShuffle(2)(t), rng.standard_normal((2, 1, 8, 2, 3)))
    both(lambda m, t: m.nn.PixelUnshuffle(3)(t), rng.standard_normal((2, 6, 9)))
    both(lambda m, t: m.nn.ChannelShuffle(3)(t), rng.standard_normal((2, 6, 2, 3)))
    ints = rng.integers(0, 9, (2, 4, 3, 3))
    both(lambda m, t: m.nn.functional.channel_shuffle(t, 2), ints)
    both(lambda m, t: m.nn.functional.pixel_shuffle(t, 2), ints > 4)
    for name, args in (("Unfold", (2,)), ("Fold", ((4, 5), 2)), ("PixelShuffle", (2,)),
                       ("PixelUnshuffle", (2,)), ("ChannelShuffle", (2,))):  # fmt: skip
        assert repr(getattr(cr.nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))


def test_unfold_fold_and_shuffle_errors() -> None:
    f = cr.nn.functional
    with pytest.raises(ValueError, match=r"unfold: the sliding blocks do not fit"):
        f.unfold(cr.tensor(rng.standard_normal((1, 2, 3, 3))), 4)
    with pytest.raises(ValueError, match=r"fold: the input must be \(N, C \* 4, 9\)"):
        f.fold(cr.tensor(rng.standard_normal((1, 8, 8))), (4, 4), 2)
    with pytest.raises(ValueError, match=r"pixel_shuffle: .* divisible by upscale_factor\^2 = 4"):
        f.pixel_shuffle(cr.tensor(rng.standard_normal((1, 6, 2, 2))), 2)
    with pytest.raises(ValueError, match=r"channel_shuffle: .* divisible by groups = 4"):
        f.channel_shuffle(cr.tensor(rng.standard_normal((1, 6, 2, 2))), 4)


@pytest.mark.parametrize(
    "mode, padding, corners",
    list(itertools.product(("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection"),
                           (False, True))),
)  # fmt: skip
def test_grid_sample_matches_torch(mode: str, padding: str, corners: bool) -> None:
    x, grid = rng.standard_normal((2, 3, 5, 4)), rng.uniform(-1.6, 1.6, (2, 3, 4, 2))
    both(lambda m, a, g: m.nn.functional.grid_sample(a, g, mode, padding, corners), x, grid)
    if mode != "bicubic":
        x3, grid3 = rng.standard_normal((1, 2, 3, 4, 3)), rng.uniform(-1.6, 1.6, (1, 2, 3, 2, 3))
        both(lambda m, a, g: m.nn.functional.grid_sample(a, g, mode, padding, corners), x3, grid3)


def test_affine_grid_feeds_grid_sample_and_errors() -> None:
    theta, x = rng.standard_normal((2, 2, 3)), rng.standard_normal((2, 3, 5, 4))

    def warp(m, t, a):  # type: ignore[no-untyped-def]
        grid = m.nn.functional.affine_grid(t, [2, 3, 6, 7], align_corners=False)
        return m.nn.functional.grid_sample(a, grid, align_corners=False)

    both(warp, theta, x)
    both(lambda m, t: m.nn.functional.affine_grid(t, [1, 1, 3, 2, 4], align_corners=True),
         rng.standard_normal((1, 3, 4)))  # fmt: skip
    f = cr.nn.functional
    with pytest.raises(ValueError, match=r"affine_grid: expected size \(N, C, H, W\) with theta"):
        f.affine_grid(cr.tensor(theta), [2, 3, 4, 5, 6], align_corners=False)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        f.affine_grid(cr.tensor(theta), [2, 3, 4, 5])
    with pytest.raises(ValueError, match="grid_sample: mode 'bicubic' needs a 4-D input"):
        f.grid_sample(cr.tensor(x[:, :, None]), cr.tensor(np.zeros((2, 1, 1, 1, 3))), "bicubic",
                      align_corners=False)  # fmt: skip
    with pytest.raises(ValueError, match=r"grid_sample: expected input \(N, C, H, W\) with grid"):
        f.grid_sample(cr.tensor(x), cr.tensor(np.zeros((2, 1, 1, 3))), align_corners=False)
