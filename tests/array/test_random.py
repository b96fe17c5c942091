"""Random draws as PyTorch's: Generator and generator=, randperm, multinomial, bernoulli, and
inference_mode (which records nothing, as no_grad)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr


def test_a_generator_of_its_own_repeats_its_draws_and_leaves_the_global_one_alone() -> None:
    cr.manual_seed(0)
    expected_global = cr.rand(3).tolist()
    cr.manual_seed(0)
    g = cr.Generator()
    assert g.manual_seed(5) is g and g.initial_seed() == 5 and g.device == cr.device("cpu")
    first = [cr.rand(3, generator=g), cr.randn(2, generator=g), cr.randperm(6, generator=g)]
    assert cr.rand(3).tolist() == expected_global  # the global generator did not move
    g.manual_seed(5)
    again = [cr.rand(3, generator=g), cr.randn(2, generator=g), cr.randperm(6, generator=g)]
    assert [t.tolist() for t in first] == [t.tolist() for t in again]
    assert cr.randint(0, 10, (4,), generator=g.manual_seed(1)).dtype == np.int64


def test_a_generator_on_another_device_or_of_another_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="Generator: chainrule computes on the CPU; got"):
        cr.Generator("cuda")
    with pytest.raises(TypeError, match="rand: generator must be a numpy.random.Generator"):
        cr.rand(2, generator=torch.Generator())


@pytest.mark.parametrize("n", [0, 1, 7])
def test_randperm_is_a_permutation_of_int64_like_torch(n: int) -> None:
    ours, theirs = cr.randperm(n), torch.randperm(n)
    assert ours.dtype == np.int64 and str(theirs.dtype) == "torch.int64"
    assert sorted(ours.tolist()) == sorted(theirs.tolist()) == list(range(n))
    with pytest.raises(ValueError, match="randperm: n must be a non-negative int; got -1"):
        cr.randperm(-1)


def test_multinomial_shapes_dtype_and_frequencies() -> None:
    g = cr.Generator().manual_seed(0)
    w = cr.tensor([0.1, 0.0, 0.6, 0.3])
    one = w.multinomial(3)  # without replacement: distinct, never the 0-weight category
    assert one.shape == (3,) and one.dtype == np.int64 and len(set(one.tolist())) == 3
    assert 1 not in one.tolist()
    # every category once, those of weight 0 last, as torch's
    assert cr.tensor([0.0, 0.5, 0.0, 0.5]).multinomial(4).tolist()[2:] == [2, 0]
    assert torch.tensor([0.0, 0.5, 0.0, 0.5]).multinomial(4).tolist()[2:] == [2, 0]
    many = cr.multinomial(w, 20000, replacement=True, generator=g)
    freq = np.bincount(many.numpy(), minlength=4) / 20000
    np.testing.assert_allclose(freq, [0.1, 0.0, 0.6, 0.3], atol=0.015)
    rows = cr.tensor([[1.0, 0.0], [0.0, 2.0]]).multinomial(5, replacement=True)
    assert rows.shape == (2, 5) and rows.tolist() == [[0] * 5, [1] * 5]
    assert torch.tensor([[1.0, 0.0], [0.0, 2.0]]).multinomial(5, True).shape == rows.shape


@pytest.mark.parametrize(
    ("weights", "n", "replacement", "message"),
    [
        ([0.5, 0.0, 0.5], 4, False, "cannot draw 4 samples without replacement from 3"),
        ([0.5, -0.1], 1, True, "weights must be finite, non-negative and not all 0"),
        ([0.0, 0.0], 1, True, "weights must be finite, non-negative and not all 0"),
        ([1.0, float("nan")], 1, True, "weights must be finite, non-negative and not all 0"),
        ([1.0, float("inf")], 2, True, "weights must be finite, non-negative and not all 0"),
        ([[1.0, 2.0], [-np.inf, np.inf]], 1, False, "weights must be finite, non-negative"),
        ([[[1.0]]], 1, True, "input must be a 1-D or 2-D floating-point tensor"),
        ([1.0, 2.0], 0, True, "num_samples must be a positive int; got 0"),
    ],
)
def test_multinomial_refuses_what_torch_refuses(weights, n, replacement, message) -> None:
    with pytest.raises(RuntimeError):
        torch.tensor(weights).multinomial(n, replacement)
    with pytest.raises(ValueError, match=f"multinomial: {message}"):
        cr.tensor(weights).multinomial(n, replacement)


def test_bernoulli_draws_ones_with_the_given_probabilities() -> None:
    p = cr.tensor(np.array([0.0, 0.25, 1.0] * 20000, dtype=np.float64))
    draws = cr.bernoulli(p, generator=cr.Generator().manual_seed(2)).numpy().reshape(-1, 3)
    assert draws.dtype == np.float64 and set(np.unique(draws)) <= {0.0, 1.0}
    np.testing.assert_allclose(draws.mean(axis=0), [0.0, 0.25, 1.0], atol=0.01)
    assert torch.bernoulli(torch.tensor([0.0, 1.0])).tolist() == [0.0, 1.0]
    with pytest.raises(ValueError, match=r"bernoulli: probabilities must be in \[0, 1\]"):
        cr.tensor([0.5, 1.5]).bernoulli()
    with pytest.raises(TypeError, match="bernoulli: needs a floating-point tensor"):
        cr.tensor([0, 1]).bernoulli()


def test_inference_mode_records_nothing_as_a_block_and_a_decorator() -> None:
    x = cr.ones(2, requires_grad=True)
    for lib, t in ((cr, x), (torch, torch.ones(2, requires_grad=True))):
        with lib.inference_mode():
            assert not (t * 2).requires_grad
        assert (t * 2).requires_grad
        with lib.inference_mode(False):
            assert (t * 2).requires_grad

    @cr.inference_mode()
    def double(t: cr.Tensor) -> cr.Tensor:
        return t * 2

    assert not double(x).requires_grad and cr.is_grad_enabled()
    with cr.no_grad(), cr.inference_mode(False):
        assert (x * 2).requires_grad  # as PyTorch: leaving inference mode turns grad mode on
