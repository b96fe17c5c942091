"""Tensor's elementwise math beyond the operators: the trigonometric and hyperbolic families,
the special and integer functions, the bitwise and logical ops (arithmetic.py keeps the
operators, exp, log and the comparisons)."""

# mypy: disable-error-code="arg-type, return-value, attr-defined, operator"
# (Inside a kind's class, self is that class, not Tensor: mypy checks the methods' use of
# the whole class where they are called, on Tensor.)

from __future__ import annotations

from typing import TYPE_CHECKING

from .core import Core

if TYPE_CHECKING:  # at run time the name is bound by tensor/__init__.py, once the class exists
    from . import Tensor  # noqa: F401


class Pointwise(Core):
    __slots__ = ()
