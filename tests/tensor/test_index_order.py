"""Indexing with integers and index arrays together, in PyTorch's order (the integers
select first), for reading, writing and the gradient; and the layout of an advanced index's
result (C order, as PyTorch's)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import chainrule as cr

INDEXES = {
    "x[0, :, [0, 1]]": lambda m: (0, slice(None), [0, 1]),
    "x[None, 0, :, [1, 2]]": lambda m: (None, 0, slice(None), [1, 2]),
    "x[0, ..., [1, 2]]": lambda m: (0, Ellipsis, [1, 2]),
    "x[..., 0, [1, 2]]": lambda m: (Ellipsis, 0, [1, 2]),
    "x[[0, 1], :, [0, 1]]": lambda m: ([0, 1], slice(None), [0, 1]),
    "x[1, [True, False, True]]": lambda m: (1, m.tensor([True, False, True])),
    "x[tensor(0), :, [0, 3]]": lambda m: (m.tensor(0), slice(None), [0, 3]),
    "x[:, [0, 2]]": lambda m: (slice(None), [0, 2]),
    "x[1, :, 1:3][[0, 2]]": lambda m: (1, slice(None), slice(1, 3)),
}


@pytest.mark.parametrize("name", list(INDEXES))
def test_reading_writing_and_the_gradient_follow_pytorchs_order(name) -> None:
    results = []
    for m in (cr, torch):
        x = m.arange(24.0, dtype=m.float64).reshape(2, 3, 4).requires_grad_()
        key = INDEXES[name](m)
        y = x * 1
        picked = y[key]
        w = m.arange(1.0, 1.0 + picked.numel(), dtype=m.float64).reshape(picked.shape)
        (picked * w).sum().backward()
        with m.no_grad():
            z = x.detach().clone()
            z[key] = -w
        results.append((tuple(picked.shape), picked.tolist(), x.grad.tolist(), z.tolist(),
                        picked.is_contiguous(), picked.stride()))  # fmt: skip
    assert results[0] == results[1]


PART = st.one_of(
    st.integers(-2, 1),
    st.just(slice(None)),
    st.builds(slice, st.integers(0, 1), st.integers(2, 3)),
    st.lists(st.integers(0, 1), min_size=1, max_size=3),
    st.none(),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(PART, min_size=1, max_size=4))
def test_random_mixed_indexes_match_pytorch(parts) -> None:
    key = tuple(parts)
    x = np.arange(2 * 3 * 4 * 2, dtype=np.float64).reshape(2, 3, 4, 2)
    try:
        theirs = torch.tensor(x)[key]
    except (IndexError, RuntimeError, TypeError):
        with pytest.raises((IndexError, ValueError, RuntimeError, TypeError)):
            cr.tensor(x)[key]
        return
    mine = cr.tensor(x)[key]
    assert tuple(mine.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    z_mine, z_theirs = cr.tensor(x), torch.tensor(x)
    z_mine[key] = cr.tensor(-theirs.numpy())
    z_theirs[key] = -theirs
    np.testing.assert_array_equal(z_mine.numpy(), z_theirs.numpy())
