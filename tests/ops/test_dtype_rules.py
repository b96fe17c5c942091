"""dtypes as PyTorch decides them: integer and bool inputs to floating ops compute in
float32, cat promotes as torch.cat, a layer refuses an input of another dtype, and arrays
chainrule cannot hold are refused when the tensor is made."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr

FLOATING = ["sigmoid", "exp", "log", "tanh", "sqrt", "sin", "cos", "erf"]


@pytest.mark.parametrize("op", FLOATING)
@pytest.mark.parametrize("values", [[1, 2, 3], [True, False, True]], ids=["int64", "bool"])
def test_floating_ops_of_integers_compute_in_float32_as_torch(op, values) -> None:
    ours = getattr(cr.tensor(values), op)()
    theirs = getattr(torch.tensor(values), op)()
    assert ours.dtype == cr.float32 and str(theirs.dtype) == "torch.float32"
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_reductions_of_integers_compute_in_float32() -> None:
    i = cr.tensor([[1, 2, 3], [4, 5, 7]])
    t = torch.tensor([[1, 2, 3], [4, 5, 7]])
    np.testing.assert_allclose(i.logsumexp(1).numpy(), t.logsumexp(1).numpy(), rtol=1e-6)
    np.testing.assert_allclose(i.softmax(1).numpy(), t.float().softmax(1).numpy(), rtol=1e-6)
    np.testing.assert_allclose(
        i.log_softmax(1).numpy(), t.float().log_softmax(1).numpy(), rtol=1e-6
    )
    np.testing.assert_allclose(i.norm().numpy(), t.float().norm().numpy(), rtol=1e-6)
    for out in (i.logsumexp(1), i.softmax(1), i.log_softmax(1), i.norm(), i / 2, 1 / i):
        assert out.dtype == cr.float32


@pytest.mark.parametrize(
    "dtypes",
    [
        ("float32", "int64"),
        ("int64", "float32"),
        ("float64", "float32"),
        ("int64", "bool"),
        ("int32", "int64"),
        ("bool", "float32", "int64"),
    ],
)
def test_cat_promotes_as_torch(dtypes) -> None:
    ours = cr.cat([cr.ones(2, dtype=getattr(cr, "bool" if d == "bool" else d)) for d in dtypes])
    theirs = torch.cat([torch.ones(2, dtype=getattr(torch, d)) for d in dtypes])
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "chainrule.")


def test_cat_of_a_float_and_an_integer_tensor_gives_float_gradients() -> None:
    x = cr.ones(2, requires_grad=True)
    y = cr.cat([x, cr.tensor([3, 4])])
    (y * cr.arange(4.0)).sum().backward()
    assert x.grad.dtype == cr.float32 and x.grad.tolist() == [0.0, 1.0]


def test_a_layer_refuses_an_input_of_another_dtype_as_torch() -> None:
    layer = cr.nn.Linear(3, 2)
    for x in (cr.tensor([[1, 2, 3]]), cr.ones(1, 3, dtype=cr.float64)):
        with pytest.raises(RuntimeError, match=r"^Linear: input and weight must have the same"):
            layer(x)
        with pytest.raises(RuntimeError):
            torch.nn.Linear(3, 2)(torch.tensor(x.numpy()))
    assert layer(cr.ones(1, 3)).dtype == cr.float32
    with pytest.raises(RuntimeError, match=r"^linear: input and weight must have the same"):
        cr.nn.functional.linear(cr.tensor([[1, 2, 3]]), layer.weight)


@pytest.mark.parametrize(
    "array",
    [np.array([1 + 2j]), np.array([object()]), np.array(["a"])],
    ids=["complex", "object", "str"],
)
def test_arrays_chainrule_cannot_hold_are_refused_when_made(array) -> None:
    with pytest.raises(TypeError, match=f"^tensor: cannot make a tensor of .*{array.dtype}"):
        cr.tensor(array)
