"""Attention against PyTorch: F.scaled_dot_product_attention (values, gradients with a random
upstream, finite differences, second order, dropout's statistics, errors)."""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import chainrule as cr
import chainrule.nn.functional as F
from chainrule.autograd import fastpath
from chainrule.testing import gradcheck, gradgradcheck

TOL = {np.float32: dict(rtol=1e-5, atol=2e-6), np.float64: dict(rtol=1e-10, atol=1e-12)}

# (query, key, value shapes, mask: None or (kind, shape), options)
SDPA_CASES: list[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], Any, dict]] = [
    ((3, 4), (5, 4), (5, 6), None, {}),
    ((2, 3, 4), (2, 5, 4), (2, 5, 4), None, {}),
    ((2, 3, 6, 4), (2, 3, 6, 4), (2, 3, 6, 4), None, {"is_causal": True}),
    ((2, 3, 7, 4), (2, 3, 5, 4), (2, 3, 5, 2), None, {"is_causal": True}),  # L > S
    ((2, 3, 4, 4), (2, 3, 6, 4), (2, 3, 6, 3), None, {"is_causal": True}),  # L < S
    ((2, 1, 3, 4), (1, 3, 5, 4), (1, 3, 5, 6), None, {}),  # batch dims broadcast
    ((2, 3, 3, 4), (1, 3, 5, 4), (2, 1, 5, 6), None, {"scale": 0.3}),
    ((2, 3, 4), (2, 5, 4), (2, 5, 6), ("bool", (3, 5)), {}),
    ((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 6), ("bool", (2, 1, 1, 5)), {}),
    ((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 6), ("float", (2, 1, 3, 5)), {}),
    ((2, 3, 4), (2, 5, 4), (2, 5, 6), ("float", (5,)), {"scale": 2.0}),
]


def _arrays(case: tuple, dtype: Any, seed: int = 0) -> tuple[list[np.ndarray], Any]:
    rng = np.random.default_rng(seed)
    qs, ks, vs, mask, _ = case
    arrays = [rng.standard_normal(s).astype(dtype) for s in (qs, ks, vs)]
    m = None
    if mask is not None:
        kind, shape = mask
        if kind == "bool":
            m = rng.random(shape) < 0.7
            m[..., 0] = True  # no row left without a key: see the fully masked tests
        else:
            m = rng.standard_normal(shape).astype(dtype)
    return arrays, m


def _both(arrays: list[np.ndarray], mask: Any, grad_mask: bool = False) -> tuple[list, list]:
    ours = [cr.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    if mask is not None:
        ours.append(cr.tensor(mask, requires_grad=grad_mask))
        theirs.append(torch.tensor(mask, requires_grad=grad_mask))
    return ours, theirs


def _sdpa_check(case: tuple, dtype: Any, grad_mask: bool = False) -> None:
    arrays, mask = _arrays(case, dtype)
    ours, theirs = _both(arrays, mask, grad_mask)
    opts = case[4]
    out_c = F.scaled_dot_product_attention(
        *ours[:3], attn_mask=ours[3] if mask is not None else None, **opts
    )
    out_t = TF.scaled_dot_product_attention(
        *theirs[:3], attn_mask=theirs[3] if mask is not None else None, **opts
    )
    assert out_c.dtype == out_t.detach().numpy().dtype
    np.testing.assert_allclose(out_c.numpy(), out_t.detach().numpy(), **TOL[dtype])
    g = np.random.default_rng(1).standard_normal(out_t.shape).astype(dtype)
    out_c.backward(cr.tensor(g))
    out_t.backward(torch.tensor(g))
    for a, b in zip(ours, theirs, strict=True):
        if b.grad is None:
            assert a.grad is None
            continue
        assert a.grad.shape == a.shape and a.grad.dtype == a.dtype
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), **TOL[dtype])


@pytest.mark.parametrize("fast", ["fast", "plain"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", SDPA_CASES, ids=str)
def test_sdpa_values_and_gradients_as_torch(case: tuple, dtype: Any, fast: str) -> None:
    if fast == "plain":
        with fastpath.disabled():
            _sdpa_check(case, dtype)
    else:
        _sdpa_check(case, dtype)


@pytest.mark.parametrize("fast", ["fast", "plain"])
def test_sdpa_float_mask_gets_its_gradient_as_torch(fast: str) -> None:
    case = ((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 6), ("float", (2, 1, 3, 5)), {})
    if fast == "plain":
        with fastpath.disabled():
            _sdpa_check(case, np.float64, grad_mask=True)
    else:
        _sdpa_check(case, np.float64, grad_mask=True)


@pytest.mark.parametrize("kind", ["bool", "float"])
def test_sdpa_fully_masked_row_gives_zeros_as_torch(kind: str) -> None:
    """PyTorch gives 0, not NaN, for a row whose every key is masked (bool False or float
    -inf); the gradients there are 0 too."""
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s) for s in ((2, 3, 4), (2, 5, 4), (2, 5, 6))]
    keep = np.ones((3, 5), dtype=bool)
    keep[1] = False
    keep[2, 3:] = False
    mask = keep if kind == "bool" else np.where(keep, 0.0, -np.inf)
    for plain in (False, True):
        ours, theirs = _both(arrays, mask)
        with fastpath.disabled() if plain else contextlib.nullcontext():
            out_c = F.scaled_dot_product_attention(*ours[:3], attn_mask=ours[3])
            out_t = TF.scaled_dot_product_attention(*theirs[:3], attn_mask=theirs[3])
            assert np.all(out_c.numpy()[:, 1] == 0)
            np.testing.assert_allclose(out_c.numpy(), out_t.detach().numpy(), rtol=1e-12)
            g = rng.standard_normal(out_t.shape)
            out_c.backward(cr.tensor(g))
            out_t.backward(torch.tensor(g))
        for a, b in zip(ours[:3], theirs[:3], strict=True):
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_sdpa_empty_keys_give_zeros_as_torch() -> None:
    q, k, v = np.ones((2, 3, 4)), np.ones((2, 0, 4)), np.ones((2, 0, 6))
    out = F.scaled_dot_product_attention(cr.tensor(q), cr.tensor(k), cr.tensor(v))
    ref = TF.scaled_dot_product_attention(torch.tensor(q), torch.tensor(k), torch.tensor(v))
    assert out.shape == tuple(ref.shape)
    np.testing.assert_array_equal(out.numpy(), ref.numpy())


def test_sdpa_grouped_query_attention_as_torch() -> None:
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal(s) for s in ((2, 4, 3, 4), (2, 2, 5, 4), (2, 2, 5, 6))]
    ours, theirs = _both(arrays, None)
    out_c = F.scaled_dot_product_attention(*ours, enable_gqa=True, is_causal=True)
    out_t = TF.scaled_dot_product_attention(*theirs, enable_gqa=True, is_causal=True)
    np.testing.assert_allclose(out_c.numpy(), out_t.detach().numpy(), rtol=1e-10)
    g = rng.standard_normal(out_t.shape)
    out_c.backward(cr.tensor(g))
    out_t.backward(torch.tensor(g))
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12)


GRADCHECK_CASES = [SDPA_CASES[i] for i in (0, 3, 5, 8, 10)]


@pytest.mark.parametrize("case", GRADCHECK_CASES, ids=str)
def test_sdpa_gradients_match_finite_differences(case: tuple) -> None:
    arrays, mask = _arrays(case, np.float64)
    inputs = [cr.tensor(a, requires_grad=True) for a in arrays]
    if mask is not None:
        inputs.append(cr.tensor(mask, requires_grad=mask.dtype.kind == "f"))

    def fn(q: cr.Tensor, k: cr.Tensor, v: cr.Tensor, m: Any = None) -> cr.Tensor:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=m, **case[4])

    assert gradcheck(fn, inputs)


@pytest.mark.parametrize("case", GRADCHECK_CASES, ids=str)
def test_sdpa_second_order_matches_finite_differences(case: tuple) -> None:
    arrays, mask = _arrays(case, np.float64)
    inputs = [cr.tensor(a, requires_grad=True) for a in arrays]
    if mask is not None:
        inputs.append(cr.tensor(mask, requires_grad=mask.dtype.kind == "f"))

    def fn(q: cr.Tensor, k: cr.Tensor, v: cr.Tensor, m: Any = None) -> cr.Tensor:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=m, **case[4])

    assert gradgradcheck(fn, inputs)


@pytest.mark.parametrize("masked", [False, True])
def test_sdpa_second_order_as_torch(masked: bool) -> None:
    """Gradients of a function of the gradients (create_graph), against PyTorch's double
    backward; with a float mask of -inf in places and a fully masked row."""
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal(s) for s in ((2, 3, 4), (2, 5, 4), (2, 5, 6))]
    mask = None
    if masked:
        mask = rng.standard_normal((3, 5))
        mask[0, 1:3] = -np.inf
        mask[2] = -np.inf
    ours, theirs = _both(arrays, mask, grad_mask=masked)
    g = rng.standard_normal((2, 3, 6))
    results = []
    for lib, xs, F_ in ((cr, ours, F), (torch, theirs, TF)):
        out = F_.scaled_dot_product_attention(*xs[:3], attn_mask=xs[3] if masked else None)
        grads = lib.autograd.grad(out, xs, lib.tensor(g), create_graph=True)
        total = sum((gr * gr).sum() for gr in grads)
        results.append([x.numpy() for x in lib.autograd.grad(total, xs)])
    for a, b in zip(*results, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_sdpa_dropout_keeps_the_mean_and_follows_the_seed() -> None:
    rng = np.random.default_rng(6)
    q, k = cr.tensor(rng.standard_normal((64, 8))), cr.tensor(rng.standard_normal((64, 8)))
    v = cr.tensor(np.eye(64))  # the output is the probabilities themselves, after dropout
    full = F.scaled_dot_product_attention(q, k, v).numpy()
    cr.manual_seed(0)
    draws = np.stack(
        [F.scaled_dot_product_attention(q, k, v, dropout_p=0.25).numpy() for _ in range(200)]
    )
    kept = draws != 0
    assert abs(kept.mean() - 0.75) < 0.01
    np.testing.assert_allclose(
        draws[kept], np.broadcast_to(full / 0.75, draws.shape)[kept], rtol=1e-12
    )
    np.testing.assert_allclose(draws.mean(0).sum(), full.sum(), rtol=0.01)  # mean preserved
    cr.manual_seed(0)
    again = F.scaled_dot_product_attention(q, k, v, dropout_p=0.25).numpy()
    np.testing.assert_array_equal(again, draws[0])
    assert not np.array_equal(draws[0], draws[1])
    assert np.all(F.scaled_dot_product_attention(q, k, v, dropout_p=1.0).numpy() == 0)


@pytest.mark.parametrize("fast", ["fast", "plain"])
def test_sdpa_dropout_gradient_goes_through_the_kept_probabilities(fast: str) -> None:
    """The same seed draws the same dropout mask, so the function is deterministic and
    finite differences check the rule with dropout."""
    rng = np.random.default_rng(7)
    inputs = [
        cr.tensor(rng.standard_normal(s), requires_grad=True)
        for s in ((2, 3, 4), (2, 5, 4), (2, 5, 6))
    ]

    def fn(q: cr.Tensor, k: cr.Tensor, v: cr.Tensor) -> cr.Tensor:
        cr.manual_seed(11)
        return F.scaled_dot_product_attention(q, k, v, dropout_p=0.4, is_causal=True)

    if fast == "plain":
        with fastpath.disabled():
            assert gradcheck(fn, inputs)
    else:
        assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_sdpa_errors_name_the_op_and_the_shapes() -> None:
    q, k, v = cr.randn(2, 3, 4), cr.randn(2, 5, 4), cr.randn(2, 5, 6)
    sdpa = F.scaled_dot_product_attention
    with pytest.raises(
        ValueError,
        match=r"scaled_dot_product_attention: query and key differ in the last dim \(E\); "
        r"got shapes query \(2, 3, 4\), key \(2, 5, 3\) and value \(2, 5, 6\)",
    ):
        sdpa(q, cr.randn(2, 5, 3), v)
    with pytest.raises(
        ValueError,
        match=r"key and value differ in length \(dim -2\); got shapes query \(2, 3, 4\), "
        r"key \(2, 5, 4\) and value \(2, 4, 6\)",
    ):
        sdpa(q, k, cr.randn(2, 4, 6))
    with pytest.raises(
        ValueError,
        match=r"batch dims do not broadcast; got shapes query \(2, 3, 4\), key \(3, 5, 4\) and "
        r"value \(3, 5, 6\)",
    ):
        sdpa(q, cr.randn(3, 5, 4), cr.randn(3, 5, 6))
    with pytest.raises(ValueError, match=r"at least 2 dims; got shapes query \(4,\)"):
        sdpa(cr.randn(4), k, v)
    with pytest.raises(
        ValueError,
        match=r"attn_mask of shape \(3, 4\) does not broadcast to the scores' shape \(2, 3, 5\)",
    ):
        sdpa(q, k, v, attn_mask=cr.ones(3, 4, dtype=cr.bool))
    with pytest.raises(ValueError, match=r"attn_mask of shape \(4, 2, 3, 5\) does not broadcast"):
        sdpa(q, k, v, attn_mask=cr.ones(4, 2, 3, 5, dtype=cr.bool))
    with pytest.raises(
        TypeError, match=r"attn_mask must be bool or of query's dtype float32; got dtype int64"
    ):
        sdpa(q, k, v, attn_mask=cr.ones(3, 5, dtype=cr.int64))
    with pytest.raises(
        TypeError, match=r"attn_mask must be bool or of query's dtype float32; got dtype float64"
    ):
        sdpa(q, k, v, attn_mask=cr.ones(3, 5, dtype=cr.float64))
    with pytest.raises(
        ValueError,
        match=r"attn_mask and is_causal=True cannot be given together; "
        r"got attn_mask of shape \(3, 5\)",
    ):
        sdpa(q, k, v, attn_mask=cr.ones(3, 5, dtype=cr.bool), is_causal=True)
    with pytest.raises(
        TypeError, match=r"one floating-point dtype; got dtypes float64, float32 and float32"
    ):
        sdpa(q.double(), k, v)
    with pytest.raises(ValueError, match=r"dropout_p must be in \[0, 1\]; got 1.5"):
        sdpa(q, k, v, dropout_p=1.5)
    with pytest.raises(
        ValueError,
        match=r"query heads \(dim -3\) must be a multiple of the key and value heads; "
        r"got shapes query \(2, 4, 3, 4\), key \(2, 3, 5, 4\)",
    ):
        sdpa(cr.randn(2, 4, 3, 4), cr.randn(2, 3, 5, 4), cr.randn(2, 3, 5, 6), enable_gqa=True)
