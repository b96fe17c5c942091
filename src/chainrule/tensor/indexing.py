"""Tensor's selections and combinations by index: diagonals, take and put, sorted search,
membership, and the scatters and index writes beyond shape.py's (which keeps the views,
getitem and setitem, gather and scatter)."""

# mypy: disable-error-code="arg-type, return-value, attr-defined"
# (Inside a kind's class, self is that class, not Tensor: mypy checks the methods' use of
# the whole class where they are called, on Tensor.)

from __future__ import annotations

from typing import TYPE_CHECKING

from .core import Core

if TYPE_CHECKING:  # at run time the name is bound by tensor/__init__.py, once the class exists
    from . import Tensor  # noqa: F401


class Indexing(Core):
    __slots__ = ()
