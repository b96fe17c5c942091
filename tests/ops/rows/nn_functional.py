"""Catalog rows of chainrule.nn.functional's activations, normalisations, losses and small
layers (each row one call, the same in torch.nn.functional)."""

from __future__ import annotations

from tests.ops.rows import Row

ROWS: list[Row] = [
    # -- activations ------------------------------------------------------------------------
    Row("hardswish", lambda m, a: m.nn.functional.hardswish(a * 4.0), ((3, 5),), second=True),
    Row("hardsigmoid", lambda m, a: m.nn.functional.hardsigmoid(a * 4.0), ((3, 5),)),
    Row("softshrink", lambda m, a: m.nn.functional.softshrink(a, 0.3), ((3, 5),), "away"),
    Row("hardshrink", lambda m, a: m.nn.functional.hardshrink(a, 0.3), ((3, 5),), "away"),
    Row("tanhshrink", lambda m, a: m.nn.functional.tanhshrink(a), ((3, 5),), second=True),
    Row("rrelu_eval", lambda m, a: m.nn.functional.rrelu(a, 0.1, 0.3), ((3, 5),), "away"),
    Row("hardswish[0d]", lambda m, a: m.nn.functional.hardswish(a), ((),)),
    # -- normalisations ---------------------------------------------------------------------
    Row(
        "batch_norm_training",
        lambda m, a, w, b: m.nn.functional.batch_norm(a, None, None, w, b, training=True),
        ((4, 3, 2), (3,), (3,)),
        second=True,
    ),
    Row(
        "batch_norm_eval",
        lambda m, a, w, b: m.nn.functional.batch_norm(a, _stat(m, a, 0.5), _stat(m, a, 2.0), w, b),
        ((4, 3, 2), (3,), (3,)),
    ),
]


def _stat(m, a, v):  # noqa: ANN001, ANN202  (a running statistic, (C,))
    return m.full((3,), v, dtype=a.dtype)


def _signs(m, a, n):  # noqa: ANN001, ANN202  (m is chainrule or torch)
    return m.tensor([1.0, -1.0, -1.0, 1.0, 1.0, -1.0][:n], dtype=a.dtype)


def _ctc(m, lp, reduction):  # noqa: ANN001, ANN202
    targets = m.tensor([[1, 2, 2], [3, 1, 0], [2, 0, 0]])
    lengths, target_lengths = m.tensor([6, 5, 3]), m.tensor([3, 2, 1])
    return m.nn.functional.ctc_loss(lp, targets, lengths, target_lengths, reduction=reduction)


ROWS += [
    # -- losses -----------------------------------------------------------------------------
    Row(
        "margin_ranking_loss",
        lambda m, a, b: m.nn.functional.margin_ranking_loss(a, b, _signs(m, a, 6), 0.2),
        ((6,), (6,)),
        "away",
    ),
    Row(
        "hinge_embedding_loss",
        lambda m, a: m.nn.functional.hinge_embedding_loss(
            a, _signs(m, a, 6).reshape(2, 3), 0.5, reduction="sum"
        ),
        ((2, 3),),
        "away",
    ),
    Row(
        "soft_margin_loss",
        lambda m, a: m.nn.functional.soft_margin_loss(a, _signs(m, a, 6)),
        ((6,),),
        second=True,
    ),
    Row(
        "cosine_embedding_loss",
        lambda m, a, b: m.nn.functional.cosine_embedding_loss(
            a, b, _signs(m, a, 4), -0.9, reduction="none"
        ),
        ((4, 3), (4, 3)),
        second=True,
    ),
    Row(
        "multi_margin_loss",
        lambda m, a: m.nn.functional.multi_margin_loss(a, m.tensor([0, 3, 1]), margin=2.0),
        ((3, 4),),
    ),
    Row(
        "multi_margin_loss_p2_weight",
        lambda m, a: m.nn.functional.multi_margin_loss(
            a,
            m.tensor([0, 3, 1]),
            p=2,
            margin=2.0,
            weight=m.tensor([1.0, 2.0, 0.5, 3.0], dtype=a.dtype),
            reduction="none",
        ),
        ((3, 4),),
    ),
    Row(
        "multilabel_margin_loss",
        lambda m, a: m.nn.functional.multilabel_margin_loss(
            a * 0.2, m.tensor([[3, 0, -1, 1], [1, 2, 0, 3], [-1, 0, 0, 0]])
        ),
        ((3, 4),),
    ),
    Row(
        "multilabel_soft_margin_loss",
        lambda m, a, w: m.nn.functional.multilabel_soft_margin_loss(
            a, (_signs(m, a, 6).reshape(2, 3) + 1) / 2, w
        ),
        ((2, 3), (3,)),
        second=True,
    ),
    Row(
        "triplet_margin_loss",
        lambda m, a, p, n: m.nn.functional.triplet_margin_loss(a, p, n, 3.0, reduction="none"),
        ((4, 3), (4, 3), (4, 3)),
    ),
    Row(
        "triplet_margin_loss_swap_p1",
        lambda m, a, p, n: m.nn.functional.triplet_margin_loss(a, p, n, 3.0, 1, swap=True),
        ((4, 3), (4, 3), (4, 3)),
        "away",
    ),
    Row(
        "triplet_margin_with_distance_loss",
        lambda m, a, p, n: m.nn.functional.triplet_margin_with_distance_loss(
            a, p, n, distance_function=lambda u, v: (u - v).abs().sum(-1), margin=4.0
        ),
        ((4, 3), (4, 3), (4, 3)),
        "away",
    ),
    Row(
        "pairwise_distance",
        lambda m, a, b: m.nn.functional.pairwise_distance(a, b, 3.0, keepdim=True),
        ((4, 3), (3,)),
        second=True,
    ),
    Row(
        "kl_div_batchmean",
        lambda m, a, t: m.nn.functional.kl_div(a, t, reduction="batchmean"),
        ((3, 4), (3, 4)),
        ("real", "pos"),
        second=True,
    ),
    Row(
        "kl_div_log_target",
        lambda m, a, t: m.nn.functional.kl_div(a, t, reduction="none", log_target=True),
        ((3, 4), (3, 4)),
        second=True,
    ),
    Row(
        "gaussian_nll_loss",
        lambda m, a, t, v: m.nn.functional.gaussian_nll_loss(a, t, v, full=True),
        ((3, 4), (3, 4), (3, 1)),
        ("real", "real", "pos"),
        second=True,
    ),
    Row(
        "poisson_nll_loss",
        lambda m, a: m.nn.functional.poisson_nll_loss(
            a, m.tensor([0.0, 1.0, 2.0, 5.0], dtype=a.dtype), full=True
        ),
        ((3, 4),),
        second=True,
    ),
    Row(
        "poisson_nll_loss_rates",
        lambda m, a: m.nn.functional.poisson_nll_loss(
            a, m.tensor([0.0, 1.0, 2.0, 5.0], dtype=a.dtype), log_input=False, reduction="sum"
        ),
        ((3, 4),),
        "pos",
    ),
    # through log_softmax, PyTorch's CTC gradient is the true derivative
    Row("ctc_loss", lambda m, a: _ctc(m, a.log_softmax(2), "mean"), ((6, 3, 4),)),
    # on the log-probabilities themselves it is not (numeric=False): exp(lp) - posterior
    Row("ctc_loss_log_probs", lambda m, a: _ctc(m, a, "none"), ((6, 3, 4),), numeric=False),
]

ROWS += [
    # -- normalisations ---------------------------------------------------------------------
    Row(
        "group_norm",
        lambda m, x, w, b: m.nn.functional.group_norm(x, 2, w, b),
        ((3, 4, 5), (4,), (4,)),
        second=True,
    ),
    Row(
        "group_norm_4d",
        lambda m, x: m.nn.functional.group_norm(x, 3, eps=1e-3),
        ((2, 6, 3, 2),),
        second=True,
    ),
    Row(
        "instance_norm",
        lambda m, x, w, b: m.nn.functional.instance_norm(x, weight=w, bias=b),
        ((3, 4, 5), (4,), (4,)),
        second=True,
    ),
    Row(
        "instance_norm_running",
        lambda m, x: m.nn.functional.instance_norm(
            x,
            m.zeros(4, dtype=x.dtype),
            m.ones(4, dtype=x.dtype),
            use_input_stats=False,
        ),
        ((3, 4, 2, 2),),
    ),
    Row(
        "rms_norm",
        lambda m, x, w: m.nn.functional.rms_norm(x, (5,), w),
        ((3, 4, 5), (5,)),
        second=True,
    ),
    Row(
        "rms_norm_2dims",
        lambda m, x: m.nn.functional.rms_norm(x, (4, 5), eps=1e-3),
        ((3, 4, 5),),
        second=True,
    ),
    Row(
        "local_response_norm",
        lambda m, x: m.nn.functional.local_response_norm(x, 3, alpha=0.5),
        ((2, 5, 4),),
        second=True,
    ),
    Row(
        "local_response_norm_5d",
        lambda m, x: m.nn.functional.local_response_norm(x, 4, alpha=0.5, beta=0.3, k=2.0),
        ((2, 5, 2, 3, 2),),
    ),
]


def _bag(m, w, mode, psw=None):  # noqa: ANN001, ANN202
    x, offsets = m.tensor([1, 2, 4, 5, 4, 3, 2, 4, 0, 0]), m.tensor([0, 3, 3, 7])
    return m.nn.functional.embedding_bag(x, w, offsets, mode=mode, per_sample_weights=psw)


ROWS += [
    # -- small layers -----------------------------------------------------------------------
    Row(
        "bilinear",
        lambda m, a, b, w, c: m.nn.functional.bilinear(a, b, w, c),
        ((2, 4, 3), (2, 4, 5), (2, 3, 5), (2,)),
        second=True,
    ),
    Row("embedding_bag_sum", lambda m, w, p: _bag(m, w, "sum", p), ((6, 3), (10,))),
    Row("embedding_bag_mean", lambda m, w: _bag(m, w, "mean"), ((6, 3),)),
    Row("embedding_bag_max", lambda m, w: _bag(m, w, "max"), ((6, 3),)),
]
