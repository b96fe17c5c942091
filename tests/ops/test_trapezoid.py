"""trapezoid, trapz and cumulative_trapezoid against PyTorch's at the edges: integer samples,
no samples, one sample, and each refusal naming the op."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr

OPS = ["trapezoid", "trapz", "cumulative_trapezoid"]


def _both(call):
    ours, theirs = call(cr), call(torch)
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


@pytest.mark.parametrize("op", OPS)
def test_integers_give_floats_as_torchs(op):
    _both(lambda m: getattr(m, op)(m.arange(12).view(3, 4)))
    _both(lambda m: getattr(m, op)(m.arange(12).view(3, 4), m.arange(4) * 2))
    _both(lambda m: getattr(m, op)(m.arange(12, dtype=m.int32).view(3, 4), dx=3, dim=0))


@pytest.mark.parametrize("op", OPS)
def test_no_samples_and_one_sample_as_torchs(op):
    _both(lambda m: getattr(m, op)(m.ones(2, 0)))
    _both(lambda m: getattr(m, op)(m.ones(2, 0, dtype=m.int64)))
    _both(lambda m: getattr(m, op)(m.ones(2, 0), m.ones(0)))
    _both(lambda m: getattr(m, op)(m.ones(3, 1) * 5, dx=2.5))


def test_mixed_float_dtypes_promote_as_torchs():
    y = np.random.default_rng(0).standard_normal((2, 3))
    for op in OPS:
        _both(lambda m, op=op: getattr(m, op)(
            m.tensor(y, dtype=m.float32), m.tensor([0.0, 0.5, 2.0], dtype=m.float64)))  # fmt: skip


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda f: f(cr.tensor(3.0)), IndexError, "y must have at least one dim; got shape ()"),
        (lambda f: f(cr.ones(2, 3), cr.ones(2)), ValueError, "one value for each sample point"),
        (lambda f: f(cr.ones(2, 3), 2.0), TypeError, "x must be a Tensor of sample points"),
        (lambda f: f(cr.ones(2, 3), cr.ones(3), dx=1.0), TypeError, "not both"),
        (lambda f: f(cr.ones(2, 3), dx=True), TypeError, "dx must be a real number; got True"),
        (lambda f: f(cr.ones(2, 3, dtype=cr.bool)), TypeError, "y must not be bool"),
        (lambda f: f(cr.ones(2, 3), dim=2), IndexError, "dim 2 is out of range"),
    ],
)
def test_refusals_name_the_op(op, call, error, message):
    with pytest.raises(error, match=f"^{op if op != 'trapz' else 'trapezoid'}: .*"
                       + message.replace("(", "\\(").replace(")", "\\)")):  # fmt: skip
        call(getattr(cr, op))


@pytest.mark.parametrize("op", OPS)
def test_large_integers_are_summed_exactly_before_halving_as_torchs(op):
    rng = np.random.default_rng(0)
    y, x = rng.integers(10**8, 10**9, (3, 50)), np.cumsum(rng.integers(1, 100, 50))
    ours = getattr(cr, op)(cr.tensor(y), cr.tensor(x)).numpy()
    theirs = getattr(torch, op)(torch.tensor(y), torch.tensor(x)).numpy()
    assert ours.dtype == theirs.dtype == np.float32
    assert np.array_equal(ours, theirs)  # one rounding, after the exact sum
