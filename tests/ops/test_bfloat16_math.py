"""A bfloat16 tensor's floating ops (exp, sin, rsqrt, sigmoid, ...) give bfloat16, as
PyTorch's, with its values: computed in float32 and rounded once, so within one bfloat16
ulp of torch's; and their gradients flow back through bfloat16 as torch's do."""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import fastpath
from tests.ops.test_floating_methods import alone_in_torch

# values inside every op's domain below (acosh's: shifted by 1.5)
X = np.random.default_rng(0).uniform(0.05, 0.95, 64).astype(np.float32)


def _bits(t: Any) -> np.ndarray:
    """A bfloat16 tensor's values as int16 bit patterns: neighbours differ by 1."""
    return np.asarray(t.detach().float().numpy(), np.float32).view(np.int32) >> 16


def _keeps_bfloat16_in_torch() -> list[str]:
    """The methods that, with no other argument, make a floating tensor of an integer one and
    keep a bfloat16 one bfloat16 in torch."""
    ints, halves = alone_in_torch(torch.tensor([1, 2])), alone_in_torch(torch.tensor(X).bfloat16())
    return [
        n
        for n, out in halves.items()
        if isinstance(ints.get(n), torch.Tensor)
        and ints[n].is_floating_point()
        and isinstance(out, torch.Tensor)
        and out.dtype == torch.bfloat16
    ]


METHODS = _keeps_bfloat16_in_torch()
# where chainrule still differs, with the reason: an xfail that must fail, so a fixed one is
# taken off the list
KNOWN: dict[str, str] = {}
CASES = [
    pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=KNOWN[n])) if n in KNOWN else n
    for n in METHODS
]


def test_the_derived_list_holds_the_elementwise_math() -> None:
    assert {"exp", "log", "rsqrt", "sigmoid", "erfinv", "lgamma", "i0", "logit"} <= set(METHODS)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # acosh below 1: NaN, as torch's
@pytest.mark.parametrize("name", CASES)
def test_floating_methods_keep_bfloat16_as_torch(name: str) -> None:
    """sin of a bfloat16 tensor gave float32: floating() took bfloat16 (ml_dtypes' kind 'V')
    for an integer dtype."""
    theirs = getattr(torch.tensor(X).bfloat16(), name)()
    ours = getattr(cr.tensor(X).bfloat16(), name)()
    assert ours.dtype == cr.bfloat16, f"Tensor.{name} of bfloat16 gave {ours.dtype}"
    both_nan = np.isnan(ours.float().numpy()) & np.isnan(theirs.float().numpy())
    apart = np.abs(_bits(ours) - _bits(theirs))
    assert (apart[~both_nan] <= 1).all(), f"Tensor.{name}: {apart.max()} bfloat16 ulps off"


OPS = (
    "sin cos tan exp exp2 expm1 log log2 log10 log1p sqrt rsqrt sigmoid tanh sinh cosh asin "
    "acos atan asinh acosh atanh erf erfc erfinv lgamma digamma sinc reciprocal i0 deg2rad "
    "rad2deg logit"
).split()


@pytest.mark.parametrize("name", OPS)
def test_gradients_flow_back_through_bfloat16_as_torch(name: str) -> None:
    """A float32 leaf cast to bfloat16, the op, a random bfloat16 upstream gradient: the
    bfloat16 tensor's gradient is bfloat16 and torch's within bfloat16's rounding (each side
    rounds every step of the formula), the leaf's float32."""
    x = X + 1.5 if name == "acosh" else X
    upstream = np.random.default_rng(1).standard_normal(x.shape).astype(np.float32)
    grads = []
    for lib in (torch, cr):
        leaf = lib.tensor(x, requires_grad=True)
        mid = leaf.to(lib.bfloat16)
        mid.retain_grad()
        out = getattr(lib, name)(mid)
        out.backward(lib.tensor(upstream).to(lib.bfloat16))
        assert str(mid.grad.dtype).endswith("bfloat16") and leaf.grad.dtype == lib.float32
        grads.append(leaf.grad.numpy())
    theirs, ours = grads
    np.testing.assert_allclose(ours, theirs, rtol=2**-6, atol=2**-6 * np.abs(theirs).max())


# functions made of those ops, each once a float32 result or an error in bfloat16: a float
# bound to clamp made it float32 (and so normalize), as did NumPy's clip of two bounds; a /
# a.sum(-1, keepdim=True)'s gradient met einsum, which has no bfloat16 loop; probabilities in
# bfloat16 were taken for class indices
FUNCTIONS = {
    "clamp_float_bound": lambda lib, a: a.clamp(0.25, 0.75),
    "normalize": lambda lib, a: lib.nn.functional.normalize(a),
    "divide_by_row_sums": lambda lib, a: a / a.sum(-1, keepdim=True),
    "rsqrt": lambda lib, a: a.rsqrt(),
    "log_softmax": lambda lib, a: a.log_softmax(-1),
    "cross_entropy_probabilities": lambda lib, a: lib.nn.functional.cross_entropy(
        a, (a * 10).flip(-1).softmax(-1).detach()
    ),
}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_functions_of_bfloat16_keep_it_as_torch(name: str) -> None:
    x = X.reshape(8, 8)
    upstream = np.random.default_rng(2).standard_normal(8).astype(np.float32)
    results = []
    for lib in (torch, cr):
        leaf = lib.tensor(x, requires_grad=True)
        out = FUNCTIONS[name](lib, leaf.to(lib.bfloat16))
        assert str(out.dtype).endswith("bfloat16"), f"{name} gave {out.dtype}"
        g = upstream[: out.shape[-1]] if out.ndim else upstream[0]
        out.backward(lib.ones(out.shape) * lib.tensor(g).to(lib.bfloat16))
        results.append((out.detach().float().numpy(), leaf.grad.numpy()))
    (theirs, their_grad), (ours, our_grad) = results
    # each step rounds to bfloat16 on both sides, a sum's terms in its own order: two ulps
    np.testing.assert_allclose(ours, theirs, rtol=2**-6, atol=1e-6)
    tol = 2**-6 * np.abs(their_grad).max()
    np.testing.assert_allclose(our_grad, their_grad, rtol=2**-6, atol=tol)


# three tensors of one floating dtype take PyTorch's one node; bfloat16 took the composition
FUSED = {
    "addcmul": lambda lib, a: lib.addcmul(a, a.flip(0), a * 2, value=0.5),
    "addcdiv": lambda lib, a: lib.addcdiv(a, a.flip(0), a * 2, value=0.5),
    "lerp_number": lambda lib, a: lib.lerp(a, a.flip(0), 0.3),
    "lerp_tensor": lambda lib, a: lib.lerp(a, a.flip(0), a * 0.5),
}


@pytest.mark.parametrize("name", FUSED)
def test_fused_ops_of_bfloat16_are_torchs_one_node(name: str) -> None:
    outs = []
    for lib in (torch, cr):
        leaf = lib.tensor(X, requires_grad=True)
        outs.append(FUSED[name](lib, leaf.to(lib.bfloat16)))
    theirs, ours = outs
    assert ours.dtype == cr.bfloat16 and ours.grad_fn.name() == theirs.grad_fn.name()
    np.testing.assert_allclose(
        ours.detach().float().numpy(), theirs.detach().float().numpy(), rtol=2**-6
    )


def _zeros_and_nans(lib: Any) -> tuple[list[bool], list[int]]:
    """remainder's zeros' signs and searchsorted's places for NaNs, in bfloat16."""
    a = lib.tensor([-0.0, 3.0, -3.0, 1.0]).to(lib.bfloat16)
    ordered = lib.tensor([1.0, float("nan")]).to(lib.bfloat16)
    values = lib.tensor([float("nan"), 0.5]).to(lib.bfloat16)
    return lib.remainder(a, 1.5).signbit().tolist(), lib.searchsorted(ordered, values).tolist()


def test_remainder_and_searchsorted_of_bfloat16_read_its_zeros_and_nans_as_torch() -> None:
    """A zero remainder took b's sign, not a's, and a NaN was searched as a number: both
    asked for NumPy's kind "f"."""
    assert _zeros_and_nans(cr) == _zeros_and_nans(torch)


PRODUCTS = {
    "matmul": lambda lib, a, b: a @ b,
    "bmm": lambda lib, a, b: lib.bmm(a[None], b[None]),
    "linear": lambda lib, a, b: lib.nn.functional.linear(a, b.mT, b[0]),
    "addmm": lambda lib, a, b: lib.addmm(b, a, b),
    "einsum": lambda lib, a, b: lib.einsum("ij,jk->ik", a, b),
    "einsum_three": lambda lib, a, b: lib.einsum("ij,jk,kl->il", a, b, b.mT),
    "bilinear": lambda lib, a, b: lib.nn.functional.bilinear(a, a, b[:, :8].reshape(1, 8, 8)),
}


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("name", PRODUCTS)
def test_products_of_bfloat16_give_bfloat16(fast: bool, name: str) -> None:
    # NumPy's matmul of bfloat16 gives float32 and its einsum has no loop: the product is
    # taken in float32 and rounded once, within a bfloat16 ulp of PyTorch's
    a, b = X.reshape(8, 8), X[::-1].reshape(8, 8).copy()
    theirs = PRODUCTS[name](torch, torch.tensor(a).bfloat16(), torch.tensor(b).bfloat16())
    with contextlib.nullcontext() if fast else fastpath.disabled():
        ours = PRODUCTS[name](cr, cr.tensor(a).bfloat16(), cr.tensor(b).bfloat16())
    assert ours.dtype == cr.bfloat16
    np.testing.assert_allclose(ours.float().numpy(), theirs.float().numpy(), rtol=2**-7, atol=2**-7)
