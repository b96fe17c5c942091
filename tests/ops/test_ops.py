"""The catalog of tensor ops, each row checked against PyTorch and finite differences.

A row is one call of chainrule's API and the same call in PyTorch. Every row is checked:
forward in float64 and float32, gradients against PyTorch with a random upstream gradient,
gradients against central finite differences (float64), and gradient shapes and dtypes.
Rows marked ``second`` also compare grad-of-grad (create_graph=True) with PyTorch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import chainrule as cr
from chainrule.ops import linalg as L
from tests.helpers import fast_path_on
from tests.ops.rows import NUM, Row, discovered, same

ROWS: list[Row] = []

# -- binary elementwise ops over the broadcast sets ---------------------------------------

BROADCAST_SETS = [
    ((2, 3), (2, 3)),
    ((), (2, 3)),
    ((2, 3), ()),
    ((2, 3), NUM),
    (NUM, (2, 3)),
    ((3, 1), (1, 4)),
    ((2, 3, 4), (4,)),
    ((2, 1, 4), (3, 1)),
]

BINARY = [
    ("add", lambda m, a, b: a + b, ("real", "real"), None),
    ("sub", lambda m, a, b: a - b, ("real", "real"), None),
    ("mul", lambda m, a, b: a * b, ("real", "real"), None),
    ("div", lambda m, a, b: a / b, ("real", "away"), None),
    ("pow", lambda m, a, b: a**b, ("pos", "real"), None),
    (
        "maximum",
        lambda m, a, b: m.maximum(a, b),
        ("real", "real"),
        same(lambda m, a, b: m.maximum(a, b)),
    ),
    (
        "minimum",
        lambda m, a, b: m.minimum(a, b),
        ("real", "real"),
        same(lambda m, a, b: m.minimum(a, b)),
    ),
]
for _name, _fn, _dom, _tfn in BINARY:
    for _shapes in BROADCAST_SETS:
        _label = "&".join("num" if s is NUM else str(s).replace(" ", "") for s in _shapes)
        ROWS.append(Row(f"{_name}[{_label}]", _fn, _shapes, _dom, _tfn, second=True))

ROWS += [
    Row("pow_int_exponent", lambda m, a: a**3, ((2, 3),), second=True),
    Row("pow_zero_exponent", lambda m, a: a**0, ((2, 3),)),
    Row("pow_number_base", lambda m, a: 2**a, ((2, 3),), second=True),
    Row("rsub_rdiv", lambda m, a: 1.5 - 2.0 / a, ((2, 3),), "away", second=True),
    Row("neg", lambda m, a: -a, ((2, 3),)),
    Row("matmul_operator_chain", lambda m, a, b: (a @ b) @ b.T, ((2, 3), (3, 3)), second=True),
]

# -- unary elementwise ops ------------------------------------------------------------------

UNARY = [
    ("abs", lambda m, a: a.abs(), "away"),
    ("exp", lambda m, a: a.exp(), "real"),
    ("log", lambda m, a: a.log(), "pos"),
    ("log1p", lambda m, a: a.log1p(), "pos"),
    ("expm1", lambda m, a: a.expm1(), "real"),
    ("log1p_fn", lambda m, a: m.log1p(a * 1e-9), "real"),
    ("expm1_fn", lambda m, a: m.expm1(a * 1e-9), "real"),
    ("logsigmoid", lambda m, a: m.nn.functional.logsigmoid(a * 30.0), "real"),
    ("sqrt", lambda m, a: a.sqrt(), "pos"),
    ("sin", lambda m, a: a.sin(), "real"),
    ("cos", lambda m, a: a.cos(), "real"),
    ("tanh", lambda m, a: a.tanh(), "real"),
    ("sigmoid", lambda m, a: a.sigmoid(), "real"),
    ("relu", lambda m, a: a.relu(), "away"),
    ("square", lambda m, a: a.square(), "real"),
    ("clamp", lambda m, a: a.clamp(-0.5, 0.5), "away"),
    ("clamp_min", lambda m, a: a.clamp(min=0.3), "away"),
    ("clamp_max", lambda m, a: m.clamp(a, max=-0.3), "away"),
    ("abs_fn", lambda m, a: m.abs(a), "away"),
    ("exp_fn", lambda m, a: m.exp(a), "real"),
    ("log_fn", lambda m, a: m.log(a), "pos"),
    ("sqrt_fn", lambda m, a: m.sqrt(a), "pos"),
    ("sin_fn", lambda m, a: m.sin(a), "real"),
    ("cos_fn", lambda m, a: m.cos(a), "real"),
    ("tanh_fn", lambda m, a: m.tanh(a), "real"),
    ("sigmoid_fn", lambda m, a: m.sigmoid(a), "real"),
    ("relu_fn", lambda m, a: m.relu(a), "away"),
]
for _name, _fn, _dom in UNARY:
    ROWS.append(Row(_name, _fn, ((2, 3, 4),), _dom, second=_name[:4] != "clam"))
    ROWS.append(Row(_name + "[0d]", _fn, ((),), _dom))

ROWS += [
    Row("erf", lambda m, a: a.erf(), ((2, 3, 4),), second=True),
    Row("erf_wide", lambda m, a: (a * 4.0).erf(), ((3, 4),)),
    Row("gelu", lambda m, a: m.nn.functional.gelu(a * 3.0), ((2, 3, 4),), second=True),
    Row(
        "gelu_tanh",
        lambda m, a: m.nn.functional.gelu(a * 3.0, approximate="tanh"),
        ((2, 3, 4),),
        second=True,
    ),
    Row("gelu[0d]", lambda m, a: m.nn.functional.gelu(a), ((),)),
    Row(
        "layer_norm",
        lambda m, a, w, b: m.nn.functional.layer_norm(a, (4,), w, b),
        ((2, 3, 4), (4,), (4,)),  # second order without the bias, whose gradient is the
    ),  # upstream's sum: PyTorch's node marks it as needing a gradient, chainrule does not
    Row(
        "layer_norm_2dims",
        lambda m, a, w: m.nn.functional.layer_norm(a, (3, 4), w, eps=1e-3),
        ((2, 3, 4), (3, 4)),
        second=True,
    ),
    Row(
        "layer_norm_plain",
        lambda m, a: m.nn.functional.layer_norm(a, (5,)),
        ((3, 5),),
        second=True,
    ),
    Row(
        "layer_norm_whole",
        lambda m, a, b: m.nn.functional.layer_norm(a, (6,), None, b),
        ((6,), (6,)),
    ),
    Row("sign", lambda m, a: a.sign() * a, ((2, 3),), "away"),
    Row("pow_method", lambda m, a: a.pow(2.5), ((2, 3),), "pos", second=True),
    Row("norm_p3", lambda m, a: a.norm(3), ((2, 3),), "away"),
    Row("clone", lambda m, a: a.clone() * a, ((2, 3),), second=True),
    Row("to_double", lambda m, a: a.double().exp() * a.to(m.float64), ((2, 3),), second=True),
    Row(
        "view_as_expand_as",
        lambda m, a, b: a.view_as(b) + a.reshape(4, 3)[:1].expand_as(b),
        ((3, 4), (4, 3)),
    ),
    Row(
        "linear",
        lambda m, x, w, b: L.Linear.apply(x, w, b),
        ((5, 3), (4, 3), (4,)),
        torch_fn=lambda m, x, w, b: F.linear(x, w, b),
        second=True,
        atol32=1e-4,
    ),
    Row(
        "linear_batched_no_bias",
        lambda m, x, w: L.Linear.apply(x, w, None),
        ((2, 5, 3), (4, 3)),
        torch_fn=lambda m, x, w: F.linear(x, w),
        atol32=1e-4,
    ),
    Row("where", lambda m, c, a, b: m.where(c > 0, a, b), ((2, 3), (2, 3), (2, 3)), second=True),
    Row("where_broadcast", lambda m, c, a, b: m.where(c > 0, a, b), ((3, 1), (1, 4), (4,))),
    Row("where_number", lambda m, c, a: m.where(c > 0, a, 0.5), ((2, 3), (2, 3))),
    Row("where_number_first", lambda m, c, a: m.where(c > 0, -0.5, a), ((2, 3), (2, 3))),
    Row("masked_fill", lambda m, c, a: a.masked_fill(c > 0, 2.0), ((2, 3), (2, 3))),
    Row(
        "comparisons",
        lambda m, a, b: (a < b, a <= b, a > b, a >= b, a == b, a != b),
        ((2, 3), (3,)),
        grad=False,
    ),
]

# -- reductions -------------------------------------------------------------------------

DIMS = [None, 0, -1, (0, 2)]
REDUCE = [
    ("sum", lambda x, d, k: x.sum(d, keepdim=k)),
    ("mean", lambda x, d, k: x.mean(d, keepdim=k)),
    ("var", lambda x, d, k: x.var(d, keepdim=k)),
    ("var_corr0", lambda x, d, k: x.var(d, keepdim=k, correction=0)),
    ("std", lambda x, d, k: x.std(d, keepdim=k)),
    ("amax", lambda x, d, k: x.amax(d, keepdim=k)),
    ("amin", lambda x, d, k: x.amin(d, keepdim=k)),
    ("logsumexp", lambda x, d, k: x.logsumexp(d, keepdim=k)),
]
for _name, _f in REDUCE:
    for _d in DIMS:
        for _k in (False, True):
            # PyTorch's logsumexp takes no dim=None: name every dim there.
            _dt = (0, 1, 2) if _d is None and _name == "logsumexp" else _d
            ROWS.append(
                Row(
                    f"{_name}[dim={_d},keepdim={_k}]",
                    (lambda f, d, k: lambda m, x: f(x, d, k))(_f, _d, _k),
                    ((2, 3, 4),),
                    torch_fn=(lambda f, d, k: lambda m, x: f(x, d, k))(_f, _dt, _k),
                    second=_name not in ("amax", "amin"),
                    atol32=1e-4,
                )
            )

ROWS += [
    Row(
        "sum_numpy_names",
        lambda m, x: x.sum(axis=1, keepdims=True),
        ((2, 3, 4),),
        torch_fn=lambda m, x: x.sum(dim=1, keepdim=True),
    ),
    Row(
        "mean_numpy_names",
        lambda m, x: x.mean(axis=(0, 2)),
        ((2, 3, 4),),
        torch_fn=lambda m, x: x.mean(dim=(0, 2)),
    ),
    Row("sum_fn", lambda m, x: m.sum(x, 1), ((2, 3, 4),)),
    Row("max_all", lambda m, x: x.max(), ((2, 3, 4),)),
    Row("min_all", lambda m, x: x.min(), ((2, 3, 4),)),
    Row("max_dim", lambda m, x: tuple(x.max(dim=1)), ((2, 3, 4),)),
    Row("max_dim_keepdim", lambda m, x: tuple(x.max(-1, keepdim=True)), ((2, 3, 4),)),
    Row("min_dim", lambda m, x: tuple(x.min(0)), ((2, 3, 4),)),
    Row("max_fn_dim", lambda m, x: tuple(m.max(x, 2)), ((2, 3, 4),)),
    Row("max_other", lambda m, a, b: m.max(a, b), ((2, 3), (3,))),
    Row("min_other", lambda m, a, b: a.min(b), ((2, 3), (2, 1))),
    Row("max_dim_0d", lambda m, x: tuple(x.max(0)), ((),)),
    Row(
        "argmax",
        lambda m, x: (x.argmax(), x.argmax(1), x.argmax(-1, keepdim=True)),
        ((2, 3, 4),),
        grad=False,
    ),
    Row(
        "argmin",
        lambda m, x: (x.argmin(), x.argmin(0), x.argmin(2, keepdim=True)),
        ((2, 3, 4),),
        grad=False,
    ),
    Row("softmax_last", lambda m, x: x.softmax(-1), ((2, 3, 4),), second=True),
    Row("softmax_0", lambda m, x: x.softmax(0), ((2, 3, 4),), second=True),
    Row("softmax_fn", lambda m, x: m.softmax(x, 1), ((2, 3, 4),)),
    Row("log_softmax_last", lambda m, x: x.log_softmax(-1), ((2, 3, 4),), second=True),
    Row("log_softmax_1", lambda m, x: x.log_softmax(1), ((2, 3, 4),), second=True),
    Row("log_softmax_fn", lambda m, x: m.log_softmax(x, 0), ((2, 3, 4),)),
    Row("logsumexp_fn", lambda m, x: m.logsumexp(x, 1), ((2, 3, 4),)),
    Row("norm", lambda m, x: x.norm(), ((2, 3),), second=True),
    Row("norm_nuc_wide", lambda m, x: x.norm("nuc"), ((3, 4),), second=True),
    Row("norm_nuc_tall", lambda m, x: m.norm(x, "nuc", (2, 0), True), ((4, 2, 3),), second=True),
]
# Many rows of a few classes, reduced over the classes: the shape for which the reductions
# first copy to column-major order (ops/reduce.py _column_major).
CLASS_ROWS = [
    ("sum", lambda m, x: x.sum(-1)),
    ("mean", lambda m, x: x.mean(1, keepdim=True)),
    ("var", lambda m, x: x.var(1)),
    ("amax", lambda m, x: x.amax(1)),
    ("logsumexp", lambda m, x: x.logsumexp(1)),
    ("softmax", lambda m, x: x.softmax(-1)),
    ("log_softmax", lambda m, x: x.log_softmax(1)),
    ("log_softmax_then_rows", lambda m, x: x.log_softmax(1)[3:7] * 2.0),
]
ROWS += [Row(f"{n}[64x10]", f, ((64, 10),), second=n != "amax") for n, f in CLASS_ROWS]

# -- shapes -------------------------------------------------------------------------------

SHAPE = [
    ("reshape", lambda m, x: x.reshape(4, -1)),
    ("reshape_tuple", lambda m, x: x.reshape((3, 8))),
    ("view", lambda m, x: x.view(2, 12)),
    ("flatten", lambda m, x: x.flatten()),
    ("flatten_1", lambda m, x: x.flatten(1)),
    ("flatten_0_1", lambda m, x: x.flatten(0, 1)),
    ("unsqueeze", lambda m, x: x.unsqueeze(1)),
    ("unsqueeze_last", lambda m, x: x.unsqueeze(-1)),
    ("squeeze", lambda m, x: x.unsqueeze(0).unsqueeze(2).squeeze()),
    ("squeeze_dim", lambda m, x: x.unsqueeze(1).squeeze(1)),
    ("transpose", lambda m, x: x.transpose(0, 2)),
    ("transpose_neg", lambda m, x: x.transpose(-1, -2)),
    ("permute", lambda m, x: x.permute(2, 0, 1)),
    ("permute_tuple", lambda m, x: x.permute((1, 2, 0))),
    ("T", lambda m, x: x.reshape(6, 4).T),
    ("mT", lambda m, x: x.mT),
    ("expand", lambda m, x: x.unsqueeze(0).expand(3, -1, -1, -1)),
    ("broadcast_to", lambda m, x: x[:, :1].broadcast_to((5, 2, 3, 4))),
    ("reshape_fn", lambda m, x: m.reshape(x, (6, 4))),
    ("flatten_fn", lambda m, x: m.flatten(x)),
    ("transpose_fn", lambda m, x: m.transpose(x, 0, 1)),
    ("permute_fn", lambda m, x: m.permute(x, (2, 1, 0))),
]
ROWS += [Row(n, f, ((2, 3, 4),), second=True) for n, f in SHAPE]

# -- indexing -----------------------------------------------------------------------------

MASK = [[True, False, True], [False, False, True]]
INDEX = [
    ("int", lambda m, x: x[1]),
    ("neg_int", lambda m, x: x[-1, 2]),
    ("slice", lambda m, x: x[1:3]),
    ("slice_step", lambda m, x: x[::2, 1::3]),
    ("none", lambda m, x: x[None, :, None]),
    ("ellipsis", lambda m, x: x[..., 1]),
    ("ellipsis_none", lambda m, x: x[0, ..., None]),
    ("int_tensor", lambda m, x: x[m.tensor([3, 0])]),
    ("int_tensor_0d", lambda m, x: x[m.tensor(2)]),
    ("list_repeats", lambda m, x: x[[0, 0, 2, 0]]),
    ("pair_lists_repeats", lambda m, x: x[[1, 1, 3], [2, 2, 0]]),
    ("column_list", lambda m, x: x[:, [4, 0, 4]]),
    ("int_tensor_2d", lambda m, x: x[m.tensor([[0, 1], [1, 0]])]),
    ("bool_mask_rows", lambda m, x: x[m.tensor([True, False, False, True])]),
    ("bool_mask_2d", lambda m, x: x[:2, :3][m.tensor(MASK)]),
    ("mixed", lambda m, x: x[1:, [0, 0, 3]]),
    ("split_int", lambda m, x: x.split(2, dim=1)),
    ("split_sections", lambda m, x: x.split([1, 3], 0)),
    ("chunk", lambda m, x: x.chunk(2, -1)),
    ("chunk_fn", lambda m, x: m.chunk(x, 3, 0)),
    ("split_fn", lambda m, x: m.split(x, 3, 1)),
    ("gather", lambda m, x: x.gather(1, m.tensor([[0, 4], [1, 1], [4, 4], [2, 3]]))),
]
ROWS += [Row("index_" + n, f, ((4, 5),), second=True) for n, f in INDEX]

# -- triangles, scans and reorderings ------------------------------------------------------

ACROSS = [[0, 2], [1, 0], [2, 3]]  # scatter positions along dim 1, none repeated in a row
DOWN = [[2, 0, 1, 0], [0, 1, 2, 1]]  # ... along dim 0, none repeated in a column
REPEATS = [[0, 0], [3, 1], [2, 2]]  # repeated positions: scatter_add adds them up
ZEROS = [[1.0, 0.0, 1.0, 1.0], [0.0, 1.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0]]
SRC_ZEROS = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]  # with REPEATS: two 0s at one place, ...


def scatter_reduce_call(how: str, self_too: bool) -> Callable[..., Any]:
    """x.scatter_reduce(1, REPEATS, s, how, include_self=self_too), in either module."""
    return lambda m, x, s: x.scatter_reduce(1, m.tensor(REPEATS), s, how, include_self=self_too)


ROWS += [
    Row("tril", lambda m, x: x.tril(), ((3, 4),), second=True),
    Row("tril_diagonal_batched", lambda m, x: x.tril(1), ((2, 4, 3),)),
    Row("tril_fn_negative", lambda m, x: m.tril(x, diagonal=-1), ((4, 3),)),
    Row("triu", lambda m, x: x.triu(), ((3, 4),), second=True),
    Row("triu_diagonal_batched", lambda m, x: x.triu(-1), ((2, 4, 3),)),
    Row("triu_fn_positive", lambda m, x: m.triu(x, 2), ((3, 4),)),
    Row("cumsum_0", lambda m, x: x.cumsum(0), ((2, 3, 4),), second=True),
    Row("cumsum_last", lambda m, x: x.cumsum(-1) * x, ((2, 3, 4),), second=True),
    Row("cumsum_fn", lambda m, x: m.cumsum(x, dim=1), ((2, 3, 4),)),
    Row("cumsum_0d", lambda m, x: x.cumsum(0), ((),)),
    Row("cumprod_0", lambda m, x: x.cumprod(0), ((2, 3, 4),), second=True),
    Row("cumprod_last", lambda m, x: m.cumprod(x, -1), ((2, 3, 4),), second=True),
    Row("cumprod_0d", lambda m, x: x.cumprod(-1), ((),)),
    # zeros along the dim: the products that leave one factor out (one zero, two, none)
    Row("cumprod_zeros", lambda m, x: (x * m.tensor(ZEROS)).cumprod(1), ((3, 4),), second=True),
    Row("cumprod_zeros_0", lambda m, x: (x * m.tensor(ZEROS)).cumprod(0), ((3, 4),), second=True),
    Row("sort", lambda m, x: tuple(x.sort()), ((2, 3, 4),)),
    Row("sort_values", lambda m, x: x.sort(1).values * x, ((2, 3, 4),), second=True),
    Row("sort_0_descending", lambda m, x: tuple(x.sort(0, descending=True)), ((2, 3, 4),)),
    Row("sort_fn_stable", lambda m, x: tuple(m.sort(x, dim=1, stable=True)), ((2, 3, 4),)),
    Row("sort_0d", lambda m, x: tuple(x.sort()), ((),)),
    Row(
        "argsort",
        lambda m, x: (x.argsort(), x.argsort(0, descending=True)),
        ((2, 3, 4),),
        grad=False,
    ),
    Row("argsort_fn", lambda m, x: m.argsort(x, dim=1, stable=True), ((2, 3, 4),), grad=False),
    Row("topk", lambda m, x: tuple(x.topk(2)), ((2, 3, 4),)),
    Row("topk_smallest", lambda m, x: tuple(x.topk(3, dim=0, largest=False)), ((4, 3),)),
    Row("topk_fn", lambda m, x: tuple(m.topk(x, 1, 1, sorted=False)), ((2, 3, 4),)),
    Row("topk_values_reused", lambda m, x: x.topk(2, 0).values * x[:2], ((3, 4),), second=True),
    Row("flip_one", lambda m, x: x.flip(0), ((2, 3, 4),), second=True),
    Row("flip_two", lambda m, x: x.flip((0, -1)) * x, ((2, 3, 4),), second=True),
    Row("flip_fn", lambda m, x: m.flip(x, [1, 2]), ((2, 3, 4),)),
    Row("roll_one", lambda m, x: x.roll(1, 0), ((2, 3, 4),), second=True),
    Row("roll_two", lambda m, x: x.roll((-1, 5), (2, 1)) * x, ((2, 3, 4),), second=True),
    Row("roll_flat", lambda m, x: x.roll(7), ((2, 3, 4),)),
    Row("roll_fn", lambda m, x: m.roll(x, shifts=2, dims=-1), ((2, 3, 4),)),
    Row("repeat", lambda m, x: x.repeat(2, 3), ((2, 3),), second=True),
    Row("repeat_more_dims", lambda m, x: x.repeat((2, 1, 3)) * 2.0, ((2, 3),)),
    Row("repeat_interleave", lambda m, x: x.repeat_interleave(2), ((2, 3),), second=True),
    Row("repeat_interleave_dim", lambda m, x: x.repeat_interleave(3, dim=-1), ((2, 3),)),
    Row(
        "repeat_interleave_tensor",
        lambda m, x: m.repeat_interleave(x, m.tensor([1, 0, 3]), 1) * 2.0,
        ((2, 3),),
    ),
    Row("index_select", lambda m, x: x.index_select(1, m.tensor([3, 0, 3])), ((2, 5, 4),)),
    Row("index_select_0d", lambda m, x: x.index_select(0, m.tensor(1)), ((2, 5),)),
    Row("index_select_fn", lambda m, x: m.index_select(x, -1, m.tensor([2, 2])), ((2, 5, 4),)),
    Row(
        "scatter", lambda m, x, s: x.scatter(1, m.tensor(ACROSS), s), ((3, 4), (3, 2)), second=True
    ),
    Row(
        "scatter_0",
        lambda m, x, s: x.scatter(0, m.tensor(DOWN), s) * x,
        ((3, 4), (2, 4)),
        second=True,
    ),
    Row("scatter_value", lambda m, x: x.scatter(1, m.tensor(ACROSS), 2.5), ((3, 4),)),
    Row("scatter_fn_value", lambda m, x: m.scatter(x, 0, m.tensor(DOWN), value=-1.0), ((3, 4),)),
    Row("scatter_fn", lambda m, x, s: m.scatter(x, -1, m.tensor(ACROSS), s), ((3, 4), (3, 2))),
    Row(
        "scatter_add",
        lambda m, x, s: x.scatter_add(1, m.tensor(REPEATS), s),
        ((3, 4), (3, 2)),
        second=True,
    ),
    Row(
        "scatter_add_0",
        lambda m, x, s: x.scatter_add(0, m.tensor(DOWN), s) * s.sum(),
        ((3, 4), (2, 4)),
        second=True,
    ),
    Row(
        "scatter_add_fn",
        lambda m, x, s: m.scatter_add(x, 1, m.tensor(REPEATS), s),
        ((3, 4), (3, 2)),
    ),
    *[
        Row(
            f"scatter_reduce_{how}" + ("" if self_too else "_without_self"),
            scatter_reduce_call(how, self_too),
            ((3, 4), (3, 2)),
            second=True,
        )
        for how in ("sum", "prod", "mean", "amax", "amin")
        for self_too in (True, False)
    ],
    Row(
        "scatter_reduce_0",
        lambda m, x, s: x.scatter_reduce(0, m.tensor(DOWN), s, "prod") * x,
        ((3, 4), (2, 4)),
        second=True,
    ),
    Row(
        "scatter_reduce_fn",
        lambda m, x, s: m.scatter_reduce(x, -1, m.tensor(REPEATS), s, "mean", include_self=False),
        ((3, 4), (3, 2)),
    ),
    # zeros in self and src: one per place, two at one place, a zero self beside them
    Row(
        "scatter_reduce_prod_zeros",
        lambda m, x, s: (x * m.tensor(ZEROS)).scatter_reduce(
            1, m.tensor(REPEATS), s * m.tensor(SRC_ZEROS), "prod"
        ),
        ((3, 4), (3, 2)),
    ),
    Row(
        "scatter_reduce_prod_zeros_without_self",
        lambda m, x, s: (x * m.tensor(ZEROS)).scatter_reduce(
            1, m.tensor(REPEATS), s * m.tensor(SRC_ZEROS), "prod", include_self=False
        ),
        ((3, 4), (3, 2)),
    ),
    # torch's scatter(reduce=) has no backward: the gradients are scatter_reduce's
    Row(
        "scatter_reduce_add",
        lambda m, x, s: x.scatter(1, m.tensor(REPEATS), s, reduce="add"),
        ((3, 4), (3, 2)),
        torch_fn=lambda m, x, s: x.scatter_reduce(1, m.tensor(REPEATS), s, "sum"),
    ),
    Row(
        "scatter_reduce_multiply",
        lambda m, x, s: m.scatter(x, 0, m.tensor(DOWN), s, reduce="multiply"),
        ((3, 4), (2, 4)),
        torch_fn=lambda m, x, s: m.scatter_reduce(x, 0, m.tensor(DOWN), s, "prod"),
    ),
    Row(
        "index_add",
        lambda m, x, s: x.index_add(0, m.tensor([0, 2, 0]), s),
        ((3, 4), (3, 4)),
        second=True,
    ),
    Row(
        "index_add_alpha",
        lambda m, x, s: x.index_add(1, m.tensor([3, 3]), s, alpha=-0.5) * x,
        ((3, 4), (3, 2)),
        second=True,
    ),
    Row(
        "index_add_fn",
        lambda m, x, s: m.index_add(x, -1, m.tensor([1]), s, alpha=2.0),
        ((3, 4), (3, 1)),
    ),
    Row(
        "masked_select", lambda m, x: x.masked_select(m.tensor(MASK)).exp(), ((2, 3),), second=True
    ),
    Row(
        "masked_select_fn",
        lambda m, x: m.masked_select(x, m.tensor([True, False, True])),
        ((2, 3),),
    ),
    Row("masked_select_broadcast", lambda m, x: x.masked_select(m.tensor(MASK)), ((4, 1, 3),)),
]

# -- several tensors --------------------------------------------------------------------------

ROWS += [
    Row("cat_0", lambda m, a, b, c: m.cat([a, b, c]), ((2, 3), (1, 3), (4, 3))),
    Row("cat_neg", lambda m, a, b: m.cat((a, b), dim=-1), ((2, 3), (2, 1)), second=True),
    Row("cat_reused", lambda m, a: m.cat([a, a * 2.0, a], 1), ((2, 3),)),
    Row("stack_0", lambda m, a, b: m.stack([a, b]), ((2, 3), (2, 3)), second=True),
    Row("stack_last", lambda m, a, b: m.stack([a, b], dim=-1), ((2, 3), (2, 3))),
    Row(
        "pad_last",
        lambda m, x: m.pad(x, (1, 2)),
        ((2, 3),),
        torch_fn=lambda m, x: F.pad(x, (1, 2)),
        second=True,
    ),
    Row(
        "pad_two_dims_value",
        lambda m, x: m.pad(x, (1, 0, 0, 2), value=-1.5),
        ((2, 3, 4),),
        torch_fn=lambda m, x: F.pad(x, (1, 0, 0, 2), value=-1.5),
    ),
]
# The other modes: each input position lends itself to several padded ones (gradients sum).
PAD_MODES = [
    ("reflect", (3, 1), (2, 4)),
    ("reflect", (1, 1, 2, 3), (1, 2, 4, 5)),
    ("replicate", (2, 3, 0, 1), (2, 3, 4)),
    ("replicate", (1, 0, 2, 2, 1, 0), (2, 2, 3, 2)),
    ("circular", (3, 2), (2, 3, 3)),
    ("circular", (1, 1, 2, 0, 0, 1), (1, 2, 3, 4, 3)),
]
ROWS += [
    Row(
        f"pad_{mode}_{len(widths) // 2}d",
        lambda m, x, w=widths, mode=mode: m.pad(x, w, mode=mode),
        (shape,),
        torch_fn=lambda m, x, w=widths, mode=mode: F.pad(x, w, mode=mode),
    )  # linear, but torch marks its gradient as requiring grad: no second-derivative row
    for mode, widths, shape in PAD_MODES
]

MATMUL = [
    ((3,), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3,)),
    ((2, 3), (3, 4)),
    ((5, 2, 3), (3, 4)),
    ((2, 3), (5, 3, 4)),
    ((5, 2, 3), (5, 3, 4)),
    ((3,), (5, 3, 4)),
    ((5, 2, 3), (3,)),
    ((2, 1, 2, 3), (5, 3, 4)),
]
for _a, _b in MATMUL:
    ROWS.append(
        Row(
            f"matmul[{_a}@{_b}]".replace(" ", ""),
            lambda m, a, b: a @ b,
            (_a, _b),
            second=True,
            atol32=1e-4,
        )
    )
ROWS += [
    Row(
        "addmm",
        lambda m, x, a, b: m.addmm(x, a, b),
        ((2, 4), (2, 3), (3, 4)),
        second=True,
        atol32=1e-4,
    ),
    Row(
        "addmm_scaled_broadcast",
        lambda m, x, a, b: x.addmm(a, b, beta=0.5, alpha=-2.0),
        ((4,), (2, 3), (3, 4)),
        second=True,
        atol32=1e-4,
    ),
    Row(
        "addmm_beta_0",
        lambda m, x, a, b: m.addmm(x, a, b, beta=0),
        ((2, 1), (2, 3), (3, 4)),
        atol32=1e-4,
    ),
    Row(
        "baddbmm",
        lambda m, x, a, b: x.baddbmm(a, b),
        ((5, 2, 4), (5, 2, 3), (5, 3, 4)),
        second=True,
        atol32=1e-4,
    ),
    Row(
        "baddbmm_fn_scaled",
        lambda m, x, a, b: m.baddbmm(x, a, b, beta=2.0, alpha=0.5),
        ((1, 4), (5, 2, 3), (5, 3, 4)),
        atol32=1e-4,
    ),
]
ROWS.append(Row("matmul_fn", lambda m, a, b: m.matmul(a, b), ((2, 3), (3, 4)), atol32=1e-4))

# -- PyTorch's everyday surface: rsqrt, outer, t, mm, bmm, narrow ------------------------
ROWS += [
    Row("rsqrt", lambda m, a: a.rsqrt(), ((2, 3),), "pos", second=True),
    Row("rsqrt_fn", lambda m, a: m.rsqrt(a), ((),), "pos"),
    Row("outer", lambda m, a, b: m.outer(a, b), ((3,), (4,)), second=True),
    Row("outer_method", lambda m, a, b: a.outer(b) * a.outer(b), ((2,), (3,))),
    Row("t", lambda m, a: a.t(), ((2, 3),)),
    Row("t_1d", lambda m, a: m.t(a) * a, ((3,),), second=True),
    Row("mm", lambda m, a, b: a.mm(b), ((2, 3), (3, 4)), second=True, atol32=1e-4),
    Row("mm_fn", lambda m, a, b: m.mm(a, b.t()), ((2, 3), (4, 3)), atol32=1e-4),
    Row("bmm", lambda m, a, b: m.bmm(a, b), ((5, 2, 3), (5, 3, 4)), second=True, atol32=1e-4),
    Row("bmm_method", lambda m, a, b: a.bmm(b), ((1, 2, 3), (1, 3, 1)), atol32=1e-4),
    Row("narrow", lambda m, a: a.narrow(1, 1, 2), ((2, 4),)),
    Row("narrow_negative_start", lambda m, a: m.narrow(a, 0, -2, 2) * a[:2], ((3, 2),)),
]

# -- the activations and losses of the surface work: silu, mish, softplus, smooth L1, Huber ----
_CF = cr.nn.functional
ROWS += [
    Row(
        "silu", lambda m, a: _CF.silu(a), ((2, 3, 4),), torch_fn=lambda m, a: F.silu(a), second=True
    ),
    Row(
        "mish",
        lambda m, a: _CF.mish(a * 4.0),
        ((2, 3, 4),),
        torch_fn=lambda m, a: F.mish(a * 4.0),
        second=True,
    ),
    Row(
        "softplus",
        lambda m, a: _CF.softplus(a * 30.0),
        ((3, 4),),
        torch_fn=lambda m, a: F.softplus(a * 30.0),
        second=True,
    ),
    Row(
        "softplus_beta",
        lambda m, a: _CF.softplus(a * 5.0, beta=2.0, threshold=4.0),
        ((3, 4),),
        torch_fn=lambda m, a: F.softplus(a * 5.0, beta=2.0, threshold=4.0),
    ),
]
for _red in ("mean", "sum", "none"):
    ROWS += [
        Row(
            f"smooth_l1_loss_{_red}",
            lambda m, a, b, r=_red: _CF.smooth_l1_loss(a, b, reduction=r, beta=0.7),
            ((3, 4), (3, 4)),
            "away",
            torch_fn=lambda m, a, b, r=_red: F.smooth_l1_loss(a, b, reduction=r, beta=0.7),
            second=True,
        ),
        Row(
            f"huber_loss_{_red}",
            lambda m, a, b, r=_red: _CF.huber_loss(a, b, reduction=r, delta=0.6),
            ((3, 4), (3, 4)),
            "away",
            torch_fn=lambda m, a, b, r=_red: F.huber_loss(a, b, reduction=r, delta=0.6),
            second=True,
        ),
    ]
ROWS.append(
    Row(
        "smooth_l1_loss_beta_0",
        lambda m, a, b: _CF.smooth_l1_loss(a, b, beta=0.0),
        ((3, 4), (3, 4)),
        "away",
        torch_fn=lambda m, a, b: F.smooth_l1_loss(a, b, beta=0.0),
    )
)

EINSUM = [
    ("ij,jk->ik", ((2, 3), (3, 4))),
    ("bij,bjk->bik", ((2, 2, 3), (2, 3, 4))),
    ("i,i->", ((3,), (3,))),
    ("ij->j", ((2, 3),)),
    ("ij->", ((2, 3),)),
    ("ijk->kji", ((2, 3, 4),)),
    ("ij,kl->ijkl", ((2, 3), (2, 2))),
    ("ij,j->i", ((2, 3), (3,))),
    ("ij,k->i", ((2, 3), (4,))),
    ("ij,jk,kl->il", ((2, 3), (3, 4), (4, 2))),
    ("bi, bi -> b", ((4, 3), (4, 3))),
    ("ii->i", ((3, 3),)),  # a repeated letter reads the diagonal
    ("NMaa->NM", ((2, 3, 4, 4),)),  # the NTK tutorial's trace
    ("iij,jk->ik", ((3, 3, 2), (2, 4))),
]
for _eq, _shapes in EINSUM:
    ROWS.append(
        Row(
            f"einsum[{_eq.replace(' ', '')}]",
            (lambda eq: lambda m, *xs: m.einsum(eq, *xs))(_eq),
            _shapes,
            second=True,
            atol32=1e-4,
        )
    )


# -- the primitives under the layers: losses, convolution, pooling, attention, embedding ----
def _targets(m: Any) -> Any:
    return m.tensor([0, 2, 1, 4])  # class indices for four rows of five classes


def _put(m: Any, a: Any, b: Any) -> Any:
    """Item assignment into a copy: a row, a column through an index, one element."""
    c = a * 1.0
    c[0] = b
    c[m.tensor([1, 0]), 2] = b[:2] * 2.0  # over the row just written: b[2] loses its place
    c[1, 0] = b[2]
    return c


def _write_through_views(m: Any, a: Any, b: Any) -> Any:
    """Writes through views of a copy (PyTorch's CopySlices), and a view taken before them,
    which differentiates what it holds after (an AsStrided of the base)."""
    c = a * 1.0
    early = c[:, 1]
    c[1:, ::2].mul_(b)
    c[0].add_(b.sum())
    return c * early.sum()


ROWS += [
    Row("write_through_views", _write_through_views, ((3, 4), (2,)), second=True),
    Row(
        "cross_entropy",
        lambda m, a: m.nn.functional.cross_entropy(a, _targets(m)),
        ((4, 5),),
        second=True,
    ),
    Row(
        "cross_entropy_options",
        lambda m, a: m.nn.functional.cross_entropy(
            a, _targets(m), ignore_index=2, label_smoothing=0.1, reduction="sum"
        ),
        ((4, 5),),
        second=True,
    ),
    Row(
        "cross_entropy_probabilities",
        lambda m, a, b: m.nn.functional.cross_entropy(a, b.softmax(-1)),
        ((4, 5), (4, 5)),
        second=True,
    ),
    Row(
        "nll_loss",
        lambda m, a: m.nn.functional.nll_loss(a.log_softmax(-1), _targets(m)),
        ((4, 5),),
        second=True,
    ),
    Row(
        "binary_cross_entropy",
        lambda m, a, b: m.nn.functional.binary_cross_entropy(a.sigmoid(), b.sigmoid()),
        ((3, 4), (3, 4)),
        second=True,
    ),
    Row(
        "binary_cross_entropy_with_logits",
        lambda m, a, b: m.nn.functional.binary_cross_entropy_with_logits(a, b.sigmoid()),
        ((3, 4), (3, 4)),
        second=True,
    ),
    Row(
        "conv2d",
        lambda m, x, w, b: m.nn.functional.conv2d(x, w, b, padding=1),
        ((2, 3, 5, 5), (4, 3, 3, 3), (4,)),
        second=True,
        atol32=1e-4,
    ),
    Row(
        "conv2d_strided_grouped",
        lambda m, x, w: m.nn.functional.conv2d(x, w, stride=2, padding=1, groups=2),
        ((1, 4, 6, 6), (2, 2, 3, 3)),
        atol32=1e-4,
    ),
    Row(
        "conv_transpose2d",
        lambda m, x, w, b: m.nn.functional.conv_transpose2d(x, w, b, stride=2, padding=1),
        ((2, 4, 3, 3), (4, 3, 3, 3), (3,)),
        atol32=1e-4,
    ),
    Row("max_pool2d", lambda m, x: m.nn.functional.max_pool2d(x, 2), ((2, 3, 4, 4),), second=True),
    Row(
        "max_pool2d_overlapping",
        lambda m, x: m.nn.functional.max_pool2d(x, 3, stride=2, padding=1),
        ((1, 2, 5, 5),),
    ),
    Row(
        "scaled_dot_product_attention",
        lambda m, q, k, v: m.nn.functional.scaled_dot_product_attention(q, k, v),
        ((2, 3, 4), (2, 5, 4), (2, 5, 4)),
    ),
    Row(
        "scaled_dot_product_attention_causal",
        lambda m, q, k, v: m.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True),
        ((2, 2, 4, 3), (2, 2, 4, 3), (2, 2, 4, 3)),
    ),
    Row(
        "scaled_dot_product_attention_float_mask",
        lambda m, q, k, v, mask: m.nn.functional.scaled_dot_product_attention(
            q, k, v, attn_mask=mask
        ),
        ((2, 3, 4), (2, 5, 4), (2, 5, 4), (3, 5)),
    ),
    Row(
        "embedding_scale_grad_by_freq",
        lambda m, w: m.nn.functional.embedding(
            m.tensor([[0, 2, 0], [1, 0, 3]]), w, scale_grad_by_freq=True
        ),
        ((4, 3),),
        numeric=False,
    ),  # each row's gradient divided by its count in the batch
    Row(
        "embedding",
        lambda m, w: m.nn.functional.embedding(m.tensor([[0, 2, 0], [1, 0, 3]]), w),
        ((4, 3),),
    ),
    Row(
        "embedding_padding_idx",
        lambda m, w: m.nn.functional.embedding(
            m.tensor([[0, 2, 0], [1, 0, 3]]), w, padding_idx=0, scale_grad_by_freq=True
        ),
        ((4, 3),),
        numeric=False,
    ),  # the padding row's gradient is zero by design, its values are used
    Row("index_put", _put, ((2, 3), (3,))),
    Row(
        "leaky_relu",
        lambda m, a: m.nn.functional.leaky_relu(a, 0.1),
        ((2, 3, 4),),
        "away",
        second=True,
    ),
    Row(
        "hardtanh",
        lambda m, a: m.nn.functional.hardtanh(a * 2.0, -1.5, 1.0),
        ((2, 3, 4),),
        "away",
        second=True,
    ),
    Row("relu6", lambda m, a: m.nn.functional.relu6(a * 5.0), ((2, 3, 4),), "away", second=True),
    Row(
        "threshold",
        lambda m, a: m.nn.functional.threshold(a, 0.1, -2.0),
        ((2, 3, 4),),
        "away",
        second=True,
    ),
    Row(
        "prelu", lambda m, a, w: m.nn.functional.prelu(a, w), ((2, 3, 4), (1,)), "away", second=True
    ),
    Row(
        "prelu_per_channel",
        lambda m, a, w: m.nn.functional.prelu(a, w),
        ((2, 3, 4), (3,)),
        "away",
        second=True,
    ),
    Row("floor_divide", lambda m, a, b: a // b, ((2, 3), (2, 3)), ("real", "away"), grad=False),
]

# -- the rows kept by kind in tests/ops/rows/ ----------------------------------------------
ROWS += discovered()


def test_scatter_from_a_larger_src_sends_zeros_to_the_rest() -> None:
    """Only src's corner as large as index is written; the rest of src gets a zero gradient
    (PyTorch refuses the backward there, its gradient shaped like index)."""
    x, src = cr.zeros(2, 3, requires_grad=True), cr.arange(12.0).reshape(3, 4).requires_grad_()
    out = x.scatter(1, cr.tensor([[2], [0]]), src)
    np.testing.assert_array_equal(out.numpy(), [[0, 0, 0], [4, 0, 0]])
    out.backward(cr.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
    np.testing.assert_array_equal(src.grad.numpy(), [[3, 0, 0, 0], [4, 0, 0, 0], [0, 0, 0, 0]])
    np.testing.assert_array_equal(x.grad.numpy(), [[1, 2, 0], [0, 5, 6]])


@pytest.mark.parametrize("how", ["sum", "prod", "mean", "amax", "amin"])
def test_scatter_reduce_from_a_larger_src_sends_zeros_to_the_rest(how: str) -> None:
    """Only src's corner as large as index is reduced in; the rest of src gets a zero
    gradient (PyTorch refuses that backward; it is compared on the corner)."""
    rng = np.random.default_rng(0)
    x, s, g = rng.standard_normal((3, 4)), rng.standard_normal((3, 5)), rng.standard_normal((3, 4))
    xc, sc = cr.tensor(x, requires_grad=True), cr.tensor(s, requires_grad=True)
    xt, st = torch.tensor(x, requires_grad=True), torch.tensor(s[:2, :4], requires_grad=True)
    out = xc.scatter_reduce(0, cr.tensor(DOWN), sc, how, include_self=False)
    expected = xt.scatter_reduce(0, torch.tensor(DOWN), st, how, include_self=False)
    np.testing.assert_allclose(out.numpy(), expected.detach().numpy(), rtol=1e-12)
    out.backward(cr.tensor(g))
    expected.backward(torch.tensor(g))
    np.testing.assert_allclose(xc.grad.numpy(), xt.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(sc.grad.numpy()[:2, :4], st.grad.numpy(), rtol=1e-12)
    assert not sc.grad.numpy()[2:].any() and not sc.grad.numpy()[:, 4:].any()


@pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")
@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_with_reduce_matches_torch(reduce: str) -> None:
    """Repeated places reduce every value in; a number is reduced in once per index entry;
    integer tensors too."""
    rng = np.random.default_rng(0)
    x, s = rng.standard_normal((3, 4)), rng.standard_normal((3, 2))
    idx = REPEATS
    out = cr.tensor(x).scatter(1, cr.tensor(idx), cr.tensor(s), reduce=reduce)
    expected = torch.tensor(x).scatter(1, torch.tensor(idx), torch.tensor(s), reduce=reduce)
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-15)
    out = cr.scatter(cr.tensor(x), 0, cr.tensor(DOWN), value=1.5, reduce=reduce)
    expected = torch.tensor(x).scatter(0, torch.tensor(DOWN), 1.5, reduce=reduce)
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-15)
    xi, si = np.arange(12).reshape(3, 4), np.arange(6).reshape(3, 2) - 2
    out = cr.tensor(xi).scatter(1, cr.tensor(idx), cr.tensor(si), reduce=reduce)
    expected = torch.tensor(xi).scatter(1, torch.tensor(idx), torch.tensor(si), reduce=reduce)
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out.numpy(), expected.numpy())
    with pytest.raises(ValueError, match="scatter: reduce must be 'add' or 'multiply'; got 'sum'"):
        cr.zeros(3, 4).scatter(1, cr.tensor(idx), cr.ones(3, 2), reduce="sum")


@pytest.mark.parametrize("how", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_on_integers_matches_torch(how: str, include_self: bool) -> None:
    """mean rounds down, as PyTorch's; amax and amin without self start from the extremes."""
    xi, si = np.arange(12).reshape(3, 4) - 5, np.array([[7, -3], [2, 9], [-8, 4]])
    out = cr.tensor(xi).scatter_reduce(
        1, cr.tensor(REPEATS), cr.tensor(si), how, include_self=include_self
    )
    expected = torch.tensor(xi).scatter_reduce(
        1, torch.tensor(REPEATS), torch.tensor(si), how, include_self=include_self
    )
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out.numpy(), expected.numpy())


def test_scatter_reduce_errors() -> None:
    with pytest.raises(ValueError, match="scatter_reduce: reduce must be 'sum', 'prod', 'mean'"):
        cr.zeros(3, 4).scatter_reduce(1, cr.tensor(REPEATS), cr.ones(3, 2), "max")
    with pytest.raises(IndexError, match="scatter_reduce: index 4 is out of range for dim 1"):
        cr.zeros(3, 4).scatter_reduce(1, cr.tensor([[4]]), cr.ones(1, 1), "sum")


@pytest.mark.parametrize("counts", [[1, 0, 3], [2], [], [0, 0], [4, 1]])
def test_repeat_interleave_of_counts_alone_matches_torch(counts: list[int]) -> None:
    """torch.repeat_interleave(repeats): each position repeated its count of times."""
    out = cr.repeat_interleave(cr.tensor(counts, dtype=cr.int64))
    expected = torch.repeat_interleave(torch.tensor(counts, dtype=torch.int64))
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out.numpy(), expected.numpy())
    total = sum(counts)
    out = cr.repeat_interleave(cr.tensor(counts, dtype=cr.int64), output_size=total)
    np.testing.assert_array_equal(out.numpy(), expected.numpy())


def test_repeat_interleave_of_counts_alone_errors() -> None:
    with pytest.raises(ValueError, match="without repeats, input must be a 1-D tensor of counts"):
        cr.repeat_interleave(cr.tensor([[1, 2]]))
    with pytest.raises(ValueError, match="repeats must be an int or an integer tensor"):
        cr.repeat_interleave(cr.tensor([1.0, 2.0]))
    with pytest.raises(ValueError, match="output_size 2 differs from the 3 values"):
        cr.repeat_interleave(cr.tensor([1, 2]), output_size=2)


def test_addmm_with_beta_0_ignores_nan_in_input() -> None:
    """As PyTorch: input is not read, so its NaN stays out of the sum; its gradient is 0."""
    x = cr.full((2, 2), float("nan"), requires_grad=True)
    out = cr.addmm(x, cr.ones(2, 3), cr.ones(3, 2), beta=0)
    np.testing.assert_array_equal(out.numpy(), np.full((2, 2), 3.0))
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((2, 2)))


def test_catalog_is_not_empty() -> None:
    assert len(ROWS) > 200
    assert len({r.name for r in ROWS}) == len(ROWS), "row names must be unique"


# -- the checks ----------------------------------------------------------------------------


def _sample(rng: np.random.Generator, shape: tuple, domain: str) -> np.ndarray:
    if domain == "real":
        return rng.standard_normal(shape)
    if domain == "pos":
        return rng.uniform(0.5, 2.0, shape)
    if domain == "away":  # |x| in [0.2, 2]: away from the kinks and poles at 0
        return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.2, 2.0, shape)
    raise ValueError(domain)


def _arrays(row: Row, seed: int = 0) -> list[Any]:
    rng = np.random.default_rng(seed)
    doms = (row.domain,) * len(row.shapes) if isinstance(row.domain, str) else row.domain
    return [s if s is NUM else _sample(rng, s, d) for s, d in zip(row.shapes, doms, strict=True)]


def _inputs(row: Row, dtype: Any) -> tuple[list[Any], list[Any]]:
    ours, theirs = [], []
    for a in _arrays(row):
        if a is NUM:
            ours.append(a)
            theirs.append(a)
        else:
            arr = np.asarray(a, dtype=dtype)
            ours.append(cr.tensor(arr, requires_grad=row.grad))
            theirs.append(torch.tensor(arr, requires_grad=row.grad))
    return ours, theirs


def _outs(out: Any) -> list[Any]:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _run(row: Row, dtype: Any) -> tuple[list[Any], list[Any], list[Any], list[Any]]:
    ours, theirs = _inputs(row, dtype)
    out_ours = _outs(row.fn(cr, *ours))
    out_theirs = _outs((row.torch_fn or row.fn)(torch, *theirs))
    return ours, theirs, out_ours, out_theirs


def _tol(row: Row, dtype: Any) -> dict[str, float]:
    if dtype == np.float64:
        return {"rtol": 1e-9, "atol": 1e-11}
    return {"rtol": row.rtol32, "atol": row.atol32}


def _torch_dtype_name(t: torch.Tensor) -> str:
    return str(t.dtype).replace("torch.", "chainrule.")


def _upstream(outs: list[Any], seed: int = 1) -> tuple[list[Any], list[Any]]:
    rng = np.random.default_rng(seed)
    ours, theirs = [], []
    for o in outs:
        v = rng.standard_normal(o.shape).astype(o.dtype)
        ours.append(cr.tensor(v))
        theirs.append(torch.tensor(v))
    return ours, theirs


DTYPES = [np.float64, np.float32]


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_forward_matches_torch(row: Row, dtype: Any) -> None:
    _, _, out_ours, out_theirs = _run(row, dtype)
    assert len(out_ours) == len(out_theirs)
    for o, t in zip(out_ours, out_theirs, strict=True):
        assert isinstance(o, cr.Tensor)
        assert o.shape == tuple(t.shape)
        assert str(o.dtype) == _torch_dtype_name(t)
        np.testing.assert_allclose(o.numpy(), t.detach().numpy(), **_tol(row, dtype))


GRAD_ROWS = [r for r in ROWS if r.grad]


def _tensor_inputs(xs: list[Any]) -> list[Any]:
    return [x for x in xs if not isinstance(x, float)]


@pytest.mark.parametrize("fast", [True, False], ids=["fastpath", "plain"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("row", GRAD_ROWS, ids=[r.name for r in GRAD_ROWS])
def test_gradients_match_torch(row: Row, dtype: Any, fast: bool) -> None:
    """Both ways: with the speed tricks (rules on arrays, buffers reused) and without."""
    before = cr.autograd.fastpath.enabled()
    cr.autograd.fastpath.set_enabled(fast)
    try:
        _check_gradients(row, dtype)
    finally:
        cr.autograd.fastpath.set_enabled(before)


def _check_gradients(row: Row, dtype: Any) -> None:
    ours, theirs, out_ours, out_theirs = _run(row, dtype)
    ours, theirs = _tensor_inputs(ours), _tensor_inputs(theirs)
    keep = [i for i, t in enumerate(out_theirs) if t.requires_grad]
    assert keep, "a differentiable row must have an output that requires grad"
    assert [i for i, o in enumerate(out_ours) if o.requires_grad] == keep
    v_ours, v_theirs = _upstream([out_ours[i] for i in keep])
    g_ours = cr.grad([out_ours[i] for i in keep], ours, v_ours, allow_unused=True)
    g_theirs = torch.autograd.grad(
        [out_theirs[i] for i in keep], theirs, v_theirs, allow_unused=True
    )
    for x, g, t in zip(ours, g_ours, g_theirs, strict=True):
        if t is None:  # an input the outputs do not depend on (where's condition)
            assert g is None
            continue
        assert g is not None
        assert g.shape == x.shape and g.dtype == x.dtype
        np.testing.assert_allclose(g.numpy(), t.numpy(), **_tol(row, dtype))


NUMERIC_ROWS = [r for r in GRAD_ROWS if r.numeric]


@pytest.mark.parametrize("row", NUMERIC_ROWS, ids=[r.name for r in NUMERIC_ROWS])
def test_gradients_match_finite_differences(row: Row) -> None:
    ours, _ = _inputs(row, np.float64)
    assert cr.testing.gradcheck(lambda *xs: row.fn(cr, *xs), ours)


SECOND_ROWS = [r for r in ROWS if r.second]


@pytest.mark.parametrize("row", SECOND_ROWS, ids=[r.name for r in SECOND_ROWS])
def test_second_derivatives_match_torch(row: Row) -> None:
    """d/dx <w, d/dx <v, f(x)>>: the backward pass recorded with create_graph=True."""
    ours, theirs, out_ours, out_theirs = _run(row, np.float64)
    ours, theirs = _tensor_inputs(ours), _tensor_inputs(theirs)
    v_ours, v_theirs = _upstream(out_ours)
    g_ours = cr.grad(out_ours, ours, v_ours, create_graph=True, allow_unused=True)
    g_theirs = torch.autograd.grad(
        out_theirs, theirs, v_theirs, create_graph=True, allow_unused=True
    )
    assert [g is None for g in g_ours] == [t is None for t in g_theirs]
    g_ours = [g for g in g_ours if g is not None]
    g_theirs = [t for t in g_theirs if t is not None]
    live = [i for i, t in enumerate(g_theirs) if t.requires_grad]
    if not live:  # a linear op: its gradient does not depend on the inputs
        assert all(not g.requires_grad for g in g_ours)
        return
    # PyTorch may record a gradient that does not depend on the inputs (a bias's, or max
    # pooling's, through one double-backward node); ours is then a constant, whose part of
    # the second derivative is zero, so torch's must come out zero there too
    w_ours, w_theirs = _upstream([g_ours[i] for i in live], seed=2)
    mine = [k for k, i in enumerate(live) if g_ours[i].requires_grad]
    h_ours = cr.grad([g_ours[live[k]] for k in mine], ours, [w_ours[k] for k in mine],
                     allow_unused=True) if mine else [None] * len(ours)  # fmt: skip
    h_theirs = torch.autograd.grad([g_theirs[i] for i in live], theirs, w_theirs, allow_unused=True)
    for x, h, t in zip(ours, h_ours, h_theirs, strict=True):
        expected = np.zeros(x.shape) if t is None else t.numpy(force=True)
        got = np.zeros(x.shape) if h is None else h.numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-11)


def test_second_derivative_rows_exist() -> None:
    assert len(SECOND_ROWS) > 50


# -- kinks, ties and extremes: fixed inputs where conventions matter ---------------------

TIES = [[1.0, 3.0, 3.0, -1.0], [2.0, 2.0, 0.0, 2.0], [0.0, 0.0, 0.0, 0.0]]
# with REPEATS: self and both src values tie at [0][0], self and one src at [1][1], [1][3]
# and [2][2], and the two src values at [2][2] for amin without self
SCATTER_TIES = [[2.0, 1.0, 0.0, 0.0], [1.0, 3.0, 0.0, 3.0], [0.0, 0.0, 1.0, 0.0]]
SCATTER_TIES_SRC = [[2.0, 2.0], [3.0, 3.0], [1.0, 1.0]]
SPECIAL = [
    ("maximum_ties", lambda m, a, b: m.maximum(a, b), ([1.0, 2.0, 3.0, 2.0], [1.0, 0.0, 3.0, 5.0])),
    ("minimum_ties", lambda m, a, b: m.minimum(a, b), ([1.0, 2.0, 3.0, 2.0], [1.0, 0.0, 3.0, 5.0])),
    ("amax_ties_all", lambda m, x: x.amax(), (TIES,)),
    ("amax_ties_dim1", lambda m, x: x.amax(1), (TIES,)),
    ("amin_ties_dim0", lambda m, x: x.amin(0, keepdim=True), (TIES,)),
    ("max_ties_no_dim", lambda m, x: x.max(), (TIES,)),
    ("min_ties_no_dim", lambda m, x: x.min(), (TIES,)),
    ("max_ties_dim", lambda m, x: tuple(x.max(1)), (TIES,)),
    ("min_ties_dim", lambda m, x: tuple(x.min(0)), (TIES,)),
    ("cumprod_at_zeros", lambda m, x: x.cumprod(1), ([[2.0, 0.0, 3.0], [0.0, 0.0, 1.5]],)),
    *[
        (
            f"scatter_reduce_{how}_ties" + ("" if self_too else "_without_self"),
            scatter_reduce_call(how, self_too),
            (SCATTER_TIES, SCATTER_TIES_SRC),
        )
        for how in ("amax", "amin")
        for self_too in (True, False)
    ],
    ("sort_ties", lambda m, x: tuple(m.sort(x, dim=1, stable=True)), (TIES,)),
    (
        "sort_ties_descending",
        lambda m, x: tuple(x.sort(dim=0, descending=True, stable=True)),
        (TIES,),
    ),
    ("clamp_at_bounds", lambda m, x: x.clamp(-0.5, 0.5), ([-0.5, 0.5, 0.0, 1.0, -2.0],)),
    ("relu_at_0", lambda m, x: x.relu(), ([-1.0, 0.0, 2.0],)),
    ("abs_at_0", lambda m, x: x.abs(), ([-1.0, 0.0, 2.0],)),
    ("pow_zero_base_tensor_exponent", lambda m, a, b: a**b, ([0.0, 0.0, 2.0], [0.0, 2.0, 3.0])),
    ("pow_square_at_0", lambda m, x: x**2, ([0.0, 1.0],)),
    ("softmax_large", lambda m, x: x.softmax(-1), ([[1000.0, -1000.0, 0.0], [-1000.0] * 3],)),
    (
        "log_softmax_large",
        lambda m, x: x.log_softmax(-1),
        ([[1000.0, -1000.0, 0.0], [-1000.0] * 3],),
    ),
    ("logsumexp_large", lambda m, x: x.logsumexp(-1), ([[1000.0, -1000.0, 0.0], [-1000.0] * 3],)),
    ("sigmoid_large", lambda m, x: x.sigmoid(), ([1000.0, -1000.0, 0.0],)),
    ("tanh_large", lambda m, x: x.tanh(), ([1000.0, -1000.0, 0.0],)),
]


NAN = float("nan")
NANS = [[1.0, NAN, 3.0, NAN], [NAN, 2.0, 5.0, 5.0], [0.0, -1.0, 0.0, 4.0]]
NAN_PAIRS = ([NAN, 1.0, NAN, 2.0, 1.0], [1.0, NAN, NAN, 2.0, 3.0])  # and a tie, a winner
# PyTorch's conventions at NaN inputs: values and gradients both, NaN where it gives NaN.
AT_NAN = [
    ("maximum", lambda m, a, b: m.maximum(a, b), NAN_PAIRS),
    ("minimum", lambda m, a, b: m.minimum(a, b), NAN_PAIRS),
    ("max_no_dim", lambda m, x: x.max(), (NANS,)),
    ("min_no_dim", lambda m, x: x.min(), (NANS,)),
    ("amax", lambda m, x: x.amax(1), (NANS,)),
    ("amin", lambda m, x: x.amin(0), (NANS,)),
    ("max_dim", lambda m, x: tuple(x.max(0)), (NANS,)),
    ("min_dim", lambda m, x: tuple(x.min(1)), (NANS,)),
    ("sort", lambda m, x: tuple(x.sort(dim=1, stable=True)), (NANS,)),
    ("sort_descending", lambda m, x: tuple(x.sort(dim=0, descending=True, stable=True)), (NANS,)),
    ("topk", lambda m, x: tuple(x.topk(3, 1)), ([[1.0, NAN, 3.0, 2.0], [NAN, 2.0, 5.0, 4.0]],)),
    ("sign", lambda m, x: x.sign(), ([NAN, -2.0, 0.0, 3.0],)),
    ("abs", lambda m, x: x.abs(), ([NAN, -2.0, 0.0, 3.0],)),
    ("relu", lambda m, x: x.relu(), ([NAN, -2.0, 0.0, 3.0],)),
    ("clamp", lambda m, x: x.clamp(-1.0, 1.0), ([NAN, -2.0, 0.5, 3.0],)),
]
INF = float("inf")
SIGNED = [-INF, -4.0, -0.0, 0.0, 4.0, INF, NAN]  # infinities and signed zeros
# ... and at infinities, signed zeros, and variances with no degrees of freedom.
AT_NAN += [
    ("pow_sqrt", lambda m, x: x**0.5, (SIGNED,)),  # its gradient is a ** -0.5 (rsqrt)
    ("pow_rsqrt", lambda m, x: x**-0.5, (SIGNED,)),  # -inf at -0.0, NaN at -inf
    ("pow_odd", lambda m, x: x**3, (SIGNED,)),
    ("pow_reciprocal", lambda m, x: x**-1, (SIGNED,)),
    ("pow_fraction", lambda m, x: x**-1.5, (SIGNED,)),
    ("rpow_zero", lambda m, x: 0.0**x, ([-1.0, 0.0, 1.0, -INF, 2.5, NAN],)),
    ("rpow_negative_zero", lambda m, x: -(0.0**x), ([-1.0, 0.0, 1.0, -INF, 2.5, NAN],)),
    (
        "pow_zero_base",  # grad_b: 0 where b >= 0, out * log(+-0) = +-inf where b < 0
        lambda m, a, b: a**b,
        ([0.0, 0.0, 0.0, 0.0, -0.0, -0.0, 2.0, 0.0], [-1.0, 0.0, 1.0, -INF, -1.0, -2.0, NAN, NAN]),
    ),
    ("var_one", lambda m, x: x.var(), ([2.0],)),  # NaN: every element is the mean
    ("var_no_dof", lambda m, x: x.var(correction=4), ([[1.0, 2.0], [3.0, 4.0]],)),
    ("var_dim_no_dof", lambda m, x: x.var(1, correction=3), ([[1.0, 2.0, 4.0], [0.0, 1.0, 1.0]],)),
    ("var_dim_negative_dof", lambda m, x: x.var(1, correction=4), ([[1.0, 2.0, 4.0]],)),
    ("std_dim_negative_dof", lambda m, x: x.std(1, correction=4), ([[1.0, 2.0, 4.0]],)),
]


@pytest.mark.filterwarnings("ignore::UserWarning")  # var with no degrees of freedom: both warn
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's, at 0 ** -1 and sqrt(-4)
@pytest.mark.parametrize(("fn", "data"), [s[1:] for s in AT_NAN], ids=[s[0] for s in AT_NAN])
def test_special_inputs_match_torch(fn: Any, data: Any) -> None:
    """Values equal to the bit (signed zeros too); gradients equal, NaN and inf alike, on
    the array path and the Tensor path."""
    ours = [cr.tensor(np.array(d), requires_grad=True) for d in data]
    theirs = [torch.tensor(np.array(d), requires_grad=True) for d in data]
    out_ours, out_theirs = _outs(fn(cr, *ours)), _outs(fn(torch, *theirs))
    for o, t in zip(out_ours, out_theirs, strict=True):
        np.testing.assert_array_equal(o.numpy(), t.detach().numpy())
        signed = ~np.isnan(o.numpy())  # a NaN's sign means nothing
        np.testing.assert_array_equal(
            np.signbit(o.numpy())[signed], np.signbit(t.detach().numpy())[signed]
        )
    keep = [i for i, t in enumerate(out_theirs) if t.requires_grad]
    v_ours, v_theirs = _upstream([out_ours[i] for i in keep])
    for create_graph in (False, True):  # the array path and the Tensor path
        g_ours = cr.grad([out_ours[i] for i in keep], ours, v_ours, retain_graph=True,
                         create_graph=create_graph)  # fmt: skip
        g_theirs = torch.autograd.grad(
            [out_theirs[i] for i in keep], theirs, v_theirs, retain_graph=True
        )
        for g, t in zip(g_ours, g_theirs, strict=True):
            np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # 0 ** -0.5 in a second derivative
@pytest.mark.parametrize("p", [2, 1, 3, 1.5, 0.5, math.inf, -math.inf, 0])
@pytest.mark.parametrize(("dim", "keepdim"), [(None, False), (1, False), (0, True)])
def test_norm_orders_match_torch(p: float, dim: Any, keepdim: bool) -> None:
    """Zeros (the norm's kink and, for p < 1, |x|^p's infinite slope), a zero row and tied
    largest |x|, against torch.norm: values, gradients, and second derivatives where
    torch's are defined."""
    x = np.array([[3.0, -4.0, 0.0], [2.0, -2.0, 0.0], [0.0, 0.0, 0.0], [0.5, 1.0, -2.0]])
    ours, theirs = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, expected = ours.norm(p, dim, keepdim), torch.norm(theirs, p, dim, keepdim)
    np.testing.assert_allclose(out.numpy(), expected.detach().numpy(), rtol=1e-12)
    if p == 0:  # a count: a node whose gradient is none, as PyTorch's (x.grad stays None)
        assert out.requires_grad and expected.requires_grad
        out.sum().backward()
        expected.sum().backward()
        assert ours.grad is None and theirs.grad is None
        return
    v = np.random.default_rng(3).standard_normal(out.shape)
    (g,) = cr.grad(out, ours, cr.tensor(v), create_graph=True)
    (t,) = torch.autograd.grad(expected, theirs, torch.tensor(v), create_graph=True)
    np.testing.assert_allclose(g.numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-12)
    if p in (1, math.inf, -math.inf):  # piecewise linear: no second derivative to compare
        return
    w = np.random.default_rng(4).standard_normal(x.shape)
    (h,) = cr.grad(g, ours, cr.tensor(w))
    (th,) = torch.autograd.grad(t, theirs, torch.tensor(w))
    # Where it is undefined (a zero row; x = 0 for p < 2) torch's second derivative is NaN;
    # ours is NaN there too, or 0 where the first derivative was kept at 0.
    defined = np.isfinite(th.numpy())
    assert defined.sum() >= 6
    np.testing.assert_allclose(h.numpy()[defined], th.numpy()[defined], rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize(("fn", "data"), [s[1:] for s in SPECIAL], ids=[s[0] for s in SPECIAL])
def test_kinks_ties_and_extremes_match_torch(fn: Any, data: Any, dtype: Any) -> None:
    ours = [cr.tensor(np.array(d, dtype=dtype), requires_grad=True) for d in data]
    theirs = [torch.tensor(np.array(d, dtype=dtype), requires_grad=True) for d in data]
    out_ours, out_theirs = _outs(fn(cr, *ours)), _outs(fn(torch, *theirs))
    for o, t in zip(out_ours, out_theirs, strict=True):
        assert np.all(np.isfinite(o.numpy()))
        np.testing.assert_array_equal(o.numpy(), t.detach().numpy())
    keep = [i for i, t in enumerate(out_theirs) if t.requires_grad]
    v_ours, v_theirs = _upstream([out_ours[i] for i in keep])
    g_ours = cr.grad([out_ours[i] for i in keep], ours, v_ours)
    g_theirs = torch.autograd.grad([out_theirs[i] for i in keep], theirs, v_theirs)
    for g, t in zip(g_ours, g_theirs, strict=True):
        assert np.all(np.isfinite(g.numpy()))
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize(
    ("op", "call"),
    [
        ("var", lambda x: x.var(correction=3)),
        ("std", lambda x: x.std(0, correction=4)),
        ("var", lambda x: cr.var(x, correction=3)),
        ("std", lambda x: cr.std(x, correction=3)),
    ],
)
def test_var_without_degrees_of_freedom_warns_at_the_callers_line(op: str, call: Any) -> None:
    """As PyTorch: a warning, naming the op the user called, the count reduced and the
    correction; it points at the user's line, not at chainrule's."""
    with pytest.warns(UserWarning, match=rf"^{op}: degrees of freedom is <= 0 \(3 elements") as w:
        out = call(cr.tensor([1.0, 2.0, 4.0], requires_grad=True))
    assert w[0].filename == __file__
    assert np.isinf(out.item())


def test_class_rows_take_the_column_major_path() -> None:
    """The (64, 10) rows above reach _column_major's copy (a speed trick: the switch on);
    fewer rows or more classes do not."""
    from chainrule.ops.reduce import _column_major

    a = np.zeros((64, 10), np.float32)
    with fast_path_on():
        assert _column_major(a, 1).flags.f_contiguous
        assert not _column_major(a, 1).flags.c_contiguous
        for other, dims in ((np.zeros((16, 10)), 1), (np.zeros((64, 32)), (1,)), (a, 0),
                            (a, None)):  # fmt: skip
            assert _column_major(other, dims) is other


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("rows", [8, 64, 1024])
def test_cross_entropy_over_many_rows_matches_torch(rows: int, reduction: str) -> None:
    """log_softmax then nll over rows of 10 classes (column-major in between from 32 rows
    up): loss and gradient against torch, in float32."""
    rng = np.random.default_rng(rows)
    x = rng.standard_normal((rows, 10)).astype(np.float32) * 3
    t = rng.integers(0, 10, rows)
    ours, theirs = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out = cr.nn.functional.cross_entropy(ours, cr.tensor(t), reduction=reduction)
    expected = torch.nn.functional.cross_entropy(theirs, torch.tensor(t), reduction=reduction)
    np.testing.assert_allclose(out.numpy(), expected.detach().numpy(), rtol=1e-5, atol=1e-6)
    v = rng.standard_normal(out.shape).astype(np.float32)
    (g,) = cr.grad(out, ours, cr.tensor(v))
    (tg,) = torch.autograd.grad(expected, theirs, torch.tensor(v))
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-5, atol=1e-6)
