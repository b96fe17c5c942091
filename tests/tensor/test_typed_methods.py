"""Every method of the classes Tensor is made of declares its self as the whole Tensor
(``self: TensorSelf``, tensor/core.py), so mypy checks each body against the class it is a
method of, not against the one file's class."""

from __future__ import annotations

import inspect

import chainrule as cr


def _kinds() -> list[type]:
    """The classes of tensor/ that Tensor is made of (Core and the kinds)."""
    return [k for k in cr.Tensor.__mro__[1:] if k.__module__.startswith("chainrule.tensor.")]


def test_the_kinds_are_found() -> None:
    names = {k.__name__ for k in _kinds()}
    assert {"Core", "Arithmetic", "Shape", "InPlace"} <= names


def test_every_method_of_a_kind_declares_its_self_a_tensor() -> None:
    undeclared = []
    for kind in _kinds():
        for name, member in vars(kind).items():
            fns = [member.fget, member.fset] if isinstance(member, property) else [member]
            for fn in fns:
                if not inspect.isfunction(fn):
                    continue  # staticmethods, slots, constants, aliases of builtins
                first = next(iter(inspect.signature(fn).parameters.values()), None)
                if first is not None and first.name == "self":
                    if fn.__annotations__.get("self") != "TensorSelf":
                        undeclared.append(f"{inspect.getsourcefile(fn)}: {kind.__name__}.{name}")
    assert undeclared == [], f"declare self: TensorSelf (see tensor/core.py) in {undeclared}"
