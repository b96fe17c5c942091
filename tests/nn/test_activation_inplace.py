"""The activations' ``inplace=True`` against torch: the input written and returned (the same
object, its version bumped), taking the result's place in the graph, so gradients through
it are torch's; the modules' ``inplace`` flag the same; integer inputs where torch takes them."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.tolerances import LAYER, tol

# name -> (keyword arguments, the module and its arguments)
ACTIVATIONS: dict[str, tuple[dict[str, Any], str, tuple]] = {
    "relu": ({}, "ReLU", ()),
    "relu6": ({}, "ReLU6", ()),
    "leaky_relu": ({"negative_slope": 0.2}, "LeakyReLU", (0.2,)),
    "elu": ({"alpha": 0.7}, "ELU", (0.7,)),
    "celu": ({"alpha": 1.5}, "CELU", (1.5,)),
    "selu": ({}, "SELU", ()),
    "silu": ({}, "SiLU", ()),
    "mish": ({}, "Mish", ()),
    "hardtanh": ({"min_val": -0.5, "max_val": 2.0}, "Hardtanh", (-0.5, 2.0)),
    "threshold": ({"threshold": 0.1, "value": 2.0}, "Threshold", (0.1, 2.0)),
}


def _x() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((3, 4)) * 3


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_inplace_writes_the_input_and_differentiates_as_torch(name: str) -> None:
    kwargs = ACTIVATIONS[name][0]
    x0, g = _x(), np.random.default_rng(1).standard_normal((3, 4))
    tx, cx = torch.tensor(x0, requires_grad=True), cr.tensor(x0, requires_grad=True)
    ty, cy = tx * 2, cx * 2  # not a leaf: a leaf that requires grad is refused
    before = cy._version
    tz = getattr(torch.nn.functional, name)(ty, inplace=True, **kwargs)
    cz = getattr(cr.nn.functional, name)(cy, inplace=True, **kwargs)
    assert cz is cy and cy._version == before + 1
    np.testing.assert_allclose(cy.detach().numpy(), ty.detach().numpy(), **tol("float64", LAYER))
    # used again after the write: the gradient reaches x through the op's node
    (tgrad,) = torch.autograd.grad(tz * tz, tx, torch.tensor(g))
    (cgrad,) = cr.grad(cz * cz, cx, cr.tensor(g))
    np.testing.assert_allclose(cgrad.numpy(), tgrad.numpy(), **tol("float64", LAYER))


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_the_module_writes_in_place_when_asked(name: str) -> None:
    _, module, args = ACTIVATIONS[name]
    x0 = _x()
    tx, cx = torch.tensor(x0), cr.tensor(x0)
    out = getattr(cr.nn, module)(*args, inplace=True)(cx)
    getattr(torch.nn, module)(*args, inplace=True)(tx)
    assert out is cx
    np.testing.assert_allclose(cx.numpy(), tx.numpy(), **tol("float64", LAYER))
    kept = cr.tensor(x0)
    getattr(cr.nn, module)(*args)(kept)  # by default the input stays as it was
    np.testing.assert_array_equal(kept.numpy(), x0)


@pytest.mark.parametrize("name", ["relu", "relu6", "threshold", "hardtanh"])
@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_integer_inputs_in_place_as_torch(name: str, dtype: str) -> None:
    kwargs = {"threshold": 0, "value": 5} if name == "threshold" else {}
    x0 = np.array([[-3, -1, 0], [1, 4, 9]])
    tx, cx = torch.tensor(x0).to(getattr(torch, dtype)), cr.tensor(x0).to(getattr(cr, dtype))
    out = getattr(cr.nn.functional, name)(cx, inplace=True, **kwargs)
    getattr(torch.nn.functional, name)(tx, inplace=True, **kwargs)
    assert out is cx and str(cx.dtype) == f"chainrule.{dtype}"
    np.testing.assert_array_equal(cx.numpy(), tx.numpy())


def test_a_leaf_that_requires_grad_is_refused_in_place() -> None:
    x = cr.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="elu_: a leaf tensor that requires grad"):
        cr.nn.functional.elu(x, inplace=True)


@pytest.mark.parametrize("name", ["elu", "silu", "hardtanh"])
def test_inplace_through_a_view_reaches_the_base_as_torch(name: str) -> None:
    x0, g = _x(), np.random.default_rng(2).standard_normal((3, 4))
    tx, cx = torch.tensor(x0, requires_grad=True), cr.tensor(x0, requires_grad=True)
    ty, cy = tx * 1, cx * 1
    getattr(torch.nn.functional, name)(ty[1], inplace=True)
    getattr(cr.nn.functional, name)(cy[1], inplace=True)  # row 1 written in the base
    np.testing.assert_allclose(cy.detach().numpy(), ty.detach().numpy(), **tol("float64", LAYER))
    (ty * ty).backward(torch.tensor(g))
    (cy * cy).backward(cr.tensor(g))
    np.testing.assert_allclose(cx.grad.numpy(), tx.grad.numpy(), **tol("float64", LAYER))
