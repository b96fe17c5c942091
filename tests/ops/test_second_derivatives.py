"""Second derivatives against finite differences (cr.testing.gradgradcheck, float64) for every
row of the op catalog that PyTorch differentiates twice, and for every Tensor method, cr.*
function and nn.functional function shared with torch that torch differentiates twice on one
floating tensor: a backward rule computed on arrays, or with a value taken as a constant,
where it must be Tensor ops, fails here with its row.

The lists come from the catalog and from torch itself, so a new row or method is checked
without being named; the rows PyTorch cannot differentiate twice are skipped, each with the
reason, and a test keeps that list true."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.ops import test_ops as catalog

# The catalog's rows whose backward PyTorch cannot differentiate (torch's own refusal).
NOT_TWICE = {
    "scatter_reduce_prod_zeros": "PyTorch refuses: double backward is unsupported for src "
    "when more than one zero of src is scattered to the same place",
    "scatter_reduce_prod_zeros_without_self": "PyTorch refuses: double backward is "
    "unsupported for src when more than one zero of src is scattered to the same place",
    "scaled_dot_product_attention_causal": "PyTorch's CPU flash attention has no derivative "
    "of its backward",
    "ctc_loss": "PyTorch has no derivative of CTC's backward (its gradient is exp(lp) - "
    "posterior, the derivative only through a log_softmax)",
}

ROWS = [r for r in catalog.GRAD_ROWS if r.numeric]  # the others' gradient is by design not
# the derivative (embedding's scale_grad_by_freq), so finite differences cannot judge it


def _params() -> list[Any]:
    return [
        pytest.param(r, id=r.name, marks=pytest.mark.skip(reason=NOT_TWICE[r.name]))
        if r.name in NOT_TWICE
        else pytest.param(r, id=r.name)
        for r in ROWS
    ]


def test_the_sweep_covers_the_catalog() -> None:
    assert len(ROWS) > 300
    assert set(NOT_TWICE) <= {r.name for r in ROWS}, "a skipped row is gone from the catalog"


@pytest.mark.parametrize("row", _params())
def test_second_derivatives_match_finite_differences(row: catalog.Row) -> None:
    ours, _ = catalog._inputs(row, np.float64)
    assert cr.testing.gradgradcheck(lambda *xs: row.fn(cr, *xs), ours)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", sorted(NOT_TWICE))
def test_pytorch_refuses_the_skipped_rows(name: str) -> None:
    row = next(r for r in ROWS if r.name == name)
    _, theirs = catalog._inputs(row, np.float64)
    fn = row.torch_fn or row.fn
    with pytest.raises(RuntimeError, match="(?i)double backward is unsupported|not implemented"):
        torch.autograd.gradgradcheck(lambda *xs: fn(torch, *xs), theirs)


# -- every method torch differentiates twice on one floating tensor ------------------------

VALUES = np.random.default_rng(0).uniform(0.2, 0.8, (2, 3))  # in every method's domain


def _method(name: str) -> Any:
    return lambda t: getattr(t, name)()


def _function(module: Any, name: str) -> Any:
    return lambda t: getattr(module, name)(t)


# Where the one-tensor calls are looked for: (label, ours, torch's, how a name is called)
PLACES = [
    ("Tensor", cr.Tensor, torch.Tensor, lambda m, n: _method(n)),
    ("cr", cr, torch, _function),
    ("F", cr.nn.functional, torch.nn.functional, _function),
]


# Functions that set a process-wide state (set_printoptions takes a tensor for its precision,
# and torch's printing breaks): never called here.
STATEFUL = ("set_", "manual_seed", "seed", "use_", "save", "load")


def _twice_in_torch() -> list[tuple[str, str]]:
    """The callables of ours that torch has too (Tensor methods, cr.* and nn.functional
    functions) that, called on one float64 tensor in (0.2, 0.8) alone, give the same floating
    tensor each time, which torch can differentiate twice."""
    found = []
    for label, ours, theirs, call in PLACES:
        for name in dir(ours):
            if name.startswith("_") or name.endswith("_") or not hasattr(theirs, name):
                continue
            if name.startswith(STATEFUL):  # given a tensor, they would change torch's state
                continue
            if not callable(getattr(ours, name)) or isinstance(getattr(ours, name), type):
                continue
            x = torch.tensor(VALUES, requires_grad=True)
            f = call(theirs, name)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    out = f(x)
                    if not (isinstance(out, torch.Tensor) and out.requires_grad):
                        continue
                    if out.layout != torch.strided or out.dtype != torch.float64:
                        continue  # sparse forms, casts to another dtype
                    if not _same_under_two_seeds(f, x):
                        continue  # a random draw (dropout), which no finite difference judges
                    torch.autograd.gradgradcheck(f, (x,))
            except Exception:  # needs arguments, or torch cannot differentiate it twice
                continue
            found.append((label, name))
    return found


def _same_under_two_seeds(f: Any, x: Any) -> bool:
    """Whether ``f(x)`` draws nothing at random, asked under two fixed seeds: two draws
    alike by chance would make the list differ between runs (and pytest-xdist's workers,
    which must collect the same tests)."""
    with torch.random.fork_rng():
        outs = []
        for seed in (0, 1):
            torch.default_generator.manual_seed(seed)
            outs.append(f(x))
    return torch.equal(*outs)


CALLS = _twice_in_torch()


def test_the_derived_calls_hold_the_elementwise_math() -> None:
    names = {f"{label}.{name}" for label, name in CALLS}
    expected = {"Tensor.exp", "Tensor.rsqrt", "Tensor.prod", "Tensor.norm", "cr.sigmoid",
                "F.softplus", "F.silu", "F.mish", "F.elu", "F.log_softmax"}  # fmt: skip
    assert expected <= names


@pytest.mark.filterwarnings("ignore::UserWarning")  # softmax's implicit dim, as torch's
@pytest.mark.parametrize(("label", "name"), CALLS, ids=[f"{a}.{b}" for a, b in CALLS])
def test_one_tensor_calls_second_derivatives_match_finite_differences(
    label: str, name: str
) -> None:
    _, ours, _, call = next(p for p in PLACES if p[0] == label)
    x = cr.tensor(VALUES, requires_grad=True)
    assert cr.testing.gradgradcheck(call(ours, name), (x,))
