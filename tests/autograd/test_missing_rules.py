"""An op without its forward or backward says which op and the file to write it in."""

from __future__ import annotations

from typing import Any

import pytest

import chainrule as cr
from chainrule.autograd.primitive import Function

HERE = "src/" + __name__.replace(".", "/") + r"\.py"  # where an op of this module is


class Twice(Function):
    """out = 2 * a (no backward written)"""

    rule = "grad_a = 2 * grad"

    def forward(self, a: Any) -> Any:
        return a * 2


class Nothing(Function):
    """out = a (neither written)"""

    rule = "grad_a = grad"


def test_a_missing_backward_names_the_op_and_its_file() -> None:
    out = Twice.apply(cr.ones(3, requires_grad=True)).sum()
    with pytest.raises(
        NotImplementedError, match=rf"^Twice: no backward; write Twice\.backward .* in {HERE}$"
    ):
        out.backward()


def test_a_missing_backward_says_so_on_the_plain_path_too() -> None:
    """create_graph runs the rules in Tensor ops, as the switched-off fast path does."""
    out = Twice.apply(cr.ones(3, requires_grad=True)).sum()
    with pytest.raises(NotImplementedError, match=r"^Twice: no backward"):
        out.backward(create_graph=True)


def test_a_missing_forward_names_the_op_and_its_file() -> None:
    with pytest.raises(
        NotImplementedError,
        match=rf"^nothing: no forward; write Nothing\.forward \(on arrays\) in {HERE}; got shape",
    ):
        Nothing.apply(cr.ones(3))
