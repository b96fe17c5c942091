"""A PyTorch program (programs/saved_lm.py) that saves a word-level language model whole and
loads it back with weights_only, its allow-list naming classes by PyTorch's module paths, run
on torch and on chainrule with ``import torch`` aliased."""

from __future__ import annotations

import sys
from contextlib import nullcontext
from typing import Any

import numpy as np

from tests.pytorch_programs.programs.aliasing import load, torch_is_chainrule
from tests.pytorch_programs.test_pytorch_programs import F32, Weights, assert_follows


def _run(on_chainrule: bool, weights: Weights) -> Any:
    """The program run as a script is: its classes importable by its module's name, so that
    pickle finds RNNModel (a script's live in ``__main__``)."""
    with torch_is_chainrule() if on_chainrule else nullcontext():
        program = load("saved_lm", on_chainrule)
        sys.modules[program.__name__] = program
        try:
            return program.main(init=weights.replay if on_chainrule else weights.record)
        finally:
            del sys.modules[program.__name__]


def test_a_model_saved_whole_loads_inside_safe_globals_by_module_paths() -> None:
    weights = Weights()
    theirs = _run(False, weights)
    ours = _run(True, weights)
    assert_follows(ours["losses"], theirs["losses"], F32)
    np.testing.assert_allclose(ours["before"], theirs["before"], rtol=10 * F32)
    assert ours["after"] == [ours["before"]] * 2  # loaded as saved, by either allow-list
    assert ours["kinds"] == theirs["kinds"]
    assert ours["refused"] and theirs["refused"]
    assert ours["out_proj"] == theirs["out_proj"] == "NonDynamicallyQuantizableLinear"
