"""Attention: scaled_dot_product_attention (the functional form of the primitive in
ops/attention.py, its arguments checked here) and the MultiheadAttention layer.
"""

from __future__ import annotations

import math

from .. import backend
from ..ops.attention import ScaledDotProductAttention
from ..tensor import Tensor, as_tensor

xp = backend.xp

_SDPA = "scaled_dot_product_attention"


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """softmax(query @ key^T * scale + mask) @ value, with dropout on the probabilities.

    query (..., L, E), key (..., S, E), value (..., S, Ev) -> (..., L, Ev), the batch dims
    broadcast. ``scale`` defaults to 1/sqrt(E). ``attn_mask`` broadcasts to (..., L, S): a
    bool mask lets a key take part where True, a float mask (of query's dtype) is added to
    the scores. ``is_causal`` lets query i see keys j <= i (not with attn_mask). A row whose
    keys are all masked gives 0. ``dropout_p`` > 0 zeroes probabilities with chainrule's
    generator (always: the functional form has no training flag, as PyTorch's).
    ``enable_gqa`` lets key and value have fewer heads (dim -3) than query, each shared by
    a group of query heads.
    """
    q, k, v = as_tensor(query), as_tensor(key), as_tensor(value)
    shapes = f"query {q.shape}, key {k.shape} and value {v.shape}"
    if min(q.ndim, k.ndim, v.ndim) < 2:
        raise ValueError(f"{_SDPA}: query, key and value need at least 2 dims; got shapes {shapes}")
    if not q.dtype == k.dtype == v.dtype or q.dtype.kind != "f":
        raise TypeError(
            f"{_SDPA}: query, key and value must have one floating-point dtype; got dtypes "
            f"{q.dtype}, {k.dtype} and {v.dtype}"
        )
    if k.shape[-1] != q.shape[-1]:
        raise ValueError(f"{_SDPA}: query and key differ in the last dim (E); got shapes {shapes}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"{_SDPA}: key and value differ in length (dim -2); got shapes {shapes}")
    if enable_gqa and q.ndim >= 3 and k.ndim >= 3 and v.ndim >= 3:
        k, v = _shared_heads(q, k, shapes), _shared_heads(q, v, shapes)
    try:
        batch = xp.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:
        raise ValueError(f"{_SDPA}: batch dims do not broadcast; got shapes {shapes}") from None
    if not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"{_SDPA}: dropout_p must be in [0, 1]; got {dropout_p}")
    mask = None
    if attn_mask is not None:
        if is_causal:
            raise ValueError(
                f"{_SDPA}: attn_mask and is_causal=True cannot be given together; got attn_mask "
                f"of shape {as_tensor(attn_mask).shape}"
            )
        mask = _mask(as_tensor(attn_mask), q, (*batch, q.shape[-2], k.shape[-2]), shapes)
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1]) if q.shape[-1] else 1.0
    return ScaledDotProductAttention.apply(
        q, k, v, mask, scale=float(scale), is_causal=bool(is_causal), dropout_p=float(dropout_p)
    )


def _shared_heads(q: Tensor, kv: Tensor, shapes: str) -> Tensor:
    """key or value with each of its heads (dim -3) repeated for the query heads that share
    it (grouped-query attention)."""
    hq, hkv = q.shape[-3], kv.shape[-3]
    if hkv == 0 or hq % hkv:
        raise ValueError(
            f"{_SDPA}: with enable_gqa the query heads (dim -3) must be a multiple of the key "
            f"and value heads; got shapes {shapes}"
        )
    return kv if hq == hkv else kv.repeat_interleave(hq // hkv, dim=-3)


def _mask(mask: Tensor, q: Tensor, scores: tuple[int, ...], shapes: str) -> Tensor:
    """attn_mask checked: bool, or float of query's dtype, broadcasting to the scores'
    shape (..., L, S)."""
    if mask.dtype != backend.bool_ and mask.dtype != q.dtype:
        raise TypeError(
            f"{_SDPA}: attn_mask must be bool or of query's dtype {q.dtype}; got dtype {mask.dtype}"
        )
    try:
        fits = xp.broadcast_shapes(mask.shape, scores) == scores
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"{_SDPA}: attn_mask of shape {mask.shape} does not broadcast to the scores' shape "
            f"{scores} (..., L, S); got shapes {shapes}"
        )
    return mask
