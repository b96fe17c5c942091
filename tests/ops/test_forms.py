"""The public names: each function form (forms/) has its Tensor method's parameters and
return annotation, and ``cr.*`` is exactly its modules' ``__all__`` plus its subpackages."""

from __future__ import annotations

import inspect
import types

import pytest

import chainrule as cr
from chainrule import factories, forms, functions

# Forms whose parameters are not their method's, each with the reason.
OWN_SIGNATURE = {
    # cr.repeat_interleave(counts) alone gives positions, as torch's; the method needs repeats
    "repeat_interleave",
}


def _without_first(fn: object) -> list[tuple[str, object, object]]:
    """The parameters after input, but out= (a keyword of torch's functions only: the result
    written into a given tensor; tests/ops/test_out.py checks it)."""
    params = list(inspect.signature(fn).parameters.values())[1:]  # type: ignore[arg-type]
    return [(p.name, p.kind, p.default) for p in params if p.name != "out"]


def _module(name: str) -> str:
    """The file that defines the form, for a failure to name."""
    return "src/chainrule/forms/" + getattr(forms, name).__module__.rsplit(".", 1)[1] + ".py"


@pytest.mark.parametrize("name", forms.__all__)
def test_each_form_has_its_methods_parameters_and_return(name: str) -> None:
    form, method = getattr(forms, name), getattr(cr.Tensor, name, None)
    assert method is not None, (
        f"add Tensor.{name} (one line calling its op) to the file of its kind in "
        f"src/chainrule/tensor/; its form is in {_module(name)}"
    )
    assert next(iter(inspect.signature(form).parameters)) == "input"
    if name not in OWN_SIGNATURE:
        assert _without_first(form) == _without_first(method), (
            f"{_module(name)}: {name} must take Tensor.{name}'s parameters after input"
        )
    assert form.__annotations__["return"] == method.__annotations__["return"], (
        f"{_module(name)}: {name} must return what Tensor.{name} returns"
    )
    assert form.__doc__


def test_own_signatures_are_forms_whose_parameters_differ() -> None:
    for name in OWN_SIGNATURE:
        assert _without_first(getattr(forms, name)) != _without_first(getattr(cr.Tensor, name))


@pytest.mark.parametrize("module", [factories, functions, forms], ids=lambda m: m.__name__)
def test_each_modules_all_is_its_public_names(module: types.ModuleType) -> None:
    """What a module defines in public is in its __all__, so cr.* sees it, and no name twice."""
    own = {n for n, v in vars(module).items() if getattr(v, "__module__", 0) == module.__name__}
    missing = sorted(n for n in own if not n.startswith("_") and n not in module.__all__)
    assert missing == [], f"src/chainrule/{module.__name__[10:]}.py: add to __all__ {missing}"
    assert len(set(module.__all__)) == len(module.__all__)


def test_cr_is_the_modules_all_and_its_subpackages() -> None:
    """Every public name of cr.* but its modules is in cr.__all__, and every name there is
    one of cr's; the three modules' names all reach cr unchanged."""
    public = {n for n in dir(cr) if not n.startswith("_")}
    names = {n for n in public if not isinstance(getattr(cr, n), types.ModuleType)}
    assert names <= set(cr.__all__) <= public
    assert len(set(cr.__all__)) == len(cr.__all__), "a name in two modules' __all__"
    for module in (factories, functions, forms):
        assert [n for n in module.__all__ if getattr(cr, n) is not getattr(module, n)] == []
