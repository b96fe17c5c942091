"""Export to ONNX of the ops that are one primitive each (std, var_mean, std_mean, norms,
flip, roll, the add-products, the shuffles, group norm, cross, 3-D average and max pooling,
grid_sample, aminmax, prod, prelu, trace, affine_grid, cdist by products): ONNX Runtime's
output on fresh inputs at another batch size equals chainrule's (float32, 1e-5 relative); 3-D
grid_sample at opset 20."""

import itertools

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import chainrule as cr  # noqa: E402
import chainrule.nn.functional as F  # noqa: E402
from chainrule import nn  # noqa: E402
from chainrule.onnx import UnsupportedOperatorError  # noqa: E402
from tests.onnx.test_onnx import TOL, Fn, check, floats, ours, to_onnx  # noqa: E402

GRID_3D = list(
    itertools.product(["bilinear", "nearest"], ["zeros", "border", "reflection"], [False, True])
)


def _affine(layer):
    """A GroupNorm with weights and biases other than ones and zeros."""
    rng = np.random.default_rng(4)
    c = layer.weight.shape[0]
    layer.weight.data[...] = rng.standard_normal(c).astype(np.float32)
    layer.bias.data[...] = rng.standard_normal(c).astype(np.float32)
    return layer


def _norms(m, x):
    norm = cr.linalg.vector_norm
    out = norm(x, 2, dim=1) + norm(x, 1, dim=1) + norm(x, float("inf"), dim=1)
    out = out + norm(x, float("-inf"), dim=1) + norm(x, 3.0, dim=1) + norm(x, 0.5, dim=1)
    return out + norm(x, 0, dim=1) + x.norm(dim=(1, 2), keepdim=True)[:, 0]


def _sampled(mode, padding, corners):
    """grid_sample of x at a grid made of x's first channels (values past -1 and 1 too)."""
    return Fn(
        lambda m, x: F.grid_sample(
            x, x[:, :2].permute(0, 2, 3, 1), mode, padding, align_corners=corners
        )
    )


def _sampled3d(m, x, g):
    return sum(F.grid_sample(x, g, mo, p, align_corners=a) for mo, p, a in GRID_3D)


def catalog():
    """Each op with the shape of one example (without the batch dim)."""
    cr.manual_seed(0)
    w = nn.Parameter(cr.randn(4, 3))
    v = nn.Parameter(cr.randn(4))
    return {
        "std": (Fn(lambda m, x: x.std(1) + x.std(dim=(1, 2), correction=0)[:, None]), (3, 4)),
        "std_all": (Fn(lambda m, x: x - x.std() + x.std(0, keepdim=True)), (6,)),
        "var_mean": (Fn(lambda m, x: cr.var_mean(x, 1)[0] * cr.var_mean(x, 1)[1]), (3, 4)),
        "std_mean": (
            Fn(lambda m, x: x - cr.std_mean(x, (1, 2), keepdim=True)[0] * cr.std_mean(x)[1]),
            (3, 4),
        ),
        "prod": (Fn(lambda m, x: x.prod(1) + x.prod(-1, keepdim=True).sum(1)), (3, 4)),
        "norm": (Fn(_norms), (3, 4)),
        "flip": (Fn(lambda m, x: x.flip(1) + x.flip((1, 2)) + x.flip(0)), (3, 4)),
        "roll": (Fn(lambda m, x: x.roll(1, 1) + x.roll((2, -1), (1, 2)) + x.roll(3)), (3, 4)),
        "addmm": (Fn(lambda m, x: cr.addmm(x[:, :3], x, m.w, beta=0.5, alpha=2.0), w=w), (4,)),
        "addmm_beta_0": (Fn(lambda m, x: cr.addmm(x[:, :3], x, m.w, beta=0), w=w), (4,)),
        "baddbmm": (Fn(lambda m, x: cr.baddbmm(x[:, :, :3], x, x.transpose(1, 2))), (3, 4)),
        "addmv": (Fn(lambda m, x: cr.addmv(x[:, 0], x, m.v, alpha=0.5), v=v), (4,)),
        "addr": (Fn(lambda m, x: cr.addr(x, x[:, 0], m.v, beta=2.0), v=v), (4,)),
        "addbmm": (Fn(lambda m, x: cr.addbmm(x[0, :, :3], x, x.transpose(1, 2))), (3, 4)),
        "pixel_shuffle": (nn.PixelShuffle(2), (8, 2, 3)),
        "pixel_unshuffle": (nn.PixelUnshuffle(2), (2, 4, 6)),
        "channel_shuffle": (nn.ChannelShuffle(2), (4, 2, 3)),
        "group_norm": (_affine(nn.GroupNorm(2, 4)), (4, 3, 3)),
        "group_norm_plain": (nn.GroupNorm(3, 6, affine=False), (6, 5)),
        "cross": (Fn(lambda m, x: cr.linalg.cross(x, x.flip(1) * 2.0)), (2, 3)),
        "cross_dim": (Fn(lambda m, x: cr.cross(x, x[:, :, :1], dim=1)), (3, 4)),
        "avg_pool3d": (nn.AvgPool3d(2), (2, 4, 4, 4)),
        "avg_pool3d_geometry": (
            nn.AvgPool3d(3, stride=2, padding=1, count_include_pad=False),
            (2, 5, 5, 6),
        ),
        "avg_pool3d_ceil": (nn.AvgPool3d(2, ceil_mode=True, divisor_override=3), (1, 5, 5, 5)),
        "max_pool3d": (nn.MaxPool3d(2), (2, 4, 4, 5)),
        "max_pool3d_geometry": (
            nn.MaxPool3d(3, stride=2, padding=1, dilation=(1, 2, 1)),
            (2, 5, 6, 6),
        ),
        "max_pool3d_ceil": (
            Fn(lambda m, x: F.max_pool3d(x, 2, 3, 1, 3, ceil_mode=True)),
            (1, 7, 6, 8),
        ),
        **{
            f"grid_sample_{mode}_{padding}_{corners}": (_sampled(mode, padding, corners), (3, 4, 5))
            for mode in ("bilinear", "nearest", "bicubic")
            for padding in ("zeros", "border", "reflection")
            for corners in (False, True)
        },
        "aminmax": (
            Fn(lambda m, x: cr.aminmax(x, dim=1)[0] * cr.aminmax(x)[1] + cr.aminmax(x, dim=1).max),
            (3, 4),
        ),
        "prelu": (nn.PReLU(), (6,)),
        "prelu_channels": (nn.PReLU(3, init=0.1), (3, 4, 4)),
        "trace": (Fn(lambda m, x: x[0].trace() + x), (3, 3)),
        "affine_grid": (
            Fn(lambda m, x: F.affine_grid(x, [x.shape[0], 1, 4, 5], align_corners=False)),
            (2, 3),
        ),
        "cdist_by_products": (
            Fn(lambda m, x: cr.cdist(x, x.flip(1) + 1.0, compute_mode="use_mm_for_euclid_dist")),
            (3, 4),
        ),
    }


@pytest.mark.parametrize("name", list(catalog()))
def test_onnx_runtime_matches_chainrule_at_another_batch_size(name):
    model, shape = catalog()[name]
    check(model, shape)


def test_grid_sample_3d_exports_at_opset_20_and_is_refused_before():
    x, g = floats(2, 3, 4, 5, 6, seed=1), floats(2, 3, 4, 2, 3, seed=2)
    model = Fn(_sampled3d)
    args = (cr.tensor(x), cr.tensor(g))
    _, session = to_onnx(model, args, opset_version=20)
    (got,) = session.run(None, {"input_0": x, "input_1": g})
    np.testing.assert_allclose(got, ours(model, x, g)[0], **TOL)
    with pytest.raises(UnsupportedOperatorError, match="GridSampler3d .* needs opset_version 20"):
        to_onnx(model, args)
