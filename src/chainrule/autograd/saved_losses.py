"""What PyTorch's nodes of the losses save, for saved.py's tables: the arguments each loss
function records on its node (``record``), by node name, and the tensors read from the
node. nll_loss's reduction, kept by its op as a word, is saved.py's."""

from __future__ import annotations

from typing import Any

from .. import array
from . import saved_made as made

# PyTorch's node name -> the arguments it saves, as the function records them
ARGS: dict[str, str] = {
    "MultiMarginLossBackward0": "margin p reduction",
    "MultilabelMarginLossBackward0": "reduction",
    "HuberLossBackward0": "delta reduction",
    "SmoothL1LossBackward0": "beta reduction",
    "MseLossBackward0": "reduction",
    "SoftMarginLossBackward0": "reduction",
    "CtcLossBackward0": "blank input_lengths target_lengths zero_infinity",
    "BinaryCrossEntropyBackward0": "reduction",
    "BinaryCrossEntropyWithLogitsBackward0": "reduction",
}

_INPUTS = {"self": ("input", 0, None), "target": ("input", 1, None)}

# PyTorch's node name -> its saved tensors, in saved.py's TensorSpec form
TENSORS: dict[str, dict[str, tuple[Any, ...]]] = {
    "BinaryCrossEntropyBackward0": {**_INPUTS, "weight": ("called", "weight")},
    "BinaryCrossEntropyWithLogitsBackward0": {
        **_INPUTS,
        "pos_weight": ("optional", 2),
        "weight": ("called", "weight"),
    },
    "MultiMarginLossBackward0": {
        "self": ("input", 0, None),
        "target": ("called", "target"),
        "weight": ("called", "weight"),
    },
    "MultilabelMarginLossBackward0": {
        "is_target": ("called", "is_target"),
        "self": ("input", 0, None),
        "target": ("called", "target"),
    },
    "HuberLossBackward0": _INPUTS,
    "SmoothL1LossBackward0": _INPUTS,
    "MseLossBackward0": _INPUTS,
    "SoftMarginLossBackward0": _INPUTS,
    "CtcLossBackward0": {
        "log_probs": ("input", 0, None),
        "result0": ("made", None, lambda fn: fn.nll),
        # (N, T, S): alpha, the log-probabilities of the alignments' prefixes
        "result1": ("made", None, lambda fn: array.xp.swapaxes(fn.kept_alpha(), 0, 1)),
        "targets": ("called", "targets"),
    },
    **dict.fromkeys(
        ("NllLossBackward0", "NllLoss2DBackward0"),
        {
            # cross_entropy's one node keeps the log-probabilities PyTorch's nll_loss takes
            "self": ("made", 0, lambda fn: fn.__dict__.get("logp", fn.inputs[0]._array)),
            "target": ("called", "target"),
            "total_weight": ("made", None, made.total_weight),
            "weight": ("called", "weight"),
        },
    ),
}
