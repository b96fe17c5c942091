"""test_functional_dtypes.py's calls of the activations, dropouts, normalisations, losses and
small layers beyond the basics (more_activations, dropout, normalization, margin_losses,
likelihood_losses, embedding_bag, bilinear): name -> call(lib, F, dtype), every tensor
operand of the dtype under test, made by that file's helpers (``x``, ``classes``), which it
hands to ``calls``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Call = Callable[[Any, Any, str], Any]


def calls(_x: Callable[..., Any], _classes: Callable[[Any], Any]) -> dict[str, Call]:
    """The calls, from the helpers making a tensor of a dtype and a pair of class indices."""

    def _signs(lib: Any, d: str, shape: tuple = (2, 3, 4)) -> Any:
        return (_x(lib, "int64", shape) > 0).to(getattr(lib, d)) * 2 - 1

    def _ctc(lib: Any, F: Any, d: str) -> Any:
        lp = _x(lib, d, (5, 2, 4))
        targets, lengths = lib.tensor([[1, 2], [3, 0]]), lib.tensor([5, 4])
        return F.ctc_loss(lp, targets, lengths, lib.tensor([2, 1]))

    return {
        "hardswish": lambda lib, F, d: F.hardswish(_x(lib, d)),
        "hardsigmoid": lambda lib, F, d: F.hardsigmoid(_x(lib, d)),
        "softshrink": lambda lib, F, d: F.softshrink(_x(lib, d)),
        "hardshrink": lambda lib, F, d: F.hardshrink(_x(lib, d)),
        "tanhshrink": lambda lib, F, d: F.tanhshrink(_x(lib, d)),
        "rrelu": lambda lib, F, d: F.rrelu(_x(lib, d)),
        "relu_": lambda lib, F, d: F.relu_(_x(lib, d)),
        "elu_": lambda lib, F, d: F.elu_(_x(lib, d)),
        "leaky_relu_": lambda lib, F, d: F.leaky_relu_(_x(lib, d)),
        "hardtanh_": lambda lib, F, d: F.hardtanh_(_x(lib, d)),
        "threshold_": lambda lib, F, d: F.threshold_(_x(lib, d), 1, 0),
        "rrelu_": lambda lib, F, d: F.rrelu_(_x(lib, d)),
        "celu_": lambda lib, F, d: F.celu_(_x(lib, d)),
        "selu_": lambda lib, F, d: F.selu_(_x(lib, d)),
        "dropout1d": lambda lib, F, d: F.dropout1d(_x(lib, d), 0.5, training=False),
        "dropout2d": lambda lib, F, d: F.dropout2d(_x(lib, d, (2, 3, 2, 2)), 0.0),
        "dropout3d": lambda lib, F, d: F.dropout3d(_x(lib, d, (2, 3, 2, 2, 2)), 1.0),
        "alpha_dropout": lambda lib, F, d: F.alpha_dropout(_x(lib, d), 0.5),
        "feature_alpha_dropout": lambda lib, F, d: F.feature_alpha_dropout(_x(lib, d), 0.5),
        "group_norm": lambda lib, F, d: F.group_norm(_x(lib, d, (2, 4, 3)), 2),
        "instance_norm": lambda lib, F, d: F.instance_norm(_x(lib, d)),
        "rms_norm": lambda lib, F, d: F.rms_norm(_x(lib, d), (4,)),
        "local_response_norm": lambda lib, F, d: F.local_response_norm(_x(lib, d), 2),
        "margin_ranking_loss": lambda lib, F, d: F.margin_ranking_loss(
            _x(lib, d), _x(lib, d), _signs(lib, d)
        ),
        "hinge_embedding_loss": lambda lib, F, d: F.hinge_embedding_loss(
            _x(lib, d), _signs(lib, d)
        ),
        "soft_margin_loss": lambda lib, F, d: F.soft_margin_loss(_x(lib, d), _signs(lib, d)),
        "cosine_embedding_loss": lambda lib, F, d: F.cosine_embedding_loss(
            _x(lib, d, (2, 3)), _x(lib, d, (2, 3)), _signs(lib, d, (2,))
        ),
        "multi_margin_loss": lambda lib, F, d: F.multi_margin_loss(
            _x(lib, d, (2, 3)), _classes(lib)
        ),
        "multilabel_margin_loss": lambda lib, F, d: F.multilabel_margin_loss(
            _x(lib, d, (2, 3)), lib.tensor([[0, -1, 1], [2, 1, -1]])
        ),
        "multilabel_soft_margin_loss": lambda lib, F, d: F.multilabel_soft_margin_loss(
            _x(lib, d, (2, 3)), _x(lib, d, (2, 3))
        ),
        "triplet_margin_loss": lambda lib, F, d: F.triplet_margin_loss(
            _x(lib, d, (2, 3)), _x(lib, d, (2, 3)), _x(lib, d, (2, 3))
        ),
        "triplet_margin_with_distance_loss": lambda lib, F, d: F.triplet_margin_with_distance_loss(
            _x(lib, d, (2, 3)), _x(lib, d, (2, 3)), _x(lib, d, (2, 3))
        ),
        "pairwise_distance": lambda lib, F, d: F.pairwise_distance(_x(lib, d), _x(lib, d)),
        "kl_div": lambda lib, F, d: F.kl_div(_x(lib, d), _x(lib, d), reduction="batchmean"),
        "gaussian_nll_loss": lambda lib, F, d: F.gaussian_nll_loss(
            _x(lib, d), _x(lib, d), _x(lib, d) * _x(lib, d)
        ),
        "poisson_nll_loss": lambda lib, F, d: F.poisson_nll_loss(_x(lib, d), _x(lib, d)),
        "ctc_loss": _ctc,
        "embedding_bag": lambda lib, F, d: F.embedding_bag(
            _classes(lib), _x(lib, d, (3, 2)), lib.tensor([0, 1])
        ),
        "bilinear": lambda lib, F, d: F.bilinear(
            _x(lib, d, (2, 3)), _x(lib, d, (2, 4)), _x(lib, d, (2, 3, 4))
        ),
    }
