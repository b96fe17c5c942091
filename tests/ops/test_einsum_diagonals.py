"""einsum with a letter repeated in one operand reads its diagonal, as PyTorch's does (the
NTK tutorial's ``einsum('NMaa->NM', kernel)`` is a trace per pair); repeated dims of other
sizes are refused, naming the letter, the operand and the shapes."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr


@pytest.mark.parametrize(
    ("equation", "shapes"),
    [
        ("ii->", [(3, 3)]),
        ("iii->i", [(3, 3, 3)]),
        ("aba->ab", [(3, 2, 3)]),
        ("ij,jj->i", [(2, 3), (3, 3)]),
    ],
)
def test_a_repeated_letter_reads_the_diagonal(equation: str, shapes: list) -> None:
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(s) for s in shapes]
    theirs = [torch.tensor(x, requires_grad=True) for x in xs]
    ours = [cr.tensor(x, requires_grad=True) for x in xs]
    a, b = torch.einsum(equation, *theirs), cr.einsum(equation, *ours)
    np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-12)
    g = rng.standard_normal(tuple(a.shape))
    a.backward(torch.tensor(g))
    b.backward(cr.tensor(g))
    for t, c in zip(theirs, ours, strict=True):
        np.testing.assert_allclose(c.grad.numpy(), t.grad.numpy(), rtol=1e-12)


def test_a_repeated_letter_over_dims_of_other_sizes_is_refused() -> None:
    with pytest.raises(RuntimeError):
        torch.einsum("ii->i", torch.ones(2, 3))
    with pytest.raises(
        ValueError,
        match=r"einsum: letter 'i' repeats in operand 0 \('ii'\) over dims of sizes 2 and 3; "
        r"got shapes \[\(2, 3\)\]",
    ):
        cr.einsum("ii->i", cr.ones(2, 3))
