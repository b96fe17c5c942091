"""The losses that are one primitive each (CTC, the margin losses, Huber and smooth L1)
against torch at their edges: empty targets, a second backward over a retained graph,
PyTorch's node names."""

from __future__ import annotations

import numpy as np
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
