"""Layout against PyTorch: the common ops and every nn layer, run on contiguous input on
both sides, give outputs and gradients as contiguous as PyTorch's, with PyTorch's strides (a
program that calls ``view`` on an output or a gradient runs on both)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.twins import copy_into

RNG = np.random.default_rng(0)


def _tensors(out: Any) -> list[Any]:
    """Every tensor in an output (a tensor, or nested tuples and lists of them)."""
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _tensors(o)]
    return [out] if isinstance(out, (cr.Tensor, torch.Tensor)) else []


def _same_layout(ours: Any, theirs: Any, what: str) -> None:
    mine, their = _tensors(ours), _tensors(theirs)
    assert len(mine) == len(their) > 0, f"{what}: {len(mine)} outputs here, {len(their)} in torch"
    for i, (a, b) in enumerate(zip(mine, their, strict=True)):
        assert tuple(a.shape) == tuple(b.shape), f"{what}: output {i} shape"
        layout = (a.is_contiguous(), a.stride())
        want = (b.is_contiguous(), b.stride())
        assert layout == want, (
            f"{what}: output {i} of shape {tuple(b.shape)} is (contiguous, stride) {layout} "
            f"here and {want} in torch"
        )


def _pair(*shape: int, dtype: Any = np.float32, low: float = -1.0) -> tuple[Any, Any]:
    a = RNG.uniform(low, 1.0, shape).astype(dtype)
    return cr.tensor(a), torch.tensor(a)


# -- ops: (name, fn(lib, *inputs), input shapes) ------------------------------------------

OPS: list[tuple[str, Callable[..., Any], list[tuple[int, ...]]]] = [
    ("matmul 2-D", lambda m, a, b: a @ b, [(5, 4), (4, 3)]),
    ("matmul batched", lambda m, a, b: a @ b, [(2, 5, 4), (2, 4, 3)]),
    ("matmul broadcast", lambda m, a, b: a @ b, [(2, 5, 4), (4, 3)]),
    ("matmul matrix-vector", lambda m, a, b: a @ b, [(5, 4), (4,)]),
    ("matmul a @ b.T", lambda m, a, b: a @ b.T, [(5, 4), (3, 4)]),
    ("matmul a.T @ b", lambda m, a, b: a.T @ b, [(4, 5), (4, 3)]),
    ("mm", lambda m, a, b: m.mm(a, b), [(5, 4), (4, 3)]),
    ("bmm", lambda m, a, b: m.bmm(a, b), [(2, 5, 4), (2, 4, 3)]),
    ("einsum bij,bjk", lambda m, a, b: m.einsum("bij,bjk->bik", a, b), [(2, 3, 4), (2, 4, 5)]),
    ("outer", lambda m, a, b: m.outer(a, b), [(3,), (4,)]),
    ("add", lambda m, a, b: a + b, [(3, 4), (3, 4)]),
    ("add broadcast", lambda m, a, b: a + b, [(3, 1), (1, 4)]),
    ("mul row", lambda m, a, b: a * b, [(2, 3, 4), (4,)]),
    ("exp", lambda m, a: a.exp(), [(3, 4)]),
    ("exp of a transpose", lambda m, a: a.t().exp(), [(3, 4)]),
    ("add of transposes", lambda m, a, b: a.t() + b.t(), [(3, 4), (3, 4)]),
    ("add transpose and contiguous", lambda m, a, b: a.t() + b, [(3, 4), (4, 3)]),
    ("relu of a permute", lambda m, a: m.relu(a.permute(2, 0, 1)), [(2, 3, 4)]),
    ("where", lambda m, a, b: m.where(a > 0, a, b), [(3, 4), (3, 4)]),
    ("clamp", lambda m, a: a.clamp(-0.5, 0.5), [(3, 4)]),
    ("sum dim 0", lambda m, a: a.sum(0), [(3, 4, 5)]),
    ("sum dim 1", lambda m, a: a.sum(1), [(3, 4, 5)]),
    ("sum dim -1 keepdim", lambda m, a: a.sum(-1, keepdim=True), [(3, 4, 5)]),
    ("sum dims (0, 2)", lambda m, a: a.sum((0, 2)), [(3, 4, 5)]),
    ("mean dim 0", lambda m, a: a.mean(0), [(3, 4, 5)]),
    ("var dim 1", lambda m, a: a.var(1), [(3, 4, 5)]),
    ("amax dim 0", lambda m, a: a.amax(0), [(3, 4, 5)]),
    ("max dim 1", lambda m, a: a.max(1), [(3, 4, 5)]),
    ("argmax dim 0", lambda m, a: a.argmax(0), [(3, 4, 5)]),
    ("logsumexp dim 0", lambda m, a: a.logsumexp(0), [(3, 4, 5)]),
    ("norm dim 1", lambda m, a: a.norm(dim=1), [(3, 4, 5)]),
    ("cumsum dim 0", lambda m, a: a.cumsum(0), [(3, 4)]),
    ("softmax dim -1", lambda m, a: a.softmax(-1), [(3, 4, 5)]),
    ("softmax dim 0", lambda m, a: a.softmax(0), [(3, 4, 5)]),
    ("log_softmax dim 1", lambda m, a: a.log_softmax(1), [(3, 4, 5)]),
    # 32 rows or more of at most 16: the fast path reduces a column-major copy
    ("softmax of short rows", lambda m, a: a.softmax(-1), [(40, 10)]),
    ("log_softmax of short rows", lambda m, a: a.log_softmax(-1), [(40, 10)]),
    ("sum of short rows", lambda m, a: a.sum(-1), [(40, 10)]),
    ("logsumexp of short rows", lambda m, a: a.logsumexp(-1), [(40, 10)]),
    ("cat dim 0", lambda m, a, b: m.cat([a, b], 0), [(2, 3), (4, 3)]),
    ("cat dim 1", lambda m, a, b: m.cat([a, b], 1), [(2, 3), (2, 4)]),
    ("stack dim 0", lambda m, a, b: m.stack([a, b], 0), [(2, 3), (2, 3)]),
    ("stack dim -1", lambda m, a, b: m.stack([a, b], -1), [(2, 3), (2, 3)]),
    ("split dim 0", lambda m, a: a.split(2, 0), [(5, 3)]),
    ("chunk dim 1", lambda m, a: a.chunk(2, 1), [(3, 4)]),
    ("transpose", lambda m, a: a.transpose(0, 1), [(3, 4)]),
    ("transpose contiguous", lambda m, a: a.transpose(0, 1).contiguous(), [(3, 4)]),
    ("expand", lambda m, a: a.expand(3, 4), [(1, 4)]),
    ("unsqueeze", lambda m, a: a.unsqueeze(1), [(3, 4)]),
    ("squeeze", lambda m, a: a.squeeze(1), [(3, 1, 4)]),
    ("flatten", lambda m, a: a.flatten(1), [(2, 3, 4)]),
    ("reshape of a transpose", lambda m, a: a.t().reshape(-1), [(3, 4)]),
    ("getitem slice", lambda m, a: a[1:], [(3, 4)]),
    ("getitem column", lambda m, a: a[:, 1], [(3, 4)]),
    ("getitem index list", lambda m, a: a[[0, 2]], [(3, 4)]),
    ("index_select dim 1", lambda m, a: a.index_select(1, m.tensor([0, 2])), [(3, 4)]),
    ("gather", lambda m, a: a.gather(1, m.tensor([[0, 1], [1, 0], [2, 2]])), [(3, 4)]),
    ("masked_fill", lambda m, a: a.masked_fill(a > 0, 0.0), [(3, 4)]),
    ("tril", lambda m, a: a.tril(), [(4, 4)]),
    ("flip", lambda m, a: a.flip(0), [(3, 4)]),
    ("roll", lambda m, a: a.roll(1, 0), [(3, 4)]),
    ("repeat", lambda m, a: a.repeat(2, 1), [(3, 4)]),
    ("sort dim 1", lambda m, a: a.sort(1), [(3, 4)]),
    ("topk", lambda m, a: a.topk(2, 1), [(3, 4)]),
    ("pad", lambda m, a: m.nn.functional.pad(a, (1, 2)), [(3, 4)]),
    ("clone of a transpose", lambda m, a: a.t().clone(), [(3, 4)]),
    ("to float64 of a transpose", lambda m, a: a.t().to(m.float64), [(3, 4)]),
    ("linear", lambda m, a, w: m.nn.functional.linear(a, w), [(5, 4), (3, 4)]),
    ("linear 3-D", lambda m, a, w: m.nn.functional.linear(a, w), [(2, 5, 4), (3, 4)]),
    ("layer_norm", lambda m, a: m.nn.functional.layer_norm(a, (4,)), [(2, 3, 4)]),
    ("dropout p=0", lambda m, a: m.nn.functional.dropout(a, 0.0), [(3, 4)]),
    ("one_hot", lambda m, a: m.nn.functional.one_hot((a > 0).long(), 2), [(3, 4)]),
    ("normalize", lambda m, a: m.nn.functional.normalize(a, dim=1), [(3, 4)]),
    ("embedding", lambda m, w: m.nn.functional.embedding(m.tensor([[1, 0], [2, 2]]), w), [(3, 4)]),
    (
        "conv2d stride 2",
        lambda m, a, w: m.nn.functional.conv2d(a, w, stride=2),
        [(2, 4, 7, 7), (6, 4, 3, 3)],
    ),
    (
        "conv2d groups 2",
        lambda m, a, w: m.nn.functional.conv2d(a, w, groups=2, padding=1),
        [(2, 4, 5, 5), (6, 2, 3, 3)],
    ),
    (
        "conv1d padding",
        lambda m, a, w: m.nn.functional.conv1d(a, w, padding=2),
        [(2, 3, 7), (4, 3, 3)],
    ),
    (
        "conv_transpose2d padding",
        lambda m, a, w: m.nn.functional.conv_transpose2d(a, w, padding=1),
        [(2, 3, 4, 4), (3, 5, 3, 3)],
    ),
    ("max_pool2d", lambda m, a: m.nn.functional.max_pool2d(a, 2), [(2, 3, 6, 6)]),
    (
        "scaled_dot_product_attention causal",
        lambda m, q, k, v: m.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True),
        [(2, 3, 5, 4)] * 3,
    ),
    ("attention heads, as nanoGPT", lambda m, x, w: _heads(m, x, w), [(2, 5, 8), (24, 8)]),
    (
        "cross_entropy",
        lambda m, a: m.nn.functional.cross_entropy(a, m.tensor([0, 2, 1]), reduction="none"),
        [(3, 4)],
    ),
]


def _heads(m: Any, x: Any, w: Any) -> Any:
    """nanoGPT's attention: q, k, v from one Linear, split into heads by view and transpose,
    and the heads put back with transpose, contiguous and view."""
    b, t, c = x.shape
    q, k, v = m.nn.functional.linear(x, w).split(c, dim=2)
    q, k, v = (z.view(b, t, 2, c // 2).transpose(1, 2) for z in (q, k, v))  # (B, nh, T, hs)
    att = (q @ k.transpose(-2, -1)).softmax(-1)  # (B, nh, T, T)
    return (att @ v).transpose(1, 2).contiguous().view(b, t, c)  # (B, T, C)


# Where PyTorch's output is not contiguous and ours is: harmless (a view PyTorch allows is
# allowed here too), and NumPy's choice. TensorIterator lays a result out as its first
# input; NumPy's 'K' order settles a disagreement between inputs on C order.
CONTIGUOUS_HERE = {"add transpose and contiguous"}

# Advanced indexing after a slice: NumPy lays the indexed dim out first, PyTorch's result is
# contiguous, and GetItem's forward (ops/movement.py) copies it into C order.
GETITEM = [
    ("getitem slice then list", lambda m, a: a[:, [0, 2]], [(3, 4, 5)]),
    ("getitem slice, list, slice", lambda m, a: a[:, [0, 2], 1:], [(3, 4, 5)]),
    ("getitem ellipsis then list", lambda m, a: a[..., [0, 1]], [(3, 4, 5)]),
    ("getitem slice then mask", lambda m, a: a[:, a.sum((0, 2)) >= -100], [(3, 4, 5)]),
]
CASES = [pytest.param(*row, id=row[0]) for row in OPS + GETITEM]


def _backward(out_ours: Any, out_theirs: Any) -> None:
    """Backward from the first output on both sides, with one random upstream gradient."""
    first = _tensors(out_theirs)[0]
    seed = RNG.standard_normal(tuple(first.shape)).astype(np.float32)
    _tensors(out_ours)[0].backward(cr.tensor(seed))
    first.backward(torch.tensor(seed))


def _same_grad_layout(ours: list, theirs: list, what: str) -> None:
    for i, (x, y) in enumerate(zip(ours, theirs, strict=True)):
        if y.grad is not None:
            _same_layout(x.grad, y.grad, f"{what}, the gradient of input {i}")


@pytest.mark.parametrize(("name", "fn", "shapes"), CASES)
def test_op_layout_is_torchs(name: str, fn: Callable[..., Any], shapes: list) -> None:
    pairs = [_pair(*s) for s in shapes]
    ours, theirs = [p[0].requires_grad_() for p in pairs], [p[1].requires_grad_() for p in pairs]
    out_ours, out_theirs = fn(cr, *ours), fn(torch, *theirs)
    if name in CONTIGUOUS_HERE:
        assert [t.is_contiguous() for t in _tensors(out_ours)] == [True]
        assert [t.is_contiguous() for t in _tensors(out_theirs)] == [False]
        return
    _same_layout(out_ours, out_theirs, name)
    if _tensors(out_theirs)[0].requires_grad:
        _backward(out_ours, out_theirs)
        _same_grad_layout(ours, theirs, name)


# -- layers: every nn layer, with (constructor arguments, input shapes) -------------------

CONTAINERS = {"Module", "ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential"}
SEQ = (5, 3, 4)  # (T, N, E): RNNs and attention, sequence first

LAYERS: dict[str, tuple[tuple, dict, list[tuple[int, ...]]]] = {
    "AdaptiveAvgPool2d": ((2,), {}, [(2, 3, 5, 5)]),
    "AvgPool2d": ((2,), {}, [(2, 3, 6, 6)]),
    "BCELoss": ((), {"reduction": "none"}, [(3, 4), (3, 4)]),
    "BCEWithLogitsLoss": ((), {"reduction": "none"}, [(3, 4), (3, 4)]),
    "BatchNorm1d": ((4,), {}, [(6, 4)]),
    "BatchNorm2d": ((3,), {}, [(2, 3, 4, 4)]),
    "Softmax2d": ((), {}, [(2, 3, 4, 4)]),
    "SyncBatchNorm": ((3,), {}, [(2, 3, 4, 4)]),
    "LazyLinear": ((5,), {}, [(3, 4)]),
    "LazyConv1d": ((5, 3), {}, [(2, 3, 8)]),
    "LazyConv2d": ((5, 3), {"padding": 1}, [(2, 3, 6, 6)]),
    "LazyConv3d": ((5, 3), {}, [(2, 3, 4, 4, 4)]),
    "LazyConvTranspose1d": ((5, 3), {"stride": 2}, [(2, 3, 4)]),
    "LazyConvTranspose2d": ((5, 3), {"stride": 2}, [(2, 3, 4, 4)]),
    "LazyConvTranspose3d": ((5, 3), {"stride": 2}, [(2, 3, 3, 3, 3)]),
    "LazyBatchNorm1d": ((), {}, [(6, 4)]),
    "LazyBatchNorm2d": ((), {}, [(2, 3, 4, 4)]),
    "LazyBatchNorm3d": ((), {}, [(2, 3, 2, 4, 4)]),
    "CELU": ((), {}, [(3, 4)]),
    "Conv1d": ((3, 5, 3), {}, [(2, 3, 8)]),
    "Conv2d": ((3, 5, 3), {"padding": 1}, [(2, 3, 6, 6)]),
    "ConvTranspose2d": ((3, 5, 3), {"stride": 2}, [(2, 3, 4, 4)]),
    "CosineSimilarity": ((), {}, [(3, 4), (3, 4)]),
    "CrossEntropyLoss": ((), {"reduction": "none"}, [(6, 5)]),
    "Dropout": ((0.0,), {}, [(3, 4)]),
    "ELU": ((), {}, [(3, 4)]),
    "Embedding": ((10, 4), {}, []),
    "Flatten": ((), {}, [(2, 3, 4)]),
    "GELU": ((), {}, [(3, 4)]),
    "GLU": ((), {}, [(3, 4)]),
    "GRU": ((4, 6), {"num_layers": 2}, [SEQ]),
    "GRUCell": ((4, 6), {}, [(3, 4)]),
    "Hardtanh": ((), {}, [(3, 4)]),
    "HuberLoss": ((), {"reduction": "none"}, [(3, 4), (3, 4)]),
    "Identity": ((), {}, [(3, 4)]),
    "L1Loss": ((), {"reduction": "none"}, [(3, 4), (3, 4)]),
    "LSTM": ((4, 6), {"num_layers": 2}, [SEQ]),
    "LSTMCell": ((4, 6), {}, [(3, 4)]),
    "LayerNorm": ((4,), {}, [(2, 3, 4)]),
    "LeakyReLU": ((), {}, [(3, 4)]),
    "Linear": ((4, 6), {}, [(5, 4)]),
    "LogSigmoid": ((), {}, [(3, 4)]),
    "LogSoftmax": ((), {"dim": 1}, [(3, 4)]),
    "MSELoss": ((), {"reduction": "none"}, [(3, 4), (3, 4)]),
    "MaxPool2d": ((2,), {}, [(2, 3, 6, 6)]),
    "Mish": ((), {}, [(3, 4)]),
    "MultiheadAttention": ((4, 2), {}, [SEQ, SEQ, SEQ]),
    "NLLLoss": ((), {"reduction": "none"}, [(6, 5)]),
    "PReLU": ((), {}, [(3, 4)]),
    "RNN": ((4, 6), {"num_layers": 2}, [SEQ]),
    "RNNCell": ((4, 6), {}, [(3, 4)]),
    "ReLU": ((), {}, [(3, 4)]),
    "ReLU6": ((), {}, [(3, 4)]),
    "SELU": ((), {}, [(3, 4)]),
    "SiLU": ((), {}, [(3, 4)]),
    "Sigmoid": ((), {}, [(3, 4)]),
    "SmoothL1Loss": ((), {"reduction": "none"}, [(3, 4), (3, 4)]),
    "Softmax": ((), {"dim": -1}, [(3, 4)]),
    "Softmin": ((), {"dim": -1}, [(3, 4)]),
    "Softplus": ((), {}, [(3, 4)]),
    "Softsign": ((), {}, [(3, 4)]),
    "Tanh": ((), {}, [(3, 4)]),
    "Threshold": ((0.1, 0.0), {}, [(3, 4)]),
    "Transformer": ((8, 2, 1, 1, 16), {"dropout": 0.0}, [(5, 2, 8), (4, 2, 8)]),
    "TransformerDecoder": ((), {}, [(4, 2, 8), (5, 2, 8)]),
    "TransformerDecoderLayer": ((8, 2, 16), {"dropout": 0.0}, [(4, 2, 8), (5, 2, 8)]),
    "TransformerEncoder": ((), {}, [(5, 2, 8)]),
    "TransformerEncoderLayer": ((8, 2, 16), {"dropout": 0.0}, [(5, 2, 8)]),
    "Unflatten": ((1, (2, 2)), {}, [(3, 4)]),
    "AdaptiveAvgPool1d": ((2,), {}, [(2, 3, 5)]),
    "AdaptiveAvgPool3d": ((2,), {}, [(2, 3, 4, 5, 5)]),
    "AdaptiveMaxPool1d": ((2,), {}, [(2, 3, 5)]),
    "AdaptiveMaxPool2d": ((2,), {}, [(2, 3, 5, 5)]),
    "AdaptiveMaxPool3d": ((2,), {}, [(2, 3, 4, 5, 5)]),
    "AlphaDropout": ((0.0,), {}, [(3, 4)]),
    "AvgPool1d": ((2,), {}, [(2, 3, 6)]),
    "AvgPool3d": ((2,), {}, [(2, 3, 4, 4, 4)]),
    "BatchNorm3d": ((3,), {}, [(2, 3, 2, 3, 3)]),
    "Bilinear": ((3, 4, 5), {}, [(2, 3), (2, 4)]),
    "ChannelShuffle": ((2,), {}, [(2, 4, 3, 3)]),
    "Conv3d": ((2, 3, 2), {}, [(2, 2, 4, 4, 4)]),
    "ConvTranspose1d": ((3, 5, 3), {"stride": 2}, [(2, 3, 4)]),
    "ConvTranspose3d": ((2, 3, 2), {}, [(2, 2, 3, 3, 3)]),
    "CosineEmbeddingLoss": ((), {"reduction": "none"}, [(3, 4), (3, 4), (3,)]),
    "Dropout1d": ((0.0,), {}, [(2, 3, 4)]),
    "Dropout2d": ((0.0,), {}, [(2, 3, 4, 4)]),
    "Dropout3d": ((0.0,), {}, [(2, 3, 2, 4, 4)]),
    "FeatureAlphaDropout": ((0.0,), {}, [(2, 3, 4, 4)]),
    "Fold": (((4, 4), 2), {}, [(2, 12, 9)]),
    "GaussianNLLLoss": ((), {"reduction": "none"}, [(3, 4), (3, 4), (3, 4)]),
    "GroupNorm": ((2, 4), {}, [(2, 4, 3, 3)]),
    "Hardshrink": ((), {}, [(3, 4)]),
    "Hardsigmoid": ((), {}, [(3, 4)]),
    "Hardswish": ((), {}, [(3, 4)]),
    "InstanceNorm1d": ((3,), {"affine": True}, [(2, 3, 5)]),
    "InstanceNorm2d": ((3,), {"affine": True}, [(2, 3, 4, 4)]),
    "InstanceNorm3d": ((3,), {"affine": True}, [(2, 3, 2, 4, 4)]),
    "LPPool1d": ((2, 2), {}, [(2, 3, 6)]),
    "LPPool2d": ((2, 2), {}, [(2, 3, 6, 6)]),
    "LPPool3d": ((2, 2), {}, [(2, 3, 4, 4, 4)]),
    "LocalResponseNorm": ((2,), {}, [(2, 4, 3, 3)]),
    "MarginRankingLoss": ((), {"reduction": "none"}, [(5,), (5,), (5,)]),
    "MaxPool1d": ((2,), {}, [(2, 3, 6)]),
    "MaxPool3d": ((2,), {}, [(2, 3, 4, 4, 4)]),
    "PairwiseDistance": ((), {}, [(3, 4), (3, 4)]),
    "PixelShuffle": ((2,), {}, [(2, 8, 3, 3)]),
    "PixelUnshuffle": ((2,), {}, [(2, 2, 4, 4)]),
    "RMSNorm": ((4,), {}, [(3, 4)]),
    "RReLU": ((), {}, [(3, 4)]),
    "Softshrink": ((), {}, [(3, 4)]),
    "Tanhshrink": ((), {}, [(3, 4)]),
    "TripletMarginLoss": ((), {"reduction": "none"}, [(3, 4), (3, 4), (3, 4)]),
    "TripletMarginWithDistanceLoss": ((), {"reduction": "none"}, [(3, 4), (3, 4), (3, 4)]),
    "Unfold": ((2,), {}, [(2, 3, 4, 4)]),
    "Upsample": ((), {"scale_factor": 2, "mode": "bilinear"}, [(2, 3, 4, 4)]),
    "UpsamplingBilinear2d": ((), {"scale_factor": 2}, [(2, 3, 4, 4)]),
    "UpsamplingNearest2d": ((), {"scale_factor": 2}, [(2, 3, 4, 4)]),
    "CircularPad1d": ((1,), {}, [(2, 3, 5)]),
    "CircularPad2d": ((1,), {}, [(2, 3, 4, 5)]),
    "CircularPad3d": ((1,), {}, [(2, 3, 3, 4, 5)]),
    "ConstantPad1d": ((1, 2.5), {}, [(2, 3, 5)]),
    "ConstantPad2d": ((1, 2.5), {}, [(2, 3, 4, 5)]),
    "ConstantPad3d": ((1, 2.5), {}, [(2, 3, 3, 4, 5)]),
    "ReflectionPad1d": ((1,), {}, [(2, 3, 5)]),
    "ReflectionPad2d": ((1,), {}, [(2, 3, 4, 5)]),
    "ReflectionPad3d": ((1,), {}, [(2, 3, 3, 4, 5)]),
    "ReplicationPad1d": ((1,), {}, [(2, 3, 5)]),
    "ReplicationPad2d": ((1,), {}, [(2, 3, 4, 5)]),
    "ReplicationPad3d": ((1,), {}, [(2, 3, 3, 4, 5)]),
    "ZeroPad1d": ((1,), {}, [(2, 3, 5)]),
    "ZeroPad2d": ((1,), {}, [(2, 3, 4, 5)]),
    "ZeroPad3d": ((1,), {}, [(2, 3, 3, 4, 5)]),
}
# Layers whose inputs are not random floats of a shape (integer targets and offsets); their
# outputs are checked against PyTorch's by the test files named.
LAID_OUT_ELSEWHERE = {
    "DataParallel": "tests/nn/test_buffer_softmax2d_sync_dataparallel.py",  # wraps a module
    "RNNBase": "tests/nn/test_module_paths.py",  # the base of RNN, LSTM and GRU, laid out above
    "CTCLoss": "tests/nn/test_margin_likelihood_losses.py",
    "EmbeddingBag": "tests/nn/test_embedding_bag_bilinear.py",
    "HingeEmbeddingLoss": "tests/nn/test_margin_likelihood_losses.py",
    "KLDivLoss": "tests/nn/test_margin_likelihood_losses.py",
    "MaxUnpool1d": "tests/nn/test_pooling.py",
    "MaxUnpool2d": "tests/nn/test_pooling.py",
    "MaxUnpool3d": "tests/nn/test_pooling.py",
    "SoftMarginLoss": "tests/nn/test_margin_likelihood_losses.py",
    "MultiLabelMarginLoss": "tests/nn/test_margin_likelihood_losses.py",
    "MultiLabelSoftMarginLoss": "tests/nn/test_margin_likelihood_losses.py",
    "MultiMarginLoss": "tests/nn/test_margin_likelihood_losses.py",
    "PoissonNLLLoss": "tests/nn/test_margin_likelihood_losses.py",
}


def _inputs(name: str, shapes: list) -> tuple[list, list]:
    """The layer's inputs on both sides: random floats, with the targets losses need."""
    if name == "Embedding":
        idx = RNG.integers(0, 10, (3, 5))
        return [cr.tensor(idx)], [torch.tensor(idx)]
    positive = name in ("BCELoss", "GaussianNLLLoss")  # probabilities, variances
    pairs = [_pair(*s, low=0.05 if positive else -1.0) for s in shapes]
    ours, theirs = [p[0] for p in pairs], [p[1] for p in pairs]
    if name in ("CrossEntropyLoss", "NLLLoss"):
        target = RNG.integers(0, shapes[0][1], shapes[0][0])
        ours.append(cr.tensor(target))
        theirs.append(torch.tensor(target))
    return ours, theirs


def _layer(lib: Any, name: str, args: tuple, kwargs: dict) -> Any:
    if name in ("TransformerEncoder", "TransformerDecoder"):
        inner = getattr(lib.nn, f"{name}Layer")(8, 2, 16, dropout=0.0)
        return getattr(lib.nn, name)(inner, 2)
    return getattr(lib.nn, name)(*args, **kwargs)


def test_every_layer_has_a_row() -> None:
    layers = {
        n
        for n, c in vars(cr.nn).items()
        if inspect.isclass(c) and issubclass(c, cr.nn.Module) and n not in CONTAINERS
    }
    missing = layers - set(LAYERS) - set(LAID_OUT_ELSEWHERE)
    assert missing == set(), "add a row to LAYERS in tests/tensor/test_layout_audit.py"
    root = Path(__file__).resolve().parents[2]
    for name, test in LAID_OUT_ELSEWHERE.items():
        assert name in (root / test).read_text(), f"{test} does not use {name}"


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_layout_is_torchs(name: str) -> None:
    args, kwargs, shapes = LAYERS[name]
    torch.manual_seed(0)
    theirs = _layer(torch, name, args, kwargs)
    ours = _layer(cr, name, args, kwargs)
    if name.startswith("Lazy"):  # a lazy layer has its parameters after a first call
        first_ours, first_theirs = _inputs(name, shapes)
        with cr.no_grad(), torch.no_grad():
            ours(*first_ours), theirs(*first_theirs)
    copy_into(ours, theirs)
    x_ours, x_theirs = _inputs(name, shapes)
    for x in x_theirs:
        x.requires_grad_(x.is_floating_point())
    for x in x_ours:
        x.requires_grad_(x.is_floating_point())
    out_ours, out_theirs = ours(*x_ours), theirs(*x_theirs)
    _same_layout(out_ours, out_theirs, name)
    _backward(out_ours, out_theirs)
    _same_grad_layout(x_ours, x_theirs, name)
    params = [(p, q) for p, q in zip(ours.parameters(), theirs.parameters(), strict=True)]
    _same_grad_layout([p for p, _ in params], [q for _, q in params], f"{name}'s parameters")
