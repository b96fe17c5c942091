"""Grad modes as PyTorch's, checked side by side with torch: inference mode above grad mode
(enable_grad inside records nothing; inference_mode(False) turns grad mode on), what
is_grad_enabled and is_inference_mode_enabled say, and the decorators on generator functions,
which set the mode at each resume and give the caller back its own in between."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import chainrule as cr


def _observe(lib: Any) -> list[tuple[str, bool, bool, bool]]:
    """(where, is_grad_enabled, is_inference_mode_enabled, whether x * 2 records) through a
    set of nested blocks."""
    x = lib.ones(2, requires_grad=True)
    seen = []

    def look(where: str) -> None:
        seen.append((where, lib.is_grad_enabled(), lib.is_inference_mode_enabled(),
                     (x * 2).requires_grad))  # fmt: skip

    look("outside")
    with lib.inference_mode():
        look("inference")
        with lib.enable_grad():
            look("inference, enable_grad")
        with lib.set_grad_enabled(True):
            look("inference, set_grad_enabled(True)")
        with lib.inference_mode(False):
            look("inference, inference_mode(False)")
            with lib.no_grad():
                look("inference, inference_mode(False), no_grad")
        look("inference again")
    with lib.no_grad():
        with lib.inference_mode(False):
            look("no_grad, inference_mode(False)")
        with lib.inference_mode():
            look("no_grad, inference_mode")
        look("no_grad again")
    look("outside again")
    return seen


def test_nested_modes_say_and_record_what_torchs_do() -> None:
    ours, theirs = _observe(cr), _observe(torch)
    assert ours == theirs


DECORATORS: list[tuple[str, Callable[[Any], Any]]] = [
    ("no_grad", lambda lib: lib.no_grad()),
    ("enable_grad", lambda lib: lib.enable_grad()),
    ("inference_mode", lambda lib: lib.inference_mode()),
    ("set_grad_enabled(False)", lambda lib: lib.set_grad_enabled(False)),
]


@pytest.mark.parametrize("make", [m for _, m in DECORATORS], ids=[n for n, _ in DECORATORS])
@pytest.mark.parametrize("outer", ["enabled", "disabled"])
def test_a_decorated_generator_runs_in_the_mode_at_each_resume(make: Any, outer: str) -> None:
    def run(lib: Any) -> list[Any]:
        x = lib.ones(2, requires_grad=True)

        @make(lib)
        def gen() -> Any:
            got = yield lib.is_grad_enabled(), (x * 2).requires_grad
            yield got, lib.is_grad_enabled(), (x * 2).requires_grad
            try:
                yield "waiting"
            except KeyError:
                yield "caught", lib.is_grad_enabled()
            return "done"

        seen = []
        with lib.set_grad_enabled(outer == "enabled"):
            g = gen()
            seen.append(next(g))
            seen.append(("caller", lib.is_grad_enabled(), (x * 2).requires_grad))
            seen.append(g.send(5))
            seen.append(next(g))
            seen.append(g.throw(KeyError("k")))
            with pytest.raises(StopIteration) as stop:
                next(g)
            seen.append(stop.value.value)
            seen.append(("after", lib.is_grad_enabled()))
        seen.append(("outside", lib.is_grad_enabled()))
        return seen

    assert run(cr) == run(torch)


def test_closing_a_decorated_generator_runs_its_cleanup_inside_the_mode() -> None:
    def run(lib: Any) -> list[bool]:
        seen = []

        @lib.no_grad()
        def gen() -> Any:
            try:
                yield 1
            finally:
                seen.append(lib.is_grad_enabled())

        g = gen()
        next(g)
        g.close()
        seen.append(lib.is_grad_enabled())
        return seen

    assert run(cr) == run(torch) == [False, True]


def test_a_decorated_plain_function_is_untouched_by_the_generator_path() -> None:
    @cr.no_grad()
    def double(t: cr.Tensor) -> cr.Tensor:
        return t * 2

    x = cr.ones(2, requires_grad=True)
    assert not double(x).requires_grad and cr.is_grad_enabled()
    assert double.__name__ == "double"
