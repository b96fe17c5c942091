"""Argument checks shared by the tensor methods, layers, optimizers and data loaders: one
place for each rule and its wording.
"""

from __future__ import annotations

from typing import Any, Literal, overload

from . import backend


def is_int(value: Any) -> bool:
    """Whether value is an integer, Python's or NumPy's, and not a bool (which Python counts
    as an int)."""
    return isinstance(value, (int, backend.xp.integer)) and not isinstance(value, bool)


@overload
def positive_int(
    value: Any, name: str, op: str, *, zero_ok: bool = ..., none_ok: Literal[False] = ...
) -> int: ...
@overload
def positive_int(
    value: Any, name: str, op: str, *, zero_ok: bool = ..., none_ok: bool
) -> int | None: ...
def positive_int(
    value: Any, name: str, op: str, *, zero_ok: bool = False, none_ok: bool = False
) -> int | None:
    """value as a Python int, if it is an integer (not a bool) above 0, or at least 0 with
    ``zero_ok``; None is returned as it is with ``none_ok``. Otherwise ValueError:
    ``<op>: <name> must be a positive int; got <value!r>``, the kind worded as allowed
    ("a non-negative int", "... or None")."""
    if value is None and none_ok:
        return None
    if is_int(value) and value >= (0 if zero_ok else 1):
        return int(value)
    kind = "a non-negative int" if zero_ok else "a positive int"
    if none_ok:
        kind += " or None"
    raise ValueError(f"{op}: {name} must be {kind}; got {value!r}")
