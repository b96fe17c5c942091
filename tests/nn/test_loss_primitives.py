"""The losses that are one primitive each (CTC, the margin losses, Huber and smooth L1)
against torch at their edges: empty targets, a second backward over a retained graph,
PyTorch's node names."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.tolerances import LAYER, tol

RNG = np.random.default_rng(7)


def test_ctc_loss_of_concatenated_targets_all_empty() -> None:
    logits = RNG.normal(size=(4, 3, 5))
    lengths, target_lengths = [4, 2, 0], [0, 0, 0]
    cl, tl = cr.tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
    cy = cr.nn.functional.ctc_loss(
        cl.log_softmax(2), cr.tensor([], dtype=cr.int64), lengths, target_lengths, reduction="sum"
    )
    ty = torch.nn.functional.ctc_loss(
        tl.log_softmax(2), torch.tensor([], dtype=torch.int64), torch.tensor(lengths),
        torch.tensor(target_lengths), reduction="sum",
    )  # fmt: skip
    np.testing.assert_allclose(cy.item(), ty.item(), **tol("float64", LAYER))
    cy.backward()
    ty.backward()
    np.testing.assert_allclose(cl.grad.numpy(), tl.grad.numpy(), **tol("float64", LAYER))


def test_ctc_loss_backward_twice_over_a_retained_graph() -> None:
    logits = RNG.normal(size=(6, 2, 4))
    targets, lengths, target_lengths = [[1, 1, 2], [3, 0, 0]], [6, 4], [3, 1]
    cl = cr.tensor(logits, requires_grad=True)
    cy = cr.nn.functional.ctc_loss(cl.log_softmax(2), cr.tensor(targets), lengths, target_lengths)
    cy.backward(retain_graph=True)
    first = cl.grad.numpy().copy()
    cy.backward()
    np.testing.assert_allclose(cl.grad.numpy(), 2 * first, rtol=1e-12)
    tl = torch.tensor(logits, requires_grad=True)
    torch.nn.functional.ctc_loss(
        tl.log_softmax(2), torch.tensor(targets), torch.tensor(lengths),
        torch.tensor(target_lengths),
    ).backward()  # fmt: skip
    np.testing.assert_allclose(first, tl.grad.numpy(), **tol("float64", LAYER))


def test_each_loss_ends_in_torchs_one_node() -> None:
    x = RNG.normal(size=(3, 4))
    t, labels = [0, 3, 1], [[3, 0, -1, 1], [1, 2, 0, 3], [-1, 0, 0, 0]]
    probs, weight = RNG.random((3, 4)), RNG.random(4) + 0.5
    for lib in (cr, torch):
        F, a = lib.nn.functional, lib.tensor(x, requires_grad=True)
        calls = [
            F.multi_margin_loss(a, lib.tensor(t), p=2, weight=lib.tensor(weight)),
            F.multilabel_margin_loss(a, lib.tensor(labels), reduction="sum"),
            F.huber_loss(a, lib.tensor(probs)),
            F.smooth_l1_loss(a, lib.tensor(probs), beta=0.5, reduction="sum"),
            F.binary_cross_entropy(a.sigmoid(), lib.tensor(probs), lib.tensor(weight)),
            F.binary_cross_entropy_with_logits(a, lib.tensor(probs), reduction="sum"),
        ]
        names = [y.grad_fn.name() for y in calls]
        if lib is cr:
            ours = names
    assert ours == names


def test_a_binary_cross_entropys_weight_takes_no_gradient_and_keeps_the_dtype() -> None:
    x, t = cr.randn(3, 4), cr.rand(3, 4)
    w = cr.rand(4, dtype=cr.float64, requires_grad=True)
    F = cr.nn.functional
    for loss in (F.binary_cross_entropy_with_logits, F.binary_cross_entropy):
        with pytest.raises(RuntimeError, match=r"not differentiable in weight, as in PyTorch"):
            loss(x.sigmoid(), t, w)
        assert loss(x.sigmoid(), t, w.detach()).dtype == cr.float32  # as PyTorch's
    with pytest.raises(ValueError, match=r"multi_margin_loss: weight must be one-dimensional"):
        F.multi_margin_loss(x, cr.tensor([0, 1, 2]), weight=cr.ones(3))


def _no_gradient_calls(lib):  # noqa: ANN001, ANN202
    """Calls whose last argument PyTorch takes no gradient in: the soft margin's target (of the
    input's shape, and broadcast) and the pos_weight of a binary cross entropy of logits."""
    F = lib.nn.functional
    return [
        lambda x, a: F.soft_margin_loss(x, a),
        lambda x, a: F.soft_margin_loss(x.unsqueeze(0).expand(2, 4), a),
        lambda x, a: F.soft_margin_loss(x, a, reduction="none"),
        lambda x, a: F.binary_cross_entropy_with_logits(x, x.sigmoid(), pos_weight=a),
        lambda x, a: lib.nn.BCEWithLogitsLoss(pos_weight=a, reduction="sum")(x, x.sigmoid()),
    ]


@pytest.mark.parametrize("case", range(len(_no_gradient_calls(cr))))
@pytest.mark.parametrize("input_requires_grad", [True, False])
def test_an_argument_without_a_gradient_is_refused_at_the_call_as_torchs(
    case: int, input_requires_grad: bool
) -> None:
    x, a = RNG.normal(size=4), RNG.uniform(0.5, 2.0, 4)
    for lib in (torch, cr):
        call = _no_gradient_calls(lib)[case]
        xs = lib.tensor(x, requires_grad=input_requires_grad)
        with pytest.raises(RuntimeError, match=r"not differentiable"):
            call(xs, lib.tensor(a, requires_grad=True))
    with pytest.raises(RuntimeError, match=r"in (target|pos_weight), as in PyTorch; got a "):
        _no_gradient_calls(cr)[case](cr.tensor(x), cr.tensor(a, requires_grad=True))
    outs = []
    for lib in (torch, cr):
        call = _no_gradient_calls(lib)[case]
        xs, at = lib.tensor(x, requires_grad=True), lib.tensor(a, requires_grad=True)
        with lib.no_grad():  # no gradient asked: both answer
            outs.append(call(xs, at).numpy())
        outs.append(call(xs, at.detach()).detach().numpy())  # a detached one is taken
    np.testing.assert_allclose(outs[2], outs[0], **tol("float64", LAYER))
    np.testing.assert_allclose(outs[3], outs[1], **tol("float64", LAYER))


@pytest.mark.parametrize("p", [1, 2])
def test_multi_margin_loss_of_infinite_scores_counts_no_nan(p: int) -> None:
    x = np.array([[np.inf, 0.5, -np.inf], [0.2, np.inf, 0.1], [np.nan, 0.3, 0.9]])
    t = [0, 2, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # quietly, as PyTorch's
        ours = cr.nn.functional.multi_margin_loss(cr.tensor(x), cr.tensor(t), p, reduction="none")
    theirs = torch.nn.functional.multi_margin_loss(
        torch.tensor(x), torch.tensor(t), p, reduction="none"
    )
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_cross_entropys_smoothing_and_probabilities_at_their_edges() -> None:
    """Every target ignored (a mean over no weight: NaN), a weighted smoothed mean, and
    class probabilities of a (C,) input and of no samples, each against PyTorch."""
    x = RNG.normal(size=(3, 4, 2))
    weight = RNG.random(4) + 0.5
    cases = [
        ((x, np.full((3, 2), 1)), {"ignore_index": 1, "label_smoothing": 0.2}),
        ((x, np.array([[0, 3], [1, 1], [2, 0]])), {"weight": weight, "label_smoothing": 0.3}),
        ((x[0, :, 0], RNG.random(4)), {"label_smoothing": 0.1}),
        ((np.zeros((0, 4)), np.zeros((0, 4))), {}),
    ]
    for (a, t), options in cases:
        got, want = [], []
        for lib, out in ((cr, got), (torch, want)):
            xa = lib.tensor(a, requires_grad=True)
            kw = {k: lib.tensor(v) if k == "weight" else v for k, v in options.items()}
            y = lib.nn.functional.cross_entropy(xa, lib.tensor(t), **kw)
            y.backward()
            out += [y.detach().numpy(), xa.grad.numpy()]
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, **tol("float64", LAYER))


@pytest.mark.parametrize("shape", [(5,), (2, 5)])
def test_nll_sum_over_ignored_targets_is_positive_zero(shape: tuple) -> None:
    """Every target ignored: a 'sum' of no counted terms is +0, as PyTorch's (the sum of the
    negated log-probabilities, not the negated sum, which would be -0)."""
    x = RNG.normal(size=shape)
    target = np.full(shape[:-1], 2)
    for fn in ("cross_entropy", "nll_loss"):
        got = getattr(cr.nn.functional, fn)(
            cr.tensor(x), cr.tensor(target), ignore_index=2, reduction="sum"
        )
        want = getattr(torch.nn.functional, fn)(
            torch.tensor(x), torch.tensor(target), ignore_index=2, reduction="sum"
        )
        assert np.signbit(got.item()) == np.signbit(want.item()) and got.item() == 0.0
