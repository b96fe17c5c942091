"""The short paths of small tensors: augmented assignment written as one ufunc into the
array, and sigmoid's exp with no errstate context, against PyTorch and PyTorch's refusals."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import fastpath


@pytest.fixture(params=[True, False], ids=["fast", "plain"])
def switch(request: pytest.FixtureRequest) -> Iterator[bool]:
    fastpath.set_enabled(request.param)
    yield request.param
    fastpath.set_enabled(True)


@pytest.mark.parametrize("op", ["__iadd__", "__isub__", "__imul__", "__itruediv__"])
def test_augmented_assignment_on_0d_and_elements_matches_torch(op: str, switch: bool) -> None:
    for lib in (cr, torch):
        total, part = lib.tensor(1.5), lib.tensor(0.25)
        counts = lib.ones((3, 3), dtype=lib.int32)
        assert getattr(total, op)(part) is total
        getattr(total, op)(2)
        element = counts[1, 2]
        getattr(element, op if op != "__itruediv__" else "__imul__")(3)
        counts[1, 2] = element
        if lib is cr:
            ours = (total.item(), counts.numpy().tolist(), total._version)
        else:
            theirs = (total.item(), counts.numpy().tolist(), total._version)
    assert ours == theirs


@pytest.mark.parametrize("op", ["__iadd__", "__isub__", "__imul__", "__itruediv__"])
def test_augmented_assignment_into_an_expanded_tensor_is_refused(op: str, switch: bool) -> None:
    x = cr.zeros(()).expand(3)
    with pytest.raises(RuntimeError, match=r"^\w+_: the tensor \(shape \(3,\)\) is a read-only"):
        getattr(x, op)(1.0)
    with pytest.raises(RuntimeError):  # PyTorch refuses too
        getattr(torch.zeros(()).expand(3), op)(1.0)


def test_integer_true_division_in_place_is_refused_as_torch(switch: bool) -> None:
    n = cr.ones(3, dtype=cr.int32)
    with pytest.raises(RuntimeError, match="^div_: the result's dtype float32 cannot be"):
        n /= 2
    with pytest.raises(RuntimeError, match="result type Float can't be cast"):
        t = torch.ones(3, dtype=torch.int32)
        t /= 2
    assert n.tolist() == [1, 1, 1]


QUIET = """
import numpy as np
import chainrule as cr
x = cr.tensor([-100.0, -95.0, -89.0, 0.0, 5.0, 1000.0])
print(x.sigmoid().tolist(), cr.tensor(-100.0).sigmoid().item())
np.seterr(all="raise")
print(x.sigmoid().tolist())
"""


def test_sigmoid_overflow_is_quiet_even_where_warnings_are_errors() -> None:
    """exp(-a) overflows to inf for a < -88 in float32, and the sigmoid is 0 there, as
    PyTorch's: no warning, and no error under ``-W error`` or ``np.seterr(all='raise')``."""
    run = subprocess.run(
        [sys.executable, "-W", "error::RuntimeWarning", "-c", QUIET],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0 and run.stderr == "", run.stderr
    expected = torch.tensor([-100.0, -95.0, -89.0, 0.0, 5.0, 1000.0]).sigmoid().tolist()
    lines = run.stdout.splitlines()
    assert lines == [f"{expected} 0.0", f"{expected}"]


def test_small_sigmoid_equals_torch_within_an_ulp() -> None:
    """0-d inputs, each its own call: PyTorch's values within an ulp (its exp is not
    NumPy's), and its exact zeros where exp(-a) overflows."""
    x = np.array([-120.0, -88.5, -20.0, -1e-8, 0.0, 3.0, 88.0], dtype=np.float32)
    ours = np.array([cr.tensor(v).sigmoid().item() for v in x], dtype=np.float32)
    theirs = np.array([torch.tensor(v).sigmoid().item() for v in x], dtype=np.float32)
    np.testing.assert_allclose(ours, theirs, rtol=2.5e-7, atol=0)
    assert ours[0] == 0.0 and ours[-1] == 1.0


@pytest.mark.parametrize("name", ["outer", "ger"])
def test_outer_is_a_column_times_the_vector_as_in_torch(name: str) -> None:
    """PyTorch's outer is self.reshape(n, 1) * vec2: its graph, a view and the leaf."""
    x = np.random.default_rng(3).standard_normal((2, 3))
    graphs, grads = [], []
    for lib in (cr, torch):
        a = lib.tensor(x[0], requires_grad=True)
        b = lib.tensor(x[1, :2], requires_grad=True)
        y = getattr(lib, name)(a, b)
        graphs.append([y.grad_fn.name()] + [f.name() for f, _ in y.grad_fn.next_functions])
        y.backward(lib.ones(3, 2) * 2.0)
        grads.append((a.grad.numpy().tolist(), b.grad.numpy().tolist()))
    assert (
        graphs[0]
        == graphs[1]
        == ["MulBackward0", "ViewBackward0", "torch::autograd::AccumulateGrad"]
    )
    assert grads[0] == grads[1]


POLICY = """
import chainrule as cr
x = cr.tensor([0.0, 4.0])
print(x.rsqrt().tolist(), (cr.tensor([1.0, 5.0]) % x).tolist())
"""


def test_rsqrt_and_remainder_by_zero_warn_as_division_does() -> None:
    """inf and NaN, PyTorch's values, silently; an error under ``-W error``, where finding
    the first inf or NaN is what the user asked for (as 1 / 0 and log(0) do)."""
    quiet = subprocess.run([sys.executable, "-c", POLICY], capture_output=True, text=True)
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
    assert quiet.stdout.strip() == "[inf, 0.5] [nan, 1.0]"
    strict = subprocess.run(
        [sys.executable, "-W", "error::RuntimeWarning", "-c", POLICY],
        capture_output=True,
        text=True,
    )
    assert strict.returncode != 0 and "divide by zero encountered" in strict.stderr


def test_leaky_relu_keeps_the_sign_of_a_negative_zero_as_torch() -> None:
    x = np.array([-0.0, 0.0, -1.0, 2.0, -3e-39], dtype=np.float32)
    ours = cr.nn.functional.leaky_relu(cr.tensor(x), 0.1).numpy()
    theirs = torch.nn.functional.leaky_relu(torch.tensor(x), 0.1).numpy()
    assert ours.tobytes() == theirs.tobytes()
    assert np.signbit(ours[0]) and not np.signbit(ours[1])
