"""Catalog rows of the losses that are one primitive each in ops/losses.py (multi_margin_loss,
multilabel_margin_loss, huber_loss, smooth_l1_loss, mse_loss, soft_margin_loss, the binary
cross entropies with a weight or a reduction) beyond nn_functional.py's and test_ops.py's: a
(C,) or 0-d input, each reduction, a weight."""

from __future__ import annotations

from tests.ops.rows import Row


def _F(m):  # noqa: ANN001, ANN202  (m is chainrule or torch)
    return m.nn.functional


def _labels(m):  # noqa: ANN001, ANN202
    return m.tensor([[2, -1, 0, 0], [0, 3, 1, -1], [1, 2, 3, 0]])


ROWS: list[Row] = [
    Row(
        "multi_margin_loss_row_sum",
        lambda m, a: _F(m).multi_margin_loss(a, m.tensor(2), p=2, margin=0.5, reduction="sum"),
        ((5,),),
    ),
    Row(
        "multi_margin_loss_row_none",
        lambda m, a: _F(m).multi_margin_loss(a, m.tensor([1]), margin=3.0, reduction="none"),
        ((4,),),
    ),
    Row(
        "multi_margin_loss[0d]",
        lambda m, a: _F(m).multi_margin_loss(a, m.tensor(0), reduction="none"),
        ((),),
    ),
    Row(
        "multi_margin_loss_weight_sum",
        lambda m, a: _F(m).multi_margin_loss(
            a,
            m.tensor([3, 0]),
            weight=m.tensor([0.5, 1.0, 2.0, 1.5], dtype=a.dtype),
            reduction="sum",
        ),  # fmt: skip
        ((2, 4),),
    ),
    Row(
        "multilabel_margin_loss_none",
        lambda m, a: _F(m).multilabel_margin_loss(a * 0.3, _labels(m), reduction="none"),
        ((3, 4),),
    ),
    Row(
        "multilabel_margin_loss_row_sum",
        lambda m, a: _F(m).multilabel_margin_loss(
            a * 0.3, m.tensor([3, 1, -1, 2]), reduction="sum"
        ),
        ((4,),),
    ),
    Row(
        "huber_loss_target_grad",
        lambda m, a, b: _F(m).huber_loss(a * 2.0, b, delta=1.5),
        ((2, 3, 2), (2, 3, 2)),
        "away",
        second=True,
    ),
    Row(
        "smooth_l1_loss[0d]",
        lambda m, a, b: _F(m).smooth_l1_loss(a, b, beta=2.0, reduction="sum"),
        ((), ()),
        "away",
        second=True,
    ),
    Row("mse_loss", lambda m, a, b: _F(m).mse_loss(a, b), ((2, 3, 2), (2, 3, 2)), second=True),
    Row(
        "mse_loss_none",
        lambda m, a, b: _F(m).mse_loss(a, b, reduction="none"),
        ((3, 4), (3, 4)),
        second=True,
    ),
    Row(
        "mse_loss[0d]",
        lambda m, a, b: _F(m).mse_loss(a, b, reduction="sum"),
        ((), ()),
        second=True,
    ),
    Row(
        "soft_margin_loss_sum",
        lambda m, a: _F(m).soft_margin_loss(a, _signs(m, a), reduction="sum"),
        ((2, 3),),
        second=True,
    ),
    Row(
        "soft_margin_loss_none",
        lambda m, a: _F(m).soft_margin_loss(a * 3.0, _signs(m, a), reduction="none"),
        ((2, 3),),
        second=True,
    ),
]


def _signs(m, a):  # noqa: ANN001, ANN202
    # labels +-1 in a's dtype where it is floating (an unsigned one cannot hold -1)
    dtype = a.dtype if a.is_floating_point() else m.float32
    return m.tensor([[1.0, -1.0, 1.0], [-1.0, -1.0, 1.0]], dtype=dtype)


def _weight(m, a):  # noqa: ANN001, ANN202
    return m.tensor([0.5, 2.0, 1.0, 3.0], dtype=a.dtype)


ROWS += [
    Row(
        "binary_cross_entropy_none",
        lambda m, a, b: _F(m).binary_cross_entropy(a.sigmoid(), b.sigmoid(), reduction="none"),
        ((3, 4), (3, 4)),
    ),
    Row(
        "binary_cross_entropy_weight_sum",
        lambda m, a, b: _F(m).binary_cross_entropy(
            a.sigmoid(), b.sigmoid(), _weight(m, a), reduction="sum"
        ),
        ((3, 4), (3, 4)),
    ),
    Row(
        "binary_cross_entropy_with_logits_none",
        lambda m, a, b: _F(m).binary_cross_entropy_with_logits(a, b.sigmoid(), reduction="none"),
        ((3, 4), (3, 4)),
        second=True,
    ),
    Row(
        "binary_cross_entropy_with_logits_weights",
        lambda m, a, b: _F(m).binary_cross_entropy_with_logits(
            a * 3.0, b.sigmoid(), _weight(m, a), pos_weight=_weight(m, a) + 1.0
        ),
        ((2, 3, 4), (2, 3, 4)),
        second=True,
    ),
]
