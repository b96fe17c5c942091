"""linalg.multi_dot against PyTorch: vector ends, every chain length's order, the node's name
and the refusals."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr

CHAINS = [
    ((3,), (3, 4), (4, 2)),
    ((3, 4), (4,)),
    ((3,), (3,)),
    ((7, 3), (3, 7), (7, 2)),
    ((3,), (3, 4), (4, 5), (5,)),
    ((2, 3), (3, 4), (4, 5), (5, 6), (6, 1)),
    ((0, 3), (3, 4), (4, 0)),
]


@pytest.mark.parametrize("shapes", CHAINS, ids=str)
def test_multi_dot_matches_torch(shapes: tuple[tuple[int, ...], ...]) -> None:
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    results = []
    for lib in (torch, cr):
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]
        y = lib.linalg.multi_dot(ts)
        up = np.random.default_rng(1).standard_normal(tuple(y.shape))
        y.backward(lib.tensor(up))
        results.append((y.detach().numpy(), [t.grad.numpy() for t in ts], y.grad_fn.name()))
    (want, want_grads, want_name), (got, got_grads, got_name) = results
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    for g, w in zip(got_grads, want_grads, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    assert got_name == want_name == "ViewBackward0"


@pytest.mark.parametrize(
    ("shapes", "message"),
    [
        (((3,),), "expected at least 2 tensors; got 1"),
        (((), (3,)), r"tensor 0 must be 2-D \(the first and last may be 1-D\); got shape \(\)"),
        (((3,), (3,), (3,)), r"tensor 1 must be 2-D .*got shape \(3,\)"),
        (
            ((3, 4), (5, 2)),
            r"tensors 0 and 1 cannot be multiplied; got shapes \(3, 4\) and \(5, 2\)",
        ),
    ],
)
def test_multi_dot_refusals(shapes: tuple[tuple[int, ...], ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        cr.linalg.multi_dot([cr.ones(s) for s in shapes])
