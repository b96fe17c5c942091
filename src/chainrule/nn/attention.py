"""Attention: scaled_dot_product_attention (the functional form of the primitive in
ops/attention.py, its arguments checked here) and the MultiheadAttention layer built on it.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from .. import array
from ..arguments import broadcasts_to, positive_int, resolve_device
from ..autograd.saved import record
from ..factories import full, zeros
from ..functions import cat, pad, where
from ..ops.attention import ScaledDotProductAttention
from ..tensor import Tensor, as_tensor
from . import init
from .layers import NonDynamicallyQuantizableLinear, dropout, linear
from .module import Module, Parameter

xp = array.xp

_SDPA = "scaled_dot_product_attention"
_MHA = "MultiheadAttention"


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
    a group of query heads. float16 and bfloat16 compute in float32, as PyTorch's CPU: four
    dims and no dropout in its kernel's steps (see ops/attention.py), else all in float32
    and the result rounded.
    """
    q, k, v = as_tensor(query), as_tensor(key), as_tensor(value)
    qs, ks, vs = q._array.shape, k._array.shape, v._array.shape  # tuples: no Size to make
    if min(len(qs), len(ks), len(vs)) < 2:
        raise ValueError(
            f"{_SDPA}: query, key and value need at least 2 dims; got shapes {_shapes(q, k, v)}"
        )
    dt = q._array.dtype  # the arrays' dtypes: no dtype objects to look up
    if not dt == k._array.dtype == v._array.dtype or not array.is_floating(dt):
        raise TypeError(
            f"{_SDPA}: query, key and value must have one floating-point dtype; got dtypes "
            f"{q.dtype}, {k.dtype} and {v.dtype}"
        )
    mask = None if attn_mask is None else _mask_dtype(as_tensor(attn_mask), q)
    if ks[-1] != qs[-1]:
        raise ValueError(
            f"{_SDPA}: query and key differ in the last dim (E); got shapes {_shapes(q, k, v)}"
        )
    if ks[-2] != vs[-2]:
        raise ValueError(
            f"{_SDPA}: key and value differ in length (dim -2); got shapes {_shapes(q, k, v)}"
        )
    if enable_gqa and len(qs) >= 3 and len(ks) >= 3 and len(vs) >= 3:
        shapes = _shapes(q, k, v)
        k, v = _shared_heads(q, k, shapes), _shared_heads(q, v, shapes)
    batch = qs[:-2]
    if not batch == k._array.shape[:-2] == v._array.shape[:-2]:  # the common case: equal
        try:
            batch = xp.broadcast_shapes(batch, k._array.shape[:-2], v._array.shape[:-2])
        except ValueError:
            raise ValueError(
                f"{_SDPA}: batch dims do not broadcast; got shapes {_shapes(q, k, v)}"
            ) from None
    if not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"{_SDPA}: dropout_p must be in [0, 1]; got {dropout_p}")
    if mask is not None:
        if is_causal:
            raise ValueError(
                f"{_SDPA}: attn_mask and is_causal=True cannot be given together; got attn_mask "
                f"of shape {mask.shape}"
            )
        mask = _mask(mask, (*batch, qs[-2], ks[-2]), (q, k, v))
    if dt.itemsize == 2 and not _in_kernel(q, k, v, mask, dropout_p):
        # float16 or bfloat16 outside PyTorch's CPU kernel: its math path, in float32
        if mask is not None and mask.dtype == q.dtype:
            mask = mask.float()
        f = (q.float(), k.float(), v.float(), mask, dropout_p, is_causal, scale)
        return scaled_dot_product_attention(*f).to(q.dtype)
    given = scale  # None where not given, as PyTorch's node keeps it
    if scale is None:
        scale = 1.0 / math.sqrt(qs[-1]) if qs[-1] else 1.0
    out = ScaledDotProductAttention.apply(
        q, k, v, mask, scale=float(scale), is_causal=bool(is_causal), dropout_p=float(dropout_p)
    )
    return record(out, scale=given, dropout_p=dropout_p)


def _in_kernel(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, dropout_p: float) -> bool:
    """Whether PyTorch's CPU attention kernel takes these inputs (else its math path does):
    4-D, one batch and head count (after grouped heads are shared), one head dim E, keys,
    queries and E not empty, a 2-D or 4-D mask and no dropout."""
    qs, ks, vs = q.shape, k.shape, v.shape
    if not len(qs) == len(ks) == len(vs) == 4 or dropout_p > 0 or 0 in (*qs[2:], ks[2]):
        return False
    masked = mask is None or mask.ndim in (2, 4)
    return qs[:2] == ks[:2] == vs[:2] and qs[3] == vs[3] and masked


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


def _shapes(q: Tensor, k: Tensor, v: Tensor) -> str:
    """The inputs' shapes, as an error names them (made only for an error)."""
    return f"query {q.shape}, key {k.shape} and value {v.shape}"


def _mask_dtype(mask: Tensor, q: Tensor) -> Tensor:
    """attn_mask's dtype checked: bool, float32 or query's dtype, as PyTorch's."""
    if mask.dtype not in (array.bool_, array.float32, q.dtype):
        raise TypeError(
            f"{_SDPA}: attn_mask must be bool, float32 or of query's dtype {q.dtype}; got dtype "
            f"{mask.dtype}"
        )
    return mask


def _mask(mask: Tensor, scores: tuple[int, ...], qkv: tuple) -> Tensor:
    """attn_mask checked: broadcasting to the scores' shape (..., L, S)."""
    if not broadcasts_to(mask.shape, scores):
        raise ValueError(
            f"{_SDPA}: attn_mask of shape {mask.shape} does not broadcast to the scores' shape "
            f"{scores} (..., L, S); got shapes {_shapes(*qkv)}"
        )
    return mask


class MultiheadAttention(Module):
    """Attention of num_heads heads over projections of query, key and value (Vaswani et
    al.), as PyTorch's: out = concat_h(attention(q W_q^h, k W_k^h, v W_v^h)) W_o^T + b_o.

    Inputs are (L, N, E) (or (N, L, E) with ``batch_first``), or unbatched (L, E). Masks,
    as PyTorch's: ``key_padding_mask`` (N, S) and ``attn_mask`` (L, S) or (N * num_heads,
    L, S), where a bool True leaves a position out and a float is added to the scores.
    ``need_weights=False`` computes with scaled_dot_product_attention (one node, and a row
    with every key masked gives 0); otherwise the weights come from composed ops, as
    PyTorch computes them (such a row gives NaN, as there). ``is_causal`` is a hint that
    attn_mask is the causal mask, which must be given.

    Parameters and state_dict keys are PyTorch's: ``in_proj_weight`` (3E, E) and
    ``in_proj_bias`` (3E,), or ``q_proj_weight``, ``k_proj_weight`` (E, kdim) and
    ``v_proj_weight`` (E, vdim) where kdim or vdim differ from embed_dim; ``out_proj`` a
    Linear; ``bias_k`` and ``bias_v`` (1, 1, E) with ``add_bias_kv``. They start as
    PyTorch's: xavier_uniform_ projections, zero biases, xavier_normal_ bias_k and bias_v.
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        device = resolve_device(device, _MHA)
        on = array.like(device)
        embed_dim = positive_int(embed_dim, "embed_dim", _MHA)
        num_heads = positive_int(num_heads, "num_heads", _MHA)
        if embed_dim % num_heads:
            raise ValueError(
                f"{_MHA}: embed_dim must be divisible by num_heads; got embed_dim {embed_dim} "
                f"and num_heads {num_heads}"
            )
        if not 0.0 <= dropout <= 1.0:
            raise ValueError(f"{_MHA}: dropout must be in [0, 1]; got {dropout}")
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.kdim = embed_dim if kdim is None else positive_int(kdim, "kdim", _MHA)
        self.vdim = embed_dim if vdim is None else positive_int(vdim, "vdim", _MHA)
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.head_dim = embed_dim // num_heads
        self.batch_first, self.add_zero_attn = batch_first, add_zero_attn
        dtype = array.as_dtype(dtype) or array.get_default_dtype()
        E = embed_dim
        self.in_proj_weight: Parameter | None = None
        self.q_proj_weight: Parameter | None = None
        self.k_proj_weight: Parameter | None = None
        self.v_proj_weight: Parameter | None = None
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(xp.empty((3 * E, E), dtype=dtype, like=on))
        else:
            self.q_proj_weight = Parameter(xp.empty((E, E), dtype=dtype, like=on))
            self.k_proj_weight = Parameter(xp.empty((E, self.kdim), dtype=dtype, like=on))
            self.v_proj_weight = Parameter(xp.empty((E, self.vdim), dtype=dtype, like=on))
        self.in_proj_bias = Parameter(xp.empty(3 * E, dtype=dtype, like=on)) if bias else None
        # bias_k and bias_v before out_proj: state_dict lists a module's own parameters first
        self.bias_k = self.bias_v = None
        if add_bias_kv:
            self.bias_k = Parameter(xp.empty((1, 1, E), dtype=dtype, like=on))
            self.bias_v = Parameter(xp.empty((1, 1, E), dtype=dtype, like=on))
        self.out_proj = NonDynamicallyQuantizableLinear(E, E, bias, device, dtype)
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        for w in (self.in_proj_weight, self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
            if w is not None:
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
        if self.out_proj.bias is not None:
            init.zeros_(self.out_proj.bias)
        if self.bias_k is not None and self.bias_v is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        """(attn_output, attn_weights): the output in query's layout; the weights (N, L, S)
        averaged over heads or (N, num_heads, L, S) per head (without N unbatched), or None
        when not ``need_weights``."""
        q, k, v = as_tensor(query), as_tensor(key), as_tensor(value)
        batched = self._check_inputs(q, k, v, key_padding_mask, attn_mask)
        kpm = _additive_mask(key_padding_mask, "key_padding_mask", q.dtype)
        mask = _additive_mask(attn_mask, "attn_mask", q.dtype)
        if kpm is not None and mask is not None and _dtype(key_padding_mask) != _dtype(attn_mask):
            warnings.warn(
                "Support for mismatched key_padding_mask and attn_mask is deprecated. Use same "
                "type for both instead.",
                stacklevel=2,
            )
        if is_causal and mask is None:
            raise ValueError(
                f"{_MHA}: is_causal is a hint that attn_mask is the causal mask, so attn_mask "
                "must be given; got attn_mask None"
            )
        if is_causal and kpm is None and not need_weights:
            mask = None  # scaled_dot_product_attention makes the causal mask itself
        else:
            is_causal = False
        # The computation runs on (L, N, E) (sequence first): a batch-first or unbatched
        # input is brought to it, and the output back.
        same = (q is k, k is v)
        if not batched:
            q, k, v = q.unsqueeze(1), k.unsqueeze(1), v.unsqueeze(1)  # (L, 1, E)
            kpm = None if kpm is None else kpm.unsqueeze(0)  # (1, S)
        elif self.batch_first:
            q, k, v = q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1)  # (L, N, E)
        L, N, E = q.shape
        H, hd = self.num_heads, self.head_dim
        q, k, v = self._in_projection(q, k, v, same)  # (L, N, E), (S, N, E), (S, N, E)
        if self.bias_k is not None and self.bias_v is not None:
            k = cat([k, self.bias_k.expand(1, N, E)])  # (S + 1, N, E)
            v = cat([v, self.bias_v.expand(1, N, E)])
            mask, kpm = _one_more_key(mask), _one_more_key(kpm)
        q = q.reshape(L, N * H, hd).transpose(0, 1)  # (N * H, L, hd)
        k = k.reshape(k.shape[0], N * H, hd).transpose(0, 1)  # (N * H, S, hd)
        v = v.reshape(v.shape[0], N * H, hd).transpose(0, 1)
        if self.add_zero_attn:
            zero = zeros(N * H, 1, hd, dtype=k.dtype, device=k.device)
            k, v = cat([k, zero], dim=1), cat([v, zero], dim=1)  # (N * H, S + 1, hd)
            mask, kpm = _one_more_key(mask), _one_more_key(kpm)
        S = k.shape[1]
        if mask is not None and mask.ndim == 2:
            mask = mask.unsqueeze(0)  # (1, L, S)
        if kpm is not None:
            kpm = kpm.reshape(N, 1, 1, S).expand(N, H, 1, S).reshape(N * H, 1, S)
            mask = kpm if mask is None else mask + kpm
        p = self.dropout if self.training else 0.0
        weights = None
        if need_weights:  # composed, as PyTorch: the weights are returned
            scores = (q * math.sqrt(1.0 / hd)) @ k.mT  # (N * H, L, S)
            if mask is not None:
                scores = mask + scores
            weights = scores.softmax(-1)
            if p > 0.0:
                weights = dropout(weights, p)
            out = (weights @ v).transpose(0, 1).reshape(L * N, E)  # (L * N, E)
            weights = weights.reshape(N, H, L, S)
            if average_attn_weights:
                weights = weights.mean(1)  # (N, L, S)
        else:
            if mask is not None:  # (1, 1, L, S), or (N, H, L or 1, S)
                one = mask.shape[0] == 1
                mask = mask.unsqueeze(0) if one else mask.reshape(N, H, -1, S)
            out = scaled_dot_product_attention(
                q.reshape(N, H, L, hd), k.reshape(N, H, S, hd), v.reshape(N, H, S, hd),
                mask, p, is_causal,
            )  # fmt: skip
            out = out.permute(2, 0, 1, 3).reshape(L * N, E)  # (L, N, H, hd) -> (L * N, E)
        out = linear(out, self.out_proj.weight, self.out_proj.bias).reshape(L, N, E)
        if not batched:
            return out.squeeze(1), None if weights is None else weights.squeeze(0)
        return (out.transpose(0, 1) if self.batch_first else out), weights

    def _in_projection(
        self, q: Tensor, k: Tensor, v: Tensor, same: tuple[bool, bool]
    ) -> tuple[Tensor, Tensor, Tensor]:
        """q W_q^T + b_q, k W_k^T + b_k, v W_v^T + b_v: one product for self-attention
        (query, key and value one tensor), two when key is value."""
        E = self.embed_dim
        b = self.in_proj_bias
        bq, bk, bv = (None, None, None) if b is None else (b[:E], b[E : 2 * E], b[2 * E :])
        w = self.in_proj_weight
        if w is None:
            assert self.q_proj_weight is not None and self.k_proj_weight is not None
            assert self.v_proj_weight is not None
            return (
                linear(q, self.q_proj_weight, bq),
                linear(k, self.k_proj_weight, bk),
                linear(v, self.v_proj_weight, bv),
            )
        if all(same):
            qkv = linear(q, w, b)  # (L, N, 3E)
            return qkv[..., :E], qkv[..., E : 2 * E], qkv[..., 2 * E :]
        if same[1]:
            kv = linear(k, w[E:], None if b is None else b[E:])  # (S, N, 2E)
            return linear(q, w[:E], bq), kv[..., :E], kv[..., E:]
        return linear(q, w[:E], bq), linear(k, w[E : 2 * E], bk), linear(v, w[2 * E :], bv)

    def _check_inputs(
        self, q: Tensor, k: Tensor, v: Tensor, key_padding_mask: Any, attn_mask: Any
    ) -> bool:
        """Whether the input is batched; ValueError naming every shape if it does not fit."""
        shapes = f"query {q.shape}, key {k.shape} and value {v.shape}"
        if q.ndim not in (2, 3) or k.ndim != q.ndim or v.ndim != q.ndim:
            raise ValueError(
                f"{_MHA}: query, key and value must all be 3-D (batched) or all 2-D "
                f"(unbatched); got shapes {shapes}"
            )
        batched = q.ndim == 3
        dims = (self.embed_dim, self.kdim, self.vdim)
        if (q.shape[-1], k.shape[-1], v.shape[-1]) != dims:
            raise ValueError(
                f"{_MHA}: expected the last dims of query, key and value to be embed_dim, kdim "
                f"and vdim {dims}; got shapes {shapes}"
            )
        if k.shape[:-1] != v.shape[:-1]:
            raise ValueError(
                f"{_MHA}: key and value must agree in every dim but the last; got shapes {shapes}"
            )
        if batched and q.shape[1 - self.batch_first] != k.shape[1 - self.batch_first]:
            raise ValueError(
                f"{_MHA}: query and key differ in batch size (batch_first={self.batch_first}); "
                f"got shapes {shapes}"
            )
        t = 1 if batched and self.batch_first else 0  # the sequence dim
        L, S = q.shape[t], k.shape[t]
        N = q.shape[1 - t] if batched else None
        if key_padding_mask is not None:
            want = (N, S) if batched else (S,)
            if tuple(as_tensor(key_padding_mask).shape) != want:
                raise ValueError(
                    f"{_MHA}: expected key_padding_mask of shape {want} (N, S); got "
                    f"{tuple(as_tensor(key_padding_mask).shape)} with {shapes}"
                )
        if attn_mask is not None:
            shape = tuple(as_tensor(attn_mask).shape)
            if shape not in ((L, S), ((N or 1) * self.num_heads, L, S)):
                raise ValueError(
                    f"{_MHA}: expected attn_mask of shape {(L, S)} or "
                    f"{((N or 1) * self.num_heads, L, S)} (L, S) or (N * num_heads, L, S); got "
                    f"{shape} with {shapes}"
                )
        return batched

    def extra_repr(self) -> str:
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}"


def _additive_mask(mask: Any, name: str, dtype: Any) -> Tensor | None:
    """A MultiheadAttention mask as the float added to the scores: a bool True (a position
    left out) is -inf, a float mask (of the query's dtype) is itself. The bool mask goes
    through ``where`` (an op, so an exported graph takes the mask as an input)."""
    if mask is None:
        return None
    m = as_tensor(mask)
    if m.dtype == array.bool_:
        left_out, kept = (full((), v, dtype=dtype, device=m.device) for v in (-math.inf, 0.0))
        return where(m, left_out, kept)
    if m.dtype != dtype:
        raise TypeError(
            f"{_MHA}: {name} must be bool or of the query's dtype {dtype}; got dtype {m.dtype}"
        )
    return m


def _dtype(mask: Any) -> Any:
    return as_tensor(mask).dtype


def _one_more_key(mask: Tensor | None) -> Tensor | None:
    """A mask with a column of 0 added for one more key (bias_k or the zero key)."""
    return None if mask is None else pad(mask, (0, 1))
