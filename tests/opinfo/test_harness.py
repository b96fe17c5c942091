"""The op database run can fail: planted wrong answers, wrong gradients, untouched inputs and
internal errors are each caught, and a known disagreement that agrees fails its case."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.opinfo import expectations, harness
from tests.opinfo.test_opinfo import check

ABS = harness.Case("abs", "fn", "float64")


def kinds(case: harness.Case, fn: object) -> list[tuple[str, str]]:
    tally = harness.run_case(case, 3, cr_override=fn)  # type: ignore[arg-type]
    assert tally.outcomes
    return [(o.kind, o.why) for o in tally.outcomes]


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
