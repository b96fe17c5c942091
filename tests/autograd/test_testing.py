"""cr.testing: gradcheck and gradgradcheck accept right gradients and name wrong ones, with
torch.autograd's signatures: each of torch's keywords is honoured as torch's, or refused."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.autograd.primitive import Function


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


# -- torch.autograd.gradcheck's keywords --------------------------------------------------


@pytest.mark.parametrize("name", ["gradcheck", "gradgradcheck"])
def test_the_signatures_are_torchs(name: str) -> None:
    ours = inspect.signature(getattr(cr.testing, name)).parameters
    theirs = inspect.signature(getattr(torch.autograd, name)).parameters
    assert [(p.name, p.kind, p.default) for p in ours.values()] == [
        (p.name, p.kind, p.default) for p in theirs.values()
    ]
    assert getattr(cr.autograd, name) is getattr(cr.testing, name)


def checked_functions(lib: Any) -> dict[str, Any]:
    """Functions written once for torch and chainrule, each wrong in one way."""
    F = lib.autograd.Function

    class WrongSlope(F):  # out = 2a, whose backward says 3
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3

    class Jittery(F):  # out = 2a, whose backward adds a little noise each time
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            NOISE[0] += 1e-9
            return g * (2 + NOISE[0])

    class LoudWhenSilent(F):  # out = 2a, whose backward gives ones for a zero gradient
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2 if bool((g != 0).any()) else lib.ones_like(g)

    class NoneUnhandled(F):  # two outputs, whose backward cannot take None for the second
        @staticmethod
        def forward(ctx, a):
            ctx.set_materialize_grads(False)
            return a * 2, a * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

    class FirstOrderOnly(F):  # out = a^2, whose backward leaves the graph
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return g * 2 * a.detach()

    return {k: v for k, v in locals().items() if isinstance(v, type)}


NOISE = [0.0]

CASES = [  # (check, Function, keywords, expected result)
    ("gradcheck", "WrongSlope", {}, False),
    ("gradcheck", "WrongSlope", {"fast_mode": True}, False),
    ("gradcheck", "FirstOrderOnly", {"fast_mode": True}, True),
    ("gradcheck", "Jittery", {}, False),
    ("gradcheck", "Jittery", {"nondet_tol": 1e-6}, True),
    ("gradcheck", "LoudWhenSilent", {}, False),
    ("gradcheck", "LoudWhenSilent", {"check_undefined_grad": False}, False),
    ("gradcheck", "FirstOrderOnly", {"check_grad_dtypes": True}, True),
    ("gradgradcheck", "FirstOrderOnly", {}, False),
    ("gradgradcheck", "FirstOrderOnly", {"fast_mode": True}, False),
    ("gradgradcheck", "WrongSlope", {"gen_non_contig_grad_outputs": True}, True),
]


@pytest.mark.filterwarnings("ignore::UserWarning")  # torch's about fast_mode and batched grads
@pytest.mark.parametrize(("check", "name", "options", "expected"), CASES)
def test_keywords_do_what_torchs_do(check: str, name: str, options: dict, expected: bool) -> None:
    """With raise_exception=False a failed check returns False, as torch's; raised, it is
    a RuntimeError (torch's GradcheckError) and an AssertionError."""
    for lib in (torch, cr):
        f = checked_functions(lib)[name]
        x = lib.tensor([0.3, -1.2, 2.0], dtype=lib.float64, requires_grad=True)
        run = getattr(lib.autograd, check)
        assert run(f.apply, (x,), raise_exception=False, **options) is expected, lib.__name__
        if not expected:
            with pytest.raises(RuntimeError):
                run(f.apply, (x,), **options)
    if not expected:
        with pytest.raises(AssertionError):
            getattr(cr.testing, check)(checked_functions(cr)[name].apply, (_x(3),), **options)


def test_check_undefined_grad_gives_an_output_no_gradient() -> None:
    """Each output in turn gets no gradient (None, for a Function that does not materialize
    them), the others zeros. torch's own check reaches such a backward by differentiating one
    output at a time, and fails with the backward's TypeError whatever the keyword."""
    f = checked_functions(cr)["NoneUnhandled"].apply
    assert not cr.testing.gradcheck(f, (_x(3),), raise_exception=False)
    with pytest.raises(RuntimeError, match=r"backward fails when output 0 gets no gradient "
                       r"\(check_undefined_grad\): TypeError"):  # fmt: skip
        cr.testing.gradcheck(f, (_x(3),))
    assert cr.testing.gradcheck(f, (_x(3),), check_undefined_grad=False)


def test_gradgradcheck_uses_the_grad_outputs_given() -> None:
    a = _x(3)
    v = cr.tensor([1.0, 0.0, 0.0], dtype=cr.float64, requires_grad=True)
    f = checked_functions(cr)["FirstOrderOnly"].apply
    # only entry 0 is weighted; the backward loses d/da of a everywhere, so it still fails
    assert not cr.testing.gradgradcheck(f, (a,), (v,), raise_exception=False)
    assert cr.testing.gradgradcheck(lambda x: x * x, (a,), (v,))
    with pytest.raises(ValueError, match="gradgradcheck: got 2 grad_outputs for 1 floating"):
        cr.testing.gradgradcheck(lambda x: x * x, (a,), (v, v))


def _refused() -> list[tuple[str, str, Any]]:
    """Every keyword of torch's two checks that chainrule's refuse, with the value asked."""
    return [
        ("gradcheck", "masked", True),
        ("gradgradcheck", "check_fwd_over_rev", True),
        ("gradgradcheck", "masked", True),
        ("gradgradcheck", "check_rev_over_rev", False),
    ]


HONOURED = {"eps", "atol", "rtol", "raise_exception", "nondet_tol", "check_undefined_grad",
            "check_grad_dtypes", "fast_mode", "gen_non_contig_grad_outputs",
            "check_forward_ad", "check_batched_grad", "check_backward_ad",
            "check_batched_forward_grad"}  # fmt: skip


@pytest.mark.parametrize("check", ["gradcheck", "gradgradcheck"])
def test_every_keyword_is_honoured_or_refused(check: str) -> None:
    """Derived from torch's signature: a keyword neither tested above nor refused fails."""
    keywords = {
        p.name
        for p in inspect.signature(getattr(torch.autograd, check)).parameters.values()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    }
    refused = {name for c, name, _ in _refused() if c == check}
    assert keywords - HONOURED - refused == set()
    tested = {k for _, _, options, _ in CASES for k in options}
    assert (
        tested
        | {"raise_exception", "check_undefined_grad", "eps", "atol", "rtol", "check_forward_ad"}
        | {"check_batched_grad", "check_backward_ad", "check_batched_forward_grad"}
        # (those three: test_gradcheck_batched.py)
        == HONOURED
    )


@pytest.mark.parametrize(("check", "name", "value"), _refused())
def test_the_checks_chainrule_does_not_make_are_refused(check: str, name: str, value: Any) -> None:
    with pytest.raises(ValueError, match=f"{check}: .*{name}={value!r}"):
        getattr(cr.testing, check)(lambda x: x * x, (_x(3),), **{name: value})
