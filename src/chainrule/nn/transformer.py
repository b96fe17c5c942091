"""The Transformer of Vaswani et al., as PyTorch builds it: encoder and decoder layers
(attention, a feed-forward block, residual connections and LayerNorm, before or after each
block), their stacks and the whole model. Attention itself is attention.py's
MultiheadAttention; the submodule and parameter names are PyTorch's, so state_dicts move
between the two.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from .. import array
from ..arguments import positive_int, resolve_device
from ..factories import full
from ..tensor import Tensor, as_tensor
from . import init
from .activation import gelu, relu
from .attention import MultiheadAttention
from .container import ModuleList
from .layers import Dropout, Linear
from .module import Module
from .normalization import LayerNorm

xp = array.xp

Activation = str | Callable[[Tensor], Tensor]


def _activation(activation: Activation, layer: str) -> Callable[[Tensor], Tensor]:
    """The feed-forward block's nonlinearity: "relu", "gelu", or any callable (a function
    or a Module, which then is a submodule, as in PyTorch)."""
    if isinstance(activation, str):
        if activation == "relu":
            return relu
        if activation == "gelu":
            return gelu
        raise ValueError(f"{layer}: activation should be relu/gelu; got {activation!r}")
    if not callable(activation):
        raise TypeError(
            f"{layer}: activation must be 'relu', 'gelu' or a callable; got "
            f"{type(activation).__name__}"
        )
    return activation


def _seq_len(x: Tensor, batch_first: bool) -> int:
    """The sequence length of a (S, N, E) input, (N, S, E) with batch_first, or (S, E)."""
    return x.shape[0] if x.ndim == 2 or not batch_first else x.shape[1]


def _detect_is_causal_mask(mask: Any, is_causal: bool | None, size: int) -> bool:
    """is_causal as given; when None, whether ``mask`` is the causal mask of that size
    (generate_square_subsequent_mask's, or its bool form), as PyTorch's stacks decide."""
    if is_causal is not None or mask is None:
        return bool(is_causal)
    m = mask._array if isinstance(mask, Tensor) else mask
    m = m if isinstance(m, array.ndarray) else xp.asarray(m)
    if m.shape != (size, size):
        return False
    above = xp.triu(xp.ones((size, size), dtype=bool, like=m), 1)  # (size, size) True above
    masked = m if m.dtype == array.bool_ else m == -xp.inf
    return bool((masked == above).all() and (m.dtype == array.bool_ or (m[~above] == 0).all()))


def _clones(module: Module, n: int) -> ModuleList:
    """n independent deep copies of a layer, as PyTorch's stacks hold them."""
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _sizes(layer: str, device: Any, d_model: Any, dim_feedforward: Any) -> tuple[Any, int, int]:
    """A layer's device and sizes, checked as every Transformer layer checks them."""
    return (
        resolve_device(device, layer),
        positive_int(d_model, "d_model", layer),
        positive_int(dim_feedforward, "dim_feedforward", layer),
    )


def _attention(
    attn: MultiheadAttention,
    drop: Dropout,
    x: Tensor,
    kv: Tensor,
    mask: Any,
    key_padding_mask: Any,
    is_causal: bool,
) -> Tensor:
    """dropout(attn(x, kv, kv)): a layer's attention block (self-attention when kv is x),
    without the weights, as PyTorch's _sa_block and _mha_block."""
    out, _ = attn(
        x,
        kv,
        kv,
        attn_mask=mask,
        key_padding_mask=key_padding_mask,
        need_weights=False,
        is_causal=is_causal,
    )
    return drop(out)


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with a residual connection and
    LayerNorm (Vaswani et al.)::

        x = norm1(x + dropout1(self_attn(x, x, x)))            # norm_first=False (post-norm)
        x = norm2(x + dropout2(linear2(dropout(act(linear1(x))))))

        x = x + dropout1(self_attn(norm1(x), ...))             # norm_first=True (pre-norm)
        x = x + dropout2(linear2(dropout(act(linear1(norm2(x))))))

    Inputs are (S, N, E) (or (N, S, E) with ``batch_first``) or unbatched (S, E). Masks are
    MultiheadAttention's: ``src_mask`` (S, S) or (N * nhead, S, S), ``src_key_padding_mask``
    (N, S); bool True leaves a position out, a float is added to the scores. ``is_causal``
    is the hint that src_mask is the causal mask. ``bias=False`` drops the biases of every
    Linear, attention projection and LayerNorm.
    """

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Activation = relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        name = "TransformerEncoderLayer"
        device, d_model, dim_feedforward = _sizes(name, device, d_model, dim_feedforward)
        self.self_attn = MultiheadAttention(
            d_model,
            nhead,
            dropout=dropout,
            bias=bias,
            batch_first=batch_first,
            device=device,
            dtype=dtype,
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, device=device, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, device=device, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation, name)

    def forward(
        self,
        src: Tensor,
        src_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool = False,
    ) -> Tensor:
        x = as_tensor(src)
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x: Tensor, mask: Any, key_padding_mask: Any, is_causal: bool) -> Tensor:
        return _attention(self.self_attn, self.dropout1, x, x, mask, key_padding_mask, is_causal)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoderLayer(Module):
    """Self-attention over the target, attention from the target to the encoder's output
    (``memory``), then a feed-forward block, each with a residual connection and
    LayerNorm (norm1, norm2, norm3; before each block with ``norm_first``)::

        x = norm1(x + dropout1(self_attn(x, x, x)))
        x = norm2(x + dropout2(multihead_attn(x, memory, memory)))
        x = norm3(x + dropout3(linear2(dropout(act(linear1(x))))))

    Masks as TransformerEncoderLayer's, for the target (``tgt_mask``, (T, T)) and for the
    memory (``memory_mask``, (T, S)), with a key padding mask for each.
    """

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Activation = relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        name = "TransformerDecoderLayer"
        device, d_model, dim_feedforward = _sizes(name, device, d_model, dim_feedforward)
        attention = dict(
            dropout=dropout, batch_first=batch_first, bias=bias, device=device, dtype=dtype
        )
        self.self_attn = MultiheadAttention(d_model, nhead, **attention)
        self.multihead_attn = MultiheadAttention(d_model, nhead, **attention)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, device=device, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, device=device, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device, dtype=dtype)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation, name)

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
    ) -> Tensor:
        x, mem = as_tensor(tgt), as_tensor(memory)
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(
                self.norm2(x), mem, memory_mask, memory_key_padding_mask, memory_is_causal
            )
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(
                x + self._mha_block(x, mem, memory_mask, memory_key_padding_mask, memory_is_causal)
            )
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x: Tensor, mask: Any, key_padding_mask: Any, is_causal: bool) -> Tensor:
        return _attention(self.self_attn, self.dropout1, x, x, mask, key_padding_mask, is_causal)

    def _mha_block(
        self, x: Tensor, mem: Tensor, mask: Any, key_padding_mask: Any, is_causal: bool
    ) -> Tensor:
        return _attention(
            self.multihead_attn, self.dropout2, x, mem, mask, key_padding_mask, is_causal
        )

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoder(Module):
    """num_layers deep copies of encoder_layer (``layers.0``, ``layers.1``, ...) applied in
    turn, then ``norm`` if given.

    ``is_causal=None`` (the default) finds out whether ``mask`` is the causal mask and
    tells the layers so. ``enable_nested_tensor`` and ``mask_check`` are accepted and kept
    for PyTorch's signature: they steer PyTorch's inference fast path (nested tensors, which
    also write zeros at padded positions), which chainrule does not have.
    """

    def __init__(
        self,
        encoder_layer: TransformerEncoderLayer,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        super().__init__()
        if not isinstance(encoder_layer, Module):
            raise TypeError(
                f"TransformerEncoder: encoder_layer must be a Module; got "
                f"{type(encoder_layer).__name__}"
            )
        self.layers = _clones(
            encoder_layer,
            positive_int(num_layers, "num_layers", "TransformerEncoder", zero_ok=True),
        )
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check

    def forward(
        self,
        src: Tensor,
        mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool | None = None,
    ) -> Tensor:
        output = as_tensor(src)
        if len(self.layers):
            batch_first = self.layers[0].self_attn.batch_first
            is_causal = _detect_is_causal_mask(mask, is_causal, _seq_len(output, batch_first))
        for layer in self.layers:
            output = layer(
                output,
                src_mask=mask,
                is_causal=is_causal,
                src_key_padding_mask=src_key_padding_mask,
            )
        return output if self.norm is None else self.norm(output)


class TransformerDecoder(Module):
    """num_layers deep copies of decoder_layer applied in turn to the target, each
    attending to the same ``memory``, then ``norm`` if given. ``tgt_is_causal=None`` finds
    out whether ``tgt_mask`` is the causal mask."""

    def __init__(
        self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Module | None = None
    ) -> None:
        super().__init__()
        if not isinstance(decoder_layer, Module):
            raise TypeError(
                f"TransformerDecoder: decoder_layer must be a Module; got "
                f"{type(decoder_layer).__name__}"
            )
        self.layers = _clones(
            decoder_layer,
            positive_int(num_layers, "num_layers", "TransformerDecoder", zero_ok=True),
        )
        self.num_layers = num_layers
        self.norm = norm

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        output = as_tensor(tgt)
        if len(self.layers):
            batch_first = self.layers[0].self_attn.batch_first
            size = _seq_len(output, batch_first)
            tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, size)
        for layer in self.layers:
            output = layer(
                output,
                memory,
                tgt_mask=tgt_mask,
                memory_mask=memory_mask,
                tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask,
                tgt_is_causal=tgt_is_causal,
                memory_is_causal=memory_is_causal,
            )
        return output if self.norm is None else self.norm(output)


class Transformer(Module):
    """An encoder of num_encoder_layers TransformerEncoderLayers and a decoder of
    num_decoder_layers TransformerDecoderLayers, each stack followed by a LayerNorm
    (``encoder.norm``, ``decoder.norm``); ``custom_encoder`` and ``custom_decoder`` replace
    either. Every parameter with more than one dim starts xavier-uniform, as PyTorch's.

    forward(src, tgt, ...) encodes src (S, N, E) into memory and decodes tgt (T, N, E)
    attending to it: (T, N, E), or batch first, or unbatched.
    """

    def __init__(
        self,
        d_model: int = 512,
        nhead: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Activation = relu,
        custom_encoder: Module | None = None,
        custom_decoder: Module | None = None,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        device = resolve_device(device, "Transformer")
        layer_options: dict[str, Any] = dict(
            dim_feedforward=dim_feedforward,
            dropout=dropout,
            activation=activation,
            layer_norm_eps=layer_norm_eps,
            batch_first=batch_first,
            norm_first=norm_first,
            bias=bias,
            device=device,
            dtype=dtype,
        )
        norm_options: dict[str, Any] = dict(
            eps=layer_norm_eps, bias=bias, device=device, dtype=dtype
        )
        self.encoder: Module
        self.decoder: Module
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(d_model, nhead, **layer_options),
                num_encoder_layers,
                LayerNorm(d_model, **norm_options),
            )
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(d_model, nhead, **layer_options),
                num_decoder_layers,
                LayerNorm(d_model, **norm_options),
            )
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        src_is_causal: bool | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        src, tgt = as_tensor(src), as_tensor(tgt)
        batch = 0 if self.batch_first else 1
        if src.ndim == 3 and (tgt.ndim != 3 or src.shape[batch] != tgt.shape[batch]):
            raise ValueError(
                f"Transformer: src and tgt must have the same batch size (dim {batch}); got "
                f"shapes {src.shape} and {tgt.shape}"
            )
        if src.shape[-1:] != (self.d_model,) or tgt.shape[-1:] != (self.d_model,):
            raise ValueError(
                f"Transformer: the last dim of src and tgt must be d_model {self.d_model}; "
                f"got shapes {src.shape} and {tgt.shape}"
            )
        memory = self.encoder(
            src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal
        )
        return self.decoder(
            tgt,
            memory,
            tgt_mask=tgt_mask,
            memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
            tgt_is_causal=tgt_is_causal,
            memory_is_causal=memory_is_causal,
        )

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
        """The causal mask (sz, sz): 0 on and below the diagonal, -inf above it, so position
        i attends to positions j <= i."""
        return full((sz, sz), float("-inf"), dtype=dtype, device=device).triu(1)
