"""A training loop that leans on the engine's escape hatches (hooks returning tensors the
program keeps, a custom Function's held surrogate gradient, writes through .data between
forward and backward, autograd.grad at a hidden layer, printing after backward), run on
torch and on chainrule from the same weights: the same losses, gradients and parameters,
and the program's own tensors left as it made them."""

from __future__ import annotations

import numpy as np

from tests.pytorch_programs.programs.aliasing import run


def test_a_training_loop_with_hooks_data_writes_and_grad_runs_as_torchs() -> None:
    theirs = run("hooked_training", on_chainrule=False)
    ours = run("hooked_training", on_chainrule=True)
    # float64 throughout: the two differ only by the order of a few sums
    np.testing.assert_allclose(ours["losses"], theirs["losses"], rtol=1e-12)
    np.testing.assert_allclose(ours["probes"], theirs["probes"], rtol=1e-12)
    assert ours["names"] == theirs["names"] and ours["printed"] == theirs["printed"]
    for name, p in theirs["params"].items():
        np.testing.assert_allclose(ours["params"][name], p, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(ours["ema"][name], theirs["ema"][name], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(ours["held"][0], theirs["held"][0], rtol=0)  # never written
    np.testing.assert_allclose(ours["held"][1], theirs["held"][1], rtol=1e-12, atol=1e-15)
    assert ours["losses"][-1] < 0.5 * ours["losses"][0]
