"""What PyTorch's nodes of the spatial ops (pools, resampling, affine_grid, grid_sample, unfold
and fold, the shuffles, group_norm, batch_norm), prelu, rrelu, embedding, the in-place
activations and the piecewise activations' derivatives save, for saved.py's tables: the
arguments each function records on its node (``record``, node.named), by node name, and the
tensors read from the node."""

from __future__ import annotations

from typing import Any

from .. import array
from . import saved_made as made

# F.pad's reflect and replicate nodes of each rank, and their gradients' nodes
_PADS = tuple(
    f"{kind}Pad{k}DBackward{twice}0"
    for kind in ("Reflection", "Replication")
    for k in (1, 2, 3)
    for twice in ("", "Backward")
)

# PyTorch's node name -> the arguments it saves, as the function records them
ARGS: dict[str, str] = {
    "MaxPool3DWithIndicesBackward0": "ceil_mode dilation kernel_size padding stride",
    "AvgPool3DBackward0": "ceil_mode count_include_pad divisor_override kernel_size padding stride",
    "Im2ColBackward0": "dilation kernel_size padding stride self_sym_argsize_minus_1 "
    "self_sym_argsize_minus_2",
    "Col2ImBackward0": "dilation kernel_size padding stride",
    "AffineGridGeneratorBackward0": "align_corners size",
    **dict.fromkeys(("RreluWithNoiseBackward0", "RreluWithNoiseBackward1"), "lower training upper"),
    "GridSampler2DBackward0": "align_corners interpolation_mode padding_mode",
    "GridSampler3DBackward0": "align_corners interpolation_mode padding_mode",
    "PixelShuffleBackward0": "upscale_factor",
    "PixelUnshuffleBackward0": "downscale_factor",
    "ChannelShuffleBackward0": "groups",
    "NativeGroupNormBackward0": "C HxW N eps group",
    "NativeBatchNormBackward0": "eps training",
    "UpsampleLinear1DBackward0": "align_corners output_size scales self_sym_sizes",
    "UpsampleBilinear2DBackward0": "align_corners output_size scales_h scales_w self_sym_sizes",
    "UpsampleBicubic2DBackward0": "align_corners output_size scales_h scales_w self_sym_sizes",
    "UpsampleTrilinear3DBackward0": "align_corners output_size scales_d scales_h scales_w "
    "self_sym_sizes",
    **dict.fromkeys(
        ("UpsampleNearest1DBackward0", "UpsampleNearestExact1DBackward0"),
        "output_size scales self_sym_sizes",
    ),
    **dict.fromkeys(
        ("UpsampleNearest2DBackward0", "UpsampleNearestExact2DBackward0"),
        "output_size scales_h scales_w self_sym_sizes",
    ),
    **dict.fromkeys(
        ("UpsampleNearest3DBackward0", "UpsampleNearestExact3DBackward0"),
        "output_size scales_d scales_h scales_w self_sym_sizes",
    ),
    **dict.fromkeys(_PADS, "padding"),
    "EmbeddingBackward0": "padding_idx scale_grad_by_freq sparse weight_sym_argsize_0",
    # the in-place activations' own nodes (nn/activation.py)
    "LeakyReluBackward1": "negative_slope",
    "EluBackward1": "alpha input_scale scale",
    "CeluBackward1": "alpha",
    "ThresholdBackward1": "threshold",
    # the derivatives of the piecewise activations' gradients (ops/elementwise.py's Slopes)
    "LeakyReluBackwardBackward0": "negative_slope",
    "ThresholdBackwardBackward0": "threshold",
    "HardtanhBackwardBackward0": "max_val min_val",
    "RreluWithNoiseBackwardBackward0": "lower training upper",
    **dict.fromkeys(("SoftshrinkBackwardBackward0", "HardshrinkBackwardBackward0"), "lambd"),
    # the smooth activations' gradients as ops (ops/smooth.py, special.py, hard.py)
    "EluBackwardBackward0": "alpha input_scale is_result scale",
    "SoftplusBackwardBackward0": "beta threshold",
    "GeluBackwardBackward0": "approximate",
}


def _per_sample(key: str) -> Any:
    """group_norm's statistic (N*G, 1) as PyTorch's node keeps it: (N, G)."""
    return lambda fn: getattr(fn, key).reshape(fn.inputs[0].shape[0], fn.groups)


def _slopes(fn: Any, i: int = 0) -> Any:
    """prelu's weight (input i + 1) as PyTorch's node keeps it: of the rank of the input (input
    i), the slopes along dim 1."""
    x, weight = fn.inputs[i]._array, fn.inputs[i + 1]._array
    shape = [1] * x.ndim
    if x.ndim > 1:
        shape[1] = weight.size
    return weight.reshape(shape)


_SELF = {"self": ("input", 0, None)}
# PyTorch's node name -> its saved tensors (saved.py's TensorSpec)
TENSORS: dict[str, dict[str, tuple[Any, ...]]] = {
    **dict.fromkeys(
        ("MaxPool3DWithIndicesBackward0", "AdaptiveMaxPool2DBackward0")
        + ("AdaptiveMaxPool3DBackward0",),
        {"result1": ("made", None, made.pool_indices), **_SELF},
    ),
    **dict.fromkeys(
        ("AvgPool3DBackward0", "AdaptiveAvgPool2DBackward0", "AdaptiveAvgPool3DBackward0"), _SELF
    ),
    **dict.fromkeys(
        ("MaxUnpool2DBackward0", "MaxUnpool3DBackward0"),
        {"indices": ("made", None, lambda fn: fn.index.reshape(fn.shape))},
    ),
    **dict.fromkeys(
        ("GridSampler2DBackward0", "GridSampler3DBackward0"),
        {"grid": ("input", 1, None), "input": ("input", 0, None)},
    ),
    **dict.fromkeys(_PADS[::2], _SELF),
    "EmbeddingBackward0": {"indices": ("called", "indices")},
    "PreluKernelBackward0": {"self": ("input", 0, None), "weight": ("made", None, _slopes)},
    "PreluKernelBackwardBackward0": {
        "grad_output": ("input", 0, None), "self": ("input", 1, None),
        "weight": ("made", None, lambda fn: _slopes(fn, 1)),
    },
    "RreluWithNoiseBackward0": {"noise": ("called", "noise"), **_SELF},
    "RreluWithNoiseBackward1": {"noise": ("called", "noise"), "result": ("called", "result")},
    **dict.fromkeys(
        ("LeakyReluBackward1", "EluBackward1", "CeluBackward1"), {"result": ("called", "result")}
    ),
    "ThresholdBackward1": _SELF,
    # a gradient's derivative saves the activation's input (relu's: its result), Slopes' input 1
    **dict.fromkeys(
        ("LeakyReluBackwardBackward0", "ThresholdBackwardBackward0", "HardtanhBackwardBackward0")
        + ("SoftshrinkBackwardBackward0", "HardshrinkBackwardBackward0"),
        {"self": ("input", 1, None)},
    ),
    "RreluWithNoiseBackwardBackward0": {"noise": ("called", "noise"), "self": ("input", 1, None)},
    # a smooth activation's gradient as an op saves g and the activation's input (or result)
    "EluBackwardBackward0": {
        "grad_output": ("input", 0, None), "self_or_result": ("input", 1, None)
    },
    **dict.fromkeys(
        ("SoftplusBackwardBackward0", "GeluBackwardBackward0", "HardswishBackwardBackward0"),
        {"grad_output": ("input", 0, None), "self": ("input", 1, None)},
    ),
    "LogSigmoidBackwardBackward0": {
        "buffer": ("made", 1, lambda fn: array.xp.exp(-abs(fn.inputs[1]._array))),
        "grad_output": ("input", 0, None), "self": ("input", 1, None),
    },
    "NativeGroupNormBackward0": {
        "input": ("input", 0, None), "weight": ("optional", 1),
        "result1": ("made", None, _per_sample("mean")),
        "result2": ("made", None, _per_sample("rstd")),
    },
    "NativeBatchNormBackward0": {  # the batch's statistics when training, else empty
        "input": ("input", 0, None), "weight": ("optional", 1),
        "running_mean": ("optional", 3), "running_var": ("optional", 4),
        "result1": ("made", None, lambda fn: fn.mean if fn.training else fn.rstd[:0]),
        "result2": ("made", None, lambda fn: fn.rstd if fn.training else fn.rstd[:0]),
    },
}  # fmt: skip
