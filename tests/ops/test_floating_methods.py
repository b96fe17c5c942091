"""Every Tensor method that PyTorch makes floating when called alone on an integer or bool
tensor (exp, sqrt, sigmoid, ...) is floating here too, of PyTorch's dtype: the list is
derived from torch, so a new method of that kind cannot be left integer."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import chainrule as cr

VALUES = {"int64": [[1, 2, 3], [4, 5, 7]], "bool": [[True, False, True], [False, True, True]]}


def _floating_in_torch(kind: str) -> list[str]:
    """The public methods torch.Tensor shares with ours that, with no other argument, give a
    floating-point tensor from an integer (or bool) one in torch."""
    names = [n for n in dir(cr.Tensor) if not n.startswith("_") and hasattr(torch.Tensor, n)]
    names = [n for n in names if callable(getattr(cr.Tensor, n)) and not n.endswith("_")]
    found = []
    for name in names:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = getattr(torch.tensor(VALUES[kind]), name)()
        except Exception:  # a method that needs arguments, or refuses integers
            continue
        if isinstance(out, torch.Tensor) and out.is_floating_point():
            found.append(name)
    return found


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
