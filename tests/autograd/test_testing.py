"""cr.testing: gradcheck and gradgradcheck accept right gradients and name wrong ones."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd.function import Function


def _x(*shape: int, seed: int = 0) -> cr.Tensor:
    arr = np.random.default_rng(seed).standard_normal(shape)
    return cr.tensor(arr, requires_grad=True)


class _HalfGradSquare(Function):
    """out = a * a with a wrong backward (g * a instead of 2 g a) for one entry."""

    def forward(self, a: Any) -> Any:
        return a * a

    def backward(self, grad: cr.Tensor, out: cr.Tensor) -> tuple[cr.Tensor]:
        a = self.inputs[0]
        scale = np.full(a.shape, 2.0)
        scale.flat[4] = 1.0  # the wrong entry: index (1, 1) of a (3, 3) input
        return (grad * a * scale,)


class _NanGrad(Function):
    def forward(self, a: Any) -> Any:
        return a * 1.0

    def backward(self, grad: cr.Tensor, out: cr.Tensor) -> tuple[cr.Tensor]:
        return (grad * float("nan"),)


def test_gradcheck_accepts_right_gradients() -> None:
    a, b = _x(3, 4), _x(4, seed=1)
    assert cr.testing.gradcheck(lambda x, y: (x * y).tanh().logsumexp(-1), [a, b]) is True
    assert cr.testing.gradcheck(lambda x: x.exp(), a) is True  # a single Tensor


def test_gradcheck_names_the_input_and_the_worst_entry() -> None:
    a, b = _x(2), _x(3, 3, seed=1)
    with pytest.raises(AssertionError) as info:
        cr.testing.gradcheck(lambda x, y: x.sum() * _HalfGradSquare.apply(y), [a, b])
    msg = str(info.value)
    assert msg.startswith("gradcheck: input 1 (shape (3, 3)): analytic and numeric gradients")
    assert "worst at index (1, 1): analytic " in msg and ", numeric " in msg


def test_gradcheck_reports_the_values_it_compared() -> None:
    b = cr.tensor(np.full((3, 3), 2.0), requires_grad=True)
    with pytest.raises(AssertionError, match=r"analytic -?\d+\.\d+, numeric -?\d+\.\d+"):
        cr.testing.gradcheck(lambda y: _HalfGradSquare.apply(y), [b])


def test_gradcheck_fails_on_nan_gradients() -> None:
    with pytest.raises(AssertionError, match="input 0"):
        cr.testing.gradcheck(lambda x: _NanGrad.apply(x), [_x(3)])


def test_gradcheck_skips_non_tensor_and_constant_inputs() -> None:
    a, c = _x(3), cr.tensor(np.arange(3.0))  # c does not require grad: not checked
    assert cr.testing.gradcheck(lambda x, k, y: x * k + y, [a, 2.5, c])


def test_gradcheck_several_outputs_and_integer_outputs() -> None:
    a = _x(3, 4)
    assert cr.testing.gradcheck(lambda x: tuple(x.max(1)) + (x.split(2, 1)[1],), [a])


def test_gradcheck_output_independent_of_input() -> None:
    a = _x(2)
    assert cr.testing.gradcheck(lambda x: cr.ones(3, dtype=cr.float64), [a])


def test_gradcheck_checks_broadcast_views() -> None:
    a = _x(3).expand(2, 3).detach().requires_grad_()  # read-only data
    assert cr.testing.gradcheck(lambda x: (x * x).sum(0), [a])


@pytest.mark.parametrize(
    ("inputs", "pattern"),
    [
        ([cr.ones(2)], "gradcheck: no input is a Tensor with requires_grad=True"),
        (
            [cr.ones(2, requires_grad=True)],
            "gradcheck: input 0 has dtype chainrule.float32; finite diff",
        ),
    ],
)
def test_gradcheck_bad_arguments(inputs: list[Any], pattern: str) -> None:
    with pytest.raises(ValueError, match=pattern):
        cr.testing.gradcheck(lambda x: x * 2.0, inputs)


def test_gradcheck_leaves_the_global_generator_alone() -> None:
    cr.manual_seed(7)
    expected = cr.rand(3).numpy()
    cr.manual_seed(7)
    cr.testing.gradcheck(lambda x: x.sin(), [_x(2)])
    np.testing.assert_array_equal(cr.rand(3).numpy(), expected)


def test_gradgradcheck_accepts_right_second_derivatives() -> None:
    a, b = _x(2, 3), _x(3, 2, seed=1)
    assert cr.testing.gradgradcheck(lambda x, y: (x @ y).tanh().softmax(-1), [a, b])
    assert cr.testing.gradgradcheck(lambda x: x * 3.0, [a])  # linear: zero second derivative


class _FirstOrderOnlySquare(Function):
    """out = a * a whose backward leaves the graph (uses arrays): second derivatives are lost."""

    def forward(self, a: Any) -> Any:
        return a * a

    def backward(self, grad: cr.Tensor, out: cr.Tensor) -> tuple[cr.Tensor]:
        return (grad * cr.tensor(2.0 * self.inputs[0].data),)


def test_gradgradcheck_catches_a_backward_that_is_not_differentiable() -> None:
    a = _x(3)
    assert cr.testing.gradcheck(lambda x: _FirstOrderOnlySquare.apply(x), [a])
    with pytest.raises(AssertionError, match="gradcheck: input 0"):
        cr.testing.gradgradcheck(lambda x: _FirstOrderOnlySquare.apply(x), [a])
