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
from chainrule.ops import attention as attention_ops
from chainrule.testing import gradcheck, gradgradcheck
from tests.helpers import fast_path_on
from tests.tolerances import OP, tol
from tests.twins import copy_back, copy_into

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
    np.testing.assert_allclose(out_c.numpy(), out_t.detach().numpy(), **tol(dtype, OP))
    g = np.random.default_rng(1).standard_normal(out_t.shape).astype(dtype)
    out_c.backward(cr.tensor(g))
    out_t.backward(torch.tensor(g))
    for a, b in zip(ours, theirs, strict=True):
        if b.grad is None:
            assert a.grad is None
            continue
        assert a.grad.shape == a.shape and a.grad.dtype == a.dtype
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), **tol(dtype, OP))


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


# float16 and bfloat16 cases: PyTorch's kernel (four dims, no dropout) and its math path
HALF_CASES = [
    ((2, 3, 5, 8), (2, 3, 5, 8), (2, 3, 5, 8), None, {}),
    ((2, 3, 6, 8), (2, 3, 6, 8), (2, 3, 6, 4), None, {"is_causal": True}),
    ((2, 2, 3, 8), (2, 2, 5, 8), (2, 2, 5, 8), ("float", (3, 5)), {}),
    ((1, 2, 4, 8), (1, 2, 9, 8), (1, 2, 9, 8), ("bool", (4, 9)), {"scale": 0.5}),
    ((2, 3, 4), (2, 5, 4), (2, 5, 6), ("float", (3, 5)), {}),
    ((3, 4), (5, 4), (5, 6), ("bool", (3, 5)), {"is_causal": False}),
]


@pytest.mark.parametrize("fast", ["fast", "plain"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("case", HALF_CASES, ids=str)
def test_sdpa_in_float16_and_bfloat16_as_torch(case: tuple, dtype: str, fast: str) -> None:
    """As PyTorch's CPU: in float32, the kernel's exp(S - max) rounded before its product
    with v; the result (and the leaves' gradients, through the casts) rounded."""
    arrays, mask = _arrays(case, np.float32)
    outs, grads = [], []
    out_shape = (*case[0][:-1], case[2][-1])  # (..., L, Ev)
    g = np.random.default_rng(1).standard_normal(out_shape).astype(np.float32)
    for lib, functional in ((torch, TF), (cr, F)):
        leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
        m = None if mask is None else lib.tensor(mask)
        if m is not None and m.is_floating_point():
            m = m.to(getattr(lib, dtype))
        with fastpath.disabled() if fast == "plain" and lib is cr else contextlib.nullcontext():
            x = [t.to(getattr(lib, dtype)) for t in leaves]
            out = functional.scaled_dot_product_attention(*x, attn_mask=m, **case[4])
            out.backward(lib.tensor(g).to(out.dtype))
        outs.append(out)
        grads.append([t.grad.numpy() for t in leaves])
    theirs, ours = outs
    assert str(ours.dtype) == f"chainrule.{dtype}"
    assert ours.grad_fn.name() == theirs.grad_fn.name()
    # the kernel's steps are PyTorch's; its sums may round one way or the other: one unit
    # in the last place of the dtype (bfloat16 keeps 8 bits, float16 11)
    ulp = 2.0**-7 if dtype == "bfloat16" else 2.0**-10
    a, b = ours.detach().float().numpy(), theirs.detach().float().numpy()
    np.testing.assert_allclose(a, b, rtol=ulp, atol=ulp)
    for ga, gb in zip(*grads, strict=True):
        np.testing.assert_allclose(ga, gb, rtol=2 * ulp, atol=2 * ulp * np.abs(gb).max())


def test_sdpa_takes_a_float32_mask_beside_any_query_as_torch() -> None:
    arrays, mask = _arrays(SDPA_CASES[-1], np.float64)  # scale 2, a float mask (5,)
    mask = mask.astype(np.float32)
    ours = F.scaled_dot_product_attention(*map(cr.tensor, arrays), cr.tensor(mask), scale=2.0)
    theirs = TF.scaled_dot_product_attention(
        *map(torch.tensor, arrays), torch.tensor(mask), scale=2.0
    )
    assert ours.dtype == cr.float64
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), **tol(np.float64, OP))


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


# (name, the edit of q and the bool mask, whether the scores' exps go unshifted)
LARGE_EDITS: list[tuple[str, Any, bool]] = [
    ("causal", lambda q, keep: None, True),
    ("row_all_masked", lambda q, keep: keep.__setitem__((5, slice(None)), False), False),
    ("large", lambda q, keep: q.__setitem__((0, 3), q[0, 3] * 100), False),
]


@pytest.mark.parametrize(
    ("name", "edit", "unshifted"), LARGE_EDITS, ids=[e[0] for e in LARGE_EDITS]
)
def test_sdpa_of_large_scores_as_torch(
    name: str, edit: Any, unshifted: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(2, 64, 64) causal scores: exp(scores) unshifted where it is safe (fastpath/exps.py),
    shifted by each row's max where not (a row all masked, large scores); values and
    gradients as PyTorch's in float32, either way and in either mode."""
    rng = np.random.default_rng(4)
    q, k, v = (rng.standard_normal((2, 64, 8)).astype(np.float32) for _ in range(3))
    keep = np.tril(np.ones((64, 64), dtype=bool))
    edit(q, keep)
    seen: list[bool] = []
    made = attention_ops.exps.unshifted
    monkeypatch.setattr(
        attention_ops.exps,
        "unshifted",
        lambda a, d: seen.append(made(a, d) is not None) or made(a, d),
    )
    for plain in (False, True):
        ours, theirs = _both([q, k, v], keep)
        with fastpath.disabled() if plain else fast_path_on():
            out_c = F.scaled_dot_product_attention(*ours[:3], attn_mask=ours[3])
            out_t = TF.scaled_dot_product_attention(*theirs[:3], attn_mask=theirs[3])
            np.testing.assert_allclose(out_c.numpy(), out_t.detach().numpy(), **tol(np.float32, OP))
            g = rng.standard_normal(out_t.shape).astype(np.float32)
            out_c.backward(cr.tensor(g))
            out_t.backward(torch.tensor(g))
        for a, b in zip(ours[:3], theirs[:3], strict=True):
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), **tol(np.float32, OP))
    assert seen == [unshifted, False]  # the switch off: always the shift


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
        TypeError,
        match=r"attn_mask must be bool, float32 or of query's dtype chainrule.float32; "
        r"got dtype chainrule.int64",
    ):
        sdpa(q, k, v, attn_mask=cr.ones(3, 5, dtype=cr.int64))
    with pytest.raises(
        TypeError,
        match=r"attn_mask must be bool, float32 or of query's dtype chainrule.float32; "
        r"got dtype chainrule.float64",
    ):
        sdpa(q, k, v, attn_mask=cr.ones(3, 5, dtype=cr.float64))
    with pytest.raises(TypeError, match=r"query's dtype chainrule.bfloat16; got dtype chainrule"):
        sdpa(q.bfloat16(), k.bfloat16(), v.bfloat16(), attn_mask=cr.ones(3, 5, dtype=cr.float16))
    with pytest.raises(
        ValueError,
        match=r"attn_mask and is_causal=True cannot be given together; "
        r"got attn_mask of shape \(3, 5\)",
    ):
        sdpa(q, k, v, attn_mask=cr.ones(3, 5, dtype=cr.bool), is_causal=True)
    with pytest.raises(
        TypeError,
        match=r"one floating-point dtype; got dtypes chainrule.float64, chainrule.float32 and "
        r"chainrule.float32",
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


# -- MultiheadAttention --------------------------------------------------------------------


def _mha_pair(dtype: Any = np.float64, **kwargs: Any) -> tuple[Any, Any]:
    """A torch MultiheadAttention and a chainrule one holding its weights."""
    torch.manual_seed(0)
    theirs = torch.nn.MultiheadAttention(dtype=getattr(torch, np.dtype(dtype).name), **kwargs)
    with torch.no_grad():  # random biases, so that their gradients are not all alike
        for name, p in theirs.named_parameters():
            if "bias" in name:
                p.normal_()
    ours = cr.nn.MultiheadAttention(dtype=dtype, **kwargs)
    copy_into(ours, theirs)
    return ours, theirs


def _mha_inputs(kind: str, shapes: dict, dtype: Any, seed: int = 0) -> tuple[list, list]:
    """(query, key, value) for both libraries: one tensor three times ('self'), key the same
    tensor as value ('kv') or three tensors ('cross')."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(shapes["q"]).astype(dtype)
    k = rng.standard_normal(shapes["k"]).astype(dtype)
    v = rng.standard_normal(shapes["v"]).astype(dtype)
    out = []
    for lib in (cr, torch):
        tq, tk, tv = (lib.tensor(a, requires_grad=True) for a in (q, k, v))
        out.append({"self": [tq, tq, tq], "kv": [tq, tk, tk], "cross": [tq, tk, tv]}[kind])
    return out[0], out[1]


def _mask_pair(mask: Any) -> tuple[Any, Any]:
    return (None, None) if mask is None else (cr.tensor(mask), torch.tensor(mask))


def _mha_check(
    kind: str,
    dtype: Any,
    module: dict,
    call: dict,
    shapes: dict,
    masks: tuple[Any, Any] = (None, None),
) -> None:
    """Outputs, weights, and the gradients of the inputs and every parameter, against
    torch, from a random upstream gradient of the output (and of the weights)."""
    ours, theirs = _mha_pair(dtype, **module)
    xs_c, xs_t = _mha_inputs(kind, shapes, dtype)
    kpm_c, kpm_t = _mask_pair(masks[0])
    am_c, am_t = _mask_pair(masks[1])
    out_c, w_c = ours(*xs_c, key_padding_mask=kpm_c, attn_mask=am_c, **call)
    out_t, w_t = theirs(*xs_t, key_padding_mask=kpm_t, attn_mask=am_t, **call)
    limits = tol(dtype, OP)
    np.testing.assert_allclose(out_c.numpy(), out_t.detach().numpy(), **limits)
    assert (w_c is None) == (w_t is None)
    rng = np.random.default_rng(1)
    g = rng.standard_normal(out_t.shape).astype(dtype)
    loss_c, loss_t = (out_c * cr.tensor(g)).sum(), (out_t * torch.tensor(g)).sum()
    if w_t is not None:
        assert w_c.shape == tuple(w_t.shape)
        np.testing.assert_allclose(w_c.numpy(), w_t.detach().numpy(), **limits)
        gw = rng.standard_normal(w_t.shape).astype(dtype)
        loss_c = loss_c + (w_c * cr.tensor(gw)).sum()
        loss_t = loss_t + (w_t * torch.tensor(gw)).sum()
    loss_c.backward()
    loss_t.backward()
    for a, b in zip(xs_c, xs_t, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), **limits)
    params_t = dict(theirs.named_parameters())
    params_c = dict(ours.named_parameters())
    assert list(params_c) == list(params_t)
    for name, p in params_c.items():
        np.testing.assert_allclose(
            p.grad.numpy(), params_t[name].grad.numpy(), **limits, err_msg=name
        )


SEQ_FIRST = {"q": (4, 2, 8), "k": (5, 2, 8), "v": (5, 2, 8)}
BATCH_FIRST = {"q": (2, 4, 8), "k": (2, 5, 8), "v": (2, 5, 8)}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["self", "kv", "cross"])
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("batch_first", [False, True])
def test_mha_as_torch(dtype: Any, kind: str, need_weights: bool, batch_first: bool) -> None:
    shapes = BATCH_FIRST if batch_first else SEQ_FIRST
    if kind == "self":
        shapes = {**shapes, "k": shapes["q"], "v": shapes["q"]}
    module = {"embed_dim": 8, "num_heads": 2, "batch_first": batch_first}
    _mha_check(kind, dtype, module, {"need_weights": need_weights}, shapes)


@pytest.mark.parametrize("average", [True, False])
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize(
    "masks",
    [
        ("bool", None),
        ("float", None),
        (None, "bool2"),
        (None, "float2"),
        (None, "bool3"),
        (None, "float3"),
        ("bool", "bool2"),
        ("float", "float3"),
    ],
    ids=str,
)
def test_mha_masks_as_torch(masks: tuple, need_weights: bool, average: bool) -> None:
    rng = np.random.default_rng(2)
    N, H, L, S = 2, 2, 4, 5
    made = []
    for m in masks:
        if m is None:
            made.append(None)
            continue
        shape = {"bool": (N, S), "float": (N, S), "bool2": (L, S), "float2": (L, S)}.get(
            m, (N * H, L, S)
        )
        out = rng.random(shape) < 0.3
        out[..., 0] = False  # every query keeps a key (see the fully masked test)
        made.append(out if m.startswith("bool") else np.where(out, -1.5, 0.5) * rng.random(shape))
    call = {"need_weights": need_weights, "average_attn_weights": average}
    _mha_check(
        "cross", np.float64, {"embed_dim": 8, "num_heads": H}, call, SEQ_FIRST, masks=tuple(made)
    )


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_causal_hint_as_torch(need_weights: bool) -> None:
    shapes = {"q": (2, 5, 8), "k": (2, 5, 8), "v": (2, 5, 8)}
    causal = np.triu(np.ones((5, 5), dtype=bool), 1)
    module = {"embed_dim": 8, "num_heads": 4, "batch_first": True}
    call = {"need_weights": need_weights, "is_causal": True}
    _mha_check("self", np.float64, module, call, shapes, masks=(None, causal))
    kpm = np.zeros((2, 5), dtype=bool)
    kpm[1, 3:] = True
    _mha_check("self", np.float64, module, call, shapes, masks=(kpm, causal))


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_unbatched_as_torch(need_weights: bool) -> None:
    shapes = {"q": (4, 6), "k": (5, 6), "v": (5, 6)}
    kpm = np.array([False, False, True, False, True])
    module = {"embed_dim": 6, "num_heads": 3, "batch_first": True}
    for masks in ((None, None), (kpm, None), (None, np.random.default_rng(0).random((3, 4, 5)))):
        call = {"need_weights": need_weights}
        _mha_check("cross", np.float64, module, call, shapes, masks=masks)


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize(
    "module",
    [
        {"kdim": 3, "vdim": 5},
        {"kdim": 3},
        {"bias": False},
        {"add_bias_kv": True},
        {"add_zero_attn": True},
        {"add_bias_kv": True, "add_zero_attn": True, "kdim": 3, "vdim": 5},
    ],
    ids=str,
)
def test_mha_options_as_torch(module: dict, need_weights: bool) -> None:
    shapes = {
        "q": (4, 2, 8),
        "k": (5, 2, module.get("kdim", 8)),
        "v": (5, 2, module.get("vdim", 8)),
    }
    kpm = np.zeros((2, 5), dtype=bool)
    kpm[0, 1] = True
    attn = np.random.default_rng(3).standard_normal((4, 5))
    full = {"embed_dim": 8, "num_heads": 2, **module}
    for masks in ((None, None), (kpm.astype(np.float64) * -2.0, attn)):
        _mha_check("cross", np.float64, full, {"need_weights": need_weights}, shapes, masks)


def test_mha_state_dict_keys_and_initialisation_as_torch() -> None:
    for kwargs in ({}, {"kdim": 3, "vdim": 5, "add_bias_kv": True}, {"bias": False}):
        theirs = torch.nn.MultiheadAttention(8, 2, **kwargs)
        ours = cr.nn.MultiheadAttention(8, 2, **kwargs)
        assert list(ours.state_dict()) == list(theirs.state_dict())
        assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
        for name, p in ours.state_dict().items():
            assert p.shape == tuple(theirs.state_dict()[name].shape), name
        # back into torch: the same outputs
        copy_back(theirs, ours)
        x = np.random.default_rng(0).standard_normal((4, 2, 8)).astype(np.float32)
        k = np.random.default_rng(1).standard_normal((5, 2, kwargs.get("kdim", 8)))
        v = np.random.default_rng(2).standard_normal((5, 2, kwargs.get("vdim", 8)))
        k, v = k.astype(np.float32), v.astype(np.float32)
        out_c, w_c = ours(cr.tensor(x), cr.tensor(k), cr.tensor(v))
        out_t, w_t = theirs(torch.tensor(x), torch.tensor(k), torch.tensor(v))
        np.testing.assert_allclose(out_c.numpy(), out_t.detach().numpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(w_c.numpy(), w_t.detach().numpy(), rtol=1e-5, atol=1e-6)
    m = cr.nn.MultiheadAttention(64, 4, add_bias_kv=True)
    assert m.in_proj_weight is not None and m.in_proj_bias is not None
    bound = np.sqrt(6.0 / (64 + 3 * 64))  # xavier_uniform_ over (3E, E)
    w = m.in_proj_weight.numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert np.all(m.in_proj_bias.numpy() == 0) and np.all(m.out_proj.bias.numpy() == 0)
    assert m.bias_k is not None and 0.5 < m.bias_k.numpy().std() / np.sqrt(2.0 / 128) < 1.5
    assert isinstance(m.out_proj, cr.nn.Linear)


def test_mha_dropout_only_in_training() -> None:
    ours, theirs = _mha_pair(np.float64, embed_dim=8, num_heads=2, dropout=0.5)
    x_c, x_t = _mha_inputs("self", {"q": (4, 2, 8), "k": (4, 2, 8), "v": (4, 2, 8)}, np.float64)
    ours.eval()
    theirs.eval()
    for need in (True, False):
        out_c, _ = ours(*x_c, need_weights=need)
        out_t, _ = theirs(*x_t, need_weights=need)
        np.testing.assert_allclose(out_c.numpy(), out_t.detach().numpy(), rtol=1e-10)
    ours.train()
    cr.manual_seed(0)
    a, wa = ours(*x_c)
    cr.manual_seed(0)
    b, wb = ours(*x_c)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert (wa.numpy() == 0).any() or not np.allclose(wa.numpy().sum(-1), 1.0)
    assert not np.allclose(a.numpy(), out_c.numpy())


def test_mha_train_with_dropout_zero_is_eval() -> None:
    ours, theirs = _mha_pair(np.float64, embed_dim=8, num_heads=2)
    x_c, x_t = _mha_inputs("self", {"q": (4, 2, 8), "k": (4, 2, 8), "v": (4, 2, 8)}, np.float64)
    train_out, _ = ours(*x_c)
    ours.eval()
    eval_out, _ = ours(*x_c)
    np.testing.assert_array_equal(train_out.numpy(), eval_out.numpy())


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_mha_fully_masked_row_as_torch() -> None:
    """A query whose every key is padded: NaN with the weights (composed softmax, as
    PyTorch), 0 without (scaled_dot_product_attention, as PyTorch)."""
    ours, theirs = _mha_pair(np.float64, embed_dim=8, num_heads=2)
    x_c, x_t = _mha_inputs("self", {"q": (4, 2, 8), "k": (4, 2, 8), "v": (4, 2, 8)}, np.float64)
    kpm = np.zeros((2, 4), dtype=bool)
    kpm[1] = True
    for need in (True, False):
        out_c, _ = ours(*x_c, key_padding_mask=cr.tensor(kpm), need_weights=need)
        out_t, _ = theirs(*x_t, key_padding_mask=torch.tensor(kpm), need_weights=need)
        np.testing.assert_allclose(out_c.numpy(), out_t.detach().numpy(), rtol=1e-10)
        assert np.isnan(out_c.numpy()[:, 1]).all() == need


def test_mha_errors_name_what_is_wrong() -> None:
    with pytest.raises(
        ValueError,
        match=r"MultiheadAttention: embed_dim must be divisible by num_heads; got embed_dim 10 "
        r"and num_heads 3",
    ):
        cr.nn.MultiheadAttention(10, 3)
    m = cr.nn.MultiheadAttention(8, 2)
    x = cr.randn(4, 2, 8)
    with pytest.raises(
        ValueError,
        match=r"last dims of query, key and value to be embed_dim, kdim and vdim \(8, 8, 8\); "
        r"got shapes query \(4, 2, 6\)",
    ):
        m(cr.randn(4, 2, 6), x, x)
    with pytest.raises(
        ValueError,
        match=r"all be 3-D \(batched\) or all 2-D \(unbatched\); "
        r"got shapes query \(4, 2, 8\), key \(4, 8\)",
    ):
        m(x, cr.randn(4, 8), cr.randn(4, 8))
    with pytest.raises(ValueError, match=r"expected attn_mask of shape \(4, 4\) or \(4, 4, 4\)"):
        m(x, x, x, attn_mask=cr.zeros(4, 5))
    with pytest.raises(
        ValueError, match=r"expected key_padding_mask of shape \(2, 4\) \(N, S\); got \(4, 2\)"
    ):
        m(x, x, x, key_padding_mask=cr.zeros(4, 2, dtype=cr.bool))
    with pytest.raises(
        TypeError,
        match=r"attn_mask must be bool or of the query's dtype chainrule.float32; "
        r"got dtype chainrule.int64",
    ):
        m(x, x, x, attn_mask=cr.zeros(4, 4, dtype=cr.int64))
    with pytest.raises(ValueError, match=r"is_causal is a hint that attn_mask is the causal mask"):
        m(x, x, x, is_causal=True)
    with pytest.raises(ValueError, match=r"query and key differ in batch size"):
        m(x, cr.randn(4, 3, 8), cr.randn(4, 3, 8))
