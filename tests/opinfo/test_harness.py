"""The op database run can fail: planted wrong answers, wrong gradients, wrong second
derivatives, samplers with the wrong moments or support, untouched inputs and internal errors
are each caught, and a known disagreement that agrees fails its case."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.opinfo import draws, expectations, harness
from tests.opinfo.test_opinfo import check

ABS = harness.Case("abs", "fn", "float64")
SIN = harness.Case("sin", "fn", "float64")
NORMAL_ = harness.Case("normal.in_place", "inplace", "float64")
MULTINOMIAL = harness.Case("multinomial", "fn", "float64")
BERNOULLI = harness.Case("bernoulli", "fn", "float64")
DROPOUT = harness.Case("nn.functional.dropout", "fn", "float64")
F = cr.nn.functional


def kinds(case: harness.Case, fn: object) -> list[tuple[str, str]]:
    tally = harness.run_case(case, 3, cr_override=fn)  # type: ignore[arg-type]
    assert tally.outcomes
    return [(o.kind, o.why) for o in tally.outcomes]


def sin_with(first_derivative: Any, once: bool = False) -> Any:
    """sin whose backward is `first_derivative(x, grad)` (optionally @once_differentiable)."""

    def backward(ctx: Any, grad: cr.Tensor) -> cr.Tensor:
        return first_derivative(ctx.saved_tensors[0], grad)

    class Sin(cr.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: cr.Tensor) -> cr.Tensor:
            ctx.save_for_backward(x)
            return x.sin()

    Sin.backward = staticmethod(cr.autograd.once_differentiable(backward) if once else backward)
    return Sin.apply


def test_chainrule_itself_agrees() -> None:
    assert {k for k, _ in kinds(ABS, cr.abs)} == {"agreed"}


def test_a_wrong_value_is_caught() -> None:
    got = kinds(ABS, lambda x: cr.abs(x) * (1 + 1e-6))
    assert all(k == "failed" and ("Mismatched" in w or "Expected" in w) for k, w in got)


def test_a_wrong_dtype_is_caught() -> None:
    got = kinds(harness.Case("abs", "fn", "float32"), lambda x: cr.abs(x).double())
    assert all(k == "failed" and "dtype float64, PyTorch float32" in w for k, w in got)


def test_a_wrong_gradient_is_caught() -> None:
    # the same values, half as much gradient again
    got = kinds(ABS, lambda x: cr.abs(x) + (x - x.detach()) * 0.5)
    assert any(k == "failed" and w.startswith("grad") for k, w in got)


def test_chainrule_itself_agrees_twice_and_in_many_draws() -> None:
    tally = harness.run_case(SIN, 3)
    assert {(o.kind, o.deep) for o in tally.outcomes} == {("agreed", harness.TWICE)}
    tally = harness.run_case(NORMAL_, 2)
    assert {(o.kind, o.deep) for o in tally.outcomes} == {("agreed", harness.DRAWS)}


def test_a_wrongly_scaled_second_derivative_is_caught() -> None:
    # the first derivative right (grad * cos x), its own derivative twice PyTorch's
    got = kinds(SIN, sin_with(lambda x, g: g * (2 * x.cos() - x.cos().detach())))
    assert all(k == "failed" and w.startswith("second derivative by input 0") for k, w in got)


def test_an_unrecorded_first_derivative_is_caught() -> None:
    # computed on arrays: the right first derivative, a constant to differentiate again
    got = kinds(SIN, sin_with(lambda x, g: cr.tensor(g.numpy() * np.cos(x.numpy()))))
    assert all(k == "failed" and w.startswith("second derivative by") for k, w in got)
    assert all("recorded no graph of its derivative by input 0" in w for _, w in got)


def test_a_backward_that_refuses_a_second_derivative_is_a_failure() -> None:
    got = kinds(SIN, sin_with(lambda x, g: g * x.cos(), once=True))
    assert all(k == "failed" and "@once_differentiable" in w for k, w in got)
    assert all(w.startswith("second derivative: differentiating the first") for _, w in got)


def test_a_listed_second_derivative_that_agrees_fails_its_case(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(
        expectations, "KNOWN_SECOND_DERIVATIVES", [("sin", "fn", "float64", 0, "x")]
    )
    with pytest.raises(pytest.fail.Exception, match="agrees now; remove it from KNOWN_SECOND"):
        check(SIN, 2, 1)
    # a sample that the bounded run does not differentiate twice is not judged there
    monkeypatch.setattr(
        expectations, "KNOWN_SECOND_DERIVATIVES", [("sin", "fn", "float64", 1, "x")]
    )
    check(SIN, 2, 1)


def test_a_sampler_with_the_wrong_variance_is_caught() -> None:
    got = kinds(NORMAL_, lambda x, mean=0.0, std=1.0: x.normal_(mean, std * 1.2))
    assert all(k == "failed" and w.startswith("draws: out[0]: variance") for k, w in got)


def test_a_sampler_with_a_slightly_wrong_mean_is_caught() -> None:
    got = kinds(NORMAL_, lambda x, mean=0.0, std=1.0: x.normal_(mean + 0.1 * std, std))
    assert all(k == "failed" and w.startswith("draws: out[0]: mean") for k, w in got)


def test_draws_outside_the_support_are_caught() -> None:
    # with replacement where none was asked for: a category twice in a row
    def repeats(probs: cr.Tensor, n: int, replacement: bool = False) -> cr.Tensor:
        return cr.multinomial(probs, n, replacement=True)

    got = kinds(MULTINOMIAL, repeats)
    assert any(k == "failed" and "drawn twice in one row" in w for k, w in got)
    # the probabilities themselves: the right mean, values other than 0 and 1
    got = kinds(BERNOULLI, lambda p: p.clone())
    assert any(k == "failed" and "outside {0, 1}" in w for k, w in got)
    # dropout that keeps its values unscaled
    got = kinds(DROPOUT, lambda x, p=0.5, training=True: F.dropout(x, p, training) * (1 - p))
    assert any(k == "failed" and "other than 0 and input / (1 - p)" in w for k, w in got)


def test_a_listed_draw_disagreement_that_agrees_fails_its_case(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(expectations, "KNOWN_DRAWS", [("normal.in_place", "*", "*", "*", "x")])
    with pytest.raises(pytest.fail.Exception, match="agrees now; remove it from KNOWN_DRAWS"):
        check(NORMAL_, 25)


def test_the_moments_bound_is_five_standard_errors() -> None:
    rng = np.random.default_rng(0)
    want = rng.standard_normal((400, 25))
    assert draws.moments(rng.standard_normal((400, 25)), want) == ""
    assert "mean" in draws.moments(rng.standard_normal((400, 25)) + 0.1, want)
    assert "variance" in draws.moments(rng.standard_normal((400, 25)) * 1.1, want)
    # equal constants agree (dropout in eval mode), unequal ones do not
    assert draws.moments(np.ones((30, 4)), np.ones((30, 4))) == ""
    assert "mean 2 of 120 draws" in draws.moments(np.ones((30, 4)) * 2, np.ones((30, 4)))


def test_an_input_left_unwritten_is_caught() -> None:
    got = kinds(harness.Case("abs", "inplace", "float32"), lambda x: x.abs())
    assert any(k == "failed" and w.startswith("input after") for k, w in got)


def test_an_internal_error_is_a_failure_not_a_refusal() -> None:
    got = kinds(ABS, lambda x: cr.tensor(np.zeros(2) + np.zeros(int(x.numel()) + 3)))
    assert all(k == "failed" and w.startswith("internal error") for k, w in got)
    got = kinds(ABS, lambda x: x.no_such_method())
    assert all(k == "failed" and "AttributeError" in w for k, w in got)


def test_an_unlisted_refusal_is_a_failure() -> None:
    def refuse(x: cr.Tensor) -> cr.Tensor:
        raise TypeError("abs: float64 is not taken; got float64")

    got = kinds(ABS, refuse)
    assert all(k == "failed" and w.startswith("refuses what PyTorch computes") for k, w in got)


def test_a_refusal_must_name_the_op() -> None:
    def refuse(x: cr.Tensor) -> cr.Tensor:
        raise ValueError("this input is not taken")

    got = kinds(ABS, refuse)
    assert all(k == "failed" and w.startswith("a refusal that names no op") for k, w in got)


def test_a_known_disagreement_that_agrees_fails_its_case(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(expectations, "KNOWN", [("abs", "fn", "float64", 0, "planted")])
    with pytest.raises(pytest.fail.Exception, match="agrees now"):
        check(ABS, 2)


def test_internal_errors_are_told_from_refusals() -> None:
    assert harness.internal_error(KeyError("x"))
    assert harness.internal_error(ValueError("operands could not be broadcast together"))
    assert harness.internal_error(TypeError("f() got an unexpected keyword argument 'dim'"))
    assert not harness.internal_error(TypeError("softmax: unexpected keyword arguments ['x']"))
    assert not harness.internal_error(RuntimeError("matmul: inner dimensions differ; got (3,)"))


def test_importing_the_op_database_leaves_torchs_backend_flags_settable() -> None:
    """PyTorch's test utilities freeze torch.backends' flags when imported; a program run
    later in the same worker (`torch.backends.cudnn.benchmark = True`) must still work."""
    harness.op_db()
    before = torch.backends.cudnn.benchmark
    torch.backends.cudnn.benchmark = not before
    torch.backends.cudnn.benchmark = before


def test_ties_may_come_in_another_order_where_pytorch_leaves_it_open() -> None:
    from tests.opinfo import ties

    x = torch.tensor([[3, 1, 3, 2, 1]])
    want = torch.topk(x, 3)
    values = cr.tensor([[3, 3, 2]])
    swapped = (values, cr.tensor([[2, 0, 3]]))  # the two 3s the other way round
    assert ties.same_but_for_ties("topk", x, (3,), {}, swapped, want)
    assert not ties.same_but_for_ties("topk", x, (3,), {}, (values, cr.tensor([[0, 0, 3]])), want)
    assert not ties.same_but_for_ties("topk", x, (3,), {}, (values, cr.tensor([[2, 1, 3]])), want)
    assert not ties.same_but_for_ties(
        "topk", x, (3,), {}, (cr.tensor([[3, 2, 3]]), swapped[1]), want
    )
    order = torch.argsort(x)
    assert ties.same_but_for_ties("argsort", x, (), {}, cr.tensor([[4, 1, 3, 0, 2]]), order)
    assert not ties.same_but_for_ties("argsort", x, (), {}, cr.tensor([[4, 4, 3, 0, 2]]), order)
    assert ties.applies("sort", (), {}) and not ties.applies("sort", (), {"stable": True})
    assert not ties.applies("topk", (3, -1, True, False), {}) and not ties.applies("abs", (), {})


def test_a_rule_wrong_only_on_the_reference_walk_is_caught() -> None:
    """A primitive whose rule on arrays (what the engine runs with the fast path on) is
    right and whose Tensor rule (what the reference walk runs) is twice too large."""
    from chainrule.autograd.primitive import Function

    class HalfWrongSin(Function):
        rule = "grad_a = grad * cos(a)"

        def forward(self, a: Any) -> Any:
            return np.sin(a)

        def backward(self, grad: Any, out: Any) -> Any:
            return (grad * self.inputs[0].cos() * 2,)

        def backward_arrays(self, grad: Any, out: Any) -> Any:
            return (grad * np.cos(self.inputs[0]._array),)

    got = kinds(SIN, HalfWrongSin.apply)
    where = "reference engine grad[0]" if cr.autograd.fastpath.enabled() else "grad[0]"
    assert all(k == "failed" and w.startswith(where) for k, w in got), got
