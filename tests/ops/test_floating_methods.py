"""Every Tensor method that PyTorch makes floating when called alone on an integer or bool
tensor (exp, sqrt, sigmoid, ...) is floating here too, of PyTorch's dtype: the list is
derived from torch, so a new method of that kind cannot be left integer. Methods of two such
tensors (t.mul(u), t.logaddexp(u)) give torch's dtype or refuse where torch refuses."""

from __future__ import annotations

import inspect
import pathlib
import warnings
from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr

VALUES = {"int64": [[1, 2, 3], [4, 5, 7]], "bool": [[True, False, True], [False, True, True]]}


def alone_in_torch(value: torch.Tensor) -> dict[str, Any]:
    """What each public method torch.Tensor shares with ours gives, called with no other
    argument on ``value`` in torch (not in-place ones; not those that need an argument, or
    refuse the value)."""
    names = [n for n in dir(cr.Tensor) if not n.startswith("_") and hasattr(torch.Tensor, n)]
    names = [n for n in names if callable(getattr(cr.Tensor, n)) and not n.endswith("_")]
    found = {}
    for name in names:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                found[name] = getattr(value, name)()
        except Exception:  # a method that needs arguments, or refuses the value
            continue
    return found


def _floating_in_torch(kind: str) -> list[str]:
    """The methods that give a floating-point tensor from an integer (or bool) one in torch."""
    made = alone_in_torch(torch.tensor(VALUES[kind]))
    return [
        n for n, out in made.items() if isinstance(out, torch.Tensor) and out.is_floating_point()
    ]


CASES = [(kind, name) for kind in VALUES for name in _floating_in_torch(kind)]


def test_the_derived_list_holds_the_elementwise_math() -> None:
    assert {"exp", "log", "sqrt", "sigmoid", "tanh", "sin", "erf", "float"} <= {
        n for k, n in CASES if k == "int64"
    }


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # log(0) of False, as torch's -inf
@pytest.mark.parametrize(("kind", "name"), CASES, ids=[f"{k}-{n}" for k, n in CASES])
def test_floating_methods_of_integers_take_torchs_dtype(kind: str, name: str) -> None:
    theirs = getattr(torch.tensor(VALUES[kind]), name)()
    ours = getattr(cr.tensor(VALUES[kind]), name)()
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "chainrule."), (
        f"Tensor.{name} of {kind} must give {theirs.dtype} as torch's"
    )
    np.testing.assert_allclose(ours.numpy(), theirs.float().numpy(), rtol=1e-6)


# -- two integer (or bool) tensors ----------------------------------------------------------

# the second tensor of each kind (VALUES holds the first)
OTHER = {"int64": [[2, 1, 3], [1, 2, 2]], "bool": [[True, True, False], [False, False, True]]}


def _method_file(name: str) -> str:
    """The file of src/chainrule that defines Tensor.name, for a failure to name."""
    path = pathlib.Path(inspect.getsourcefile(getattr(cr.Tensor, name)) or "")
    return str(path.relative_to(pathlib.Path(cr.__file__).parent.parent.parent))


def _of_two_in_torch(kind: str) -> list[tuple[str, str]]:
    """The public methods torch.Tensor shares with ours that torch runs on two tensors of the
    kind, each with its result's dtype, or "refused" where torch refuses their dtype (a
    RuntimeError; a TypeError says the method takes no tensor there, and is left out)."""
    names = [n for n in dir(cr.Tensor) if not n.startswith("_") and hasattr(torch.Tensor, n)]
    names = [n for n in names if callable(getattr(cr.Tensor, n)) and not n.endswith("_")]
    a, b = VALUES[kind], OTHER[kind]
    found = []
    for name in names:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = getattr(torch.tensor(a), name)(torch.tensor(b))
        except TypeError:
            continue
        except Exception:  # torch refuses these dtypes
            found.append((name, "refused"))
            continue
        if isinstance(out, torch.Tensor):
            found.append((name, str(out.dtype).replace("torch.", "chainrule.")))
    return found


TWO = [(kind, name, dtype) for kind in OTHER for name, dtype in _of_two_in_torch(kind)]


def test_the_derived_list_of_two_holds_the_arithmetic_and_the_refusals() -> None:
    int64 = {n: d for k, n, d in TWO if k == "int64"}
    assert int64["mul"] == int64["add"] == "chainrule.int64"
    assert int64["div"] == "chainrule.float32" and int64["logaddexp"] == "refused"


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize(("kind", "name", "dtype"), TWO, ids=[f"{k}-{n}" for k, n, _ in TWO])
def test_methods_of_two_integer_tensors_take_torchs_dtype_or_refuse(
    kind: str, name: str, dtype: str
) -> None:
    """t.name(u) of two int64 (or bool) tensors gives torch's dtype, or is refused where torch
    refuses it (as the arguments.py checks need_float and need_number refuse)."""
    a, b = VALUES[kind], OTHER[kind]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = getattr(cr.tensor(a), name)(cr.tensor(b))
    except Exception as err:
        assert dtype == "refused", (
            f"{_method_file(name)}: Tensor.{name} of two {kind} tensors must give {dtype}, "
            f"as torch's; it raised {type(err).__name__}: {err}"
        )
        return
    got = getattr(out, "dtype", type(out).__name__)
    assert dtype != "refused", (
        f"{_method_file(name)}: Tensor.{name} must refuse two {kind} tensors, as torch does "
        f"(it gave {got}): check the dtype first, e.g. need_float(self, {name!r}) of "
        "src/chainrule/arguments.py"
    )
    assert str(got) == dtype, (
        f"{_method_file(name)}: Tensor.{name} of two {kind} tensors must give {dtype}, as "
        f"torch's; it gave {got}"
    )
