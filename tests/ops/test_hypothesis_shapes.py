"""Random broadcastable shapes for binary ops, random dims for reductions, against PyTorch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, mutually_broadcastable_shapes

import chainrule as cr
from tests.twins import copy_into

BINARY = {
    "add": lambda m, a, b: a + b,
    "sub": lambda m, a, b: a - b,
    "mul": lambda m, a, b: a * b,
    "div": lambda m, a, b: a / b,
    "pow": lambda m, a, b: a**b,
    "maximum": lambda m, a, b: m.maximum(a, b),
    "minimum": lambda m, a, b: m.minimum(a, b),
    "where": lambda m, a, b: m.where(a > b, a * 2.0, b),
    "matmul_rows": lambda m, a, b: (a * b).sum(-1),
}

REDUCE = {
    "sum": lambda x, d, k: x.sum(d, keepdim=k),
    "mean": lambda x, d, k: x.mean(d, keepdim=k),
    "amax": lambda x, d, k: x.amax(d, keepdim=k),
    "amin": lambda x, d, k: x.amin(d, keepdim=k),
    "logsumexp": lambda x, d, k: x.logsumexp(d, keepdim=k),
    "var": lambda x, d, k: x.var(d, keepdim=k),
    "std_corr0": lambda x, d, k: x.std(d, keepdim=k, correction=0),
}


def _check(fn: Any, arrays: list[np.ndarray], seed: int) -> None:
    """Forward and gradients (random upstream gradient) against PyTorch in float64."""
    ours = [cr.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, tout = fn(cr, *ours), fn(torch, *theirs)
    assert out.shape == tuple(tout.shape) and out.dtype == cr.float64
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), rtol=1e-10, atol=1e-12)
    v = np.random.default_rng(seed).standard_normal(out.shape)
    grads = cr.grad(out, ours, cr.tensor(v))
    tgrads = torch.autograd.grad(tout, theirs, torch.tensor(v))
    for x, g, t in zip(ours, grads, tgrads, strict=True):
        assert g.shape == x.shape and g.dtype == x.dtype
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-9, atol=1e-11)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=4),
    op=st.sampled_from(sorted(BINARY)),
    seed=st.integers(0, 2**16),
)
def test_binary_ops_on_broadcast_shapes(shapes: Any, op: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    a_shape, b_shape = shapes.input_shapes
    if op == "matmul_rows" and len(shapes.result_shape) == 0:
        a_shape, b_shape = a_shape + (3,), b_shape + (3,)
    a = rng.uniform(0.5, 2.0, a_shape) if op == "pow" else rng.standard_normal(a_shape)
    b = rng.standard_normal(b_shape)
    if op == "div":
        b = np.where(np.abs(b) < 0.2, 0.2, b)
    _check(lambda m, x, y: BINARY[op](m, x, y), [a, b], seed)


@st.composite
def _reduction_case(draw: Any) -> tuple[tuple[int, ...], Any, bool]:
    shape = draw(array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4))
    nd = len(shape)
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none":
        dim: Any = None
    elif kind == "int":
        dim = draw(st.integers(-nd, nd - 1))
    else:
        picked = draw(st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd, unique=True))
        dim = tuple(d - nd if draw(st.booleans()) else d for d in picked)  # some negative
    return shape, dim, draw(st.booleans())


@settings(max_examples=60, deadline=None, derandomize=True)
@given(case=_reduction_case(), op=st.sampled_from(sorted(REDUCE)), seed=st.integers(0, 2**16))
def test_reductions_on_random_dims(case: Any, op: str, seed: int) -> None:
    shape, dim, keepdim = case
    x = np.random.default_rng(seed).standard_normal(shape)
    dims = range(len(shape)) if dim is None else np.atleast_1d(dim)
    if op in ("var", "std_corr0") and int(np.prod([shape[d] for d in dims])) < 2:
        return  # a variance of one entry is NaN (or a division by zero) in both libraries
    full = tuple(range(len(shape)))

    def fn(m: Any, t: Any) -> Any:
        # PyTorch's logsumexp takes no dim=None; name every dim there.
        d = full if m is torch and dim is None and op == "logsumexp" else dim
        return REDUCE[op](t, d, keepdim)

    _check(fn, [x], seed)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    shape=array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5),
    data=st.data(),
    log=st.booleans(),
)
def test_softmax_on_random_dims(shape: tuple[int, ...], data: Any, log: bool) -> None:
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = np.random.default_rng(len(shape)).standard_normal(shape) * 5.0
    _check(lambda m, t: t.log_softmax(dim) if log else t.softmax(dim), [x], 7)


@pytest.mark.filterwarnings("ignore:Initializing zero-element tensors")  # torch's, widths 0
@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    lead=array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3),
    widths=st.lists(st.integers(0, 5), min_size=2, max_size=4),
    relus=st.lists(st.booleans(), min_size=3, max_size=3),
    bias=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_sequential_of_linears_and_relus(
    lead: tuple[int, ...], widths: list[int], relus: list[bool], bias: bool, seed: int
) -> None:
    """Random stacks of Linear layers, each followed by a ReLU or not, on inputs of any
    leading shape, empty ones included: the output and the gradients of the input and every
    parameter match PyTorch's."""

    def layers(nn: Any) -> list[Any]:
        out: list[Any] = []
        for n_in, n_out, relu in zip(widths, widths[1:], relus, strict=False):
            out += [nn.Linear(n_in, n_out, bias=bias)] + ([nn.ReLU()] if relu else [])
        return out

    theirs = torch.nn.Sequential(*layers(torch.nn)).double()
    ours = cr.nn.Sequential(*layers(cr.nn)).double()
    copy_into(ours, theirs)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((*lead, widths[0]))
    xs = [cr.tensor(x, requires_grad=True), *ours.parameters()]
    ts = [torch.tensor(x, requires_grad=True), *theirs.parameters()]
    out, tout = ours(xs[0]), theirs(ts[0])
    assert out.shape == tuple(tout.shape) and out.dtype == cr.float64
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), rtol=1e-10, atol=1e-12)
    v = rng.standard_normal(out.shape)
    grads = cr.grad(out, xs, cr.tensor(v), allow_unused=True)
    tgrads = torch.autograd.grad(tout, ts, torch.tensor(v), allow_unused=True)
    for a, g, t in zip(xs, grads, tgrads, strict=True):
        assert g.shape == a.shape
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-9, atol=1e-11)
