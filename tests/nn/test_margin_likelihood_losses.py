"""The margin, embedding and likelihood losses against torch: every module with its
reductions and legacy flags, gradients with a random upstream, the CTC loss (targets padded
and concatenated, impossible alignments, zero_infinity, unbatched), and the errors."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.tolerances import LAYER, tol

RNG = np.random.default_rng(0)


def _signs(*shape: int) -> np.ndarray:
    return np.where(RNG.random(shape) < 0.5, -1.0, 1.0)


# module name, constructor keywords, inputs (arrays; the first GRADS[name] get gradients)
CASES: list[tuple[str, dict[str, Any], Callable[[], tuple[np.ndarray, ...]]]] = [
    (
        "MarginRankingLoss",
        {"margin": 0.3},
        lambda: (RNG.normal(size=5), RNG.normal(size=5), _signs(5)),
    ),
    ("HingeEmbeddingLoss", {"margin": 0.7}, lambda: (RNG.normal(size=(3, 4)), _signs(3, 4))),
    ("SoftMarginLoss", {}, lambda: (RNG.normal(size=(3, 4)), _signs(3, 4))),
    (
        "CosineEmbeddingLoss",
        {"margin": 0.2},
        lambda: (RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3)), _signs(4)),
    ),
    (
        "MultiMarginLoss",
        {"p": 2, "margin": 0.5, "weight": np.array([1.0, 0.5, 2.0, 1.5])},
        lambda: (RNG.normal(size=(5, 4)), np.array([0, 3, 1, 2, 2])),
    ),
    (
        "MultiLabelMarginLoss",
        {},
        lambda: (RNG.normal(size=(2, 4)), np.array([[2, 1, -1, 0], [0, 1, 2, 3]])),
    ),
    (
        "MultiLabelSoftMarginLoss",
        {"weight": np.array([1.0, 2.0, 0.5])},
        lambda: (RNG.normal(size=(4, 3)), (RNG.random((4, 3)) < 0.5) * 1.0),
    ),
    (
        "TripletMarginLoss",
        {"margin": 0.5, "p": 1.5, "swap": True},
        lambda: tuple(RNG.normal(size=(4, 3)) for _ in range(3)),
    ),
    (
        "TripletMarginWithDistanceLoss",
        {"margin": 2.0},
        lambda: tuple(RNG.normal(size=(4, 3)) for _ in range(3)),
    ),
    (
        "KLDivLoss",
        {"reduction": "batchmean"},
        lambda: (RNG.normal(size=(3, 4)), RNG.random((3, 4))),
    ),
    ("KLDivLoss", {"log_target": True}, lambda: (RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4)))),
    (
        "GaussianNLLLoss",
        {"full": True},
        lambda: (RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4)), RNG.random(3)),
    ),
    (
        "PoissonNLLLoss",
        {"full": True},
        lambda: (RNG.normal(size=(3, 4)), RNG.integers(0, 6, (3, 4)) * 1.0),
    ),
    (
        "PoissonNLLLoss",
        {"log_input": False},
        lambda: (RNG.random((3, 4)) + 0.1, RNG.integers(0, 6, (3, 4)) * 1.0),
    ),
]


GRADS = {"MarginRankingLoss": 2, "CosineEmbeddingLoss": 2, "TripletMarginLoss": 3,
         "TripletMarginWithDistanceLoss": 3, "KLDivLoss": 2, "GaussianNLLLoss": 3}  # fmt: skip


def _both(value: Any, grad: bool) -> tuple[Any, Any]:
    if not isinstance(value, np.ndarray):
        return value, value
    return cr.tensor(value, requires_grad=grad), torch.tensor(value, requires_grad=grad)


@pytest.mark.parametrize("reduction", ["none", "sum", None])
@pytest.mark.parametrize("name, kwargs, make", CASES, ids=[c[0] for c in CASES])
def test_modules_match_torch_with_gradients(
    name: str, kwargs: dict, make: Callable, reduction: str | None
) -> None:
    pairs = [_both(v, i < GRADS.get(name, 1)) for i, v in enumerate(make())]
    options = [_both(v, False) for v in kwargs.values()]
    ours_kw = {k: o for k, (o, _) in zip(kwargs, options, strict=True)}
    theirs_kw = {k: t for k, (_, t) in zip(kwargs, options, strict=True)}
    if reduction is not None:
        ours_kw["reduction"] = theirs_kw["reduction"] = reduction
    ours, theirs = getattr(cr.nn, name)(**ours_kw), getattr(torch.nn, name)(**theirs_kw)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # KLDivLoss's 'mean'
        cy, ty = ours(*[o for o, _ in pairs]), theirs(*[t for _, t in pairs])
    np.testing.assert_allclose(cy.detach().numpy(), ty.detach().numpy(), **tol("float64", LAYER))
    g = RNG.normal(size=tuple(ty.shape))
    cy.backward(cr.tensor(g))
    ty.backward(torch.tensor(g))
    for o, t in pairs:
        if isinstance(t, torch.Tensor) and t.requires_grad:
            np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), **tol("float64", LAYER))


@pytest.mark.parametrize(
    "size_average, reduce, want",
    [(None, False, "none"), (False, None, "sum"), (True, True, "mean")],
)
def test_legacy_flags_choose_the_reduction_and_warn(
    size_average: bool | None, reduce: bool | None, want: str
) -> None:
    with pytest.warns(UserWarning, match=f"reduction='{want}'"):
        module = cr.nn.SoftMarginLoss(size_average, reduce)
    assert module.reduction == want == torch.nn.SoftMarginLoss(size_average, reduce).reduction
    x, y = RNG.normal(size=4), _signs(4)
    with pytest.warns(UserWarning, match="size_average and reduce are deprecated"):
        ours = cr.nn.functional.soft_margin_loss(cr.tensor(x), cr.tensor(y), size_average, reduce)
    theirs = torch.nn.functional.soft_margin_loss(
        torch.tensor(x), torch.tensor(y), size_average, reduce
    )
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), **tol("float64", LAYER))


def test_kl_div_mean_warns_and_batchmean_divides_by_the_batch() -> None:
    x, t = cr.tensor(RNG.normal(size=(2, 5))), cr.tensor(RNG.random((2, 5)))
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        mean = cr.nn.functional.kl_div(x, t)
    total = cr.nn.functional.kl_div(x, t, reduction="sum")
    np.testing.assert_allclose(mean.item() * 10, total.item())
    batch = cr.nn.functional.kl_div(x, t, reduction="batchmean")
    np.testing.assert_allclose(batch.item() * 2, total.item())


def _ctc_inputs(lengths: list[int], target_lengths: list[int], steps: int = 7, classes: int = 5):
    n = len(lengths)
    logits = RNG.normal(size=(steps, n, classes))
    targets = RNG.integers(1, classes, (n, max(target_lengths)))
    return logits, targets


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("concatenated", [False, True])
@pytest.mark.parametrize("steps", [7, 12])  # 12: log_probs run past every input length
def test_ctc_loss_matches_torch(reduction: str, concatenated: bool, steps: int) -> None:
    lengths, target_lengths = [7, 6, 3, 5], [3, 2, 0, 3]
    logits, targets = _ctc_inputs(lengths, target_lengths, steps)
    if concatenated:
        targets = np.concatenate([t[:k] for t, k in zip(targets, target_lengths, strict=True)])
    cl, tl = cr.tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
    clp, tlp = cl.log_softmax(2), tl.log_softmax(2)
    tlp.retain_grad()
    clp.retain_grad()
    cy = cr.nn.CTCLoss(reduction=reduction)(
        clp, cr.tensor(targets), cr.tensor(lengths), cr.tensor(target_lengths)
    )
    ty = torch.nn.CTCLoss(reduction=reduction)(
        tlp, torch.tensor(targets), torch.tensor(lengths), torch.tensor(target_lengths)
    )
    np.testing.assert_allclose(cy.detach().numpy(), ty.detach().numpy(), **tol("float64", LAYER))
    g = RNG.normal(size=tuple(ty.shape))
    cy.backward(cr.tensor(g))
    ty.backward(torch.tensor(g))
    # PyTorch's gradient on the log-probabilities (not the plain derivative), and the logits'
    np.testing.assert_allclose(clp.grad.numpy(), tlp.grad.numpy(), **tol("float64", LAYER))
    np.testing.assert_allclose(cl.grad.numpy(), tl.grad.numpy(), **tol("float64", LAYER))
    if reduction == "none":
        assert cy.grad_fn.name() == ty.grad_fn.name() == "CtcLossBackward0"


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss_of_an_impossible_alignment(zero_infinity: bool) -> None:
    lengths, target_lengths = [2, 7], [3, 2]  # 3 labels cannot fit in 2 steps
    logits, targets = _ctc_inputs(lengths, target_lengths)
    cl, tl = cr.tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
    args = (lengths, target_lengths)
    cy = cr.nn.functional.ctc_loss(
        cl.log_softmax(2), cr.tensor(targets), *args, reduction="none", zero_infinity=zero_infinity
    )
    ty = torch.nn.functional.ctc_loss(
        tl.log_softmax(2), torch.tensor(targets), *map(torch.tensor, args), reduction="none",
        zero_infinity=zero_infinity,
    )  # fmt: skip
    np.testing.assert_allclose(cy.detach().numpy(), ty.detach().numpy(), **tol("float64", LAYER))
    cy.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(cl.grad.numpy(), tl.grad.numpy(), **tol("float64", LAYER))


def test_ctc_loss_unbatched_and_float32() -> None:
    logits = RNG.normal(size=(6, 4)).astype(np.float32)
    target = np.array([1, 3, 3])
    cy = cr.nn.functional.ctc_loss(cr.tensor(logits).log_softmax(1), cr.tensor(target), 6, 3)
    ty = torch.nn.functional.ctc_loss(
        torch.tensor(logits).log_softmax(1), torch.tensor(target), torch.tensor(6), torch.tensor(3)
    )
    assert cy.dtype == cr.float32 and cy.shape == ()
    np.testing.assert_allclose(cy.numpy(), ty.numpy(), **tol("float32", LAYER))


def test_ctc_loss_of_infinite_log_probs_is_nan_as_torchs() -> None:
    """+inf among the log-probabilities: inf - inf in the recursion, NaN as PyTorch's, also
    where the inf reaches places that may not skip a label (a repeated label, sample 0)."""
    lp = np.random.default_rng(1).standard_normal((5, 2, 4))
    lp[1, 0, 1] = lp[2, 1, 2] = np.inf
    targets, lengths, target_lengths = [[1, 1, 2], [2, 3, 0]], [5, 5], [3, 2]
    cy = cr.nn.functional.ctc_loss(
        cr.tensor(lp), cr.tensor(targets), lengths, target_lengths, reduction="none"
    )
    ty = torch.nn.functional.ctc_loss(
        torch.tensor(lp),
        torch.tensor(targets),
        torch.tensor(lengths),
        torch.tensor(target_lengths),
        reduction="none",
    )
    assert torch.isnan(ty).all()
    np.testing.assert_array_equal(np.isnan(cy.numpy()), ty.isnan().numpy())


def test_errors_name_the_op_and_shapes() -> None:
    F = cr.nn.functional
    x = cr.randn(3, 4)
    with pytest.raises(ValueError, match=r"margin_ranking_loss: .* same number of dims; got"):
        F.margin_ranking_loss(cr.randn(3), cr.randn(3), cr.ones(3, 1))
    with pytest.raises(ValueError, match=r"cosine_embedding_loss: expected inputs \(N, D\)"):
        F.cosine_embedding_loss(x, x, cr.ones(3, 1))
    with pytest.raises(ValueError, match=r"multi_margin_loss: only p == 1 and p == 2"):
        F.multi_margin_loss(x, cr.tensor([0, 1, 2]), p=3)
    with pytest.raises(IndexError, match=r"multi_margin_loss: target out of range for 4"):
        F.multi_margin_loss(x, cr.tensor([0, 1, 4]))
    for dtype in (cr.int64, cr.int32, cr.int8):  # a negative class, by one check of both ends
        with pytest.raises(IndexError, match=r"multi_margin_loss: target out of range for 4"):
            F.multi_margin_loss(x, cr.tensor([0, -1, 2], dtype=dtype))
    with pytest.raises(ValueError, match=r"multilabel_margin_loss: expected input .* got shapes"):
        F.multilabel_margin_loss(x, cr.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match=r"triplet_margin_loss: margin must be greater than 0"):
        F.triplet_margin_loss(x, x, x, margin=0.0)
    with pytest.raises(ValueError, match=r"triplet_margin_loss: anchor, positive and negative"):
        F.triplet_margin_loss(x, x, cr.randn(4))
    with pytest.raises(ValueError, match=r"gaussian_nll_loss: var must have the input's shape"):
        F.gaussian_nll_loss(x, x, cr.ones(2, 2))
    with pytest.raises(ValueError, match=r"gaussian_nll_loss: var has negative entries"):
        F.gaussian_nll_loss(x, x, -cr.ones(3, 4))
    with pytest.raises(ValueError, match=r"kl_div: reduction must be"):
        F.kl_div(x, x, reduction="batch")
    with pytest.raises(ValueError, match=r"ctc_loss: blank must be a class in \[0, 4\)"):
        F.ctc_loss(cr.randn(5, 2, 4), cr.tensor([[1], [2]]), [5, 5], [1, 1], blank=4)
    with pytest.raises(ValueError, match=r"ctc_loss: input_lengths must lie in \[0, 5\]"):
        F.ctc_loss(cr.randn(5, 2, 4), cr.tensor([[1], [2]]), [6, 5], [1, 1])
    with pytest.raises(ValueError, match=r"ctc_loss: targets must be classes .* other than blank"):
        F.ctc_loss(cr.randn(5, 2, 4), cr.tensor([[0], [2]]), [5, 5], [1, 1])


def test_pairwise_distance_module_and_integer_inputs() -> None:
    a, b = RNG.integers(0, 5, (3, 4)), RNG.integers(0, 5, (3, 4))
    ours = cr.nn.PairwiseDistance(p=1.0, keepdim=True)(cr.tensor(a), cr.tensor(b))
    theirs = torch.nn.PairwiseDistance(p=1.0, keepdim=True)(torch.tensor(a), torch.tensor(b))
    assert ours.dtype == cr.float32 and ours.shape == (3, 1)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), **tol("float32", LAYER))


def test_ctc_loss_on_random_cases_matches_torch() -> None:
    """Lengths down to 0, repeated labels, any blank, impossible alignments, zero_infinity."""
    rng = np.random.default_rng(1)
    for _ in range(30):
        steps, n, c, s = (int(v) for v in rng.integers((1, 1, 2, 1), (9, 5, 5, 5)))
        lengths, target_lengths = rng.integers(0, steps + 1, n), rng.integers(0, s + 1, n)
        blank = int(rng.integers(0, c))
        targets = rng.integers(0, c - 1, (n, s))
        targets = np.where(targets >= blank, targets + 1, targets)  # never the blank
        logits, zero_infinity = rng.normal(size=(steps, n, c)), bool(rng.integers(0, 2))
        cl, tl = cr.tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
        args = (targets, lengths, target_lengths)
        cy = cr.nn.functional.ctc_loss(
            cl.log_softmax(2), *map(cr.tensor, args), blank=blank, reduction="none",
            zero_infinity=zero_infinity,
        )  # fmt: skip
        ty = torch.nn.functional.ctc_loss(
            tl.log_softmax(2), *map(torch.tensor, args), blank=blank, reduction="none",
            zero_infinity=zero_infinity,
        )  # fmt: skip
        g = rng.normal(size=n)
        cy.backward(cr.tensor(g))
        ty.backward(torch.tensor(g))
        np.testing.assert_allclose(
            cy.detach().numpy(), ty.detach().numpy(), **tol("float64", LAYER)
        )
        np.testing.assert_allclose(cl.grad.numpy(), tl.grad.numpy(), **tol("float64", LAYER))


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_multi_margin_loss_with_infinite_and_nan_inputs_is_torchs(p: int, weighted: bool) -> None:
    """Off the hinge z = margin - x_y + x_i may be -inf or NaN (an infinite or NaN input):
    no gradient there, as PyTorch's; p = 2 multiplied 2 z by a slope of 0 there, NaN."""
    x = np.array(
        [
            [1.0, np.inf, 0.0],  # an infinite other class: an infinite loss and gradient
            [np.inf, 1.0, 0.0],  # an infinite target: off the hinge everywhere
            [-np.inf, 1.0, 0.0],
            [1.0, -np.inf, 0.0],
            [np.nan, 1.0, 0.0],  # a NaN target: no hinge
            [0.3, np.nan, 0.2],
            [0.5, -0.2, 0.1],
        ]
    )
    target, g = [0, 0, 0, 0, 0, 0, 1], RNG.standard_normal(len(x))
    found = []
    for m in (cr, torch):
        xx = m.tensor(x, requires_grad=True)
        weight = m.tensor([0.5, 2.0, 1.5], dtype=m.float64) if weighted else None
        loss = m.nn.functional.multi_margin_loss(
            xx, m.tensor(target), p=p, weight=weight, reduction="none"
        )
        loss.backward(m.tensor(g))
        found.append((loss.detach().numpy(), xx.grad.numpy()))
    for ours, theirs in zip(*found, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)  # inf and NaN where torch's
